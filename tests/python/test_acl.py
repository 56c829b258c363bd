"""pyACL's runtime calls (`import acl`) on hflow's simulated devices: devices, contexts, memory
and copies, pyACL's return conventions and ACL's error codes, on clusters with and without
device 0 (the cluster is RESOURCE_CONFIG_PATH's, read by acl.init)."""
from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import acl

from conftest import CLUSTERS, DEVICES

SUCCESS = 0
INVALID_PARAM = 100000
UNINITIALIZE = 100001
REPEAT_INITIALIZE = 100002
REPEAT_FINALIZE = 100037
INVALID_DEVICEID = 107001
CONTEXT_NULL = 107002
H2D, D2H, D2D = 1, 2, 3


@pytest.fixture(params=list(CLUSTERS))
def devices(request, tmp_path, monkeypatch):
    """acl.init on each cluster in turn (its device ids); acl.finalize after the test."""
    cfg = CLUSTERS[request.param]
    if cfg is None:
        monkeypatch.delenv("RESOURCE_CONFIG_PATH", raising=False)
    else:
        path = tmp_path / "cluster.json"
        path.write_text(json.dumps(cfg))
        monkeypatch.setenv("RESOURCE_CONFIG_PATH", str(path))
    assert acl.init() == SUCCESS
    yield DEVICES[request.param]
    assert acl.finalize() == SUCCESS


def test_devices_are_the_clusters(devices):
    assert acl.rt.get_device_count() == (len(devices), SUCCESS)
    assert acl.rt.get_run_mode() == (1, SUCCESS)  # ACL_HOST
    _, ret = acl.rt.get_device()
    assert ret == CONTEXT_NULL, "nothing bound yet"
    last = devices[-1]
    assert acl.rt.set_device(last) == SUCCESS
    assert acl.rt.get_device() == (last, SUCCESS)
    assert acl.rt.synchronize_device() == SUCCESS
    assert acl.rt.set_device(9) == INVALID_DEVICEID
    assert acl.rt.get_device() == (last, SUCCESS), "a failed call binds nothing"
    assert acl.rt.reset_device(last) == SUCCESS


def test_memory_copies_round_trip_through_a_device(devices):
    d = devices[-1]
    assert acl.rt.set_device(d) == SUCCESS
    ptr, ret = acl.rt.malloc(64, 0)
    assert ret == SUCCESS and ptr != 0
    data = bytes(range(64))
    assert acl.rt.memcpy(ptr, 64, acl.util.bytes_to_ptr(data), 64, H2D) == SUCCESS
    back = bytearray(64)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(back), 64, ptr, 64, D2H) == SUCCESS
    assert bytes(back) == data
    assert acl.rt.memset(ptr, 64, 7, 64) == SUCCESS
    arr = np.zeros(16, np.int32)
    assert acl.rt.memcpy(acl.util.numpy_to_ptr(arr), 64, ptr, 64, D2H) == SUCCESS
    assert arr.view(np.uint8).tolist() == [7] * 64
    assert acl.util.ptr_to_bytes(acl.util.numpy_to_ptr(arr), 4) == b"\x07" * 4
    for strided in (np.arange(16, dtype=np.int32)[::-1], np.arange(32, dtype=np.int32)[::2]):
        with pytest.raises(ValueError, match="C-contiguous"):
            acl.util.numpy_to_ptr(strided)  # a copy from its first element would run past it
    other, ret = acl.rt.malloc(64, 0)
    assert ret == SUCCESS
    assert acl.rt.memcpy(other, 64, ptr, 64, D2D) == SUCCESS
    assert acl.rt.memcpy(other, 32, ptr, 64, D2D) == INVALID_PARAM, "count > dest_max"
    free, total, ret = acl.rt.get_mem_info(0)
    assert ret == SUCCESS and 0 < free <= total
    assert acl.rt.free(other) == SUCCESS
    assert acl.rt.free(ptr) == SUCCESS
    assert acl.rt.free(ptr) != SUCCESS, "freed twice"
    host, ret = acl.rt.malloc_host(32)
    assert ret == SUCCESS and host != 0
    assert acl.rt.free_host(host) == SUCCESS
    assert acl.rt.reset_device(d) == SUCCESS


def test_contexts_are_ints_and_per_thread(devices):
    first = devices[0]
    ctx, ret = acl.rt.create_context(first)
    assert ret == SUCCESS and ctx != 0
    assert acl.rt.get_context() == (ctx, SUCCESS), "create_context binds it"
    seen = []

    def other():
        seen.append(acl.rt.get_context())
        seen.append(acl.rt.set_context(ctx))
        seen.append(acl.rt.get_device())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [(0, CONTEXT_NULL), SUCCESS, (first, SUCCESS)], "bindings are per thread"
    assert acl.rt.set_context(0) == INVALID_PARAM
    assert acl.rt.destroy_context(ctx) == SUCCESS
    assert acl.rt.get_context() == (0, CONTEXT_NULL)


def test_unbound_calls_pass_by_luck_on_device_0_only(devices):
    # The seed's bug class, as Ascend's runtime has it: with nothing bound, device 0's default
    # context is bound implicitly; off device 0 the call fails with EE1018's code.
    ptr, ret = acl.rt.malloc(64, 0)
    if 0 in devices:
        assert ret == SUCCESS and acl.rt.get_device() == (0, SUCCESS)
        assert acl.rt.free(ptr) == SUCCESS
    else:
        assert ret == CONTEXT_NULL


def test_init_is_counted(devices):
    assert acl.init() == REPEAT_INITIALIZE
    with pytest.raises(TypeError):
        acl.rt.malloc(-1, 0)


def test_calls_before_init_and_after_finalize():
    # A fresh process: this one has been initialized by the tests above.
    script = (
        "import acl\n"
        "assert acl.finalize() == %d\n"
        "assert acl.rt.set_device(0) == %d\n"
        "assert acl.init() == 0 and acl.finalize() == 0\n"
        "assert acl.finalize() == %d\n" % (UNINITIALIZE, UNINITIALIZE, REPEAT_FINALIZE))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
