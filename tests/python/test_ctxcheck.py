"""`hflow ctxcheck` on Python programs: pyACL calls from an unbound Python thread, another
device's memory, and a Python UDF that leaves its thread on another device, each found with
the Python stack (file, line, function, the Python thread's name); all on device sets with and
without 0.

The programs are tests/ctxcheck_programs/py_*.py; a line there marked `# CTXCHECK: tag` is where
a finding must point.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

PROGRAMS = REPO / "tests" / "ctxcheck_programs"
DEVICE_SETS = {"2345": [2, 3, 4, 5], "367": [3, 6, 7], "01": [0, 1]}


def hflow_binary() -> str:
    """The `hflow` CLI: run_pytest.sh names the build's; else the one on PATH."""
    found = os.path.join(os.environ.get("HFLOW_BIN_DIR", ""), "hflow")
    if os.path.exists(found):
        return found
    found = shutil.which("hflow")
    assert found, "no hflow CLI: set HFLOW_BIN_DIR to the build's bin folder"
    return found


def line_of(program: str, tag: str) -> int:
    for n, line in enumerate((PROGRAMS / program).read_text().splitlines(), 1):
        if line.rstrip().endswith(f"# CTXCHECK: {tag}"):
            return n
    raise AssertionError(f"{program} has no '# CTXCHECK: {tag}' line")


class Checked:
    """One `hflow ctxcheck` run: its exit code, stderr and both reports."""

    def __init__(self, tmp: pathlib.Path, devices: list[int], program: list[str], extra=()):
        env = dict(os.environ)
        for name in ("RESOURCE_CONFIG_PATH", "HFLOW_CTXCHECK", "HFLOW_CTXCHECK_FILE"):
            env.pop(name, None)
        cmd = [hflow_binary(), "ctxcheck", "--devices", ",".join(map(str, devices)),
               "--json", str(tmp / "r.json"), "--sarif", str(tmp / "r.sarif"), *extra,
               "--", *program]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        self.code, self.err = done.returncode, done.stderr
        self.report = json.loads((tmp / "r.json").read_text())
        self.sarif = json.loads((tmp / "r.sarif").read_text())

    def findings(self, kind: str) -> list[dict]:
        return [f for f in self.report["findings"] if f["kind"] == kind]


def python(script: str, *args) -> list[str]:
    """A Python test program run by this test's interpreter."""
    return [sys.executable, str(PROGRAMS / script), *map(str, args)]


def pool(mode: str, *devices: int) -> list[str]:
    return python("py_pool.py", mode, *devices)


@pytest.fixture(params=sorted(DEVICE_SETS))
def devices(request) -> list[int]:
    return DEVICE_SETS[request.param]


def test_an_unbound_python_thread_is_found_with_its_python_stack(tmp_path, devices):
    r = Checked(tmp_path, devices, pool("unbound", devices[0]))
    assert r.code == 1, r.err
    assert r.report["program"]["exit_code"] == 0, "report mode goes on"
    unbound = r.findings("unbound")
    assert unbound, r.err
    first = unbound[0]
    assert first["op"] == "Malloc" and first["device"] == devices[0]
    assert first["thread"]["name"] == "py-pool", "the Python thread's name"
    line = line_of("py_pool.py", "py malloc")
    loc = first["location"]
    assert loc["language"] == "python" and loc["line"] == line, loc
    assert loc["file"].endswith("py_pool.py") and loc["function"] == "pool_work", loc
    stack = first["python_stack"]
    assert stack[0]["function"] == "pool_work" and stack[0]["user"], stack
    assert any(f["function"] == "Thread.run" and not f["user"] for f in stack), stack
    # Each later pyACL call of the thread is a site of its own, told apart by its Python line
    # alone (their native stacks are the interpreter's, the same for each).
    lines = {f["location"]["line"] for f in unbound}
    assert len(lines) == len(unbound) >= 4, [f["location"] for f in unbound]
    assert f"py_pool.py:{line}, python)" in r.err
    assert "thread 'py-pool'" in r.err
    # SARIF: the location is the script's line; the Python stack comes first.
    res = r.sarif["runs"][0]["results"][0]
    phys = res["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"].startswith("file:///")
    assert phys["artifactLocation"]["uri"].endswith("py_pool.py")
    assert phys["region"]["startLine"] == line
    assert res["stacks"][0]["message"]["text"] == "the Python stack"
    assert res["partialFingerprints"]["hflowCtxcheckSite/v1"] == first["site"]


def test_the_fixed_python_program_is_clean(tmp_path, devices):
    r = Checked(tmp_path, devices, pool("fixed", devices[0]))
    assert r.code == 0, r.err
    assert r.report["findings"] == [], r.report
    assert "no findings in 1 process" in r.err


def test_strict_fails_the_python_threads_call_as_ee1018(tmp_path, devices):
    r = Checked(tmp_path, devices, pool("unbound", devices[-1]), extra=["--strict"])
    assert r.code == 1, r.err
    assert r.report["program"]["exit_code"] == 1, "the program's error path ran"
    assert "py_pool: acl.rt.malloc failed: 107002" in r.err, "ACL_ERROR_RT_CONTEXT_NULL"
    unbound = r.findings("unbound")
    assert len(unbound) == 1 and unbound[0]["result"] == "no_context", unbound
    assert unbound[0]["location"]["line"] == line_of("py_pool.py", "py malloc")


def test_a_python_thread_freeing_another_devices_memory(tmp_path, devices):
    a, b = devices[0], devices[-1]
    r = Checked(tmp_path, devices, pool("cross", a, b))
    assert r.code == 1, r.err
    cross = r.findings("cross_device")
    assert len(cross) == 1, r.report
    assert cross[0]["touched_device"] == b and cross[0]["context_device"] == a
    assert cross[0]["thread"]["name"] == "py-other-dev"
    assert cross[0]["location"]["line"] == line_of("py_pool.py", "py cross free")
    assert cross[0]["location"]["function"] == "cross.<locals>.other"


def test_a_python_udf_leaving_its_thread_on_another_device_is_named(tmp_path, devices):
    r = Checked(tmp_path, devices, python("py_udf_switch.py", "leak", devices[-1]))
    assert r.code == 1, r.err
    assert r.report["program"]["exit_code"] == 0, "hflow rebinds; results hold"
    leaks = r.findings("context_leak")
    assert len(leaks) == 1, r.report
    leak = leaks[0]
    assert leak["count"] == 3 and leak["left_device"] == devices[-1]
    assert leak["udf"]["node"] == "switcher" and leak["udf"]["phase"] == "Proc", leak["udf"]
    assert leak["location"]["line"] == line_of("py_udf_switch.py", "py switch")
    assert leak["location"]["function"] == "Switcher.proc"
    assert r.findings("unbound") == [], r.report
    fixed = Checked(tmp_path, devices, python("py_udf_switch.py", "restore", devices[-1]))
    assert fixed.code == 0, fixed.err


# SARIF against the SARIF 2.1.0 object model (sarif_model.py): every kind of finding, from
# native and Python programs, and a clean run.
NATIVE = pathlib.Path(os.environ.get("HFLOW_BIN_DIR", "/nonexistent")).parent / "tests" / \
    "ctxcheck_programs"


def native(program: str, *args) -> list[str]:
    """A native test program of the build."""
    path = NATIVE / program
    assert path.exists(), f"{path}: the build's ctxcheck test programs are missing"
    return [str(path), *map(str, args)]


@pytest.fixture(scope="module")
def sarif_model():
    from sarif_model import Model

    return Model()


def test_sarif_of_every_kind_of_finding_fits_the_sarif_2_1_0_model(tmp_path, sarif_model):
    devices = DEVICE_SETS["2345"]
    runs = {
        "python unbound": pool("unbound", 2),
        "python cross": pool("cross", 2, 5),
        "python leak": python("py_udf_switch.py", "leak", 5),
        "native unbound": native("ctxcheck_acl_pool", "unbound", 2),
        "native cross": native("ctxcheck_acl_pool", "cross", 2, 5),
        "native leak": native("ctxcheck_udf_switch", "leak"),
        "clean": pool("fixed", 2),
    }
    kinds = set()
    for name, program in runs.items():
        run = tmp_path / name.replace(" ", "_")
        run.mkdir()
        r = Checked(run, devices, program)
        assert r.code == (0 if name == "clean" else 1), (name, r.err)
        assert sarif_model.errors(r.sarif) == [], name
        kinds |= {res["ruleId"] for res in r.sarif["runs"][0]["results"]}
    assert kinds == {"HFLOW-CTX001", "HFLOW-CTX002", "HFLOW-CTX003"}


def test_the_sarif_model_check_bites(sarif_model):
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [
        {"message": {"text": "m"}, "level": "error", "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "file:///a.py"}, "region": {"startLine": 3}}}],
         "properties": {"anything": [1, {"x": 2}]}}]}]}
    assert sarif_model.errors(good) == []
    res = good["runs"][0]["results"][0]
    cases = [
        (lambda: res.update(levle="error"), "Result has no property 'levle'"),
        (lambda: res.pop("message"), "Result requires 'message'"),
        (lambda: res.update(level="fatal"), "'fatal' is not one of"),
        (lambda: res["locations"][0]["physicalLocation"]["region"].update(startLine="3"),
         "an integer expected"),
        (lambda: res["locations"][0]["physicalLocation"]["region"].update(startLine=0),
         "below the schema's minimum 1"),
        (lambda: res.update(stacks={"frames": []}), "an array expected"),
        (lambda: good.update(version="2.0.0"), "'2.0.0' is not one of"),
    ]
    import copy

    pristine = copy.deepcopy(good)
    for change, expected in cases:
        good.clear()
        good.update(copy.deepcopy(pristine))
        res = good["runs"][0]["results"][0]
        change()
        errors = sarif_model.errors(good)
        assert any(expected in e for e in errors), (expected, errors)
