"""GE's DataFlow Python API (``import dataflow as df``) on hflow.

Build a graph of ``FlowData`` and ``FlowNode``s running ``FuncProcessPoint``s (C++ UDFs through a
compile config, or Python UDFs), make a ``FlowGraph`` of its outputs, then ``feed_data``/
``fetch_data`` tensors or ``feed``/``fetch`` Python objects. ``df.init`` first, ``df.finalize`` at the
end (also run at exit). Python UDFs run in this process on hflow's executor threads, or, with
``df.init({"hflow.udfIsolation": "1"})``, in a Python worker process per device; every blocking call
releases the GIL.

Thread-safety: module state is locked; build each graph on one thread, feed and fetch from any.
"""
# First: the build's numpy for an interpreter without one of its own.
from dataflow import _numpy_path  # noqa: F401
from dataflow import _core  # noqa: E402
from dataflow import flow_func, utils
from dataflow.data_type import (
    DT_BF16, DT_BOOL, DT_DOUBLE, DT_FLOAT, DT_FLOAT16, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_STRING, DT_UINT8,
    DT_UINT16, DT_UINT32, DT_UINT64, DType,
)
from dataflow.dataflow import (
    CountBatch, FlowData, FlowFlag, FlowGraphProcessPoint, FlowNode, FlowOutput, Framework, FuncProcessPoint,
    GraphProcessPoint, TimeBatch, finalize, init,
)
from dataflow.flow_graph import FlowGraph
from dataflow.pyflow import method, pyflow
from dataflow.plugin.torch.torch_plugin import npu_model
from dataflow.tensor import FlowInfo, Tensor, TensorDesc, alloc_tensor
from dataflow.utils.msg_type_register import msg_type_register
from dataflow.utils.utils import (
    DfAbortException, DfException, get_running_device_id, get_running_instance_id, get_running_instance_num,
)
from dataflow import rt  # noqa: E402

__all__ = [
    "DT_BF16", "DT_BOOL", "DT_DOUBLE", "DT_FLOAT", "DT_FLOAT16", "DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64",
    "DT_STRING", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64", "DType", "CountBatch", "FlowData", "FlowFlag",
    "FlowGraph", "FlowGraphProcessPoint", "FlowInfo", "FlowNode", "FlowOutput", "Framework", "FuncProcessPoint",
    "GraphProcessPoint", "Tensor", "TensorDesc", "TimeBatch", "alloc_tensor", "finalize", "init", "method", "npu_model", "pyflow",
    "msg_type_register", "DfAbortException", "DfException", "get_running_device_id", "get_running_instance_id",
    "get_running_instance_num", "flow_func", "utils", "rt",
]
