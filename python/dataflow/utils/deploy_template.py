"""``generate_deploy_template``: a deploy-info file listing a graph's nodes, to edit and pass as
``ge.experiment.data_flow_deploy_info_path``.

Thread-safety: reentrant.
"""
from __future__ import annotations

import json
from typing import Any


def generate_deploy_template(graph: Any, file_path: str) -> None:
    """Write a ``batch_deploy_info`` entry per node of ``graph`` (by alias when set) on logic device
    "0:0:0" (hflow's form: cluster node, ..., device id) to ``file_path``."""
    from dataflow._graph_json import collect_nodes, graph_name

    entries = [{"flow_node_list": [graph_name(n)], "logic_device_list": "0:0:0"}
               for n in collect_nodes(graph._outputs)]
    with open(file_path, "w") as f:
        json.dump({"batch_deploy_info": entries}, f, indent=4)
