"""dataflow._core's own checks: malformed arguments raise TypeError or
ValueError (never crash or RuntimeError), context handles the runtime did not
give out are refused, and a fetch's arrays never outrun their bytes."""
from __future__ import annotations

import numpy as np
import pytest

import dataflow as df
from dataflow import _core


@df.pyflow
def echo(x):
    return x


def test_unknown_context_handles_are_refused(one_cluster):
    d = df.FlowData()
    df.FlowGraph([echo.fnode()(d)])  # starts hflow's runtime
    before = _core.rt.get_current_context()
    assert _core.rt.set_current_context(0x12345) != 0
    assert "not made by create_context" in _core.rt.last_error()
    assert _core.rt.destroy_context(0x12345) != 0
    assert _core.rt.get_context_device(0x12345)[0] != 0
    assert _core.rt.get_current_context() == before
    code, ctx = _core.rt.create_context(one_cluster.devices[-1])
    assert code == 0 and ctx != 0
    assert _core.rt.get_context_device(ctx) == (0, one_cluster.devices[-1])
    assert _core.rt.set_current_context(ctx) == 0
    assert _core.rt.set_current_context(before) == 0
    assert _core.rt.destroy_context(ctx) == 0
    assert _core.rt.destroy_context(ctx) != 0  # gone: refused, not freed twice


def test_malformed_feed_arguments_raise_type_or_value_errors():
    s = _core.Session({})
    info = (0, 0, 0, 0, b"", 0)
    arr = np.zeros(2, np.int32)
    with pytest.raises(TypeError):
        s.feed_tensors(1, [], [("x", arr)], info, 0)
    with pytest.raises(TypeError):
        s.feed_tensors(1, [], [(3, [1, 2])], info, 0)
    with pytest.raises(TypeError):
        s.feed_tensors(1, [], [3], info, 0)
    with pytest.raises(TypeError):
        s.feed_tensors(1, [], [(3, arr)], (None, 0, 0, 0, b"", 0), 0)
    with pytest.raises(ValueError):
        s.feed_tensors(1, [], [(3, arr)], (0, 0, 0), 0)
    with pytest.raises(ValueError):
        s.feed_tensors(1, [], [(3, arr)], (0, 0, 0, 0, b"x" * 65, 0), 0)
    with pytest.raises(ValueError):
        s.feed_tensors(1, [], [(9, arr)], info, 0)  # int64 code, int32 items
    with pytest.raises(ValueError):
        s.feed_tensors(1, [], [(3, np.zeros((4, 4), np.int32)[:, 1])], info, 0)
    with pytest.raises(TypeError):
        s.feed_messages(1, [], [(1, object(), info)], 0)
    with pytest.raises(TypeError):
        s.feed_messages(1, [], [("raw", b"x", info)], 0)
    with pytest.raises(TypeError):
        s.feed_messages(1, [], [(1, b"x")], 0)
