"""The Python package's benchmarks, written as Google Benchmark JSON so that
scripts/bench pairs them with the C++ figures of the same run
(scripts/bench_rows.py):

    PY_RoundTrip        x ── check (C++ UDF, forwards its input) ── fetch:
                        one 64 B tensor fed with FlowGraph.feed_data and
                        fetched with fetch_data, one at a time (the C++
                        BM_RoundTrip is its baseline)
    PY_Chain4PythonUdfs x ── py ── py ── py ── py ── fetch: 4 Python UDFs
                        forwarding their input message, 64 B, streamed
                        (feed 256, fetch 256)
    PY_Chain4CppUdfs    the same chain of 4 C++ UDFs (the baseline)

The C++ UDF is examples/exception_catch's CheckNonNegative. Each figure is
the median of --reps repetitions. Usage: py_bench.py --out FILE [--reps N]
[--quick]

Thread-safety: single-threaded driver; hflow's threads run the UDFs.
"""
import argparse
import json
import os
import statistics
import time

import numpy as np

import dataflow as df
import dataflow.flow_func as ff

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "examples", "exception_catch", "check_func.json")
PAYLOAD = np.arange(16, dtype=np.int32)  # 64 bytes
STREAM = 256


class Forward:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def forward(self, run_context, input_flow_msgs):
        return run_context.set_output(0, input_flow_msgs[0])


def cpp_node():
    node = df.FlowNode(input_num=1, output_num=1)
    node.add_process_point(df.FuncProcessPoint(compile_config_path=CHECK))
    return node


def py_node():
    node = df.FlowNode(input_num=1, output_num=1)
    node.add_process_point(df.FuncProcessPoint(py_func=Forward))
    return node


def chain(make, length):
    x = df.FlowData()
    out = x
    for _ in range(length):
        out = make()(out)
    return x, df.FlowGraph([out])


def check(ret, what):
    if ret != 0:
        raise RuntimeError(f"{what} returned {ret}")


def round_trips(x, graph, count):
    start = time.perf_counter()
    for _ in range(count):
        check(graph.feed_data({x: PAYLOAD}, timeout=10000), "feed_data")
        check(graph.fetch_data(timeout=10000)[2], "fetch_data")
    return (time.perf_counter() - start) / count


def streamed(x, graph, count):
    start = time.perf_counter()
    fed = fetched = 0
    while fetched < count:
        # Keep the chain's queues busy without overrunning them.
        while fed < count and fed - fetched < 32:
            check(graph.feed_data({x: PAYLOAD}, timeout=10000), "feed_data")
            fed += 1
        check(graph.fetch_data(timeout=10000)[2], "fetch_data")
        fetched += 1
    return count / (time.perf_counter() - start)


def median_of(reps, measure):
    measure()  # warm-up: builds and first-touch costs
    return statistics.median(measure() for _ in range(reps))


def entry(name, **fields):
    return {"name": name, "run_name": name, "run_type": "aggregate",
            "aggregate_name": "median", **fields}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    trips = 100 if args.quick else 2000
    stream = 64 if args.quick else STREAM * 4
    df.init({"ge.exec.deviceId": "0"})
    results = []
    x, g = chain(cpp_node, 1)
    t = median_of(args.reps, lambda: round_trips(x, g, trips))
    results.append(entry("PY_RoundTrip", real_time=t * 1e9, time_unit="ns"))
    for name, make in (("PY_Chain4PythonUdfs", py_node), ("PY_Chain4CppUdfs", cpp_node)):
        x, g = chain(make, 4)
        rate = median_of(args.reps, lambda: streamed(x, g, stream))
        results.append(entry(name, items_per_second=rate, real_time=1e9 / rate, time_unit="ns"))
    df.finalize()
    with open(args.out, "w") as f:
        json.dump({"benchmarks": results}, f, indent=1)
    for r in results:
        print(f"{r['name']:<22} {r['real_time']:12.0f} ns", flush=True)


if __name__ == "__main__":
    main()
