"""Shared fixtures of the dataflow Python tests.

Each test that runs graphs gets ``df.init`` on one cluster and ``df.finalize`` afterwards. The
cluster comes from GE's ``RESOURCE_CONFIG_PATH``: unset (hflow's default devices 0..3), a
numa_config file of devices 2,3,4,5, or hflow's compact form with devices 3,6,7 - so every test
that takes ``cluster`` runs without device 0 too. ``ge.exec.deviceId`` "0" is logical (the
cluster's first device).
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import tempfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
UDF_PROJECTS = REPO / "tests" / "udf_projects"

CLUSTERS = {
    "default": None,
    "2345": {"cluster": [{"cluster_nodes": [{"node_id": 0, "is_local": True, "item_list": [
        {"item_id": i, "device_id": d, "item_type": "npu"} for i, d in enumerate([2, 3, 4, 5])]}]}],
        "item_def": [{"item_type": "npu", "memory": "[DDR:16GB]"}]},
    "367": {"devices": [3, 6, 7]},
}
DEVICES = {"default": [0, 1, 2, 3], "2345": [2, 3, 4, 5], "367": [3, 6, 7]}

if "HFLOW_UDF_BUILD_DIR" not in os.environ:
    # C++ UDF builds are kept between runs, one folder per SDK (runs against different SDKs may
    # run at once and must not share builds).
    _key = hashlib.sha1(os.environ.get("HFLOW_SDK_DIR", "").encode()).hexdigest()[:12]
    os.environ["HFLOW_UDF_BUILD_DIR"] = os.path.join(tempfile.gettempdir(), f"hflow_pytest_udf_{_key}")


class Cluster:
    """The cluster a test runs on: ``name`` and its ``devices``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.devices = DEVICES[name]


def children() -> list[tuple[int, str, bytes]]:
    """This process's child processes: (pid, name, command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == os.getpid():
            found.append((int(entry), name, cmd))
    return found


def _use_cluster(name: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Cluster:
    cfg = CLUSTERS[name]
    if cfg is None:
        monkeypatch.delenv("RESOURCE_CONFIG_PATH", raising=False)
    else:
        path = tmp_path / f"cluster_{name}.json"
        path.write_text(json.dumps(cfg))
        monkeypatch.setenv("RESOURCE_CONFIG_PATH", str(path))
    return Cluster(name)


@pytest.fixture(params=list(CLUSTERS))
def cluster(request: pytest.FixtureRequest, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch):
    """df.init on each cluster in turn; df.finalize after the test."""
    import dataflow as df

    c = _use_cluster(request.param, tmp_path, monkeypatch)
    df.init({"ge.exec.deviceId": "0"})
    yield c
    df.finalize()


@pytest.fixture
def one_cluster(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch):
    """df.init on the 2,3,4,5 cluster only (tests whose behaviour does not depend on the devices)."""
    import dataflow as df

    c = _use_cluster("2345", tmp_path, monkeypatch)
    df.init({"ge.exec.deviceId": "0"})
    yield c
    df.finalize()


@pytest.fixture
def finalized():
    """Make sure dataflow is finalized before and after the test."""
    import dataflow as df

    df.finalize()
    yield
    df.finalize()
