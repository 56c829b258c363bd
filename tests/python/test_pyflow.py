"""@df.pyflow functions and classes, @df.method options, streaming output and stream input."""
from __future__ import annotations

from typing import Tuple

import numpy as np
import pytest

import dataflow as df
from dataflow import _core


@df.pyflow
def add_one(x):
    return x + 1


@df.pyflow(num_returns=2)
def split(x, y):
    return x * 2, y * 3


@df.pyflow
def typed_pair(x) -> Tuple[int, int]:
    return x, -x


@df.pyflow(resources={"num_cpus": 1}, env_hook_func=lambda: None, visible_device_enable=True)
def with_ignored_options(x):
    return x


@df.pyflow
class Accumulator:
    def __init__(self, start, step=1):
        self.total = start
        self.step = step

    @df.method()
    def add(self, x):
        self.total += x * self.step
        return self.total

    @df.method(num_returns=2)
    def pair(self, a, b):
        return (a, self.total + b)


@df.pyflow
def count_up(n):
    for i in range(n):
        yield i


@df.pyflow(stream_input="Queue")
def sum_queues(q0, q1):
    return q0.get() + q1.get()


@df.pyflow(choice_output=lambda v: v >= 0)
def only_non_negative(x):
    return x


@df.pyflow
def tensor_twice(t):
    arr = t.numpy()
    out = df.alloc_tensor(list(arr.shape), arr.dtype)
    out.numpy()[...] = arr * 2
    return out


def test_function_node(cluster):
    d = df.FlowData()
    node = add_one.fnode()
    assert node.name == "add_one_fnode"
    g = df.FlowGraph([node(d)])
    assert g.feed({d: 41}) == 0
    assert g.fetch() == ([42], 0)


def test_num_returns_and_annotation(one_cluster):
    a, b = df.FlowData(), df.FlowData()
    o0, o1 = split.fnode()(a, b)
    t0, t1 = typed_pair.fnode()(a)
    g = df.FlowGraph([o1, o0, t1, t0])
    assert g.feed({a: 2, b: 5}) == 0
    outs, code = g.fetch()
    assert code == 0
    assert outs == [15, 4, -2, 2]
    assert typed_pair.output_num == 2 and split.input_num == 2


def test_ignored_options_are_accepted(one_cluster):
    d = df.FlowData()
    g = df.FlowGraph([with_ignored_options.fnode()(d)])
    assert g.feed({d: "x"}) == 0
    assert g.fetch() == (["x"], 0)


def test_class_with_two_methods(cluster):
    d0, d1, d2 = df.FlowData(), df.FlowData(), df.FlowData()
    node = Accumulator.fnode(100, step=2)
    assert node.name == "Accumulator_fnode"
    assert node.input_num == 3 and node.output_num == 3
    total = node.add(d0)
    p0, p1 = node.pair(d1, d2)
    g = df.FlowGraph([total, p0, p1])
    assert g.feed({d0: 5}, partial_inputs=True) == 0
    outs, code = g.fetch([0])
    assert code == 0 and outs == [110]
    assert g.feed({d1: "a", d2: 1}, partial_inputs=True) == 0
    outs, code = g.fetch([1, 2])
    assert code == 0 and outs == ["a", 111]


def test_generator_streams_outputs(one_cluster):
    d = df.FlowData()
    g = df.FlowGraph([count_up.fnode()(d)])
    assert g.feed({d: 3}) == 0
    got = [g.fetch(timeout=5000) for _ in range(3)]
    assert got == [([0], 0), ([1], 0), ([2], 0)]
    assert g.fetch(timeout=100)[1] == _core.TIMEOUT


def test_stream_input_queue(one_cluster):
    a, b = df.FlowData(), df.FlowData()
    g = df.FlowGraph([sum_queues.fnode()(a, b)])
    assert g.feed({a: 3, b: 4}) == 0
    assert g.fetch(timeout=5000) == ([7], 0)


def test_choice_output_drops(one_cluster):
    d = df.FlowData()
    g = df.FlowGraph([only_non_negative.fnode()(d)])
    assert g.feed({d: -1}) == 0
    assert g.feed({d: 2}) == 0
    assert g.fetch(timeout=5000) == ([2], 0)


def test_tensors_in_and_out(one_cluster):
    d = df.FlowData()
    g = df.FlowGraph([tensor_twice.fnode()(d)])
    assert g.feed({d: df.Tensor(np.array([1, 2], np.int16))}) == 0
    (t,), code = g.fetch(timeout=5000)
    assert code == 0
    assert t.numpy().tolist() == [2, 4] and t.tensor_desc.dtype == df.DT_INT16
    # feed_data/fetch_data work on the same graph too
    assert g.feed_data({d: np.array([3], np.int16)}) == 0
    out, _, code = g.fetch_data(timeout=5000)
    assert code == 0 and out[0].numpy().tolist() == [6]


def test_pyflow_misuse():
    with pytest.raises(TypeError, match="not support"):
        df.pyflow(bogus=1)(lambda x: x)
    with pytest.raises(TypeError, match="Queue"):
        df.pyflow(stream_input="List")(lambda x: x)
    # GE checks these with assert: AssertionError
    with pytest.raises(AssertionError, match="Unexpected keyword"):
        df.method(resources={})
    with pytest.raises(AssertionError, match="kwargs"):
        df.method(1)
    with pytest.raises(AssertionError, match="num_returns"):
        @df.pyflow(num_returns=3)
        def f(x) -> Tuple[int, int]:
            return x, x
    with pytest.raises(AssertionError, match="greater than 0"):
        df.pyflow(num_returns=0)(lambda x: x)
    with pytest.raises(TypeError, match="cannot be called directly"):
        add_one(1)
    with pytest.raises(TypeError, match="decorator"):
        df.pyflow(3)
    with pytest.raises(df.DfException, match="need 1 input"):
        with_ignored_options.fnode()(df.FlowData(), df.FlowData())


def test_method_wire_checks_arity(finalized):
    node = Accumulator.fnode(0)
    with pytest.raises(df.DfException, match="Func:add need 1 input"):
        node.add(df.FlowData(), df.FlowData())


@df.pyflow(choice_output=lambda v: v != "drop")
class Filter:
    @df.method()
    def keep(self, x):
        return x


def test_class_options_apply_to_methods(one_cluster):
    d = df.FlowData()
    g = df.FlowGraph([Filter.fnode().keep(d)])
    assert g.feed({d: "drop"}) == 0
    assert g.feed({d: "keep"}) == 0
    assert g.fetch(timeout=5000) == (["keep"], 0)


@df.pyflow
def mark_empty(x):
    return "empty" if x is None else x


def test_empty_message_arrives_as_none(one_cluster):
    # GE's null data: the UDF's FlowMsg has no tensor, so pyflow gives None.
    d = df.FlowData()
    g = df.FlowGraph([mark_empty.fnode()(d)])
    assert g.feed({d: None}) == 0
    assert g.fetch(timeout=5000) == (["empty"], 0)


@df.pyflow
def flags_of(x):
    return x


def test_eos_through_a_pyflow_node(one_cluster):
    d = df.FlowData()
    g = df.FlowGraph([flags_of.fnode()(d)])
    assert g.feed_data({d: np.array([1], np.int8)}, df.FlowInfo(flow_flags=df.FlowFlag.DATA_FLOW_FLAG_EOS)) == 0
    out, info, code = g.fetch_data(timeout=5000)
    assert code == 0 and out[0].numpy().tolist() == [1]
    assert info.flow_flags & df.FlowFlag.DATA_FLOW_FLAG_EOS
    assert g.feed_data({}, df.FlowInfo(flow_flags=df.FlowFlag.DATA_FLOW_FLAG_EOS)) == 0
    out, info, code = g.fetch_data(timeout=5000)
    assert code == 0 and info.flow_flags & df.FlowFlag.DATA_FLOW_FLAG_EOS


def test_fetch_hands_over_an_end_of_stream_message_with_failed(one_cluster):
    # GE's FlowMsg fetch returns FAILED for a message flagged EOS, and the
    # message with it (GE's Python fetch converts it all the same).
    d = df.FlowData()
    g = df.FlowGraph([flags_of.fnode()(d)])
    eos = df.FlowInfo(flow_flags=df.FlowFlag.DATA_FLOW_FLAG_EOS)
    assert g.feed_data({d: np.array([7], np.int8)}, eos) == 0
    out, code = g.fetch(timeout=5000)
    assert code == _core.FAILED
    assert len(out) == 1 and out[0].numpy().tolist() == [7]
