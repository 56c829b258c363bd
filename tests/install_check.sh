#!/usr/bin/env bash
# Installs the build tree into a temporary prefix and checks the install
# layout of docs/formats.md: headers, devlib/linux/x86_64/libflow_func.so
# (SONAME libflow_func.so), lib/libhflow.so with a CMake package and a
# pkg-config file, bin/hflow, include/acl and lib64/libascendcl.so; then
# builds a consumer with find_package(hflow), a GE-style UDF project and an
# ACL program in C against the installed prefix.
# Usage: install_check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
# Matches on captured output: `cmd | grep -q` can end cmd with SIGPIPE once
# grep has its match, which pipefail turns into a failure (a flaky one).
contains() { grep -q -- "$1" <<<"$2"; }

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/hflow/rt.h include/hflow/status.h \
         include/flow_func/meta_flow_func.h include/flow_func/meta_multi_func.h \
         devlib/linux/x86_64/libflow_func.so lib/libhflow.so \
         lib/cmake/hflow/hflowConfig.cmake lib/pkgconfig/hflow.pc bin/hflow \
         include/ge/ge_api.h include/flow_graph/data_flow.h include/graph/tensor.h \
         include/dflow/dflow_api.h include/parser/onnx_parser.h include/external \
         opp/built-in/op_proto/inc/all_ops.h set_env.sh \
         lib64/libgraph.so lib64/libgraph_base.so lib64/libflow_graph.so \
         lib64/libge_runner.so lib64/libdflow_runner.so lib64/libfmk_parser.so \
         lib64/libfmk_onnx_parser.so \
         include/acl/acl.h include/acl/error_codes/rt_error_codes.h \
         lib64/libascendcl.so; do
  [ -e "$prefix/$f" ] || { echo "missing $f in the install prefix" >&2; exit 1; }
done
grep -qx "prefix=$prefix" "$prefix/lib/pkgconfig/hflow.pc" \
  || { echo "hflow.pc does not name the install prefix $prefix" >&2; exit 1; }
contains "-I$prefix/include" "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags hflow)" \
  || { echo "pkg-config --cflags hflow does not name $prefix/include" >&2; exit 1; }
contains 'SONAME.*\[libflow_func.so\]' "$(readelf -d "$prefix/devlib/linux/x86_64/libflow_func.so")" \
  || { echo "libflow_func.so has the wrong SONAME" >&2; exit 1; }
contains "^0 *yes *6 " "$("$prefix/bin/hflow" devices --devices 3,6,7)" \
  || { echo "installed hflow does not run" >&2; exit 1; }

cmake -S "$src/tests/install_consumer" -B "$work/consumer" \
      -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
contains "devices: 2 3 4 5" "$("$work/consumer/consumer")" \
  || { echo "find_package(hflow) consumer failed" >&2; exit 1; }

ASCEND_HOME_PATH="$prefix" cmake -S "$src/tests/udf_projects/single_add" \
  -B "$work/udf" -DTOOLCHAIN=c++ -DRELEASE_DIR=release -DRESOURCE_TYPE=X86 \
  -DUDF_TARGET_LIB=single_add >/dev/null
cmake --build "$work/udf" >/dev/null
[ -f "$work/udf/release/libsingle_add.so" ] \
  || { echo "UDF did not build against the installed prefix" >&2; exit 1; }
# GE's libraries find libhflow.so and libflow_func.so through their RUNPATH
# (no LD_LIBRARY_PATH), so there is one hflow state in the process.
contains "libhflow.so => $prefix/" "$(ldd "$prefix/lib64/libge_runner.so")" \
  || { echo "lib64/libge_runner.so does not find the installed libhflow.so:" >&2
       ldd "$prefix/lib64/libge_runner.so" >&2; exit 1; }
( source "$prefix/set_env.sh" && [ "$ASCEND_HOME_PATH" = "$prefix" ] ) \
  || { echo "set_env.sh does not set ASCEND_HOME_PATH to the prefix" >&2; exit 1; }
# An ACL program in C against the installed headers and libascendcl.so,
# which finds libhflow.so through its RUNPATH.
cc -std=c99 -Wall -Wextra -Werror -I"$prefix/include" \
   "$src/tests/acl_headers/acl_smoke.c" -o "$work/acl_smoke" \
   -L"$prefix/lib64" -lascendcl -Wl,-rpath,"$prefix/lib64"
contains "acl_smoke: ok" "$(env -u RESOURCE_CONFIG_PATH "$work/acl_smoke" 2>/dev/null)" \
  || { echo "an ACL program does not run against the installed prefix" >&2; exit 1; }
# The Python package (when built): importable from the prefix after
# set_env.sh with either python3, and a graph with a Python UDF runs on the
# installed libraries alone.
if [ -f "$build/sdk/python/site-packages/dataflow/__init__.py" ]; then
  for py in "$(command -v /usr/bin/python3 || true)" python3; do
    [ -n "$py" ] || continue
    bash "$src/tests/python/import_check.sh" "$prefix" "$py" >/dev/null \
      || { echo "import dataflow fails from the prefix with $py" >&2; exit 1; }
  done
  out=$(env -i HOME="${HOME:-/tmp}" PATH="$PATH" bash -c '
    source "$1/set_env.sh" && python3 - <<"PY"
import numpy as np
import dataflow as df
import dataflow.flow_func as ff

class Twice:
    @ff.proc_wrapper("i0,o0")
    def twice(self, ctx, msgs):
        return ctx.set_output(0, msgs[0].get_tensor().numpy() * 2)

df.init({})
x = df.FlowData()
node = df.FlowNode(1, 1)
node.add_process_point(df.FuncProcessPoint(py_func=Twice))
g = df.FlowGraph([node(x)])
assert g.feed_data({x: np.array([1, 2], np.int32)}) == 0
out, _, code = g.fetch_data(timeout=10000)
print("python:", code, out[0].numpy().tolist())
df.finalize()
PY' _ "$prefix")
  [ "$out" = "python: 0 [2, 4]" ] \
    || { echo "a Python graph does not run from the prefix: $out" >&2; exit 1; }
  contains "libhflow.so => $prefix/" "$(ldd "$prefix"/python/site-packages/dataflow/_core*.so)" \
    || { echo "dataflow._core does not find the installed libhflow.so" >&2; exit 1; }
fi
echo "install layout OK"
