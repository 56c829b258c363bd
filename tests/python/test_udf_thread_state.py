"""Regression: a Python UDF's executor thread keeps one Python thread state between calls.

Before the fix every call made a new thread state and deleted it (pybind11's
gil_scoped_acquire on a thread Python did not make), which in CPython 3.11 maps and unmaps a
frame stack per call: ~100 us a call. A ``threading.local`` shows it from Python: it lives in
the thread state, so with one state per thread a count kept in it grows across calls, and with a
state per call every call sees it fresh. The second test switches the fix off
(``_core._keep_udf_thread_states(False)``) in a fresh process, proving the first would catch
the regression. The third checks that the states kept by threads that exited are deleted.
"""
from __future__ import annotations

import os
import subprocess
import sys

PROBE = r'''
import sys, threading
import numpy as np
import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core

_core._keep_udf_thread_states(sys.argv[1] == "keep")


class Count:
    @ff.init_wrapper()
    def init_flow_func(self, params):
        self.local = threading.local()
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        self.local.n = getattr(self.local, "n", 0) + 1
        return ctx.set_output(0, np.array([self.local.n], np.int64))


df.init({"ge.exec.deviceId": "0"})
x = df.FlowData()
node = df.FlowNode(1, 1)
node.add_process_point(df.FuncProcessPoint(py_func=Count))
g = df.FlowGraph([node(x)])
counts = []
for i in range(40):
    assert g.feed_data({x: np.zeros(1, np.int32)}, timeout=10000) == 0
    out, _, code = g.fetch_data(timeout=10000)
    assert code == 0, _core.last_error()
    counts.append(int(out[0].numpy()[0]))
df.finalize()
print(max(counts), len(counts))
'''


REAP = r'''
import numpy as np
import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core


class Echo:
    @ff.init_wrapper()
    def init_flow_func(self, params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        return ctx.set_output(0, inputs[0])


def run_once():
    df.init({"ge.exec.deviceId": "0"})
    x = df.FlowData()
    node = df.FlowNode(1, 1)
    node.add_process_point(df.FuncProcessPoint(py_func=Echo))
    g = df.FlowGraph([node(x)])
    assert g.feed_data({x: np.zeros(1, np.int32)}, timeout=10000) == 0
    assert g.fetch_data(timeout=10000)[2] == 0, _core.last_error()
    df.finalize()  # joins hflow's threads: their kept states become orphans


run_once()
filed, reaped = _core._udf_thread_states()
run_once()  # the first Python call on a new hflow thread deletes them
print(filed, *_core._udf_thread_states())
'''


def test_kept_states_of_exited_threads_are_deleted():
    done = subprocess.run([sys.executable, "-c", REAP], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    filed_first, filed, reaped = (int(v) for v in done.stdout.split())
    assert filed_first >= 1  # the first run's threads filed their states at exit
    assert reaped >= filed_first  # the second run deleted at least those
    assert reaped <= filed


def run_probe(mode: str) -> tuple[int, int]:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    top, n = done.stdout.split()
    return int(top), int(n)


def test_executor_thread_keeps_its_thread_state_between_calls():
    top, n = run_probe("keep")
    # 40 calls on at most a few executor threads: some thread ran several of them.
    assert n == 40 and top >= 2


def test_the_regression_test_bites_with_the_fix_off():
    top, n = run_probe("per-call")
    assert n == 40 and top == 1
