"""@pyflow's process options with GE's meaning: ``resources`` checked and kept, ``env_hook_func`` run
once per process before the node's object is made (in a worker: before the process point is even
unpickled), ``visible_device_enable`` making get_running_device_id() the logical 0 (and, in a worker,
setting ASCEND_RT_VISIBLE_DEVICES to the device). Bad values raise DfException(PARAM_INVALID) naming
the option and the function, at decoration. In-process and isolated, on each test cluster."""
from __future__ import annotations

import os

import pytest

import dataflow as df
from dataflow import _core
from dataflow.flow_func import _driver

from conftest import CLUSTERS, _use_cluster

HOOK_CALLS: list[str] = []  # what env_hook ran, in order with the objects it precedes


def env_hook() -> None:
    HOOK_CALLS.append("hook")
    os.environ["HFLOW_TEST_HOOK_PID"] = str(os.getpid())


@df.pyflow(env_hook_func=env_hook)
class Hooked:
    def __init__(self):
        HOOK_CALLS.append("init")
        # What the hook prepared is there when the object is made (in whichever process that is).
        self.seen = os.environ.get("HFLOW_TEST_HOOK_PID")

    @df.method()
    def run(self, x):
        return [x, self.seen, os.getpid()]


@df.pyflow(visible_device_enable=True)
def visible(x):
    return [x, df.get_running_device_id(), os.environ.get("ASCEND_RT_VISIBLE_DEVICES")]


@df.pyflow
def physical(x):
    return [x, df.get_running_device_id()]


@df.pyflow(resources={"memory": 100, "num_cpus": 2, "num_npus": 1})
def sized(x):
    return x


def _run(node_fn, x=1):
    d = df.FlowData()
    g = df.FlowGraph([node_fn(d)])
    assert g.feed({d: x}, timeout=30000) == 0
    (out,), code = g.fetch(timeout=30000)
    assert code == 0, code
    return out


@pytest.fixture(params=[(c, iso) for c in ("default", "2345") for iso in (False, True)],
                ids=lambda p: f"{p[0]}-{'isolated' if p[1] else 'in_process'}")
def graph_env(request, tmp_path, monkeypatch):
    name, isolated = request.param
    cluster = _use_cluster(name, tmp_path, monkeypatch)
    monkeypatch.delenv("ASCEND_RT_VISIBLE_DEVICES", raising=False)
    opts = {"ge.exec.deviceId": "0"}
    if isolated:
        opts["hflow.udfIsolation"] = "1"
    df.init(opts)
    yield cluster, isolated
    df.finalize()


def test_env_hook_runs_once_before_the_object(graph_env):
    _, isolated = graph_env
    HOOK_CALLS.clear()
    _driver._hooks_run.clear()
    os.environ.pop("HFLOW_TEST_HOOK_PID", None)
    x, seen, pid = _run(Hooked.fnode().run, 7)
    assert x == 7
    assert seen == str(pid)  # the hook ran in the process that made the object, before it
    if isolated:
        assert pid != os.getpid() and HOOK_CALLS == []
    else:
        assert pid == os.getpid() and HOOK_CALLS == ["hook", "init"]
        _run(Hooked.fnode().run, 8)  # a second node of the same class: the hook does not run again
        assert HOOK_CALLS == ["hook", "init", "init"]


def test_visible_device_gives_the_logical_id(graph_env):
    cluster, isolated = graph_env
    _, device, env = _run(visible.fnode())
    assert device == 0
    _, real = _run(physical.fnode())
    assert real in cluster.devices
    if isolated:
        assert env is not None and int(env) in cluster.devices  # the worker's own device
    else:
        assert env is None  # the host's environment is every node's: left alone


def test_resources_are_checked_and_kept(graph_env):
    assert _run(sized.fnode(), 5) == 5
    udf = sized._df_py_udf()
    assert udf.resources == {"memory": 100, "num_cpus": 2, "num_npus": 1}


def _f(x):
    return x


@pytest.mark.parametrize("options, words", [
    ({"resources": [1]}, "option resources must be a dict"),
    ({"resources": {"gpus": 1}}, "option resources has key 'gpus'"),
    ({"resources": {"memory": 0}}, "resources['memory'] must be a positive int"),
    ({"resources": {"num_cpus": True}}, "resources['num_cpus'] must be a positive int"),
    ({"resources": {"num_npus": 2}}, "resources['num_npus'] can only be 1"),
    ({"env_hook_func": "setup"}, "option env_hook_func must be a function of no arguments"),
    ({"env_hook_func": lambda a: None}, "must take no arguments"),
    ({"visible_device_enable": 1}, "option visible_device_enable must be a bool"),
])
@pytest.mark.parametrize("target", ["function", "class"])
def test_bad_options_raise_param_invalid(options, words, target):
    with pytest.raises(df.DfException) as e:
        if target == "function":
            df.pyflow(**options)(_f)
        else:
            class C:
                @df.method()
                def m(self, x):
                    return x
            df.pyflow(**options)(C)
    assert e.value.error_code == _core.PARAM_INVALID
    assert words in e.value.message
    assert ("_f" if target == "function" else "C") in e.value.message  # names the function or class


def test_npu_model_checks_the_same_options():
    with pytest.raises(df.DfException) as e:
        df.npu_model(visible_device_enable="yes")(_f)
    assert e.value.error_code == _core.PARAM_INVALID and "visible_device_enable" in e.value.message


def test_a_failing_hook_fails_the_build_naming_the_node(one_cluster):
    calls = []

    def bad_hook():
        calls.append(1)
        raise RuntimeError("no such environment")

    @df.pyflow(env_hook_func=bad_hook)
    def g(x):
        return x

    d = df.FlowData()
    graph = df.FlowGraph([g.fnode()(d)])
    assert graph.feed({d: 1}, timeout=30000) != 0
    assert calls  # it ran, and its failure failed the node's init
