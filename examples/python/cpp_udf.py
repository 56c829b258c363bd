"""A C++ UDF through its compile config, from Python (GE's usual first step).

    x ──┐                                  ┌── x * factor   (output 0)
        ├── ops: MultiOps (C++, 2 procs) ──┤
    y ──┘     Scale: x -> x * factor       └── sum(y)       (output 1)
              Sum:   y -> [sum of y]

The UDF is examples/multi_function's (udf/multi_ops.cpp); hflow builds it
from the compile config's workspace on the first feed. Prints both outputs.
"""
import os

import numpy as np

import dataflow as df

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "..", "multi_function", "multi_func.json")


def main() -> None:
    df.init({"ge.exec.deviceId": "0"})
    x, y = df.FlowData(name="x"), df.FlowData(name="y")
    pp = df.FuncProcessPoint(compile_config_path=CONFIG)
    pp.set_init_param("factor", 10)
    ops = df.FlowNode(input_num=2, output_num=2, name="ops")
    ops.add_process_point(pp)
    scaled, total = ops(x, y)
    graph = df.FlowGraph([scaled, total])
    ret = graph.feed_data({x: np.array([1, 2, 3], np.int32), y: np.array([4, 5, 6], np.int32)})
    assert ret == 0, f"feed_data returned {ret}"
    outputs, info, ret = graph.fetch_data(timeout=60000)
    assert ret == 0, f"fetch_data returned {ret}"
    print("x * factor:", outputs[0].numpy().tolist())
    print("sum of y:", outputs[1].numpy().tolist())
    df.finalize()


if __name__ == "__main__":
    main()
