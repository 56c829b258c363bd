"""A host thread blocked in fetch_data (timeout -1) holds no GIL: Python UDFs keep running."""
from __future__ import annotations

import threading
import time

import numpy as np

import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core


class Double:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        return ctx.set_output(0, inputs[0].get_tensor().numpy() * 2)


def _graph():
    d = df.FlowData()
    node = df.FlowNode(1, 1)
    node.add_process_point(df.FuncProcessPoint(py_func=Double))
    return df.FlowGraph([node(d)]), d


def test_blocked_fetch_does_not_stall_python_udfs(one_cluster):
    waiting, wd = _graph()
    busy, bd = _graph()
    result = {}

    def blocked():
        result["waiting"] = waiting.fetch_data(timeout=-1)

    t = threading.Thread(target=blocked, daemon=True)
    t.start()
    time.sleep(0.2)
    assert t.is_alive()
    t0 = time.monotonic()
    for i in range(5):
        assert busy.feed_data({bd: np.array([i], np.int32)}) == 0
        out, _, code = busy.fetch_data(timeout=5000)
        assert code == 0, _core.last_error()
        assert out[0].numpy().tolist() == [2 * i]
    assert time.monotonic() - t0 < 10
    assert t.is_alive()  # still waiting for its own graph
    assert waiting.feed_data({wd: np.array([21], np.int32)}) == 0
    t.join(10)
    assert not t.is_alive()
    out, _, code = result["waiting"]
    assert code == 0 and out[0].numpy().tolist() == [42]
