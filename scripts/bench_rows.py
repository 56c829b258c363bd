#!/usr/bin/env python3
"""Turns Google Benchmark JSON files into the benchmark rows of scripts/bench:
{"name","unit","hflow","baseline","baseline_value","ratio","better"}.
Each row pairs an hflow benchmark with a baseline from the same binary run.
Uses the median aggregate when the run had repetitions, else the single run.
Time rows also carry "difference" (hflow - baseline, in the row's unit)."""
import json
import sys

# (row name, hflow benchmark, baseline benchmark, baseline text, metric)
# metric "time": real time per iteration (lower is better); "GB/s": bytes
# per second; "msgs/s": items per second (both higher is better);
# "instructions": instructions per message, "allocations": heap
# allocations per message, "KiB": resident set size (all lower is better).
ROWS = [
    # Issue 7's seven rows (docs/performance.md).
    ("chain4_one_device_64B", "BM_Chain4OneDevice/real_time",
     "BM_TbbChain4/real_time",
     "oneTBB flow_graph: 4 serial queueing function_nodes", "msgs/s"),
    ("chain4_four_devices_64B", "BM_Chain4FourDevices/real_time",
     "BM_TbbChain4/real_time",
     "oneTBB flow_graph: 4 serial queueing function_nodes", "msgs/s"),
    # Issue 20's deterministic row (bench/chain_instructions.cc under
    # callgrind, scripts/bench_instructions.py).
    ("chain4_one_device_64B_instructions", "IR_Chain4Hflow", "IR_Chain4Tbb",
     "oneTBB flow_graph chain, one worker thread, marginal callgrind Ir",
     "instructions"),
    # Issue 43: the chain with hflow ctxcheck on (report mode, a clean
    # program) against the same chain with it off.
    ("chain4_one_device_64B_instructions_ctxcheck_on",
     "IR_Chain4HflowCtxcheck", "IR_Chain4Hflow",
     "the same chain with ctxcheck off, marginal callgrind Ir",
     "instructions"),
    # Issue 20's memory rows (bench/chain_memory.cc).
    ("chain4_one_device_64B_allocations", "MEM_Chain4HflowAllocs",
     "MEM_Chain4TbbAllocs",
     "oneTBB flow_graph chain: operator new calls per message",
     "allocations"),
    ("chain4_rss_after_1M_msgs", "MEM_Chain4RssAfter", "MEM_Chain4RssBefore",
     "the same process's RSS after the warm-up", "KiB"),
    ("hop_1MiB_two_devices", "BM_Hop1MiB/real_time",
     "BM_Memcpy1MiB/real_time", "single-thread memcpy", "GB/s"),
    ("feed_hop_fetch_1MiB_end_to_end", "BM_FeedHopFetch1MiB/real_time",
     "BM_Memcpy1MiB/real_time", "single-thread memcpy", "GB/s"),
    ("feed_hop_fetch_1MiB_zero_copy", "BM_FeedHopFetch1MiBZeroCopy/real_time",
     "BM_Memcpy1MiB/real_time", "single-thread memcpy", "GB/s"),
    ("feed_fetch_round_trip_64B", "BM_RoundTrip/real_time",
     "BM_SpinPingPong/real_time",
     "spin ping-pong: two threads handing 64 B over atomics", "time"),
    ("replicas4_10us_body", "BM_Replicas4/real_time",
     "BM_ReplicasIdeal/real_time",
     "ideal: 4 threads (one per replica) running the same bodies", "msgs/s"),
    # Rows 1, 2 and 5 again, fed and fetched with the batch calls.
    ("chain4_one_device_64B_batched", "BM_Chain4OneDeviceBatched/real_time",
     "BM_TbbChain4/real_time",
     "oneTBB flow_graph: 4 serial queueing function_nodes", "msgs/s"),
    ("chain4_four_devices_64B_batched",
     "BM_Chain4FourDevicesBatched/real_time", "BM_TbbChain4/real_time",
     "oneTBB flow_graph: 4 serial queueing function_nodes", "msgs/s"),
    ("replicas4_10us_body_batched", "BM_Replicas4Batched/real_time",
     "BM_ReplicasIdeal/real_time",
     "ideal: 4 threads (one per replica) running the same bodies", "msgs/s"),
    ("public_call_guard", "BM_PublicCallGuarded", "BM_PublicCallBare",
     "the same call (rt::GetDevice) without the guard", "time"),
    ("deploy_undeploy_32_instances", "BM_Deploy32/real_time",
     "BM_Deploy32Ideal/real_time",
     "ideal: 8 threads sleeping out 32 loads", "time"),
    # Issue 21: worker processes (bench/worker_bench.cc).
    ("chain4_one_device_64B_isolated", "BM_Chain4Isolated/real_time",
     "BM_Chain4InProcess/real_time",
     "the same chain and UDF library in the host", "msgs/s"),
    ("chain4_one_device_64B_heavy_load", "BM_Chain4HeavyLoad/real_time",
     "BM_Chain4InProcess/real_time",
     "the same chain and UDF library in the host", "msgs/s"),
    ("chain4_one_device_64B_isolated_vs_unbatched",
     "BM_Chain4Isolated/real_time", "BM_Chain4IsolatedUnbatched/real_time",
     "the same isolated chain with batched calls off", "msgs/s"),
    # Issue 45: the data channel between hosts (bench/net_bench.cc), two
    # processes on loopback, UCX on its TCP transport.
    ("data_link_1MiB_loopback", "BM_DataLink1MiB/real_time",
     "BM_TcpStream1MiB/real_time",
     "a plain TCP stream of the same bytes between two processes", "GB/s"),
    # Issue 45: graphs across hosts (bench/hosts_bench.cc), three hflowd on
    # loopback.
    ("hop_1MiB_cross_host", "BM_Hop1MiBCrossHost/real_time",
     "BM_TcpStream1MiB/real_time",
     "a plain TCP stream of the same bytes between two processes", "GB/s"),
    ("chain4_cross_host_64B", "BM_Chain4CrossHost/real_time",
     "BM_Chain4OneHost/real_time",
     "the same chain and UDF library on this host", "msgs/s"),
    ("deploy_32_instances_3_hosts", "BM_Deploy32ThreeHosts/real_time",
     "BM_Deploy32OneHost/real_time",
     "the same 32-node graph deployed on this host", "time"),
    ("hop_1MiB_two_devices_isolated", "BM_Hop1MiBIsolated/real_time",
     "BM_WorkerMemcpy1MiB/real_time", "single-thread memcpy", "GB/s"),
    ("worker_start", "BM_WorkerStart/real_time",
     "BM_InProcessStart/real_time",
     "the same one-node graph built and removed in the host", "time"),
    # Model nodes (bench/model_bench.cc), against libtorch in the same run.
    ("model_resnet18_b1", "BM_ModelResnet18/real_time",
     "BM_TorchJitResnet18/real_time",
     "torch::jit::load of the same network traced, forward in a loop, "
     "1 intra-op thread", "msgs/s"),
    ("model_identity_64B", "BM_ModelIdentity64B/real_time",
     "BM_UdfIdentity64B/real_time",
     "the same graph with a _BuiltIn_Identity UDF node", "time"),
    ("model_load_resnet18", "BM_ModelLoadResnet18/real_time",
     "BM_TorchJitLoadResnet18/real_time",
     "torch::jit::load of the same network", "time"),
    ("model_pre_model_post", "BM_PreModelPost/real_time",
     "BM_PreModelPostInline/real_time",
     "pre, the traced resnet18's forward and post back to back on one "
     "thread", "msgs/s"),
    ("model_pre_model_post_2dev", "BM_PreModelPostPipelined2/real_time",
     "BM_PreModelPostInline/real_time",
     "the same, one thread (the graph: two devices, 4 in flight)",
     "msgs/s"),
    # The Python package (bench/py_bench.py), against C++ of the same run.
    ("py_feed_fetch_round_trip_64B", "PY_RoundTrip", "BM_RoundTrip/real_time",
     "C++ feed_fetch_round_trip_64B (Session::FeedData/FetchData)", "time"),
    ("py_udf_chain4_64B", "PY_Chain4PythonUdfs", "PY_Chain4CppUdfs",
     "the same chain of 4 C++ UDFs, fed and fetched from Python", "msgs/s"),
    # Issue 44: two CPU-bound Python UDFs on two devices, isolated (a GIL
    # per worker) against the same two in the host (one GIL).
    ("py_udf_chain2_isolated_parallel", "PY_Chain2CpuBoundIsolated",
     "PY_Chain2CpuBoundInHost",
     "the same two CPU-bound Python UDFs in the host, sharing its GIL",
     "msgs/s"),
    ("py_torch_chain4", "PY_TorchChain4", "PY_TorchChain4Inline",
     "the same four torch functions called in a loop", "msgs/s"),
    ("py_model_resnet18", "PY_ModelResnet18", "BM_ModelResnet18/real_time",
     "C++ model_resnet18_b1 (Session::FeedData/FetchData)", "msgs/s"),
    # Device-layer rows.
    ("guard_enter_exit_unchanged", "BM_GuardUnchanged", "BM_EmptyCall",
     "non-inlined empty call", "time"),
    ("set_device_already_bound", "BM_SetDeviceAlreadyBound",
     "BM_GetCurrentContext", "rt::GetCurrentContext", "time"),
    ("queue_round_trip_64B", "BM_QueueHandleRoundTrip/64",
     "BM_PlainQueueRoundTrip/64", "mutex+condvar queue", "time"),
    ("queue_round_trip_1MiB", "BM_QueueHandleRoundTrip/1048576",
     "BM_PlainQueueRoundTrip/1048576", "mutex+condvar queue", "time"),
    ("queue_ping_pong_two_threads_64B", "BM_QueuePingPong/real_time",
     "BM_PlainPingPong/real_time", "mutex+condvar queue ping-pong", "time"),
    ("cross_device_round_trip_64B", "BM_CrossDeviceRoundTrip/64",
     "BM_PlainCrossRoundTrip/64", "mutex+condvar queues + memcpy", "time"),
    ("cross_device_copy_1MiB", "BM_CopyMbuf/1048576", "BM_Memcpy/1048576",
     "single-thread memcpy", "GB/s"),
]


def load(paths):
    runs, medians = {}, {}
    for path in paths:
        text = open(path).read()
        if not text.strip():
            continue  # a binary whose benchmarks the filter left out
        for b in json.loads(text)["benchmarks"]:
            if b.get("error_occurred"):
                continue
            if b.get("aggregate_name") == "median":
                medians[b["run_name"]] = b
            elif b.get("run_type", "iteration") == "iteration":
                runs.setdefault(b.get("run_name", b["name"]), b)
    runs.update(medians)
    return runs


def row(name, mine, base, what, metric):
    if metric == "time":
        # Each benchmark reports in its own unit (ns or ms).
        x, y = mine["real_time"], base["real_time"]
        out = {"unit": mine.get("time_unit", "ns"), "better": "lower"}
    elif metric == "instructions":
        x, y = mine["instructions_per_msg"], base["instructions_per_msg"]
        out = {"unit": "instructions/msg", "better": "lower"}
    elif metric == "allocations":
        x, y = mine["allocations_per_msg"], base["allocations_per_msg"]
        out = {"unit": "allocations/msg", "better": "lower"}
    elif metric == "KiB":
        x, y = mine["rss_kib"], base["rss_kib"]
        out = {"unit": "KiB", "better": "lower"}
    elif metric == "GB/s":
        x, y = mine["bytes_per_second"] / 1e9, base["bytes_per_second"] / 1e9
        out = {"unit": "GB/s", "better": "higher"}
    else:
        x, y = mine["items_per_second"], base["items_per_second"]
        out = {"unit": "msgs/s", "better": "higher"}
    r = {"name": name, "unit": out["unit"], "hflow": round(x, 3),
         "baseline": what, "baseline_value": round(y, 3),
         "ratio": round(x / y, 3), "better": out["better"]}
    if metric in ("time", "KiB"):
        r["difference"] = round(x - y, 3)
    return r


def main(paths):
    runs = load(paths)
    rows = [row(name, runs[mine], runs[base], what, metric)
            for name, mine, base, what, metric in ROWS
            if mine in runs and base in runs]
    json.dump(rows, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
