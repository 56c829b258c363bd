"""hflow's graph-file JSON for a FlowGraph (format: docs/formats.md and _core's spec).

Thread-safety: pure functions over the graph objects.
"""
from __future__ import annotations

import json
from typing import Any

from dataflow.dataflow import FlowData, FlowGraphProcessPoint, FlowNode, FlowOutput, FuncProcessPoint, GraphProcessPoint
from dataflow.utils.utils import DfException


def graph_name(node: FlowNode) -> str:
    """A node's name in the graph file: its alias when it has one (GE's deploy infos name a node
    by its alias), else its name."""
    return node.alias or node.name


def _ref(anchor: Any) -> str:
    if isinstance(anchor, FlowData):
        return anchor.name
    return f"{graph_name(anchor.node)}:{anchor.index}"


def collect_nodes(outputs: list[FlowOutput]) -> list[FlowNode]:
    """Every node the outputs depend on, producers before consumers; DfException on a dangling input."""
    order: list[FlowNode] = []
    state: dict[int, int] = {}  # id -> 1 visiting, 2 done

    def visit(node: FlowNode) -> None:
        st = state.get(id(node))
        if st == 2:
            return
        if st == 1:
            raise DfException(f"FlowNode '{node.name}' is on a cycle")
        state[id(node)] = 1
        for i, anchor in enumerate(node._input_anchors):
            if anchor is None:
                raise DfException(f"Input {i} of FlowNode '{node.name}' is not connected")
            if isinstance(anchor, FlowOutput):
                visit(anchor.node)
        state[id(node)] = 2
        order.append(node)

    for out in outputs:
        visit(out.node)
    return order


def _pp_json(node: FlowNode) -> dict:
    pp = node._pp
    if pp is None:
        raise DfException(f"FlowNode '{node.name}' has no process point: call add_process_point")
    out: dict[str, Any] = {}
    if isinstance(pp, FuncProcessPoint):
        if pp._py_udf is not None:
            out["func_list"] = pp._py_udf.func_list()
        else:
            out["compile_config"] = pp.compile_config_path
        if pp._init_params:
            out["init_params"] = dict(pp._init_params)
        if pp._closures:
            out["invoked_closures"] = dict(pp._closures)
    elif isinstance(pp, (GraphProcessPoint, FlowGraphProcessPoint)):
        out["model_pp"] = pp._ref()
    return out


def node_json(node: FlowNode) -> dict:
    """One node's entry."""
    j: dict[str, Any] = {"name": graph_name(node), "inputs": [_ref(a) for a in node._input_anchors],
                         "outputs": node.output_num}
    j.update(_pp_json(node))
    if node._input_map:
        j["input_map"] = [node._input_map.get(i, i) for i in range(node.input_num)]
    if node._output_map:
        j["output_map"] = [node._output_map.get(i, i) for i in range(node.output_num)]
    if node._input_attrs:
        j["input_attrs"] = {str(k): v for k, v in sorted(node._input_attrs.items())}
    attrs = node._attrs
    if attrs.get("_flow_attr", True):
        fa: dict[str, Any] = {}
        if "_flow_attr_depth" in attrs:
            fa["depth"] = attrs["_flow_attr_depth"]
        if "_flow_attr_enqueue_policy" in attrs:
            fa["enqueue_policy"] = attrs["_flow_attr_enqueue_policy"]
        if fa:
            j["flow_attr"] = fa
    if node._balance:
        j["balance"] = node._balance
    if node.alias and node.alias != node.name:
        j["_flow_node_name"] = node.name
    return j


def graph_dict(name: str, inputs: list[FlowData], outputs: list[tuple[FlowNode, list[int]]],
               all_outputs: list[FlowOutput], exception_catch: bool, inputs_align: Any) -> dict:
    """The whole graph file as a dict."""
    nodes = collect_nodes(all_outputs)
    seen: dict[str, str] = {}
    for obj_name, kind in [(d.name, "FlowData") for d in inputs] + [(graph_name(n), "FlowNode") for n in nodes]:
        if obj_name in seen:
            raise DfException(f"Name '{obj_name}' is used by a {seen[obj_name]} and a {kind} of FlowGraph "
                              f"'{name}': names must be unique")
        seen[obj_name] = kind
    g: dict[str, Any] = {
        "name": name,
        "inputs": [d.name for d in inputs],
        "nodes": [node_json(n) for n in nodes],
        "outputs": [f"{graph_name(node)}:{i}" for node, idxs in outputs for i in idxs],
        "exception_catch": bool(exception_catch),
    }
    if inputs_align is not None:
        g["inputs_align"] = inputs_align
    return g


def graph_json_text(*args: Any) -> str:
    """``graph_dict`` as JSON text."""
    return json.dumps(graph_dict(*args))
