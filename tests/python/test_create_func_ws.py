"""dataflow.tools.create_func_ws: GE's workspace tool on hflow.

The command line (confirmation, argument checks, GE's error types and messages), what it writes
(names, compile config, sources), and workspaces built and run by hflow from this interpreter:
a filled-in Adder on the default devices and on 2,3,4,5, the unedited placeholder (fails the
fetch, no hang), several functions with init params and running ids, a stream function, two
workspaces whose modules share a name in one graph, and the hosts without Python (an
hflow-worker under udfIsolation, `hflow run`), which fail naming the node.

Thread-safety: each test runs alone in this process (df.init per test).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import pathlib
import re
import subprocess
import sys
import textwrap
import time
from unittest.mock import patch

import numpy as np
import pytest

import dataflow as df
import dataflow.flow_func as ff
from conftest import DEVICES, _use_cluster
from dataflow import _core
from dataflow.tools import FuncWsCreator
from dataflow.tools.create_func_ws import main

FILES = ["CMakeLists.txt", "func_assign.json", "src_cpp/func_assign.cpp", "src_python/func_assign.py"]


def run_main(ws: str, functions: str, clz_name: str = "", answer: str = "y") -> None:
    """main() as GE's tests drive it: parse_args and input patched."""
    args = argparse.Namespace(functions=functions, clz_name=clz_name, workspace=ws)
    with patch("argparse.ArgumentParser.parse_args", return_value=args), patch("builtins.input", return_value=answer):
        main()


def all_files(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# ---- the command line ------------------------------------------------------------------------

@pytest.mark.parametrize("answer,created", [("y", True), ("Y", True), ("yes", True), ("YeS", True), ("n", False),
                                            ("", False), ("no", False), ("yy", False), (" y", False)])
def test_confirmation(tmp_path, capsys, answer, created):
    ws = tmp_path / "ws"
    run_main(str(ws), "Sub:i0:i2:o0,Add:i1:i3:o1:o0", "Assign", answer)
    out = capsys.readouterr().out
    assert "args: functions=Sub:i0:i2:o0,Add:i1:i3:o1:o0, clz_name=Assign" in out
    if created:
        assert all_files(ws) == sorted(FILES)
        assert "create function workspace finish" in out
    else:
        assert not ws.exists() and out.rstrip().endswith("exit")


def test_no_input_means_no(tmp_path, capsys):
    args = argparse.Namespace(functions="add:i0:o0", clz_name="", workspace=str(tmp_path / "ws"))
    with patch("argparse.ArgumentParser.parse_args", return_value=args), patch("builtins.input", side_effect=EOFError):
        main()
    assert not (tmp_path / "ws").exists() and capsys.readouterr().out.rstrip().endswith("exit")


def test_default_workspace_is_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_main("", "add:i0:i1:o0", "Adder")
    cfg = json.loads((tmp_path / "func_adder.json").read_text())
    assert cfg["workspace"] == str(tmp_path)


def test_ge_relative_workspace(tmp_path, monkeypatch):  # GE's ut/st test_create_ws, as written there
    monkeypatch.chdir(tmp_path)
    run_main("./test_assign_ws", "Sub:i0:i2:o0,Add:i1:i3:o1:o0", "Assign")
    assert (tmp_path / "test_assign_ws" / "CMakeLists.txt").exists()
    assert json.loads((tmp_path / "test_assign_ws" / "func_assign.json").read_text())["workspace"] == \
        str(tmp_path / "test_assign_ws")


BAD_FUNCTIONS = [
    ("Sub:i0,Add:i1:o1:o0", "params 'Sub:i0' format invalid"),  # GE's format error
    ("add:i0:o0,", "params '' format invalid"),
    ("add", "params 'add' format invalid"),
    ("1add:i0:o0", "function name format invalid"),
    ("class:i0:o0", "function name format invalid"),
    ("a-b:i0:o0", "function name format invalid"),
    ("init_flow_func:i0:o0", "taken by the generated class"),
    ("add:x0:o0", "input/output format invalid: token 'x0'"),
    ("add:i:o0", "input/output format invalid"),
    ("add:i-1:o0", "input/output format invalid"),
    ("add:i\uff11:o0", "input/output format invalid"),  # a fullwidth digit
    ("add:input:o0", "input/output format invalid"),
    ("add:i0:o0:o0", "output o0 is given twice in function 'add'"),
    ("add:i0:o0,add:i1:o1", "function 'add' is given twice"),
    ("Sub:i0:i4:o0,Add:i1:i3:o1:o0", "input index 2 is not configured"),  # GE's gap
    ("add:i1:o0", "input index 0 is not configured"),
    ("Sub:i0:i1:o0,Add:i1:i3:o1:o0", "input index 1 is configured repeatedly"),  # GE's duplicate
    ("add:i0:i0:o0", "input index 0 is configured repeatedly"),
    ("Sub:i0:i2:o3,Add:i1:i3:o1:o0", "output index 2 is not configured"),  # GE's output gap
    ("add:i0:o1", "output index 0 is not configured"),
]


@pytest.mark.parametrize("functions,message", BAD_FUNCTIONS)
def test_bad_functions_raise_value_error_and_write_nothing(tmp_path, functions, message):
    ws = tmp_path / "ws"
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_main(str(ws), functions, "Assign")
    assert not ws.exists()


@pytest.mark.parametrize("clz", ["1Abc", "Ab-c", "class", "int", "delete", "FlowFunc", "\u00c4pfel", "A b"])
def test_bad_class_name(tmp_path, clz):
    with pytest.raises(ValueError, match="clz_name .* format invalid"):
        run_main(str(tmp_path / "ws"), "add:i0:o0", clz)
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize("functions,clz,stem", [
    ("Sub:i0:i2:o0,Add:i1:o1:o0", "", "sub_add"),  # GE's test without a class name
    ("a:i0:o0,b:i1:o0,c:i2:o0,d:i3:o0,e:i4:o0", "", "abcd"),  # four names at most
    ("my_func:i0:o0", "", "my__func"),  # "My_Func", snake-cased by GE's rule
    ("add:i0:o0", "HTTPServer", "http_server"),
    ("add:i0:o0", "MyAdder2", "my_adder2"),
    ("add:i0:o0", "adder", "adder"),
])
def test_names(tmp_path, functions, clz, stem):
    ws = tmp_path / "ws"
    run_main(str(ws), functions, clz)
    assert all_files(ws) == sorted(["CMakeLists.txt", f"func_{stem}.json", f"src_cpp/func_{stem}.cpp",
                                    f"src_python/func_{stem}.py"])
    assert json.loads((ws / f"func_{stem}.json").read_text())["target_bin"] == f"libfunc_{stem}.so"


def test_compile_config_and_sources(tmp_path):
    ws = tmp_path / "ws"
    run_main(str(ws), " Sub : i0 : i2 : o0 ,Add:i1:i3:o1:o0,Feed:i4:stream_input:o1", "Assign")
    cfg = json.loads((ws / "func_assign.json").read_text())
    assert cfg == {
        "func_list": [
            {"func_name": "Sub", "inputs_index": [0, 2], "outputs_index": [0], "stream_input": False},
            {"func_name": "Add", "inputs_index": [1, 3], "outputs_index": [1, 0], "stream_input": False},
            {"func_name": "Feed", "inputs_index": [4], "outputs_index": [1], "stream_input": True},
        ],
        "input_num": 5, "output_num": 2, "target_bin": "libfunc_assign.so", "workspace": str(ws),
        "cmakelist_path": "CMakeLists.txt", "heavy_load": False,
    }
    py = (ws / "src_python" / "func_assign.py").read_text()
    compile(py, "func_assign.py", "exec")
    for name in ("Sub", "Add", "Feed", "init_flow_func"):
        assert f"    def {name}(self, " in py
    assert py.count("return ff.FLOW_FUNC_FAILED") == 3 and py.count("@ff.proc_wrapper()") == 3
    cpp = (ws / "src_cpp" / "func_assign.cpp").read_text()
    for name, proc in (("Sub", "SubProc"), ("Add", "AddProc"), ("Feed", "FeedProc")):
        assert f'.RegProcFunc("{name}", &Assign::{proc})' in cpp
    assert "std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>& inputs) {\n    return Call(\"Feed\"" in cpp
    assert "Python.h" not in cpp and "pybind11" not in cpp
    cmake = (ws / "CMakeLists.txt").read_text()
    assert "project(func_assign CXX)" in cmake and "hflow_py_bridge.h" in cmake


def test_pickled_function_object_is_refused():
    infos = ff.FlowFuncInfos()
    infos.set_func_object(object())
    with pytest.raises(NotImplementedError, match="py_func"):
        FuncWsCreator("add:i0:o0", "Adder", "/nonexistent", infos)


def run_cli(args: list[str], stdin: str, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dataflow.tools.create_func_ws", *args], input=stdin, cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def test_command_line_program(tmp_path):
    r = run_cli(["-f", "add:i0:i1:o0", "-c", "Adder", "-w", "ws"], "y\n", tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"will create workspace in path '{tmp_path / 'ws'}'" in r.stdout
    assert (tmp_path / "ws" / "func_adder.json").exists()
    r = run_cli(["--functions", "add:i1:o0", "--workspace", "bad"], "y\n", tmp_path)
    assert r.returncode == 2 and "input index 0 is not configured" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "bad").exists()
    r = run_cli(["-c", "Adder"], "y\n", tmp_path)  # -f is required
    assert r.returncode == 2 and "-f/--functions" in r.stderr


# ---- workspaces built and run by hflow --------------------------------------------------------

ADDER = '''
import numpy as np
import dataflow.flow_func as ff


class Adder:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper()
    def add(self, run_context, input_flow_msgs):
        a = input_flow_msgs[0].get_tensor().numpy()
        b = input_flow_msgs[1].get_tensor().numpy()
        return run_context.set_output(0, np.add(a, b, dtype=np.int32))
'''


def make_ws(root: pathlib.Path, functions: str, clz: str, source: str = "") -> str:
    """A generated workspace under ``root``, its Python file replaced by ``source``; its config."""
    creator = FuncWsCreator(functions, clz, str(root))
    creator.generate()
    if source:
        (root / "src_python" / creator.py_name).write_text(textwrap.dedent(source))
    return creator.get_config_file()


def one_node(config: str, inputs: int, outputs: int, name: str = "ws_node"):
    data = [df.FlowData() for _ in range(inputs)]
    pp = df.FuncProcessPoint(compile_config_path=config)
    node = df.FlowNode(inputs, outputs, name=name)
    node.add_process_point(pp)
    out = node(*data)
    return data, pp, df.FlowGraph(list(out) if isinstance(out, (list, tuple)) else [out])


@pytest.fixture(params=["default", "2345"])
def ws_cluster(request, tmp_path, monkeypatch):
    """df.init on the default devices 0..3, then on 2,3,4,5."""
    c = _use_cluster(request.param, tmp_path, monkeypatch)
    df.init({"ge.exec.deviceId": "0"})
    yield c
    df.finalize()


def test_adder_workspace_runs(ws_cluster, tmp_path):
    config = make_ws(tmp_path / "adder_ws", "add:i0:i1:o0", "Adder", ADDER)
    (x, y), _, g = one_node(config, 2, 1, "adder")
    for t in range(3):
        a = np.arange(6, dtype=np.int32).reshape(2, 3) * (t + 1)
        b = np.full((2, 3), 100 + t, np.int32)
        assert g.feed_data({x: a, y: b}, timeout=120000) == 0
        out, _, code = g.fetch_data(timeout=120000)
        assert code == 0, _core.last_error()
        assert out[0].numpy().dtype == np.int32
        np.testing.assert_array_equal(out[0].numpy(), a + b)


def test_unedited_placeholder_fails_the_fetch(tmp_path, monkeypatch):
    _use_cluster("default", tmp_path, monkeypatch)
    df.init({"ge.exec.deviceId": "0"})
    try:
        config = make_ws(tmp_path / "stub_ws", "add:i0:i1:o0", "Adder")  # the stub as generated
        (x, y), _, g = one_node(config, 2, 1, "stub")
        assert g.feed_data({x: np.ones(2, np.int32), y: np.ones(2, np.int32)}, timeout=120000) == 0
        start = time.monotonic()
        out, _, code = g.fetch_data(timeout=60000)
        assert out == [] and code == ff.FLOW_FUNC_FAILED
        assert time.monotonic() - start < 50  # the failure came back, not the timeout
    finally:
        df.finalize()


@pytest.mark.parametrize("source,message", [
    (ADDER.replace("def add(", "def plus("), "class Adder in .* has no method add"),
    (ADDER.replace("class Adder", "class Renamed"), "has no class 'Adder'"),
    (ADDER + "\nraise RuntimeError('broken module')\n", "broken module"),
])
def test_broken_python_side_fails_naming_the_node(one_cluster, tmp_path, caplog, source, message):
    caplog.set_level(logging.ERROR, logger="dataflow.udf")
    config = make_ws(tmp_path / "broken_ws", "add:i0:i1:o0", "Adder", source)
    (x, y), _, g = one_node(config, 2, 1, "broken")
    g.feed_data({x: np.ones(2, np.int32), y: np.ones(2, np.int32)}, timeout=120000)
    out, _, code = g.fetch_data(timeout=60000)
    assert out == [] and code != 0
    assert "broken" in _core.last_error()
    assert "FlowNode 'broken' (func_adder.Adder): init raised" in caplog.text
    assert re.search(message, caplog.text), caplog.text


MULTI = '''
import numpy as np
import dataflow as df
import dataflow.flow_func as ff


class Multi:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        code, self.k = meta_params.get_attr_int("k")
        return code

    @ff.proc_wrapper()
    def scale(self, run_context, input_flow_msgs):
        out = df.alloc_tensor([2], df.DT_INT64)  # a message of the run context: needs the running state
        out.numpy()[...] = input_flow_msgs[0].get_tensor().numpy() * self.k
        return run_context.set_output(0, run_context.to_flow_msg(out))

    @ff.proc_wrapper()
    def where(self, run_context, input_flow_msgs):
        ids = [df.get_running_device_id(), df.get_running_instance_id(), df.get_running_instance_num()]
        return run_context.set_output(1, np.array(ids, np.int64))
'''


def test_several_functions_init_params_and_running_ids(one_cluster, tmp_path):
    config = make_ws(tmp_path / "multi_ws", "scale:i0:o0,where:i1:o1", "Multi", MULTI)
    (a, b), pp, g = one_node(config, 2, 2)
    pp.set_init_param("k", 7)
    assert g.feed_data({a: np.array([1, 2], np.int64), b: np.zeros(1, np.int8)}, timeout=120000) == 0
    out, _, code = g.fetch_data(timeout=120000)
    assert code == 0, _core.last_error()
    assert out[0].numpy().tolist() == [7, 14]
    dev, inst, num = out[1].numpy().tolist()
    assert dev in DEVICES["2345"] and (inst, num) == (0, 1)


STREAM = '''
import dataflow.flow_func as ff


class Doubler:
    @ff.proc_wrapper()
    def double(self, run_context, input_flow_msgs):
        queue = input_flow_msgs[0]  # a stream function gets its input queue; it stops with the graph
        while True:
            value = queue.get().numpy()
            if run_context.set_output(0, value * 2) != ff.FLOW_FUNC_SUCCESS:
                return ff.FLOW_FUNC_FAILED
'''


def test_stream_function(one_cluster, tmp_path):
    config = make_ws(tmp_path / "stream_ws", "double:i0:stream_input:o0", "Doubler", STREAM)
    (x,), _, g = one_node(config, 1, 1)
    for v in (3, 5):
        assert g.feed_data({x: np.array([v], np.float32)}, timeout=120000) == 0
        out, _, code = g.fetch_data(timeout=120000)
        assert code == 0, _core.last_error()
        assert out[0].numpy().tolist() == [2.0 * v]


def test_two_workspaces_with_one_module_name(one_cluster, tmp_path):
    times = ADDER.replace("np.add(a, b", "np.multiply(a, b")
    adder = make_ws(tmp_path / "one", "add:i0:i1:o0", "Adder", ADDER)
    multiplier = make_ws(tmp_path / "two", "add:i0:i1:o0", "Adder", times)
    x, y = df.FlowData(), df.FlowData()
    outs = []
    for config, name in ((adder, "plus"), (multiplier, "times")):
        node = df.FlowNode(2, 1, name=name)
        node.add_process_point(df.FuncProcessPoint(compile_config_path=config))
        outs.append(node(x, y))
    g = df.FlowGraph(outs)
    assert g.feed_data({x: np.array([2, 3], np.int32), y: np.array([10, 20], np.int32)}, timeout=120000) == 0
    out, _, code = g.fetch_data(timeout=120000)
    assert code == 0, _core.last_error()
    assert [o.numpy().tolist() for o in out] == [[12, 23], [20, 60]]


def test_hflow_worker_has_no_python(tmp_path, monkeypatch, capfd):
    _use_cluster("default", tmp_path, monkeypatch)
    df.init({"ge.exec.deviceId": "0", "hflow.udfIsolation": "1"})  # library UDFs go to hflow-worker
    try:
        config = make_ws(tmp_path / "iso_ws", "add:i0:i1:o0", "Adder", ADDER)
        (x, y), _, g = one_node(config, 2, 1, "isolated_adder")
        g.feed_data({x: np.ones(2, np.int32), y: np.ones(2, np.int32)}, timeout=120000)
        out, _, code = g.fetch_data(timeout=60000)
        assert out == [] and code != 0
        assert "isolated_adder" in _core.last_error()
    finally:
        df.finalize()
    err = capfd.readouterr().err
    assert "FlowNode 'isolated_adder' (func_adder.Adder, a Python UDF workspace)" in err
    assert "no Python interpreter" in err


def test_cpp_host_fails_naming_the_node(tmp_path):
    hflow = pathlib.Path(os.environ.get("HFLOW_SDK_DIR", "/nonexistent")).parent / "bin" / "hflow"
    if not hflow.exists():
        pytest.skip(f"no hflow program at {hflow} (a build tree's bin/)")
    config = make_ws(tmp_path / "host_ws", "add:i0:i1:o0", "Adder", ADDER)
    graph = tmp_path / "graph.json"
    graph.write_text(json.dumps({"name": "ws", "inputs": ["x", "y"], "outputs": ["cpp_host_adder:0"], "nodes": [
        {"name": "cpp_host_adder", "inputs": ["x", "y"], "outputs": 1, "compile_config": config}]}))
    env = {k: v for k, v in os.environ.items() if k != "RESOURCE_CONFIG_PATH"}
    r = subprocess.run([str(hflow), "run", str(graph), "--input", "x=int32:1,2", "--input", "y=int32:3,4"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode != 0
    assert "FlowNode 'cpp_host_adder' (func_adder.Adder, a Python UDF workspace)" in r.stderr
    assert "no Python interpreter" in r.stderr
