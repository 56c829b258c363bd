"""Exception catch: a UDF raises an exception for one transaction; the
fetcher gets GE's user-raise code for it, and the graph goes on.

    x ── check (raise_exception on a negative value) ── x

With set_exception_catch(True), MetaRunContext.raise_exception reaches
the fetch of that transaction as ACL_ERROR_GE_USER_RAISE_EXCEPTION
(GE requires input alignment with it). Prints what each fetch returned.
"""
import numpy as np

import dataflow as df
import dataflow.flow_func as ff
from dataflow import _core

NEGATIVE_INPUT = 9900001  # the user's exception code


class Check:
    @ff.init_wrapper()
    def init_flow_func(self, meta_params):
        return ff.FLOW_FUNC_SUCCESS

    @ff.proc_wrapper("i0,o0")
    def check(self, run_context, input_flow_msgs):
        msg = input_flow_msgs[0]
        x = msg.get_tensor().numpy()
        if x.min() < 0:
            run_context.raise_exception(NEGATIVE_INPUT, msg.get_transaction_id())
            return ff.FLOW_FUNC_SUCCESS
        return run_context.set_output(0, x)


def main() -> None:
    df.init({"ge.exec.deviceId": "0"})
    x = df.FlowData(name="x")
    node = df.FlowNode(input_num=1, output_num=1, name="check")
    node.add_process_point(df.FuncProcessPoint(py_func=Check))
    graph = df.FlowGraph([node(x)])
    graph.set_exception_catch(True)
    graph.set_inputs_align_attrs(16, 5000)
    for values in ([5], [-1], [7]):
        assert graph.feed_data({x: np.array(values, np.int32)}) == 0
        outputs, info, ret = graph.fetch_data(timeout=10000)
        if ret == _core.USER_RAISE_EXCEPTION:
            print(f"transaction {info.transaction_id}: exception raised (code {ret})")
        else:
            assert ret == 0, f"fetch returned {ret}"
            print(f"transaction {info.transaction_id}: {outputs[0].numpy().tolist()}")
    df.finalize()


if __name__ == "__main__":
    main()
