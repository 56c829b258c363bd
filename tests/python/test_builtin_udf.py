"""A C++ UDF (tests/udf_projects/single_add: out = in0 + in1 + bias) through FuncProcessPoint's
compile config; hflow builds it with cmake on the first build."""
from __future__ import annotations

import time

import numpy as np
import pytest

import dataflow as df
from dataflow import _core

from conftest import CLUSTERS, UDF_PROJECTS, children

ADD_DIR = UDF_PROJECTS / "single_add"


@pytest.fixture
def in_add_dir(monkeypatch):
    # The compile config's workspace "." is relative to the working directory, as in GE.
    monkeypatch.chdir(ADD_DIR)


def _add_graph(bias=None, **params):
    d0, d1 = df.FlowData(), df.FlowData()
    pp = df.FuncProcessPoint(compile_config_path="add_func.json")
    if bias is not None:
        pp.set_init_param("bias", bias)
    for k, v in params.items():
        pp.set_init_param(k, v)
    node = df.FlowNode(2, 1)
    node.add_process_point(pp)
    return df.FlowGraph([node(d0, d1)]), d0, d1


def test_add_values(cluster, in_add_dir):
    g, d0, d1 = _add_graph(bias=5)
    a = np.array([[1, 2], [3, 4]], np.int32)
    b = np.array([[10, 20], [30, 40]], np.int32)
    assert g.feed_data({d0: a, d1: df.Tensor(b)}) == 0
    out, info, code = g.fetch_data()
    assert code == 0
    assert len(out) == 1
    assert out[0].tensor_desc == df.TensorDesc(df.DT_INT32, [2, 2])
    np.testing.assert_array_equal(out[0].numpy(), a + b + 5)
    # by index, a second transaction
    assert g.feed_data({d0: a, d1: a}) == 0
    out, _, code = g.fetch_data([0])
    assert code == 0
    np.testing.assert_array_equal(out[0].numpy(), a + a + 5)


def _workers() -> list[int]:
    """This process's children named hflow-worker."""
    return [pid for pid, name, _ in children() if name == "hflow-worker"]


@pytest.mark.parametrize("name", list(CLUSTERS))
def test_hflow_udf_isolation_key_runs_the_udf_in_a_worker(name, tmp_path, monkeypatch, in_add_dir):
    """hflow.udfIsolation=1 (df.init's options): the C++ UDF runs in an hflow-worker child process,
    which ends with df.finalize; the results are the same."""
    from conftest import _use_cluster

    _use_cluster(name, tmp_path, monkeypatch)
    df.init({"ge.exec.deviceId": "0", "hflow.udfIsolation": "1"})
    try:
        assert _workers() == []
        g, d0, d1 = _add_graph(bias=5)
        a = np.array([[1, 2], [3, 4]], np.int32)
        for _ in range(3):
            assert g.feed_data({d0: a, d1: a}) == 0
            out, _, code = g.fetch_data()
            assert code == 0
            np.testing.assert_array_equal(out[0].numpy(), a + a + 5)
        assert len(_workers()) == 1
    finally:
        df.finalize()
    assert _workers() == []


def test_user_data_and_transaction_round_trip(one_cluster, in_add_dir):
    g, d0, d1 = _add_graph()
    info = df.FlowInfo(transaction_id=0)
    info.set_user_data(b"hello-user", 0)
    one = np.ones(3, np.int32)
    assert g.feed_data({d0: one, d1: one}, info) == 0
    out, got, code = g.fetch_data()
    assert code == 0
    np.testing.assert_array_equal(out[0].numpy(), one * 2)
    assert got.get_user_data(10) == bytearray(b"hello-user")
    assert got.transaction_id > 0


def test_fetch_on_empty_graph_times_out_quickly(one_cluster, in_add_dir):
    g, d0, d1 = _add_graph()
    t0 = time.monotonic()
    out, _, code = g.fetch_data(timeout=100)
    assert code == _core.TIMEOUT, _core.last_error()
    assert out == []
    assert time.monotonic() - t0 < 5


def test_eos_feed(one_cluster, in_add_dir):
    g, d0, d1 = _add_graph()
    one = np.ones(2, np.int32)
    eos = df.FlowInfo(flow_flags=df.FlowFlag.DATA_FLOW_FLAG_EOS)
    assert g.feed_data({d0: one, d1: one}, eos) == 0
    out, info, code = g.fetch_data()
    assert code == 0
    np.testing.assert_array_equal(out[0].numpy(), one * 2)
    assert info.flow_flags & df.FlowFlag.DATA_FLOW_FLAG_EOS  # the flag travels with the data
    # an end-of-stream feed without data reaches the UDF as empty messages, which SingleAdd rejects
    assert g.feed_data({}, eos) == 0
    assert g.fetch_data(timeout=5000)[2] == _core.FLOW_FUNC_ERR_PARAM_INVALID
    # an empty feed without EOS is refused
    assert g.feed_data({}) == _core.PARAM_INVALID


def test_udf_error_code_comes_back(one_cluster, in_add_dir):
    g, d0, d1 = _add_graph()
    # float inputs: SingleAdd rejects them with FLOW_FUNC_ERR_PARAM_INVALID
    assert g.feed_data({d0: np.ones(2, np.float32), d1: np.ones(2, np.float32)}) == 0
    out, _, code = g.fetch_data(timeout=5000)
    assert out == []
    assert code == _core.FLOW_FUNC_ERR_PARAM_INVALID


def test_init_failure_fails_the_feed(one_cluster, in_add_dir):
    g, d0, d1 = _add_graph(fail_init=True)
    one = np.ones(2, np.int32)
    code = g.feed_data({d0: one, d1: one})
    assert code != 0
    assert _core.last_error()


def test_feed_checks(one_cluster, in_add_dir):
    g, d0, d1 = _add_graph()
    one = np.ones(2, np.int32)
    assert g.feed_data({d0: one}) == _core.PARAM_INVALID  # missing input
    assert g.fetch_data([3])[2] == _core.PARAM_INVALID  # index out of range
    with pytest.raises(df.DfException, match="feed_dict"):
        g.feed_data([one, one])
    assert g.feed_data({d0: one, d1: one}, flow_info="info") == _core.PARAM_INVALID  # GE returns it
    with pytest.raises(df.DfException, match="timeout"):
        g.fetch_data(timeout="1")
    assert g.feed_data({d0: np.array(["a", "b"]), d1: one}) == _core.PARAM_INVALID  # DT_STRING


def test_schema_converts_fed_data(one_cluster, in_add_dir):
    d0 = df.FlowData(schema=df.TensorDesc(df.DT_INT32, [2]))
    d1 = df.FlowData()
    pp = df.FuncProcessPoint(compile_config_path="add_func.json")
    node = df.FlowNode(2, 1)
    node.add_process_point(pp)
    g = df.FlowGraph([node(d0, d1)])
    assert g.feed_data({d0: [1.0, 2.0], d1: np.array([1, 1], np.int32)}) == 0
    out, _, code = g.fetch_data()
    assert code == 0
    np.testing.assert_array_equal(out[0].numpy(), [2, 3])
    assert g.feed_data({d0: [1, 2, 3], d1: np.array([1, 1], np.int32)}) == _core.SHAPE_INVALID  # wrong shape


def test_model_process_point_fails_at_build(one_cluster):
    gpp = df.GraphProcessPoint(df.Framework.ONNX, "model.onnx")
    node = gpp.fnode(1, 1)
    d = df.FlowData()
    g = df.FlowGraph([node(d)])
    code = g.feed_data({d: np.ones(1, np.float32)})
    assert code != 0
    assert _core.last_error()
