"""Python UDFs written against dataflow.flow_func (init_wrapper/proc_wrapper classes)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core


class AddParams:
    """out0 = in0 + in1 + k; out1 = [device id, instance id, instance num] of this instance."""

    @ff.init_wrapper()
    def init_flow_func(self, params):
        code, self.k = params.get_attr_int("k")
        return code if code else ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,i1,o0,o1")
    def proc(self, ctx, inputs):
        a = inputs[0].get_tensor().numpy()
        b = inputs[1].get_tensor().numpy()
        out = df.alloc_tensor(list(a.shape), a.dtype)  # a UDF tensor message: no copy on set_output
        out.numpy()[...] = a + b + self.k
        if ctx.set_output(0, ctx.to_flow_msg(out)) != ff.FLOW_FUNC_SUCCESS:
            return ff.FLOW_FUNC_FAILED
        ids = np.array([df.get_running_device_id(), df.get_running_instance_id(), df.get_running_instance_num()],
                       np.int64)
        return ctx.set_output(1, ids)


def test_single_python_udf(cluster):
    d0, d1 = df.FlowData(), df.FlowData()
    pp = df.FuncProcessPoint(py_func=AddParams, workspace_dir="/nonexistent/unused")
    pp.set_init_param("k", 7)
    node = df.FlowNode(2, 2, name="adder")
    node.add_process_point(pp)
    o0, o1 = node(d0, d1)
    g = df.FlowGraph([o0, o1])
    a = np.arange(4, dtype=np.int32)
    assert g.feed_data({d0: a, d1: a}) == 0
    out, _, code = g.fetch_data()
    assert code == 0, _core.last_error()
    np.testing.assert_array_equal(out[0].numpy(), a + a + 7)
    dev, inst, num = out[1].numpy().tolist()
    assert dev in cluster.devices
    assert inst == 0 and num == 1


class ParamProbe:
    @ff.init_wrapper()
    def init_flow_func(self, params):
        self.seen = {
            "s": params.get_attr_str("s"), "f": params.get_attr_float("f"), "b": params.get_attr_bool("b"),
            "l": params.get_attr_int_list("l"), "t": params.get_attr_tensor_dtype("t"),
            "tl": params.get_attr_tensor_dtype_list("tl"), "missing": params.get_attr_int("missing")[0],
            "mismatch": params.get_attr_int("s")[0], "inputs": params.get_input_num(),
        }
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        import pickle

        data = pickle.dumps(self.seen)
        msg = ctx.alloc_raw_data_msg(len(data))
        msg.get_raw_data()[:] = data
        msg.set_msg_type(ff.MSG_TYPE_PICKLED_MSG)
        return ctx.set_output(0, msg)


def test_init_params_reach_python_udf(one_cluster):
    d = df.FlowData()
    pp = df.FuncProcessPoint(py_func=ParamProbe)
    for k, v in {"s": "str", "f": 0.5, "b": True, "l": [1, 2, 3], "t": df.DT_INT16,
                 "tl": [df.DT_FLOAT, df.DT_UINT8]}.items():
        pp.set_init_param(k, v)
    node = df.FlowNode(1, 1)
    node.add_process_point(pp)
    g = df.FlowGraph([node(d)])
    assert g.feed({d: 0}) == 0
    (seen,), code = g.fetch()
    assert code == 0
    assert seen["s"] == (0, "str")
    assert seen["f"] == (0, 0.5)
    assert seen["b"] == (0, True)
    assert seen["l"] == (0, [1, 2, 3])
    assert seen["t"] == (0, np.int16)
    assert seen["tl"] == (0, [np.float32, np.uint8])
    assert seen["missing"] == ff.FLOW_FUNC_ERR_ATTR_NOT_EXITS
    assert seen["mismatch"] == ff.FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH
    assert seen["inputs"] == 1


class TwoFuncs:
    """Two functions on one node: proc0 reads input 0 -> output 0, proc1 input 1 -> output 1."""

    @ff.proc_wrapper("i0,o0")
    def proc0(self, ctx, inputs):
        return ctx.set_output(0, inputs[0].get_tensor().numpy() * 10)

    @ff.proc_wrapper("i1,o1")
    def proc1(self, ctx, inputs):
        return ctx.set_output(1, inputs[0].get_tensor().numpy() + 1)


class Relay:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        return ctx.set_output(0, inputs[0])


def test_multi_function_node_fetched_by_index(cluster):
    d0, d1 = df.FlowData(), df.FlowData()
    control = df.FlowNode(1, 1, name="control")
    control.add_process_point(df.FuncProcessPoint(py_func=Relay))
    multi = df.FlowNode(2, 2, name="multi")
    multi.add_process_point(df.FuncProcessPoint(py_func=TwoFuncs))
    o0, o1 = multi(control(d0), d1)
    g = df.FlowGraph([o0, o1])
    assert g.feed_data({d0: np.array([2], np.int32)}, partial_inputs=True) == 0
    out, _, code = g.fetch_data([0])
    assert code == 0, _core.last_error()
    assert out[0].numpy().tolist() == [20]
    assert g.feed_data({d1: np.array([5], np.int32)}, partial_inputs=True) == 0
    out, _, code = g.fetch_data([1])
    assert code == 0
    assert out[0].numpy().tolist() == [6]


def test_python_objects_through_a_udf(one_cluster):
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    df.msg_type_register.register(1300, Point, lambda p: f"{p.x},{p.y}".encode(),
                                  lambda b: Point(*map(int, bytes(b).decode().split(","))))
    d = df.FlowData()
    node = df.FlowNode(1, 1)
    node.add_process_point(df.FuncProcessPoint(py_func=Relay))
    g = df.FlowGraph([node(d)])
    for obj in [{"a": [1, 2]}, "text", 3.5, None]:
        assert g.feed({d: obj}) == 0
        (got,), code = g.fetch()
        assert code == 0
        assert got == obj
    assert g.feed({d: Point(3, 4)}) == 0
    (p,), code = g.fetch()
    assert code == 0 and (p.x, p.y) == (3, 4)
    assert g.feed({d: df.Tensor(np.array([1.5], np.float64))}) == 0
    (t,), code = g.fetch()
    assert code == 0 and t.numpy().tolist() == [1.5] and t.tensor_desc.dtype == df.DT_DOUBLE


def test_unpicklable_object_is_not_fed(one_cluster):
    d = df.FlowData()
    node = df.FlowNode(1, 1)
    node.add_process_point(df.FuncProcessPoint(py_func=Relay))
    g = df.FlowGraph([node(d)])
    with pytest.raises(df.DfException, match="cannot serialize"):
        g.feed({d: lambda: 0})
    assert g.fetch(timeout=100)[1] == _core.TIMEOUT  # nothing was fed


class Boom:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        raise RuntimeError("boom in proc")


def test_exception_in_udf_returns_failed_and_logs(one_cluster, caplog):
    caplog.set_level(logging.ERROR, logger="dataflow.udf")
    d = df.FlowData()
    node = df.FlowNode(1, 1, name="boomer")
    node.add_process_point(df.FuncProcessPoint(py_func=Boom))
    g = df.FlowGraph([node(d)])
    assert g.feed_data({d: np.ones(1, np.float32)}) == 0
    out, _, code = g.fetch_data(timeout=5000)
    assert out == [] and code == ff.FLOW_FUNC_FAILED
    text = caplog.text
    assert "boomer" in text and "'proc'" in text and "Traceback" in text and "boom in proc" in text


class AbortOrEcho:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        v = inputs[0].get_tensor().numpy()
        if v[0] < 0:
            raise df.DfAbortException("negative input: abort")
        return ctx.set_output(0, v)


def test_abort_in_proc_is_success(one_cluster):
    d = df.FlowData()
    node = df.FlowNode(1, 1)
    node.add_process_point(df.FuncProcessPoint(py_func=AbortOrEcho))
    g = df.FlowGraph([node(d)])
    assert g.feed_data({d: np.array([-1], np.int32)}) == 0
    assert g.fetch_data(timeout=300)[2] == _core.TIMEOUT  # no output, no error
    assert g.feed_data({d: np.array([4], np.int32)}) == 0
    out, _, code = g.fetch_data(timeout=5000)
    assert code == 0 and out[0].numpy().tolist() == [4]


class RaiseOnNegative:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        v = inputs[0].get_tensor().numpy()
        if v[0] < 0:
            ctx.raise_exception(-7, inputs[0].get_transaction_id())
            return ff.FLOW_FUNC_SUCCESS
        return ctx.set_output(0, v)


def test_raise_exception_with_exception_catch(one_cluster):
    d = df.FlowData()
    node = df.FlowNode(1, 1)
    node.add_process_point(df.FuncProcessPoint(py_func=RaiseOnNegative))
    g = df.FlowGraph([node(d)])
    g.set_exception_catch(True)
    g.set_inputs_align_attrs(16, 1000)  # GE requires input alignment with exception catch
    assert g.feed_data({d: np.array([-1], np.int32)}) == 0
    out, _, code = g.fetch_data(timeout=5000)
    assert code == _core.USER_RAISE_EXCEPTION, _core.last_error()
    assert g.feed_data({d: np.array([3], np.int32)}) == 0
    out, _, code = g.fetch_data(timeout=5000)
    assert code == 0 and out[0].numpy().tolist() == [3]
    with pytest.raises(df.DfException, match="after feed"):
        g.set_exception_catch(False)


class UserData:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        data = ctx.get_user_data(5, 2)
        return ctx.set_output(0, np.frombuffer(bytes(data[:5]), np.uint8).copy())


def test_user_data_reaches_udf(one_cluster):
    d = df.FlowData()
    node = df.FlowNode(1, 1)
    node.add_process_point(df.FuncProcessPoint(py_func=UserData))
    g = df.FlowGraph([node(d)])
    info = df.FlowInfo()
    info.set_user_data(b"..HELLO")
    assert g.feed_data({d: np.zeros(1, np.int8)}, info) == 0
    out, got, code = g.fetch_data(timeout=5000)
    assert code == 0
    assert bytes(out[0].numpy()) == b"HELLO"


class InitFails:
    @ff.init_wrapper()
    def init_flow_func(self, params):
        return ff.FLOW_FUNC_ERR_USER_DEFINE_START + 3

    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        return 0


def test_python_init_failure_fails_the_build(one_cluster):
    d = df.FlowData()
    node = df.FlowNode(1, 1, name="never_ready")
    node.add_process_point(df.FuncProcessPoint(py_func=InitFails))
    g = df.FlowGraph([node(d)])
    code = g.feed_data({d: np.zeros(1, np.int8)})
    assert code != 0
    assert "never_ready" in _core.last_error()
