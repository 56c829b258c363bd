#!/usr/bin/env python3
"""Turns Google Benchmark JSON files (median aggregates) into FORMATS.md rows:
{"name","unit","hflow","baseline","baseline_value","ratio","better"}.
Each row pairs an hflow benchmark with a baseline from the same binary run."""
import json
import sys

# row name -> (hflow benchmark, baseline benchmark, baseline text, metric)
# metric "ns": median real time (lower is better); "GB/s": bytes per second
# (higher is better).
ROWS = [
    ("guard_enter_exit_unchanged", "BM_GuardUnchanged", "BM_EmptyCall",
     "non-inlined empty call", "ns"),
    ("set_device_already_bound", "BM_SetDeviceAlreadyBound",
     "BM_GetCurrentContext", "rt::GetCurrentContext", "ns"),
    ("queue_round_trip_64B", "BM_QueueHandleRoundTrip/64",
     "BM_PlainQueueRoundTrip/64", "mutex+condvar queue", "ns"),
    ("queue_round_trip_1MiB", "BM_QueueHandleRoundTrip/1048576",
     "BM_PlainQueueRoundTrip/1048576", "mutex+condvar queue", "ns"),
    ("queue_ping_pong_two_threads_64B", "BM_QueuePingPong/real_time",
     "BM_PlainPingPong/real_time", "mutex+condvar queue ping-pong", "ns"),
    ("queue_round_trip_by_id_64B", "BM_QueueRoundTrip/64",
     "BM_PlainQueueRoundTrip/64", "mutex+condvar queue", "ns"),
    ("cross_device_round_trip_64B", "BM_CrossDeviceRoundTrip/64",
     "BM_PlainCrossRoundTrip/64", "mutex+condvar queues + memcpy", "ns"),
    ("cross_device_round_trip_1MiB", "BM_CrossDeviceRoundTrip/1048576",
     "BM_PlainCrossRoundTrip/1048576", "mutex+condvar queues + memcpy", "ns"),
    ("deploy_undeploy_32_instances", "BM_Deploy32/real_time",
     "BM_Deploy32Ideal/real_time",
     "ideal: 8 threads sleeping out 32 loads", "ns"),
    ("cross_device_copy_1MiB", "BM_CopyMbuf/1048576", "BM_Memcpy/1048576",
     "single-thread memcpy", "GB/s"),
]


def main(paths):
    med = {}
    for path in paths:
        for b in json.load(open(path))["benchmarks"]:
            if b.get("aggregate_name") == "median":
                med[b["run_name"]] = b
    rows = []
    for name, mine, base, what, unit in ROWS:
        if mine not in med or base not in med:
            continue
        if unit == "ns":
            # Time rows: each benchmark reports in its own unit (ns or ms).
            x, y, better = med[mine]["real_time"], med[base]["real_time"], "lower"
            unit = med[mine].get("time_unit", "ns")
        else:
            x = med[mine]["bytes_per_second"] / 1e9
            y = med[base]["bytes_per_second"] / 1e9
            better = "higher"
        rows.append({"name": name, "unit": unit, "hflow": round(x, 3),
                     "baseline": what, "baseline_value": round(y, 3),
                     "ratio": round(x / y, 3), "better": better})
    json.dump(rows, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
