"""A Python multi-function UDF behind a control node, fetched by index.

              ┌─ out 0 ── calc.double (i0 -> o0) ── 2x   (fetch index 0)
    x ── route┤
              └─ out 1 ── calc.negate (i1 -> o1) ── -x   (fetch index 1)

`route` (a @df.pyflow control node) sends each message to one output:
non-negative values to 0, negative ones to 1 (choice_output drops the
other). `calc` is one Python class with two functions, each on its own
input and output (proc_wrapper's mapping strings). Prints what each
output fetched.
"""
import numpy as np

import dataflow as df
import dataflow.flow_func as ff


@df.pyflow(num_returns=2, choice_output=lambda v: v is not None)
def route(x):
    return (x, None) if x.numpy().min() >= 0 else (None, x)


class Calc:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def double(self, run_context, input_flow_msgs):
        x = input_flow_msgs[0].get_tensor().numpy()
        return run_context.set_output(0, x * 2)

    @ff.proc_wrapper("i1,o1")
    def negate(self, run_context, input_flow_msgs):
        x = input_flow_msgs[0].get_tensor().numpy()
        return run_context.set_output(1, -x)


def main() -> None:
    df.init({"ge.exec.deviceId": "0"})
    x = df.FlowData(name="x")
    positive, negative = route.fnode()(x)
    calc = df.FlowNode(input_num=2, output_num=2, name="calc")
    calc.add_process_point(df.FuncProcessPoint(py_func=Calc))
    doubled, negated = calc(positive, negative)
    graph = df.FlowGraph([doubled, negated])
    for values in ([1, 2], [-3, -4]):
        assert graph.feed_data({x: np.array(values, np.int64)}) == 0
    outputs, _, ret = graph.fetch_data(indexes=[0], timeout=10000)
    assert ret == 0, f"fetch of output 0 returned {ret}"
    print("output 0 (doubled):", outputs[0].numpy().tolist())
    outputs, _, ret = graph.fetch_data(indexes=[1], timeout=10000)
    assert ret == 0, f"fetch of output 1 returned {ret}"
    print("output 1 (negated):", outputs[0].numpy().tolist())
    df.finalize()


if __name__ == "__main__":
    main()
