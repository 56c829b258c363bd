"""examples/python: each example runs as a user runs it (its own process, the
same interpreter) and prints what it should, on the default cluster and on
devices without 0 (RESOURCE_CONFIG_PATH)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import CLUSTERS, REPO

EXAMPLES = REPO / "examples" / "python"

EXPECTED = {
    "cpp_udf": ["x * factor: [10, 20, 30]", "sum of y: [15]"],
    "multi_func_control": ["output 0 (doubled): [2, 4]", "output 1 (negated): [3, 4]"],
    "pyflow_pipeline": [f"counted: {p}" for p in
                        [("to", 1), ("be", 1), ("or", 1), ("not", 1), ("to", 2), ("be", 2)]],
    "exception_catch": ["transaction 1: [5]", "transaction 2: exception raised (code 345103)",
                        "transaction 3: [7]"],
    "model_pipeline": ["batch 0: logits [2, 3], top-1: class 0 (p=0.72), class 0 (p=0.56)",
                       "batch 1: logits [2, 3], top-1: class 2 (p=0.60), class 1 (p=0.72)",
                       "batch 2: logits [2, 3], top-1: class 1 (p=0.78), class 1 (p=0.65)",
                       "matches torch eager: True"],
    "torch_pipeline": ["batch 0: x [2, 4] -> probabilities [2, 3] torch.float32, labels [2] torch.int64",
                       "batch 0: labels [1, 0], max probabilities [0.61, 0.50]",
                       "batch 1: x [3, 4] -> probabilities [3, 3] torch.float32, labels [3] torch.int64",
                       "batch 1: labels [2, 2, 1], max probabilities [0.57, 0.74, 0.46]",
                       "matches torch eager: True"],
}


@pytest.mark.parametrize("cluster_name", ["default", "2345"])
@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_example_prints_its_results(example: str, cluster_name: str, tmp_path) -> None:
    env = dict(os.environ)
    env.pop("RESOURCE_CONFIG_PATH", None)
    if CLUSTERS[cluster_name] is not None:
        cfg = tmp_path / "cluster.json"
        cfg.write_text(json.dumps(CLUSTERS[cluster_name]))
        env["RESOURCE_CONFIG_PATH"] = str(cfg)
    run = subprocess.run([sys.executable, str(EXAMPLES / f"{example}.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if line]
    assert lines == EXPECTED[example], run.stdout + run.stderr


def test_every_example_is_checked() -> None:
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)
