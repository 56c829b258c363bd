"""Placement by GE's deploy info (names of FlowNodes as dataflow makes them) and balance scatter."""
from __future__ import annotations

import json

import numpy as np

import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core, rt


@df.pyflow
def where(x):
    return (x, df.get_running_device_id())


def _logic(device: int) -> str:
    return f"0:0:{device}"


def test_deploy_info_places_named_node(cluster, tmp_path):
    d = df.FlowData()
    node = where.fnode()
    assert node.name == "where_fnode"
    out = node(d)
    # a FlowGraph first, so GE (and with it the cluster) is up to list the devices
    info_path = tmp_path / "deploy.json"
    g = df.FlowGraph([out], graph_options={"ge.experiment.data_flow_deploy_info_path": str(info_path)})
    last = sorted(rt.device_ids())[-1]
    info_path.write_text(json.dumps({"deploy_info": [{"flow_node_name": "where_fnode",
                                                       "logic_device_id": _logic(last)}]}))
    assert g.feed({d: 1}) == 0, _core.last_error()
    assert g.fetch(timeout=5000) == ([(1, last)], 0)


def test_deploy_info_names_an_alias(one_cluster, tmp_path):
    d = df.FlowData()
    node = where.fnode().set_alias("here")
    out = node(d)
    info_path = tmp_path / "deploy.json"
    g = df.FlowGraph([out], graph_options={"ge.experiment.data_flow_deploy_info_path": str(info_path)})
    template = tmp_path / "template.json"
    df.utils.generate_deploy_template(g, str(template))
    assert json.loads(template.read_text()) == {
        "batch_deploy_info": [{"flow_node_list": ["here"], "logic_device_list": "0:0:0"}]}
    device = sorted(rt.device_ids())[1]
    info_path.write_text(json.dumps({"deploy_info": [{"flow_node_name": "here", "logic_device_id": _logic(device)}]}))
    assert g.feed({d: 2}) == 0, _core.last_error()
    assert g.fetch(timeout=5000) == ([(2, device)], 0)


class Cut:
    """Scatters each value v as two cells v*10 and v*10+1, one per column of a 1 x 2 grid."""

    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        v = int(inputs[0].get_tensor().numpy()[0])
        cfg = ff.BalanceConfig(1, 2)
        cfg.set_data_pos([(0, 0), (0, 1)])
        return ctx.set_multi_outputs(0, [np.array([v * 10], np.int64), np.array([v * 10 + 1], np.int64)], cfg)


class Work:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        cell = int(inputs[0].get_tensor().numpy()[0])
        return ctx.set_output(0, np.array([cell, df.get_running_device_id()], np.int64))


def test_balance_scatter_over_replicas(one_cluster, tmp_path):
    x = df.FlowData()
    cut = df.FlowNode(1, 1, name="cut")
    cut.add_process_point(df.FuncProcessPoint(py_func=Cut))
    cut.set_balance_scatter()
    work = df.FlowNode(1, 1, name="work")
    work.add_process_point(df.FuncProcessPoint(py_func=Work))
    info_path = tmp_path / "deploy.json"
    g = df.FlowGraph([work(cut(x))], graph_options={"ge.experiment.data_flow_deploy_info_path": str(info_path)})
    devices = sorted(rt.device_ids())
    info_path.write_text(json.dumps({
        "batch_deploy_info": [{"flow_node_list": ["work"],
                               "logic_device_list": ",".join(_logic(d) for d in devices[:2])}],
        "deploy_info": [{"flow_node_name": "cut", "logic_device_id": _logic(devices[0])}]}))
    assert g.feed_data({x: np.array([7], np.int32)}) == 0, _core.last_error()
    cells = []
    for _ in range(2):
        out, _, code = g.fetch_data(timeout=5000)
        assert code == 0, _core.last_error()
        cells.append(tuple(out[0].numpy().tolist()))
    assert sorted(c for c, _ in cells) == [70, 71]
    assert {dev for _, dev in cells} == set(devices[:2])  # one cell per replica
