"""GE's exact Python error behaviour, table-driven: one row per argument check of the package.

Where GE's dataflow package raises DfException, hflow's raises it too, with GE's code (PARAM_INVALID
145000 unless GE names another: NOT_INIT 145001, SHAPE_INVALID 145021, DATATYPE_INVALID 145022,
FLOW_FUNC_FAILED 564000, a FlowMsgQueue's own code) and a message naming the argument, so a GE
program's ``except df.DfException`` handling (and its checks of ``error_code``) works unchanged.
Where GE raises TypeError, ValueError, AssertionError (pyflow's asserts), NotImplementedError or
queue.Empty, so does hflow. hflow's own stricter checks raise DfException(PARAM_INVALID), except
next to a GE check of the same call that raises TypeError/ValueError (alloc_tensor,
MetaRunContext, pyflow's decorators, the torch plugin), where they raise the same. Checks where GE
returns a code instead of raising are in RETURNS.

Each row's call fails only through the check it names: without the check the call would pass,
or fail with another exception or message.

Thread-safety: single-threaded.
"""
from __future__ import annotations

import queue
from typing import Any, Callable, NamedTuple, Optional, Tuple

import numpy as np
import pytest

import dataflow as df
import dataflow.data_type as dt
import dataflow.flow_func as ff
from dataflow import _core
from dataflow.flow_func.func_register import FlowFuncRegister

P, NOT_INIT, SHAPE, DTYPE = 145000, 145001, 145021, 145022
FF_FAILED = 564000


def test_codes_are_ges():
    assert (_core.PARAM_INVALID, _core.NOT_INIT, _core.SHAPE_INVALID, _core.DATATYPE_INVALID) == (P, NOT_INIT, SHAPE,
                                                                                                   DTYPE)
    assert (_core.FLOW_FUNC_FAILED, _core.INTERNAL_ERROR) == (FF_FAILED, 545000)


def test_df_exception_is_ges():
    e = df.DfException("bad")
    assert e.error_code == P  # GE's default code
    assert str(e) == repr(e) == "DfException:145000:bad" and e.message == "bad" and e.args == ()
    assert df.DfException("x", 7).error_code == 7
    assert isinstance(df.DfAbortException("x", 1), df.DfException)


@pytest.mark.parametrize("options", [0, None, "x", [("k", "v")], {"k": 0}, {0: "x"}, {"k": b"v"}])
def test_init_with_anything_but_a_str_dict(options, finalized):
    with pytest.raises(df.DfException) as info:
        df.init(options)
    assert str(info.value) == "DfException:145000:Argument flow_options must be typing.Dict[str, str]"


def test_init_marks_the_callers_options_as_ge_does(finalized):
    options = {"ge.exec.deviceId": "0"}
    df.init(options)
    assert options == {"ge.exec.deviceId": "0", "ge.graphRunMode": "0"}


# -- helpers the rows use --------------------------------------------------------------------------------------

class Echo:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        return ctx.set_output(0, inputs[0])


class Plain:
    def proc(self, ctx, inputs):
        return 0


class Garbled:
    @ff.proc_wrapper("in0,o0")
    def proc(self, ctx, inputs):
        return 0


class Twice:
    @ff.proc_wrapper("i0,i0,o0")
    def proc(self, ctx, inputs):
        return 0


class Wide:
    @ff.proc_wrapper("i5,o0")
    def proc(self, ctx, inputs):
        return 0


class Tall:
    @ff.proc_wrapper("i0,o3")
    def proc(self, ctx, inputs):
        return 0


class Missing:
    pass


FlowFuncRegister.register_flow_func(Missing.__module__, Missing.__qualname__, "nosuch", "i0,o0")


@df.pyflow
def echo(x):
    return x


@df.pyflow
class Actor:
    @df.method()
    def m(self, x):
        return x


@df.pyflow
class NoMethods:
    def m(self, x):
        return x


def _pp() -> df.FuncProcessPoint:
    return df.FuncProcessPoint(compile_config_path="x.json")


def _node(pp: Optional[Any] = None) -> df.FlowNode:
    n = df.FlowNode(1, 1)
    n.add_process_point(pp if pp is not None else _pp())
    return n


def _graph(**kw: Any) -> Tuple[df.FlowGraph, df.FlowData]:
    d = df.FlowData()
    return df.FlowGraph([echo.fnode()(d)], **kw), d


def _fed_graph() -> df.FlowGraph:
    g, d = _graph()
    assert g.feed_data({d: np.ones(1, np.int8)}) == 0
    return g


def _finalized_graph_feed() -> None:
    g, d = _graph()
    df.finalize()
    g.feed_data({d: np.ones(1, np.int8)})


def _self_input() -> None:
    n = _node()
    n(n(df.FlowData()))


def _second_pp() -> None:
    _node().add_process_point(_pp())


def _other_pp() -> None:
    _node().map_input(0, _pp(), 0)


def _alias_twice() -> None:
    df.FlowNode(1, 1).set_alias("GeErrorsAlias")
    df.FlowNode(1, 1).set_alias("GeErrorsAlias")


def _not_connected() -> None:
    df.FlowGraph([df.FlowOutput(_node(), 0)])


def _unpicklable_feed() -> None:
    g, d = _graph()
    g.feed({d: lambda: 0})


_msg_type = iter(range(3100, 3200))


def _register(first_type: Optional[int], second_type: Any, same_class: bool = False, **kw: Any) -> None:
    class A:
        pass

    class B:
        pass

    if first_type is not None:
        df.msg_type_register.register(first_type, A, lambda o: b"a", lambda b: A())
    kw.setdefault("serialize_func", lambda o: b"b")
    kw.setdefault("deserialize_func", lambda b: B())
    df.msg_type_register.register(second_type, A if same_class else B, **kw)


def _dup_type() -> None:
    t = next(_msg_type)
    _register(t, t)


def _dup_class() -> None:
    _register(next(_msg_type), next(_msg_type), same_class=True)


class FakeQueue:
    """A UDF queue whose dequeue answers ``code``."""

    def __init__(self, code: int) -> None:
        self.code = code

    def depth(self) -> int:
        return 2

    def size(self) -> int:
        return 0

    def dequeue(self, wait: int) -> tuple:
        return self.code, None


def _queue(code: int = ff.FLOW_FUNC_SUCCESS) -> ff.FlowMsgQueue:
    return ff.FlowMsgQueue(FakeQueue(code))


def _ctx() -> ff.MetaRunContext:
    return ff.MetaRunContext(None)  # every check runs before the context is used


def _typed_two(x) -> Tuple[int, int]:
    return x, x


def _with_attr(attr: str) -> None:
    df.pyflow(type("Bad", (), {attr: 1, "m": df.method()(lambda self, x: x)}))


def _torch():
    return pytest.importorskip("torch")


def _torch_plugin():
    _torch()
    from dataflow.plugin.torch import torch_plugin
    return torch_plugin


def _npu_class(**options: Any) -> None:
    class Net:
        @df.method()
        def forward(self, x):
            return x

    df.npu_model(**options)(Net).fnode()


# -- the table -------------------------------------------------------------------------------------------------

class Row(NamedTuple):
    call: Callable[[], Any]
    exc: type
    code: Optional[int]  # DfException's error_code; None for other exceptions
    text: str  # a substring of the message
    init: bool = False  # needs df.init (a session); otherwise runs finalized


ROWS = {
    # df.init: GE's assert_args_type(Dict[str, str])
    "init/options": Row(lambda: df.init({"k": 0}), df.DfException, P,
                        "Argument flow_options must be typing.Dict[str, str]"),
    # TensorDesc
    "TensorDesc/dtype": Row(lambda: df.TensorDesc("xxx", [1]), df.DfException, DTYPE,
                            "Argument dtype must be <class 'dataflow.data_type.DType'>, but got xxx"),
    "TensorDesc/shape": Row(lambda: df.TensorDesc(df.DT_FLOAT, "xxx"), df.DfException, SHAPE, "Argument shape must be"),
    "TensorDesc/shape-dim": Row(lambda: df.TensorDesc(df.DT_FLOAT, [1.5]), df.DfException, SHAPE,
                                "Argument shape must be"),
    # Tensor
    "Tensor/shape": Row(lambda: df.Tensor([1, 2], tensor_desc=df.TensorDesc(df.DT_FLOAT, [3])), df.DfException, SHAPE,
                        "The shape of argument data is [2]"),
    "Tensor/desc-dtype": Row(lambda: df.Tensor([1], tensor_desc=df.TensorDesc(df.DT_BF16, [1])), df.DfException,
                             DTYPE, "The dtype of argument tensor_desc is DT_BF16 which is not supported"),
    "Tensor/data-dtype": Row(lambda: df.Tensor(np.array([1 + 2j])), df.DfException, DTYPE,
                             "The dtype of data is complex128"),
    "Tensor/convert": Row(lambda: df.Tensor(["a"], tensor_desc=df.TensorDesc(df.DT_INT32, [1])), ValueError, None,
                          "Failed to convert type <U1 to type DT_INT32"),
    "Tensor/tensor_desc": Row(lambda: df.Tensor([1], tensor_desc="x"), df.DfException, P,
                              "Argument tensor_desc must be"),
    "Tensor/ragged": Row(lambda: df.Tensor([[1], [1, 2]]), df.DfException, P,
                         "Argument data cannot be made a numpy array"),
    "Tensor/string-desc": Row(lambda: df.Tensor([1], tensor_desc=df.TensorDesc(df.DT_STRING, [1])), df.DfException,
                              P, "Argument data must be str or bytes for a DT_STRING tensor_desc"),
    "Tensor.numpy/string": Row(lambda: df.Tensor(np.array(["a"])).numpy(), df.DfException, P,
                               "String tensor must set copy param true."),
    "Tensor.reshape/shape": Row(lambda: df.Tensor([1]).reshape("x"), df.DfException, P, "Argument shape must be"),
    # alloc_tensor: GE's TypeError for the dtype
    "alloc_tensor/dtype": Row(lambda: df.alloc_tensor([2], "complex64"), TypeError, None,
                              "The dtype of data is 'complex64' is invalid"),
    "alloc_tensor/dtype-host": Row(lambda: df.alloc_tensor([2], df.DT_STRING), TypeError, None,
                                   "cannot be allocated on the host"),
    "alloc_tensor/shape": Row(lambda: df.alloc_tensor("x", df.DT_INT32), TypeError, None, "Argument shape must be"),
    "alloc_tensor/align": Row(lambda: df.alloc_tensor([2], df.DT_INT32, align=3), ValueError, None,
                              "Argument align must be a positive power of two"),
    # FlowInfo
    "FlowInfo/range": Row(lambda: df.FlowInfo(start_time=2 ** 70), df.DfException, P,
                          "Argument start_time of FlowInfo must be in"),
    "FlowInfo/type": Row(lambda: df.FlowInfo(transaction_id="1"), df.DfException, P,
                         "Argument transaction_id of FlowInfo must be <class 'int'>"),
    "FlowInfo/setter": Row(lambda: setattr(df.FlowInfo(), "flow_flags", 2 ** 32), df.DfException, P,
                           "Argument flow_flags of FlowInfo must be in"),
    "FlowInfo.set_user_data/range": Row(lambda: df.FlowInfo().set_user_data(b"x" * 10, 60), df.DfException, P,
                                        "Offset 60 add userData size 10 can not be greater than 64."),
    "FlowInfo.set_user_data/type": Row(lambda: df.FlowInfo().set_user_data("text"), df.DfException, P,
                                       "Argument user_data must be"),
    "FlowInfo.get_user_data/size": Row(lambda: df.FlowInfo().get_user_data(0), df.DfException, P,
                                       "The size is 0 or empty. It should in (0, 64]"),
    "FlowInfo.get_user_data/offset": Row(lambda: df.FlowInfo().get_user_data(1, -1), df.DfException, P,
                                         "Argument offset must be a non-negative int"),
    # TimeBatch/CountBatch: GE's assert_args_type; hflow also refuses negatives and bools
    "TimeBatch/time_window": Row(lambda: df.TimeBatch("x"), df.DfException, P,
                                 "Argument time_window must be <class 'int'>"),
    "TimeBatch/batch_dim": Row(lambda: df.TimeBatch(1, batch_dim="x"), df.DfException, P, "Argument batch_dim must be"),
    "TimeBatch/drop_remainder": Row(lambda: df.TimeBatch(1, drop_remainder=1), df.DfException, P,
                                    "Argument drop_remainder must be <class 'bool'>"),
    "TimeBatch/negative": Row(lambda: df.TimeBatch(-1), df.DfException, P, "Argument time_window must be >= 0"),
    "CountBatch/batch_size": Row(lambda: df.CountBatch("x"), df.DfException, P, "Argument batch_size must be"),
    "CountBatch/slide_stride": Row(lambda: df.CountBatch(1, slide_stride=1.0), df.DfException, P,
                                   "Argument slide_stride must be"),
    "CountBatch/timeout": Row(lambda: df.CountBatch(1, timeout="1"), df.DfException, P, "Argument timeout must be"),
    "CountBatch/padding": Row(lambda: df.CountBatch(1, padding="y"), df.DfException, P, "Argument padding must be"),
    # GraphProcessPoint / FlowGraphProcessPoint
    "GraphProcessPoint/framework": Row(lambda: df.GraphProcessPoint(0, "m.pb"), df.DfException, P,
                                       "Argument framework must be <enum 'Framework'>"),
    "GraphProcessPoint/graph_file": Row(lambda: df.GraphProcessPoint(df.Framework.ONNX, 3), df.DfException, P,
                                        "Argument graph_file must be <class 'str'>"),
    "GraphProcessPoint/load_params": Row(lambda: df.GraphProcessPoint(df.Framework.ONNX, "m.onnx", {"a": 1}),
                                         df.DfException, P, "Argument load_params must be typing.Dict[str, str]"),
    "FlowGraphProcessPoint/flow_graph": Row(lambda: df.FlowGraphProcessPoint("g"), df.DfException, P,
                                            "Argument flow_graph must be"),
    # FuncProcessPoint
    "FuncProcessPoint/not-wrapped": Row(lambda: df.FuncProcessPoint(py_func=Plain), df.DfException, FF_FAILED,
                                        "has no method decorated with @proc_wrapper"),
    "FuncProcessPoint/py_func": Row(lambda: df.FuncProcessPoint(py_func=42), df.DfException, P,
                                    "Argument py_func must be"),
    "FuncProcessPoint/missing-method": Row(lambda: df.FuncProcessPoint(py_func=Missing), df.DfException, P,
                                           "has no method 'nosuch' named by proc_wrapper"),
    "FuncProcessPoint/neither": Row(lambda: df.FuncProcessPoint(), df.DfException, P,
                                    "needs argument compile_config_path"),
    "FuncProcessPoint/both": Row(lambda: df.FuncProcessPoint(compile_config_path="x.json", py_func=Echo),
                                 df.DfException, P, "either argument compile_config_path or argument py_func"),
    "FuncProcessPoint/compile_config_path": Row(lambda: df.FuncProcessPoint(compile_config_path=3), df.DfException,
                                                P, "Argument compile_config_path must be <class 'str'>"),
    "FuncProcessPoint/compile_config_path-empty": Row(lambda: df.FuncProcessPoint(compile_config_path=""),
                                                      df.DfException, P, "Argument compile_config_path must not be"),
    "set_init_param/attr_name": Row(lambda: _pp().set_init_param(3, 1), df.DfException, P,
                                    "Argument attr_name must be"),
    "set_init_param/attr_name-empty": Row(lambda: _pp().set_init_param("", 1), df.DfException, P,
                                          "Argument attr_name must not be empty"),
    "set_init_param/attr_value": Row(lambda: _pp().set_init_param("v", {"a": 1}), df.DfException, P,
                                     "Argument attr_value of init param 'v'"),
    "set_init_param/attr_value-mixed": Row(lambda: _pp().set_init_param("v", [1, "a"]), df.DfException, P,
                                           "Argument attr_value of init param 'v'"),
    "add_invoked_closure/graph_key": Row(lambda: _pp().add_invoked_closure(3, df.GraphProcessPoint(
        df.Framework.ONNX, "m.onnx")), df.DfException, P, "Argument graph_key must be"),
    "add_invoked_closure/pp": Row(lambda: _pp().add_invoked_closure("k", 3), df.DfException, P,
                                  "Argument pp must be"),
    # proc_wrapper mappings
    "proc_wrapper/func_list": Row(lambda: ff.proc_wrapper(3), df.DfException, P, "Argument func_list must be a str"),
    "proc_wrapper/bad-item": Row(lambda: df.FuncProcessPoint(py_func=Garbled), df.DfException, P, "bad item 'in0'"),
    "proc_wrapper/twice": Row(lambda: df.FuncProcessPoint(py_func=Twice), df.DfException, P, "names an input twice"),
    "proc_wrapper/input-fit": Row(lambda: _node(df.FuncProcessPoint(py_func=Wide)), df.DfException, P,
                                  "its mapping names input 5, but FlowNode"),
    "proc_wrapper/output-fit": Row(lambda: _node(df.FuncProcessPoint(py_func=Tall)), df.DfException, P,
                                   "its mapping names output 3, but FlowNode"),
    # FlowData
    "FlowData/data_cls": Row(lambda: df.FlowData(data_cls=int), df.DfException, P,
                             "Argument data_cls must be equal to Tensor"),
    "FlowData/data_cls-positional": Row(lambda: df.FlowData(df.TensorDesc(df.DT_INT8, [1]), "n", "x"),
                                        df.DfException, P, "Argument data_cls must be equal to Tensor"),
    "FlowData/schema": Row(lambda: df.FlowData(schema="x"), df.DfException, P,
                           "Argument schema type must be TensorDesc"),
    # FlowNode
    "FlowNode/input_num": Row(lambda: df.FlowNode("1", 1), df.DfException, P,
                              "Argument input_num must be <class 'int'>"),
    "FlowNode/output_num": Row(lambda: df.FlowNode(1, -1), df.DfException, P, "Argument output_num must be >= 0"),
    "FlowNode/name": Row(lambda: df.FlowNode(1, 1, name=3), TypeError, None, "must be a string"),
    "FlowNode()/count": Row(lambda: _node()(df.FlowData(), df.FlowData()), df.DfException, P,
                            "Flow node need 1 input, but got 2 input"),
    "FlowNode()/type": Row(lambda: _node()(3), df.DfException, P, "inputs must be typing.Union"),
    "FlowNode()/self-input": Row(_self_input, df.DfException, P,
                                 "is the output of current flow node, so cannot be used as an input"),
    "add_process_point/pp": Row(lambda: df.FlowNode(1, 1).add_process_point(3), df.DfException, P,
                                "Argument pp must be typing.Union"),
    "add_process_point/second": Row(_second_pp, df.DfException, P, "already has process point"),
    "map_input/pp": Row(lambda: _node().map_input(0, 3, 0), df.DfException, P, "Argument pp must be typing.Union"),
    "map_input/other-pp": Row(_other_pp, df.DfException, P, "is not the process point of FlowNode"),
    "map_input/node_input_index": Row(lambda: df.FlowNode(1, 1).map_input(3, _pp(), 0), df.DfException, P,
                                      "The arg node_input_index should in [0,1)"),
    "map_input/node_input_index-negative": Row(lambda: df.FlowNode(1, 1).map_input(-1, _pp(), 0), df.DfException, P,
                                               "The arg node_input_index should in [0,1)"),
    "map_input/node_input_index-type": Row(lambda: df.FlowNode(1, 1).map_input("0", _pp(), 0), df.DfException, P,
                                           "Argument node_input_index must be"),
    "map_input/pp_input_index": Row(lambda: df.FlowNode(1, 1).map_input(0, _pp(), -1), df.DfException, P,
                                    "Argument pp_input_index must be >= 0"),
    "map_input/input_attrs": Row(lambda: df.FlowNode(1, 1).map_input(0, _pp(), 0, ["batch"]), df.DfException, P,
                                 "Argument input_attrs must be List[Union[TimeBatch, CountBatch]]"),
    "map_input/input_attrs-list": Row(lambda: df.FlowNode(1, 1).map_input(0, _pp(), 0, df.CountBatch()), df.DfException, P,
                                      "Argument input_attrs must be List[Union[TimeBatch, CountBatch]]"),
    "map_output/pp": Row(lambda: _node().map_output(0, 3, 0), df.DfException, P, "Argument pp must be typing.Union"),
    "map_output/node_output_index": Row(lambda: df.FlowNode(1, 1).map_output(1, _pp(), 0), df.DfException, P,
                                        "The arg node_output_index should in [0,1)"),
    "map_output/pp_output_index": Row(lambda: df.FlowNode(1, 1).map_output(0, _pp(), "0"), df.DfException, P,
                                      "Argument pp_output_index must be"),
    "set_attr/attr_name": Row(lambda: df.FlowNode(1, 1).set_attr(3, 1), df.DfException, P,
                              "Argument attr_name must be"),
    "set_attr/attr_value": Row(lambda: df.FlowNode(1, 1).set_attr("a", 1.5), df.DfException, P,
                               "Argument attr_value must be typing.Union[bool, str, int]"),
    "set_attr/depth": Row(lambda: df.FlowNode(1, 1).set_attr("_flow_attr_depth", 0), df.DfException, P,
                          "Argument attr_value must be >= 1"),
    "set_attr/enqueue_policy": Row(lambda: df.FlowNode(1, 1).set_attr("_flow_attr_enqueue_policy", "LIFO"),
                                   df.DfException, P, "_flow_attr_enqueue_policy must be 'FIFO' or 'OVERWRITE'"),
    "set_attr/flow_attr": Row(lambda: df.FlowNode(1, 1).set_attr("_flow_attr", 1), df.DfException, P,
                              "Argument attr_value must be <class 'bool'>"),
    "set_alias/name": Row(lambda: df.FlowNode(1, 1).set_alias(3), TypeError, None,
                          "name for name_scope must be a string"),
    "set_alias/used": Row(_alias_twice, ValueError, None, "name:GeErrorsAlias is already used, please modify."),
    # FlowGraph
    "FlowGraph/outputs-empty": Row(lambda: df.FlowGraph([]), df.DfException, P,
                                   "Argument outputs must be typing.List"),
    "FlowGraph/outputs": Row(lambda: df.FlowGraph(["x"]), df.DfException, P, "Argument outputs must be typing.List"),
    "FlowGraph/graph_options": Row(lambda: df.FlowGraph([_node()(df.FlowData())], graph_options={"a": 1}),
                                   df.DfException, P, "Argument graph_options must be typing.Dict[str, str]"),
    "FlowGraph/not-connected": Row(_not_connected, df.DfException, P, "is not connected"),
    "FlowGraph/before-init": Row(lambda: df.FlowGraph([_node()(df.FlowData())]), df.DfException, NOT_INIT, "init"),
    "FlowGraph/after-finalize": Row(_finalized_graph_feed, df.DfException, NOT_INIT, "df.init", init=True),
    "set_inputs_align_attrs/cache": Row(lambda: _graph()[0].set_inputs_align_attrs(2000, 10), df.DfException, P,
                                        "align_max_cache_num=2000 is out of range [0, 1024]", init=True),
    "set_inputs_align_attrs/timeout": Row(lambda: _graph()[0].set_inputs_align_attrs(10, 0), df.DfException, P,
                                          "align_timeout=0 must be -1 or in range(0, 600 * 1000]", init=True),
    "set_inputs_align_attrs/type": Row(lambda: _graph()[0].set_inputs_align_attrs("1", 10), df.DfException, P,
                                       "Argument align_max_cache_num must be", init=True),
    "set_inputs_align_attrs/dropout": Row(lambda: _graph()[0].set_inputs_align_attrs(1, 10, 1), df.DfException, P,
                                          "Argument dropout_when_not_align must be", init=True),
    "set_inputs_align_attrs/after-feed": Row(lambda: _fed_graph().set_inputs_align_attrs(1, 10), df.DfException, P,
                                             "can not call set_inputs_align_attrs after feed data", init=True),
    "set_exception_catch/type": Row(lambda: _graph()[0].set_exception_catch(1), df.DfException, P,
                                    "Argument enable_exception_catch must be", init=True),
    "set_exception_catch/after-feed": Row(lambda: _fed_graph().set_exception_catch(True), df.DfException, P,
                                          "can not call set_exception_catch after feed data", init=True),
    "set_contains_n_mapping_node/type": Row(lambda: _graph()[0].set_contains_n_mapping_node("x"), df.DfException,
                                            P, "Argument contains_n_mapping_node must be", init=True),
    "set_contains_n_mapping_node/after-feed": Row(lambda: _fed_graph().set_contains_n_mapping_node(True),
                                                  df.DfException, P,
                                                  "can not call set_contains_n_mapping_node after feed data",
                                                  init=True),
    "feed_data/feed_dict": Row(lambda: _graph()[0].feed_data([1]), df.DfException, P, "Argument feed_dict must be",
                               init=True),
    "feed_data/feed_dict-array": Row(lambda: _graph()[0].feed_data(np.ones(2)), df.DfException, P,
                                     "Argument feed_dict must be", init=True),
    "feed/keys": Row(lambda: _graph()[0].feed({"d": 1}), df.DfException, P, "feed_dict keys must be FlowData",
                     init=True),
    "feed_data/partial_inputs": Row(lambda: _graph()[0].feed_data({df.FlowData(): 1}, partial_inputs=1),
                                    df.DfException, P, "Argument partial_inputs must be", init=True),
    "feed_data/timeout": Row(lambda: _graph()[0].feed_data({}, timeout="1"), df.DfException, P,
                             "Argument timeout must be", init=True),
    "fetch_data/timeout": Row(lambda: _graph()[0].fetch_data(timeout="1"), df.DfException, P,
                              "Argument timeout must be", init=True),
    "fetch/indexes": Row(lambda: _graph()[0].fetch("0"), df.DfException, P, "Argument indexes must be", init=True),
    "feed_data/add-graph": Row(lambda: (lambda g, d: g.feed_data({d: np.ones(1, np.int8)}))(
        *_graph(graph_options={"ge.noSuchGraphOption": "1"})), df.DfException, P, "ge.noSuchGraphOption", init=True),
    "feed/add-graph": Row(lambda: (lambda g, d: g.feed({d: 1}))(*_graph(graph_options={"ge.noSuchGraphOption": "1"})),
                          df.DfException, P, "ge.noSuchGraphOption", init=True),
    "feed/serialize": Row(_unpicklable_feed, df.DfException, P, "cannot serialize function", init=True),
    # msg_type_register
    "msg_type_register/type-used": Row(_dup_type, df.DfException, P, "has been registered, class:"),
    "msg_type_register/class-used": Row(_dup_class, df.DfException, P, "has been registered, msg_type:"),
    "msg_type_register/range": Row(lambda: _register(None, 5), df.DfException, P,
                                   "Argument msg_type must be in [1024, 65535]"),
    "msg_type_register/type": Row(lambda: _register(None, "x"), df.DfException, P, "Argument msg_type must be int"),
    "msg_type_register/serialize_func": Row(lambda: _register(None, next(_msg_type), serialize_func=1),
                                            df.DfException, P, "Argument serialize_func must be callable"),
    "msg_type_register/deserialize_func": Row(lambda: _register(None, next(_msg_type), deserialize_func=None),
                                              df.DfException, P, "Argument deserialize_func must be callable"),
    # data types
    "data_type/code": Row(lambda: dt.from_code(999), ValueError, None, "The data type 999 is not support."),
    # MetaRunContext: GE raises TypeError for a bad dtype or output
    "alloc_tensor_msg/dtype": Row(lambda: _ctx().alloc_tensor_msg([1], "complex64"), TypeError, None,
                                  "The dtype of data is 'complex64' is invalid"),
    "alloc_tensor_msg/shape": Row(lambda: _ctx().alloc_tensor_msg("x", df.DT_INT8), TypeError, None,
                                  "Argument shape must be"),
    "alloc_raw_data_msg/size": Row(lambda: _ctx().alloc_raw_data_msg(-1), ValueError, None,
                                   "Argument size must be a non-negative int"),
    "to_flow_msg/tensor": Row(lambda: _ctx().to_flow_msg(3), TypeError, None, "Argument tensor must be Tensor"),
    "set_output/index": Row(lambda: _ctx().set_output("0", ff.FlowMsg(None)), TypeError, None,
                            "Argument index must be int"),
    "set_output/output": Row(lambda: _ctx().set_output(0, 3), TypeError, None,
                             "The output type <class 'int'> is unsupported"),
    "set_output/dtype": Row(lambda: _ctx().set_output(0, np.array([1 + 1j])), TypeError, None,
                            "The dtype of data is complex128 is invalid"),
    "set_output/balance_config": Row(lambda: _ctx().set_output(0, ff.FlowMsg(None), 3), TypeError, None,
                                     "Argument balance_config must be BalanceConfig"),
    "set_multi_outputs/outputs": Row(lambda: _ctx().set_multi_outputs(0, [3], ff.BalanceConfig(1, 1)), TypeError,
                                     None, "The outputs:0 type <class 'int'> is unsupported"),
    "set_multi_outputs/list": Row(lambda: _ctx().set_multi_outputs(0, 3, ff.BalanceConfig(1, 1)), TypeError, None,
                                  "Argument outputs must be a list"),
    "set_multi_outputs/balance_config": Row(lambda: _ctx().set_multi_outputs(0, [], 3), TypeError, None,
                                            "Argument balance_config must be BalanceConfig"),
    "run_flow_model/model_key": Row(lambda: _ctx().run_flow_model(3, [], 10), TypeError, None,
                                    "Argument model_key must be str"),
    "run_flow_model/input_msgs": Row(lambda: _ctx().run_flow_model("k", 3, 10), TypeError, None,
                                     "Argument input_msgs must be a list"),
    "run_flow_model/timeout": Row(lambda: _ctx().run_flow_model("k", [], "10"), TypeError, None,
                                  "Argument timeout must be int"),
    # FlowMsgQueue: GE's queue behaviour, codes from the UDF queue
    "FlowMsgQueue.get/timeout": Row(lambda: _queue().get(timeout=-1), ValueError, None,
                                    "'timeout' must be a non-negative number"),
    "FlowMsgQueue.get/redeploying": Row(lambda: _queue(ff.FLOW_FUNC_STATUS_REDEPLOYING).get(), df.DfAbortException,
                                        ff.FLOW_FUNC_STATUS_REDEPLOYING, "Redeploying, schedule aborted!"),
    "FlowMsgQueue.get/exit": Row(lambda: _queue(ff.FLOW_FUNC_STATUS_EXIT).get(), df.DfAbortException,
                                 ff.FLOW_FUNC_STATUS_EXIT, "Process exiting, schedule aborted!"),
    "FlowMsgQueue.get/failed": Row(lambda: _queue(ff.FLOW_FUNC_ERR_QUEUE_ERROR).get(), df.DfException,
                                   ff.FLOW_FUNC_ERR_QUEUE_ERROR, "Queue get item failed"),
    "FlowMsgQueue.get/time-out": Row(lambda: _queue(ff.FLOW_FUNC_ERR_TIME_OUT_ERROR).get(timeout=5), queue.Empty,
                                     None, ""),
    "FlowMsgQueue.get_nowait/any-failure": Row(lambda: _queue(ff.FLOW_FUNC_STATUS_REDEPLOYING).get_nowait(),
                                               queue.Empty, None, ""),
    "FlowMsgQueue.put": Row(lambda: _queue().put(1), NotImplementedError, None, "This method is not allowed."),
    "FlowMsgQueue.put_nowait": Row(lambda: _queue().put_nowait(1), NotImplementedError, None,
                                   "This method is not allowed."),
    "FlowMsgQueue.task_done": Row(lambda: _queue().task_done(), NotImplementedError, None,
                                  "This method is not allowed."),
    "FlowMsgQueue.join": Row(lambda: _queue().join(), NotImplementedError, None, "This method is not allowed."),
    # PyMetaParams / BalanceConfig
    "PyMetaParams/name": Row(lambda: ff.PyMetaParams(None).get_attr_int(3), df.DfException, P,
                             "Argument name must be"),
    "BalanceConfig/row_num": Row(lambda: ff.BalanceConfig(0, 1), df.DfException, P, "Argument row_num must be > 0"),
    "BalanceConfig/col_num": Row(lambda: ff.BalanceConfig(1, "1"), df.DfException, P, "Argument col_num must be"),
    "BalanceConfig/affinity_policy": Row(lambda: ff.BalanceConfig(1, 1, 0), df.DfException, P,
                                         "Argument affinity_policy must be"),
    "BalanceConfig.set_data_pos/pos": Row(lambda: ff.BalanceConfig(1, 1).set_data_pos("x"), df.DfException, P,
                                          "Argument pos must be"),
    # pyflow: GE's TypeErrors, and its asserts (AssertionError)
    "pyflow/option": Row(lambda: df.pyflow(bogus=1)(lambda x: x), TypeError, None,
                         "param:bogus is not support in @pyflow."),
    "pyflow/stream_input": Row(lambda: df.pyflow(stream_input="List")(lambda x: x), TypeError, None,
                               "Invalid stream input type: List, only support 'Queue' now."),
    "method/stream_input": Row(lambda: df.method(stream_input="List")(lambda self, x: x), TypeError, None,
                               "Invalid stream input type: List, only support 'Queue' now."),
    "method/kwarg": Row(lambda: df.method(resources={}), AssertionError, None,
                        "Unexpected keyword argument to @df.method: 'resources'"),
    "method/args": Row(lambda: df.method(1), AssertionError, None, "Unexpected args argument to @df.method"),
    "num_returns/typing": Row(lambda: df.pyflow(num_returns=3)(_typed_two), AssertionError, None,
                              "The number:2 of outputs specified by typing is different from the number:3 specified "
                              "by num_returns."),
    "num_returns/positive": Row(lambda: df.pyflow(num_returns=0)(lambda x: x), AssertionError, None,
                                "The 'num_returns' option must be greater than 0."),
    "num_returns/int": Row(lambda: df.pyflow(num_returns="2")(lambda x: x), AssertionError, None,
                           "The 'num_returns' option must be an integer."),
    "num_returns/method": Row(lambda: df.method(num_returns=0)(lambda self, x: x), AssertionError, None,
                              "The 'num_returns' option must be greater than 0."),
    "pyflow/choice_output": Row(lambda: df.pyflow(choice_output=3)(lambda x: x), TypeError, None,
                                "choice_output must be callable"),
    "pyflow/call-function": Row(lambda: echo(1), TypeError, None, "cannot be called directly"),
    "pyflow/construct-class": Row(lambda: Actor(), TypeError, None,
                                  "PyActorProcessPoint.__init__ should not be called"),
    "pyflow/call-instance": Row(lambda: object.__new__(Actor)(), TypeError, None,
                                "FlowNode functions cannot be called directly. Instead of running 'Actor()', try "
                                "'Actor.fnode()'."),
    "pyflow/fnode-attribute": Row(lambda: _with_attr("fnode"), TypeError, None, "attribute fnode, please rename"),
    "pyflow/_fnode-attribute": Row(lambda: _with_attr("_fnode"), TypeError, None, "attribute _fnode, please rename"),
    "pyflow/not-callable": Row(lambda: df.pyflow(3), TypeError, None, "must be applied to either a function or a class"),
    "pyflow/not-function": Row(lambda: df.pyflow(num_returns=1)(3), TypeError, None,
                               "must be applied to either a function or a class"),
    "pyflow/method-inputs": Row(lambda: Actor.fnode().m(df.FlowData(), df.FlowData()), df.DfException, P,
                                "Func:m need 1 input, but fnode got 2 input"),
    "pyflow/no-methods": Row(lambda: NoMethods.fnode(), df.DfException, P, "has no @df.method methods"),
    # torch plugin (skipped without torch)
    "npu_model/function-option": Row(lambda: _torch() and df.npu_model(bogus=1)(lambda x: x), TypeError, None,
                                     "param:bogus is not support in @npu_model when applied to a function."),
    "npu_model/class-option": Row(lambda: _npu_class(bogus=1) if _torch() else None, TypeError, None,
                                  "param:bogus is not support in @npu_model."),
    "npu_model/not-callable": Row(lambda: _torch() and df.npu_model()(3), TypeError, None,
                                  "The @npu_model decorator must be applied to either a function or a class."),
    "npu_model/optimize_level-type": Row(lambda: _npu_class(optimize_level="1") if _torch() else None, TypeError,
                                         None, "optimize_level must be a number"),
    "npu_model/optimize_level": Row(lambda: _npu_class(optimize_level=3) if _torch() else None, TypeError, None,
                                    "optimize_level:3 is not support in @npu_model."),
    "npu_model/input_descs": Row(lambda: _npu_class(optimize_level=2) if _torch() else None, TypeError, None,
                                 "optimize_level is 2, but input_descs is None."),
    "torch/serialize-device": Row(lambda: _torch_plugin()._serialize_with_torch_tensor(
        _torch().empty(1, device="meta")), TypeError, None, "is not support when df use @npu_model, please to cpu."),
    "torch/torch_dtype": Row(lambda: _torch_plugin().torch_to_dflow_dtype(_torch().complex64), ValueError, None,
                             "torch_dtype torch.complex64 is not supported"),
    "torch/df_dtype": Row(lambda: _torch_plugin().dflow_to_torch_dtype(df.DT_STRING), ValueError, None,
                          "df_dtype DT_STRING is not supported"),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_argument_check(name, request):
    row = ROWS[name]
    request.getfixturevalue("one_cluster" if row.init else "finalized")
    with pytest.raises(row.exc) as info:
        row.call()
    e = info.value
    assert type(e) is row.exc, f"{name}: {type(e).__name__}: {e}"
    if row.code is not None:
        assert e.error_code == row.code, f"{name}: {e}"
        assert str(e) == f"DfException:{row.code}:{e.message}"
        assert row.text in e.message, f"{name}: {e.message!r}"
    else:
        assert row.text in str(e), f"{name}: {e}"


# -- checks where GE returns a code -----------------------------------------------------------------------------

def _two_inputs() -> tuple:
    d0, d1 = df.FlowData(), df.FlowData()
    n = df.FlowNode(2, 1)
    n.add_process_point(df.FuncProcessPoint(py_func=Echo))
    return df.FlowGraph([n(d0, d1)]), d0, d1


def _schema_graph() -> tuple:
    d = df.FlowData(schema=df.TensorDesc(df.DT_INT8, [2]))
    return df.FlowGraph([echo.fnode()(d)]), d


RETURNS = {
    "feed_data/flow_info": (lambda: (lambda g, d: g.feed_data({d: np.ones(1, np.int8)}, flow_info="info"))(*_graph()),
                            P),
    "feed_data/empty-without-eos": (lambda: _graph()[0].feed_data({}), P),
    "feed_data/none-without-eos": (lambda: _graph()[0].feed_data(None), P),
    "feed_data/missing-input": (lambda: (lambda g, d0, d1: g.feed_data({d0: np.ones(1, np.int8)}))(*_two_inputs()),
                                P),
    "feed_data/no-input": (lambda: _graph()[0].feed_data({df.FlowData(): 1}, partial_inputs=True), P),
    "feed_data/dtype": (lambda: (lambda g, d: g.feed_data({d: np.array([1 + 1j])}))(*_graph()), DTYPE),
    "feed_data/schema-shape": (lambda: (lambda g, d: g.feed_data({d: [1, 2, 3]}))(*_schema_graph()), SHAPE),
    "feed/missing-input": (lambda: (lambda g, d0, d1: g.feed({d0: 1}))(*_two_inputs()), P),
    "feed/string-tensor": (lambda: (lambda g, d: g.feed({d: df.Tensor(np.array(["a"]))}))(*_graph()), P),
    "feed/schema-desc": (lambda: (lambda g, d: g.feed({d: df.Tensor(np.ones(3, np.int8))}))(*_schema_graph()), P),
    "fetch_data/indexes": (lambda: _graph()[0].fetch_data([3])[2], P),
    "fetch/indexes": (lambda: _graph()[0].fetch([1])[1], P),
}


@pytest.mark.parametrize("name", list(RETURNS))
def test_returned_code(name, one_cluster):
    call, code = RETURNS[name]
    assert call() == code
