#!/usr/bin/env bash
# An offline `pip install` of the build tree's package works: into a fresh
# venv of the given interpreter, with no package index reachable, and with
# no set_env.sh or PYTHONPATH, the installed `dataflow` imports from the
# venv and runs a graph with a Python UDF on the simulated devices. Then
# `pip uninstall` removes every file it installed.
# Usage: pip_install_check.sh SDK_DIR PYTHON
set -euo pipefail
sdk=$(cd "$1" && pwd)
py=$(command -v "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv "$tmp/venv"
vpy=$tmp/venv/bin/python
clean=(env -i HOME="$tmp" PATH="$tmp/venv/bin:/usr/bin:/bin"
       PIP_INDEX_URL=http://127.0.0.1:9/ PIP_DISABLE_PIP_VERSION_CHECK=1)
"${clean[@]}" "$vpy" -m pip install --no-index --no-cache-dir "$sdk/python"
cd "$tmp"
"${clean[@]}" "$vpy" - "$tmp/venv" <<'PY'
import sys
import dataflow as df  # first: a venv without numpy gets the build's (the package's fallback)
import dataflow.flow_func as ff
import numpy as np

assert df.__file__.startswith(sys.argv[1]), f"imported {df.__file__}"


class Twice:
    @ff.init_wrapper()
    def init_flow_func(self, params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        return ctx.set_output(0, inputs[0].get_tensor().numpy() * 2)


df.init({"ge.exec.deviceId": "0"})
data = df.FlowData()
node = df.FlowNode(1, 1)
node.add_process_point(df.FuncProcessPoint(py_func=Twice, workspace_dir="."))
graph = df.FlowGraph([node(data)])
assert graph.feed_data({data: np.arange(3, dtype=np.int32)}) == 0
out, _, code = graph.fetch_data(timeout=5000)
assert code == 0 and out[0].numpy().tolist() == [0, 2, 4], (code, out)
df.finalize()
print("pip_install_check:", sys.executable, "dataflow from", df.__file__)
PY
"${clean[@]}" "$vpy" -m pip uninstall -y hflow-dataflow
left=$(find "$tmp/venv" -path '*dataflow*' -not -name '*.pyc' -type f)
[ -z "$left" ] || { echo "pip uninstall left: $left" >&2; exit 1; }
if "${clean[@]}" "$vpy" -c 'import dataflow' 2>/dev/null; then
  echo "dataflow still imports after pip uninstall" >&2
  exit 1
fi
echo "pip_install_check: install, run and uninstall OK"
