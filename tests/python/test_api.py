"""The API's own behaviour: default names, graph-file JSON, output index mapping, argument checks."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core
from dataflow.utils.name_scope import reset_name_scope


class Echo:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        return ctx.set_output(0, inputs[0])


class TwoOut:
    @ff.proc_wrapper("i0,o0,o1")
    def proc(self, ctx, inputs):
        ctx.set_output(0, inputs[0])
        return ctx.set_output(1, inputs[0])


def _node(cls=Echo, ins=1, outs=1, name=None):
    n = df.FlowNode(ins, outs, name=name)
    n.add_process_point(df.FuncProcessPoint(py_func=cls))
    return n


def test_default_names_count_per_kind(finalized):
    reset_name_scope()
    assert [df.FlowData().name for _ in range(3)] == ["FlowData", "FlowData_1", "FlowData_2"]
    assert [df.FlowNode(1, 1).name for _ in range(2)] == ["FlowNode", "FlowNode_1"]
    assert df.FlowData(name="x").name == "x"
    assert df.FlowData(name="x").name == "x_1"
    assert df.FuncProcessPoint(py_func=Echo).name == "FuncProcessPoint"


def test_finalize_resets_names(finalized):
    df.FlowData()
    df.finalize()
    assert df.FlowData().name == "FlowData"


def test_alias_must_be_unique(finalized):
    reset_name_scope()
    a = df.FlowNode(1, 1).set_alias("A")
    assert a.alias == "A"
    with pytest.raises(ValueError, match="already used"):
        df.FlowNode(1, 1).set_alias("A")


def test_graph_json_and_output_mapping(one_cluster):
    reset_name_scope()
    d0, d1 = df.FlowData(), df.FlowData()
    a = _node()
    b = _node(TwoOut, 1, 2)
    a_out = a(d1)
    b0, b1 = b(d0)
    g = df.FlowGraph([b1, a_out, b0], name="g")
    # GE groups outputs per node (first use order), indexes sorted: [b:0, b:1, a:0]
    assert g._output_idx_mapping == [1, 2, 0]
    j = json.loads(g._graph_json())
    assert j["name"] == "g"
    assert j["inputs"] == ["FlowData", "FlowData_1"]
    assert j["outputs"] == ["FlowNode_1:0", "FlowNode_1:1", "FlowNode:0"]
    nodes = {n["name"]: n for n in j["nodes"]}
    assert nodes["FlowNode"]["inputs"] == ["FlowData_1"]
    fl = nodes["FlowNode_1"]["func_list"]
    assert fl[0]["inputs_index"] == [0] and fl[0]["outputs_index"] == [0, 1]
    assert fl[0]["func_name"].startswith("TwoOut.proc#")
    assert j["exception_catch"] is False


def test_same_output_twice_maps_to_two_positions(one_cluster):
    d = df.FlowData()
    out = _node()(d)
    g = df.FlowGraph([out, out])
    assert g._output_idx_mapping == [0, 1]
    assert json.loads(g._graph_json())["outputs"] == [f"{out.node.name}:0"] * 2


def test_inputs_sorted_by_name(one_cluster):
    z = df.FlowData(name="z_in")
    a = df.FlowData(name="a_in")
    n = df.FlowNode(2, 1)
    n.add_process_point(df.FuncProcessPoint(compile_config_path="some.json"))
    g = df.FlowGraph([n(z, a)])
    assert [d.name for d in g._input_datas] == ["a_in", "z_in"]


def test_node_attrs_in_json(one_cluster, tmp_path):
    d0, d1 = df.FlowData(), df.FlowData()
    pp = df.FuncProcessPoint(compile_config_path=str(tmp_path / "cfg.json"))
    pp.set_init_param("k", 1)
    pp.set_init_param("s", "x")
    pp.set_init_param("f", 1.5)
    pp.set_init_param("b", True)
    pp.set_init_param("l", [1, 2])
    pp.set_init_param("ll", [[1], [2, 3]])
    pp.set_init_param("t", df.DT_INT32)
    pp.set_init_param("tl", [df.DT_FLOAT, df.DT_INT8])
    pp.add_invoked_closure("m", df.GraphProcessPoint(df.Framework.ONNX, "m.onnx", name="gpp"))
    n = df.FlowNode(2, 1, name="N")
    n.add_process_point(pp)
    n.map_input(0, pp, 1, [df.CountBatch(batch_size=4)])
    n.map_input(1, pp, 0, [df.TimeBatch(time_window=10)])
    n.map_output(0, pp, 0)
    n.set_attr("_flow_attr_depth", 8)
    n.set_attr("_flow_attr_enqueue_policy", "OVERWRITE")
    n.set_balance_gather()
    n.set_alias("NA")
    g = df.FlowGraph([n(d0, d1)])
    g.set_exception_catch(True)
    g.set_inputs_align_attrs(16, 1000, True)
    g.set_contains_n_mapping_node(True)
    j = json.loads(g._graph_json())
    node = j["nodes"][0]
    assert node["compile_config"] == str(tmp_path / "cfg.json")
    assert node["init_params"] == {"k": 1, "s": "x", "f": 1.5, "b": True, "l": [1, 2], "ll": [[1], [2, 3]],
                                   "t": "DT_INT32", "tl": ["DT_FLOAT", "DT_INT8"]}
    assert node["invoked_closures"] == {"m": {"name": "gpp", "type": "GraphPp", "framework": "onnx",
                                              "graph_file": os.path.abspath("m.onnx")}}
    assert node["input_map"] == [1, 0] and node["output_map"] == [0]
    assert node["input_attrs"]["0"] == {"count_batch": {"batch_size": 4, "slide_stride": 0, "timeout": 0,
                                                        "padding": False}}
    assert node["input_attrs"]["1"]["time_batch"]["time_window"] == 10
    assert node["flow_attr"] == {"depth": 8, "enqueue_policy": "OVERWRITE"}
    assert node["balance"] == "gather"
    assert node["name"] == "NA" and node["_flow_node_name"] == "N"  # the alias names it, as in GE deploys
    assert j["outputs"] == ["NA:0"]
    assert j["exception_catch"] is True
    assert j["inputs_align"] == {"max_cache_num": 16, "timeout_ms": 1000, "dropout": True}


def test_flow_attr_false_drops_queue_attrs(one_cluster):
    n = _node()
    n.set_attr("_flow_attr", False)
    n.set_attr("_flow_attr_depth", 4)
    g = df.FlowGraph([n(df.FlowData())])
    assert "flow_attr" not in json.loads(g._graph_json())["nodes"][0]


def test_bad_arguments_raise_clearly(one_cluster):
    with pytest.raises(df.DfException, match="input_num"):
        df.FlowNode("1", 1)
    with pytest.raises(df.DfException, match="output_num"):
        df.FlowNode(1, -1)
    with pytest.raises(df.DfException, match="need 1 input"):
        _node()(df.FlowData(), df.FlowData())
    with pytest.raises(df.DfException, match="FlowData or FlowOutput"):
        _node()(3)
    with pytest.raises(df.DfException, match="schema"):
        df.FlowData(schema="x")
    with pytest.raises(df.DfException, match="flow_options"):
        df.init({"k": 1})
    with pytest.raises(df.DfException, match="compile_config_path"):
        df.FuncProcessPoint()
    pp = df.FuncProcessPoint(compile_config_path="x.json")
    with pytest.raises(df.DfException, match="init param 'v'"):
        pp.set_init_param("v", {"a": 1})
    with pytest.raises(df.DfException, match="init param 'v'"):
        pp.set_init_param("v", [1, "a"])
    with pytest.raises(df.DfException, match="attr_name"):
        pp.set_init_param(3, 1)
    n = df.FlowNode(1, 1)
    with pytest.raises(df.DfException, match="_flow_attr_enqueue_policy"):
        n.set_attr("_flow_attr_enqueue_policy", "LIFO")
    with pytest.raises(df.DfException, match="node_input_index"):
        n.map_input(3, pp, 0)
    with pytest.raises(df.DfException, match="input_attrs"):
        n.map_input(0, pp, 0, ["batch"])
    with pytest.raises(df.DfException, match="already has process point"):
        n.add_process_point(df.FuncProcessPoint(compile_config_path="y.json"))
    with pytest.raises(df.DfException, match="outputs"):
        df.FlowGraph([])
    with pytest.raises(df.DfException, match="not connected"):
        df.FlowGraph([df.FlowOutput(_node(), 0)])
    with pytest.raises(df.DfException, match="graph_options"):
        df.FlowGraph([_node()(df.FlowData())], graph_options={"a": 1})
    with pytest.raises(df.DfException, match="align_max_cache_num"):
        df.FlowGraph([_node()(df.FlowData())]).set_inputs_align_attrs(2000, 10)
    with pytest.raises(df.DfException, match="align_timeout"):
        df.FlowGraph([_node()(df.FlowData())]).set_inputs_align_attrs(10, 0)


def test_udf_class_without_wrapped_methods(finalized):
    class Plain:
        def proc(self, ctx, inputs):
            return 0

    with pytest.raises(df.DfException, match="proc_wrapper") as e:
        df.FuncProcessPoint(py_func=Plain)
    assert e.value.error_code == ff.FLOW_FUNC_FAILED
    with pytest.raises(df.DfException, match="py_func"):
        df.FuncProcessPoint(py_func=42)


def test_proc_wrapper_mapping_must_fit_the_node(finalized):
    class Wide:
        @ff.proc_wrapper("i5,o0")
        def proc(self, ctx, inputs):
            return 0

    with pytest.raises(df.DfException, match=r"input 5.*has 1 input"):
        df.FlowNode(1, 1).add_process_point(df.FuncProcessPoint(py_func=Wide))

    class Garbled:
        @ff.proc_wrapper("in0,o0")
        def proc(self, ctx, inputs):
            return 0

    with pytest.raises(df.DfException, match="bad item 'in0'"):
        df.FuncProcessPoint(py_func=Garbled)


def test_calls_after_finalize(finalized):
    df.init({})
    d = df.FlowData()
    g = df.FlowGraph([_node()(d)])
    df.finalize()
    with pytest.raises(df.DfException, match="df.init") as e:
        g.feed_data({d: np.ones(1, np.float32)})
    assert e.value.error_code == _core.NOT_INIT
    with pytest.raises(df.DfException, match="df.init"):
        g.fetch_data(timeout=10)
    with pytest.raises(df.DfException, match="df.init"):
        df.FlowGraph([_node()(df.FlowData())])


def test_tensor_and_desc():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = df.Tensor(a)
    assert t.numpy() is a  # zero-copy
    assert t.numpy(copy=True) is not a and (t.numpy(copy=True) == a).all()
    assert t.tensor_desc == df.TensorDesc(df.DT_INT32, [2, 3])
    assert t.get_shape() == [2, 3] and t.get_element_cnt() == 6 and t.get_data_size() == 24
    t2 = df.Tensor([1, 2], tensor_desc=df.TensorDesc(df.DT_FLOAT, [2]))
    assert t2.numpy().dtype == np.float32
    with pytest.raises(df.DfException, match="shape"):
        df.Tensor([1, 2], tensor_desc=df.TensorDesc(df.DT_FLOAT, [3]))
    with pytest.raises(df.DfException, match="dtype"):
        df.Tensor(np.array([1 + 2j]))
    with pytest.raises(df.DfException, match="dtype"):
        df.TensorDesc("float", [1])
    with pytest.raises(df.DfException, match="shape"):
        df.TensorDesc(df.DT_FLOAT, [1.5])
    s = df.Tensor(np.array(["ab", "c"]))
    assert s.tensor_desc.dtype == df.DT_STRING
    x = df.alloc_tensor([4, 4], np.float32, align=64)
    assert x.get_shape() == [4, 4] and x.numpy().ctypes.data % 64 == 0
    assert df.alloc_tensor([2], df.DT_INT64).numpy().dtype == np.int64
    with pytest.raises(TypeError, match="dtype"):
        df.alloc_tensor([2], "complex64")
    assert str(df.DT_INT32) == "DT_INT32" and df.DT_INT32.dtype == _core.DT_INT32


def test_flow_info_user_data():
    info = df.FlowInfo(start_time=1, end_time=2, flow_flags=df.FlowFlag.DATA_FLOW_FLAG_EOS, transaction_id=3)
    info.set_user_data(b"abc", 4)
    assert info.data_size == 7
    assert info.get_user_data(3, 4) == bytearray(b"abc")
    with pytest.raises(df.DfException, match="can not be greater"):
        info.set_user_data(b"x" * 10, 60)
    with pytest.raises(df.DfException, match="size is 0"):
        info.get_user_data(0)
    with pytest.raises(df.DfException, match="user_data"):
        info.set_user_data("text")
    with pytest.raises(df.DfException, match="transaction_id"):
        info.transaction_id = "1"


def test_exceptions_carry_code_and_message():
    e = df.DfException("bad", 7)
    assert e.error_code == 7 and e.message == "bad" and "bad" in str(e)
    assert isinstance(df.DfAbortException("x"), df.DfException)
    assert df.DfException("y").error_code == _core.PARAM_INVALID


def test_msg_type_register_checks():
    class A:
        pass

    class B:
        pass

    df.msg_type_register.register(2001, A, lambda o: b"a", lambda b: A())
    with pytest.raises(df.DfException, match="has been registered"):
        df.msg_type_register.register(2001, B, lambda o: b"b", lambda b: B())
    with pytest.raises(df.DfException, match="msg_type"):
        df.msg_type_register.register(5, B, lambda o: b"b", lambda b: B())
    assert df.msg_type_register.get_msg_type(A) == 2001


def test_running_ids_on_host_are_none():
    assert df.get_running_device_id() is None
    assert df.get_running_instance_id() is None
    assert df.get_running_instance_num() is None


def test_bad_ge_option_fails_the_first_graph(finalized):
    df.init({"ge.noSuchOption": "1"})
    with pytest.raises(df.DfException, match="ge.noSuchOption") as e:
        df.FlowGraph([_node()(df.FlowData())])
    assert e.value.error_code != 0
    df.finalize()
    df.init({"ge.exec.deviceId": "0"})  # a good init afterwards works
    g = df.FlowGraph([_node()(df.FlowData())])
    assert g.name.startswith("FlowGraph")
