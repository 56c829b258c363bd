"""Python UDFs in worker processes (df.init's "hflow.udfIsolation": "1"): each runs in an interpreter
of its own, an hflow worker (one per device), made from the pickled process point; the results are
the same as in the host, a crash fails the graph naming the node instead of ending this interpreter,
and no worker is left after finalize. On each test cluster (with and without device 0)."""
from __future__ import annotations

import ctypes
import os

import pytest

import dataflow as df
from dataflow import _core

from conftest import CLUSTERS, _use_cluster, children


@df.pyflow
def whose(x):
    return [x, os.getpid()]


@df.pyflow
class Scale:
    def __init__(self, k, offset=0):
        self.k = k
        self.offset = offset
        self.calls = 0

    @df.method()
    def run(self, x):
        self.calls += 1
        return [x * self.k + self.offset, self.calls, os.getpid()]


@df.pyflow
def crash_on_three(x):
    if x == 3:
        ctypes.string_at(0)  # a null read: SIGSEGV on this thread, now
    return x


@df.pyflow(stream_input="Queue")
def stream_whose(q):
    return [q.get(), os.getpid()]


# Made at import, as a program that builds its graph at module level does: the worker imports this
# module too, and its own registrations must not take the names the host's process point has.
AT_IMPORT = df.FuncProcessPoint(py_func=whose)


def _python_workers() -> list[int]:
    """This process's children that are Python workers (dataflow._worker)."""
    return [pid for pid, _, cmd in children() if b"dataflow import _worker" in cmd]


@pytest.fixture(params=list(CLUSTERS))
def isolated(request, tmp_path, monkeypatch):
    cluster = _use_cluster(request.param, tmp_path, monkeypatch)
    df.init({"ge.exec.deviceId": "0", "hflow.udfIsolation": "1"})
    yield cluster
    df.finalize()
    assert _python_workers() == []


def test_a_function_runs_in_a_worker(isolated):
    d = df.FlowData()
    g = df.FlowGraph([whose.fnode()(d)])
    pids = set()
    for x in (1, 2, 3):
        assert g.feed({d: x}) == 0
        (out,), code = g.fetch()
        assert code == 0
        assert out[0] == x
        pids.add(out[1])
    assert len(pids) == 1
    pid = pids.pop()
    assert pid != os.getpid()
    assert pid in _python_workers()


def test_a_process_point_made_at_import_runs(isolated):
    d = df.FlowData()
    node = df.FlowNode(1, 1, name="at_import")
    node.add_process_point(AT_IMPORT)
    g = df.FlowGraph([node(d)])
    assert g.feed({d: 6}) == 0
    (out,), code = g.fetch()
    assert code == 0, _core.last_error()
    assert out[0] == 6 and out[1] != os.getpid()


def test_a_stream_function_stays_in_the_host(isolated):
    """A worker runs no stream function yet: under isolation its node runs in this process."""
    d = df.FlowData()
    g = df.FlowGraph([stream_whose.fnode()(d)])
    assert g.feed({d: 7}) == 0
    (out,), code = g.fetch()
    assert code == 0, _core.last_error()
    assert out == [7, os.getpid()]


def test_a_class_keeps_its_arguments_and_state(isolated):
    d = df.FlowData()
    g = df.FlowGraph([Scale.fnode(3, offset=1)(d)])
    for i, x in enumerate((2, 5, 7), start=1):
        assert g.feed({d: x}) == 0
        (out,), code = g.fetch()
        assert code == 0
        assert out[:2] == [3 * x + 1, i]  # the object lives on between calls
        assert out[2] != os.getpid()


def test_a_chain_on_one_device_shares_its_worker(isolated):
    d = df.FlowData()
    a = Scale.fnode(2)
    b = whose.fnode()
    last = isolated.devices[-1]
    g = df.FlowGraph([b(a(d))], graph_options={"ge.exec.logicalDeviceClusterDeployMode": "SINGLE",
                                                "ge.exec.logicalDeviceId": f"[0:{last}]"})
    assert g.feed({d: 4}) == 0
    (out,), code = g.fetch()
    assert code == 0
    assert out[0][0] == 8
    assert out[1] == out[0][2]  # one worker ran both
    assert out[1] != os.getpid()


def test_a_crash_fails_the_graph_and_the_session_goes_on(isolated):
    d = df.FlowData()
    g = df.FlowGraph([crash_on_three.fnode()(d)])
    for x in (1, 2):
        assert g.feed({d: x}) == 0
        assert g.fetch() == ([x], 0)
    assert g.feed({d: 3}) == 0
    out, code = g.fetch(timeout=5000)
    assert code != 0, out
    error = _core.last_error()
    assert "SIGSEGV" in error
    assert "crash_on_three" in error
    # A new graph runs.
    d2 = df.FlowData()
    g2 = df.FlowGraph([whose.fnode()(d2)])
    assert g2.feed({d2: 9}) == 0
    (out,), code = g2.fetch()
    assert code == 0 and out[0] == 9


def test_a_process_point_that_cannot_be_pickled_is_refused_at_build(isolated):
    @df.pyflow
    def local(x):
        return x

    d = df.FlowData()
    g = df.FlowGraph([local.fnode()(d)])
    assert g.feed({d: 1}) != 0
    error = _core.last_error()
    assert "cannot run in a worker process" in error
    assert "defined inside a function" in error


_SCRIPT = '''
import os
import dataflow as df

@df.pyflow
def whose(x):
    return [x, os.getpid()]

if __name__ == "__main__":
    df.init({"ge.exec.deviceId": "0", "hflow.udfIsolation": "1"})
    d = df.FlowData()
    g = df.FlowGraph([whose.fnode()(d)])
    assert g.feed({d: 5}) == 0
    (out,), code = g.fetch()
    print("result", code, out[0], out[1] != os.getpid())
    df.finalize()
'''


def test_a_udf_of_the_main_script_runs_in_a_worker(tmp_path):
    """A process point defined in the main script: the worker runs the script again as
    __hflow_main__, so its guarded part runs in the host only."""
    import subprocess
    import sys

    script = tmp_path / "main_udf.py"
    script.write_text(_SCRIPT)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "result 0 5 True" in r.stdout, r.stdout + r.stderr


def test_a_udf_of_a_program_without_a_script_file_is_refused(tmp_path):
    """python -c: __main__ has no file the worker could run, so the build fails saying so."""
    import subprocess
    import sys

    code = _SCRIPT.replace('if __name__ == "__main__":', "if True:")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode != 0
    assert "no script file" in r.stderr, r.stderr
