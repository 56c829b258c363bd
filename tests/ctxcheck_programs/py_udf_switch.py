"""A small dataflow program for `hflow ctxcheck`'s tests: a Python UDF whose proc switches its
thread to another device (pyACL's set_device) and never switches back.

    x --[switcher @ the cluster's first device]-- out

  py_udf_switch.py leak OTHER      the UDF leaves its thread on device OTHER
  py_udf_switch.py restore OTHER   the UDF puts the caller's context back

The cluster is the one RESOURCE_CONFIG_PATH names. Exit status 0 when all three values came back,
1 otherwise, 2 for bad arguments. The line marked `# CTXCHECK: tag` is where the tests expect the
finding.
"""
import sys

import numpy as np

import acl
import dataflow as df
import dataflow.flow_func as ff

OTHER = -1
RESTORE = False


class Switcher:
    @ff.proc_wrapper("i0,o0")
    def proc(self, ctx, inputs):
        caller, _ = acl.rt.get_context()
        if acl.rt.set_device(OTHER) != 0:  # CTXCHECK: py switch
            return ff.FLOW_FUNC_FAILED
        if RESTORE:
            acl.rt.set_context(caller)
        return ctx.set_output(0, inputs[0].get_tensor().numpy() + 1)


def main(argv):
    global OTHER, RESTORE
    if len(argv) != 3 or argv[1] not in ("leak", "restore"):
        print("usage: py_udf_switch.py leak|restore OTHER", file=sys.stderr)
        return 2
    OTHER, RESTORE = int(argv[2]), argv[1] == "restore"
    df.init({"ge.exec.deviceId": "0"})
    status = 1
    try:
        x = df.FlowData()
        node = df.FlowNode(1, 1, name="switcher")
        node.add_process_point(df.FuncProcessPoint(py_func=Switcher))
        graph = df.FlowGraph([node(x)])
        got = []
        for v in range(3):
            if graph.feed_data({x: np.array([v], np.int32)}) != 0:
                break
            out, _, code = graph.fetch_data(timeout=5000)
            if code != 0:
                break
            got.append(int(out[0].numpy()[0]))
        status = 0 if got == [1, 2, 3] else 1
        if status:
            print(f"py_udf_switch: got {got}", file=sys.stderr)
    finally:
        df.finalize()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
