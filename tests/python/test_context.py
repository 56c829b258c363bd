"""Context transparency: no dataflow call changes the calling thread's device context."""
from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core, rt

from conftest import CLUSTERS, DEVICES


class Plus:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        return ctx.set_output(0, inputs[0].get_tensor().numpy() + 1)


@df.pyflow
def echo(x):
    return x


@pytest.mark.parametrize("name", ["2345", "367"])
def test_user_context_unchanged_by_every_call(name, tmp_path, monkeypatch, finalized):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(CLUSTERS[name]))
    monkeypatch.setenv("RESOURCE_CONFIG_PATH", str(path))
    devices = DEVICES[name]
    first, last = devices[0], devices[-1]
    df.init({"ge.exec.deviceId": "0"})
    # The user binds a context before any FlowGraph exists (the first rt call initialises GE).
    assert rt.get_current_context() == 0
    assert rt.set_device(first) == 0, rt.last_error()
    code, mine = rt.create_context(last)
    assert code == 0 and mine != 0, rt.last_error()
    assert rt.set_current_context(mine) == 0

    def unchanged(after):
        assert rt.get_current_context() == mine, f"context changed by {after}"

    try:
        d0 = df.FlowData()
        warm = df.FlowGraph([echo.fnode()(d0)])
        unchanged("the first FlowGraph (the session)")
        assert warm.feed({d0: 1}) == 0 and warm.fetch(timeout=5000) == ([1], 0)
        unchanged("feed/fetch of the first graph")
        d = df.FlowData()
        unchanged("FlowData")
        node = df.FlowNode(1, 1)
        node.add_process_point(df.FuncProcessPoint(py_func=Plus))
        unchanged("FlowNode/FuncProcessPoint")
        g = df.FlowGraph([node(d)])  # ge_initialize + Session
        unchanged("FlowGraph")
        assert g.feed_data({d: np.array([1], np.int32)}) == 0  # build on first feed
        unchanged("feed_data")
        out, _, code = g.fetch_data(timeout=5000)
        assert code == 0 and out[0].numpy().tolist() == [2]
        unchanged("fetch_data")
        assert g.fetch_data(timeout=50)[2] == _core.TIMEOUT
        unchanged("fetch_data timing out")
        assert g.feed({d: df.Tensor(np.array([5], np.int32))}) == 0
        unchanged("feed")
        assert g.fetch(timeout=5000)[1] == 0
        unchanged("fetch")
        d2 = df.FlowData()
        g2 = df.FlowGraph([echo.fnode()(d2)])
        assert g2.feed({d2: "x"}) == 0 and g2.fetch(timeout=5000) == (["x"], 0)
        unchanged("pyflow graph")
        assert g.feed_data({d: np.array(["s"])}) == _core.PARAM_INVALID
        unchanged("a failing feed")
        gpp = df.GraphProcessPoint(df.Framework.ONNX, "none.onnx").fnode(1, 1)
        d3 = df.FlowData()
        assert df.FlowGraph([gpp(d3)]).feed_data({d3: np.ones(1, np.float32)}) != 0
        unchanged("a failing build")
        seen = []

        def other_thread():
            seen.append(rt.get_current_context())
            assert g.feed_data({d: np.array([0], np.int32)}) == 0
            seen.append(g.fetch_data(timeout=5000)[2])
            seen.append(rt.get_current_context())

        t = threading.Thread(target=other_thread)
        t.start()
        t.join(30)
        assert seen == [0, 0, 0]  # a thread without a context still has none
        unchanged("another thread's feed/fetch")
        df.finalize()
        unchanged("finalize")
    finally:
        rt.set_current_context(mine)
        rt.destroy_context(mine)
        rt.reset_device(first)


def test_rt_needs_init_in_a_fresh_process():
    # This process has a runtime already (it outlives finalize); a fresh one has none before init.
    probe = ("import dataflow as df\nfrom dataflow import _core, rt\n"
             "try:\n    rt.get_current_context()\nexcept df.DfException as e:\n"
             "    assert e.error_code == _core.NOT_INIT and 'df.init' in e.message, e.message\n"
             "    print('refused')\n"
             "df.init({'ge.exec.deviceId': '0'})\nassert rt.get_current_context() == 0\n"
             "assert rt.set_device(0) == 0 and rt.get_device() == (0, 0)\n"
             "df.finalize()\nassert rt.get_device() == (0, 0)\nprint('ok')\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["refused", "ok"]


def test_cluster_comes_from_resource_config_path(cluster):
    d = df.FlowData()
    g = df.FlowGraph([echo.fnode()(d)])  # initializes GE on the fixture's cluster
    assert sorted(rt.device_ids()) == cluster.devices
    assert rt.device_count() == len(cluster.devices)
    assert g.feed({d: "x"}) == 0 and g.fetch(timeout=5000) == (["x"], 0)
