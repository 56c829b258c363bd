"""GE's exact Python error behaviour: where GE's dataflow package raises DfException, hflow's raises
the same, with GE's code and message, so a GE program's ``except df.DfException`` handling (and its
checks of ``error_code``) works unchanged. Codes are GE's: PARAM_INVALID 145000, NOT_INIT 145001,
SHAPE_INVALID 145021, DATATYPE_INVALID 145022.

Thread-safety: single-threaded.
"""
import numpy as np
import pytest

import dataflow as df
from dataflow import _core


def test_codes_are_ges():
    assert (_core.PARAM_INVALID, _core.NOT_INIT, _core.SHAPE_INVALID, _core.DATATYPE_INVALID) == (
        145000, 145001, 145021, 145022)


def _raise(f):
    with pytest.raises(df.DfException) as info:
        f()
    return info.value


@pytest.mark.parametrize("options", [0, None, "x", [("k", "v")], {"k": 0}, {0: "x"}, {"k": b"v"}])
def test_init_with_anything_but_a_str_dict(options):
    e = _raise(lambda: df.init(options))
    assert e.error_code == 145000
    assert str(e) == "DfException:145000:Argument flow_options must be typing.Dict[str, str]"
    assert e.args == ()  # GE's DfException passes nothing to Exception


def test_init_marks_the_callers_options_as_ge_does():
    options = {"ge.exec.deviceId": "0"}
    df.init(options)
    try:
        assert options == {"ge.exec.deviceId": "0", "ge.graphRunMode": "0"}
    finally:
        df.finalize()


def test_tensor_desc_codes():
    e = _raise(lambda: df.TensorDesc("xxx", "xxx"))  # the dtype is checked first
    assert e.error_code == 145022
    assert str(e) == "DfException:145022:Argument dtype must be <class 'dataflow.data_type.DType'>, but got xxx"
    for shape in ("xxx", [1.5], None, [1, "2"]):
        assert _raise(lambda: df.TensorDesc(df.DT_FLOAT, shape)).error_code == 145021


def test_tensor_codes():
    e = _raise(lambda: df.Tensor([1, 2], tensor_desc=df.TensorDesc(df.DT_FLOAT, [3])))
    assert e.error_code == 145021 and "shape of argument data is [2]" in e.message
    assert _raise(lambda: df.Tensor(np.array([1 + 2j]))).error_code == 145022


@pytest.mark.parametrize("make", [
    lambda: df.TimeBatch("x"), lambda: df.TimeBatch(1, batch_dim="x"), lambda: df.TimeBatch(1, drop_remainder=1),
    lambda: df.CountBatch("x"), lambda: df.CountBatch(1, slide_stride=1.0), lambda: df.CountBatch(1, padding="y"),
])
def test_batch_attrs_with_a_wrong_type(make):
    e = _raise(make)
    assert e.error_code == 145000 and e.message.startswith("Argument ")


def test_a_graph_before_init_is_not_init():
    df.finalize()
    data = df.FlowData()
    node = df.FlowNode(1, 1)
    e = _raise(lambda: df.FlowGraph([node(data)]))
    assert e.error_code == 145001


def test_a_framework_that_is_not_one():
    e = _raise(lambda: df.GraphProcessPoint(0, "model.pb"))
    assert e.error_code == 145000 and e.message.startswith("Argument framework must be <enum 'Framework'>")
