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
    PY_TorchChain4      x ── f1 ── f2 ── f3 ── f4 ── fetch: four @npu_model
                        functions doing small torch ops on a (1,3,224,224)
                        float tensor, fed and fetched as torch tensors, 8 in
                        flight
    PY_TorchChain4Inline the same four functions called in a loop (baseline)
    PY_ModelResnet18    x ── resnet18 (GraphProcessPoint, ONNX) ── fetch, one
                        image at a time from Python (the C++ BM_ModelResnet18
                        is its baseline)
    PY_Chain2CpuBoundIsolated
                        x ── burn_a@d0 ── burn_b@d1 ── fetch: two @pyflow
                        functions doing ~1 ms of pure Python each, on two
                        devices, isolated (hflow.udfIsolation: each device's
                        Python worker has a GIL of its own), 8 in flight
    PY_Chain2CpuBoundInHost the same two in the host, sharing its GIL (the
                        baseline)

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

import subprocess
import tempfile

import numpy as np
import torch

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


def t1(x):
    return x * 0.5 + 0.25


def t2(x):
    return torch.relu(x - 0.3)


def t3(x):
    return x.clamp(0.0, 1.0)


def t4(x):
    return x.flip(-1)


TORCH_STAGES = [df.npu_model(f) for f in (t1, t2, t3, t4)]
IMAGE = torch.rand(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))


def torch_chain():
    x = df.FlowData()
    out = x
    for stage in TORCH_STAGES:
        out = stage.fnode()(out)
    return x, df.FlowGraph([out])


def torch_streamed(x, graph, count):
    return stream(lambda: graph.feed({x: IMAGE}, timeout=10000), lambda: graph.fetch(timeout=10000)[1],
                  count, in_flight=8)


def torch_inline(count):
    start = time.perf_counter()
    for _ in range(count):
        y = IMAGE
        for f in (t1, t2, t3, t4):
            y = f(y)
    return count / (time.perf_counter() - start)


BURN = 20000  # iterations: about 1 ms of pure Python


def burn(x):
    """CPU-bound pure Python: holds the GIL throughout."""
    s = 0
    for i in range(BURN):
        s += i * i
    return x + (s & 1)


@df.pyflow
def burn_a(x):
    return burn(x)


@df.pyflow
def burn_b(x):
    return burn(x)


def burn_chain(folder):
    """x ── burn_a ── burn_b on the cluster's first two devices (GE's deploy info)."""
    x = df.FlowData()
    out = burn_b.fnode()(burn_a.fnode()(x))
    info = os.path.join(folder, "deploy.json")
    with open(info, "w") as f:
        json.dump({"deploy_info": [{"flow_node_name": "burn_a_fnode", "logic_device_id": "0:0:0"},
                                   {"flow_node_name": "burn_b_fnode", "logic_device_id": "0:0:1"}]}, f)
    return x, df.FlowGraph([out], graph_options={"ge.experiment.data_flow_deploy_info_path": info})


def burn_streamed(x, graph, count):
    return stream(lambda: graph.feed({x: 1}, timeout=10000), lambda: graph.fetch(timeout=10000)[1], count,
                  in_flight=8)


def burn_rate(options, reps, count):
    """Messages a second through burn_chain under ``options`` (df.init's), on a fresh init."""
    df.init({"ge.exec.deviceId": "0", **options})
    try:
        with tempfile.TemporaryDirectory() as folder:
            x, g = burn_chain(folder)
            return median_of(reps, lambda: burn_streamed(x, g, count))
    finally:
        df.finalize()


def resnet18_onnx(folder):
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "models", "make_onnx_models.py"), folder,
                    "resnet18"], check=True, capture_output=True)
    return os.path.join(folder, "resnet18.onnx")


def model_round_trips(x, graph, image, count):
    start = time.perf_counter()
    for _ in range(count):
        check(graph.feed_data({x: image}, timeout=60000), "feed_data")
        check(graph.fetch_data(timeout=60000)[2], "fetch_data")
    return count / (time.perf_counter() - start)


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


def stream(feed, fetch, count, in_flight):
    """Messages a second through a graph, ``count`` of them, ``in_flight`` fed ahead of the fetches
    (the chain's queues kept busy without overrunning them); feed() and fetch() return codes."""
    start = time.perf_counter()
    fed = fetched = 0
    while fetched < count:
        while fed < count and fed - fetched < in_flight:
            check(feed(), "feed")
            fed += 1
        check(fetch(), "fetch")
        fetched += 1
    return count / (time.perf_counter() - start)


def streamed(x, graph, count):
    return stream(lambda: graph.feed_data({x: PAYLOAD}, timeout=10000), lambda: graph.fetch_data(timeout=10000)[2],
                  count, in_flight=32)


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
    images = 16 if args.quick else 256
    x, g = torch_chain()
    rate = median_of(args.reps, lambda: torch_streamed(x, g, images))
    results.append(entry("PY_TorchChain4", items_per_second=rate, real_time=1e9 / rate, time_unit="ns"))
    rate = median_of(args.reps, lambda: torch_inline(images))
    results.append(entry("PY_TorchChain4Inline", items_per_second=rate, real_time=1e9 / rate, time_unit="ns"))
    with tempfile.TemporaryDirectory() as models:
        x = df.FlowData()
        g = df.FlowGraph([df.GraphProcessPoint(df.Framework.ONNX, resnet18_onnx(models)).fnode(1, 1)(x)])
        image = IMAGE.numpy()
        count = 4 if args.quick else 40
        rate = median_of(args.reps, lambda: model_round_trips(x, g, image, count))
        results.append(entry("PY_ModelResnet18", items_per_second=rate, real_time=1e9 / rate, time_unit="ns"))
    df.finalize()
    count = 16 if args.quick else 200
    for name, options in (("PY_Chain2CpuBoundInHost", {}),
                          ("PY_Chain2CpuBoundIsolated", {"hflow.udfIsolation": "1"})):
        rate = burn_rate(options, args.reps, count)
        results.append(entry(name, items_per_second=rate, real_time=1e9 / rate, time_unit="ns"))
    with open(args.out, "w") as f:
        json.dump({"benchmarks": results}, f, indent=1)
    for r in results:
        print(f"{r['name']:<22} {r['real_time']:12.0f} ns", flush=True)


if __name__ == "__main__":
    main()
