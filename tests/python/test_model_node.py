"""Model nodes from Python: GE's GraphProcessPoint with an ONNX file or a TensorFlow GraphDef runs on every
cluster (devices 2,3,4,5, 3,6,7 and the default), retyped by its compile config as GE's samples do; a
model file that is missing fails the build, naming it. The models are made by Debian's python3 with
torch and onnx (tests/models/make_onnx_models.py), whichever python3 runs the test.
"""
from __future__ import annotations

import json
import pathlib
import subprocess

import numpy as np
import pytest

import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core

from conftest import REPO


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("models")
    subprocess.run(["/usr/bin/python3", str(REPO / "tests" / "models" / "make_onnx_models.py"),
                    str(out), "extras", "tf", "ge"], check=True, capture_output=True)
    return out


def test_onnx_model_runs(cluster, models):
    d0, d1 = df.FlowData(), df.FlowData()
    node = df.GraphProcessPoint(df.Framework.ONNX, str(models / "add.onnx")).fnode(2, 1)
    g = df.FlowGraph([node(d0, d1)])
    assert g.feed_data({d0: np.array([1, 2, 3], np.float32), d1: np.array([0.5, 0.5, 0.5], np.float32)}) == 0
    out, _, code = g.fetch_data(timeout=30000)
    assert code == 0
    np.testing.assert_array_equal(out[0].numpy(), np.array([1.5, 2.5, 3.5], np.float32))


def test_compile_config_retypes_inputs(cluster, models, tmp_path):
    cfg = tmp_path / "int_add.json"
    cfg.write_text(json.dumps({"build_options": {}, "inputs_tensor_desc": [
        {"data_type": "DT_INT32", "shape": [3]}, {"data_type": "DT_INT32", "shape": [3]}]}))
    pp = df.GraphProcessPoint(df.Framework.ONNX, str(models / "add.onnx"), compile_config_path=str(cfg))
    d0, d1 = df.FlowData(), df.FlowData()
    g = df.FlowGraph([pp.fnode(2, 1)(d0, d1)])
    assert g.feed_data({d0: np.array([1, 2, 3], np.int32), d1: np.array([10, 20, 30], np.int32)}) == 0
    out, _, code = g.fetch_data(timeout=30000)
    assert code == 0
    assert out[0].numpy().dtype == np.int32
    np.testing.assert_array_equal(out[0].numpy(), [11, 22, 33])


def test_tensorflow_model_runs(cluster, models):
    a, b = np.load(models / "tf_add.i0.npy"), np.load(models / "tf_add.i1.npy")
    d0, d1 = df.FlowData(), df.FlowData()
    node = df.GraphProcessPoint(df.Framework.TENSORFLOW, str(models / "tf_add.pb")).fnode(2, 1)
    g = df.FlowGraph([node(d0, d1)])
    assert g.feed_data({d0: a, d1: b}) == 0
    out, _, code = g.fetch_data(timeout=30000)
    assert code == 0
    np.testing.assert_allclose(out[0].numpy(), a + b, rtol=0, atol=1e-6)


def test_a_ge_graph_file_runs_as_mindspore(cluster, models):
    # GE loads MINDSPORE files with ge::Graph::LoadFromFile; hflow's reads its GE graph files.
    ins = [np.load(models / f"ge_cnn.i{i}.npy") for i in range(2)]
    want = [np.load(models / f"ge_cnn.o{i}.npy") for i in range(3)]
    d0, d1 = df.FlowData(), df.FlowData()
    node = df.GraphProcessPoint(df.Framework.MINDSPORE, str(models / "ge_cnn.json")).fnode(2, 3)
    g = df.FlowGraph(node(d0, d1))
    assert g.feed_data({d0: ins[0], d1: ins[1]}) == 0
    out, _, code = g.fetch_data(timeout=30000)
    assert code == 0
    for got, expected in zip(out, want):
        np.testing.assert_allclose(got.numpy(), expected, rtol=0, atol=1e-4)


def test_missing_model_fails_the_build(one_cluster, tmp_path):
    node = df.GraphProcessPoint(df.Framework.ONNX, str(tmp_path / "none.onnx")).fnode(1, 1)
    d = df.FlowData()
    g = df.FlowGraph([node(d)])
    assert g.feed_data({d: np.ones(1, np.float32)}) != 0
    assert "none.onnx" in _core.last_error()


class AddThenDouble:
    """Runs the invoked "add" model on its two inputs, then doubles the sum."""

    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,i1,o0")
    def proc(self, run_context, input_flow_msgs):
        code, outs = run_context.run_flow_model("add", input_flow_msgs, 30000)
        if code != ff.FLOW_FUNC_SUCCESS:
            return code
        doubled = outs[0].get_tensor().numpy() * 2
        return run_context.set_output(0, doubled)


class MissingKey:
    """Invokes a key no closure has: GE's (FLOW_FUNC_FAILED, []) comes back."""

    @ff.proc_wrapper("i0,o0")
    def proc(self, run_context, input_flow_msgs):
        code, outs = run_context.run_flow_model("nope", input_flow_msgs, 1000)
        return run_context.set_output(0, np.array([code, len(outs)], np.int64))


def test_a_python_udf_runs_its_invoked_model(cluster, models):
    pp = df.FuncProcessPoint(py_func=AddThenDouble)
    assert pp.add_invoked_closure("add", df.GraphProcessPoint(df.Framework.ONNX, str(models / "add.onnx"))) is None
    # A second model under the same key is refused with a log line; the first stays.
    pp.add_invoked_closure("add", df.GraphProcessPoint(df.Framework.ONNX, str(models / "none.onnx")))
    d0, d1 = df.FlowData(), df.FlowData()
    node = df.FlowNode(2, 1)
    node.add_process_point(pp)
    g = df.FlowGraph([node(d0, d1)])
    for i in range(3):
        a = np.array([1, 2, 3], np.float32) * (i + 1)
        assert g.feed_data({d0: a, d1: np.full(3, 0.5, np.float32)}) == 0
        out, _, code = g.fetch_data(timeout=30000)
        assert code == 0
        np.testing.assert_array_equal(out[0].numpy(), (a + 0.5) * 2)


def test_an_unknown_model_key_fails_the_call_not_the_graph(one_cluster, models):
    pp = df.FuncProcessPoint(py_func=MissingKey)
    pp.add_invoked_closure("add", df.GraphProcessPoint(df.Framework.ONNX, str(models / "add.onnx")))
    d = df.FlowData()
    node = df.FlowNode(1, 1)
    node.add_process_point(pp)
    g = df.FlowGraph([node(d)])
    assert g.feed_data({d: np.ones(3, np.float32)}) == 0
    out, _, code = g.fetch_data(timeout=30000)
    assert code == 0
    assert out[0].numpy().tolist() == [ff.FLOW_FUNC_FAILED, 0]
