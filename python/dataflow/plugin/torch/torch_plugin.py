"""GE's torch plugin (``dataflow.plugin.torch.torch_plugin``) on hflow's simulated devices.

Torch tensors travel as GE's plugin sends them: message type 1023 (``MSG_TYPE_TORCH_TENSOR_MSG``), a
raw message holding a 1024-byte runtime tensor descriptor (data address, dtype, shape; GE's
``RuntimeTensorDesc`` layout) followed by the tensor's bytes. The type is registered when an
``@npu_model`` decorator is applied (before that, a torch tensor is pickled, as in GE), or by
``register_torch_tensor()``. A received tensor views the message's memory (``torch.frombuffer``: no
copy); only CPU tensors can be sent.

``@df.npu_model`` makes a node of a torch function or module. GE runs it on an NPU through torch_npu and
torchair; hflow's devices are simulated, so ``optimize_level=1`` (the default) runs it eagerly with CPU
torch in a Python UDF, and ``optimize_level=2`` (classes, with ``input_descs``) exports the module
with ``torch.onnx.export`` and runs the exported model on the model executor. Nodes carry GE's
``_npu_sched_model`` attribute.

Thread-safety: registration is locked by the registry; decoration is not locked.
"""
from __future__ import annotations

import functools
import inspect
import os
import struct
import warnings
from typing import Any, Callable, List, Optional

from dataflow import _core
from dataflow import data_type as dt
from dataflow import dataflow as df
from dataflow.pyflow import PyActorProcessPoint, PyFunctionProcessPoint, _MethodWire
from dataflow.pyflow import _from_class as _pyflow_class
from dataflow.tensor import TensorDesc
from dataflow.utils.utils import DfException
from dataflow.utils.msg_type_register import msg_type_register

MSG_TYPE_TORCH_TENSOR_MSG = 1023

# GE's RuntimeTensorDesc: data address, data offset, dtype, shape[33] (shape[0] the rank),
# original shape[33], format, sub format, data size, 448 reserved bytes: 1024 in all.
_DESC = struct.Struct("<Qqq33q33qqqQ448x")
_DESC_SIZE = _DESC.size
_MAX_DIMS = 32
_FORMAT_ND = 2

_FUNCTION_OPTIONS = ("num_returns", "resources", "env_hook_func", "visible_device_enable")
_CLASS_OPTIONS = _FUNCTION_OPTIONS + ("optimize_level", "input_descs")


def _torch() -> Any:
    try:
        import torch
    except ImportError as e:  # torch is optional for the rest of the package
        raise ImportError("@npu_model and torch tensor messages need torch (Debian: python3-torch)") from e
    return torch


@functools.lru_cache(maxsize=None)
def _dtype_maps() -> tuple:
    torch = _torch()
    pairs = [(torch.float32, dt.DT_FLOAT), (torch.float16, dt.DT_FLOAT16), (torch.bfloat16, dt.DT_BF16),
             (torch.int8, dt.DT_INT8), (torch.int16, dt.DT_INT16), (torch.uint8, dt.DT_UINT8),
             (torch.int32, dt.DT_INT32), (torch.int64, dt.DT_INT64), (torch.bool, dt.DT_BOOL),
             (torch.float64, dt.DT_DOUBLE)]
    return {t: d for t, d in pairs}, {d.dtype: t for t, d in pairs}


def torch_to_dflow_dtype(torch_dtype: Any) -> dt.DType:
    """The DType of a torch dtype; ValueError for one GE's plugin does not carry."""
    d = _dtype_maps()[0].get(torch_dtype)
    if d is None:
        raise ValueError(f"torch_dtype {torch_dtype} is not supported")
    return d


def dflow_to_torch_dtype(dtype: dt.DType) -> Any:
    """The torch dtype of a DType; ValueError for one torch cannot hold."""
    t = _dtype_maps()[1].get(dtype.dtype)
    if t is None:
        raise ValueError(f"df_dtype {dtype} is not supported")
    return t


def _sendable(tensor: Any) -> tuple:
    """A CPU tensor ready to send (detached, contiguous: GE's plugin makes it so too), its DType and
    its byte size."""
    if tensor.device.type != "cpu":
        raise TypeError(f"torch tensor device:{tensor.device} is not support when df use @npu_model, "
                        "please to cpu.")
    t = tensor.detach().contiguous()
    if t.dim() > _MAX_DIMS:
        raise ValueError(f"a torch tensor message holds at most {_MAX_DIMS} dims, got {t.dim()}")
    return t, torch_to_dflow_dtype(t.dtype), t.numel() * t.element_size()


def _write_torch_message(t: Any, dtype: dt.DType, size: int, out: Any) -> None:
    """Writes the descriptor and the bytes of ``t`` (``_sendable``'s) into ``out``, 1024 + size bytes."""
    shape = [t.dim()] + list(t.shape) + [0] * (_MAX_DIMS - t.dim())
    _DESC.pack_into(out, 0, t.data_ptr(), 0, dtype.dtype, *shape, *shape, _FORMAT_ND, 0, size)
    if size:
        torch = _torch()
        # torch's copy, not a buffer slice: it runs without the GIL, so the other stages of a
        # pipeline run their Python while this one copies.
        torch.frombuffer(out, dtype=torch.uint8, count=size, offset=_DESC_SIZE).copy_(
            t.reshape(-1).view(torch.uint8))


def _serialize_with_torch_tensor(tensor: Any) -> bytearray:
    """A CPU tensor as GE's torch message: the 1024-byte descriptor, then the tensor's bytes."""
    t, dtype, size = _sendable(tensor)
    out = bytearray(_DESC_SIZE + size)
    _write_torch_message(t, dtype, size, out)
    return out


class _TorchWriter:
    """Writes a tensor straight into a message a UDF sends (one copy, where serializing and then
    filling the message would take two): ``size(tensor)``, then ``write(buffer)``."""

    def size(self, tensor: Any) -> int:
        self._ready = _sendable(tensor)
        return _DESC_SIZE + self._ready[2]

    def write(self, out: Any) -> None:
        t, dtype, size = self._ready
        self._ready = None
        _write_torch_message(t, dtype, size, memoryview(out).cast("B"))


def _deserialize_with_torch_tensor(buffer: Any) -> Any:
    """The tensor of a torch message, viewing ``buffer`` (no copy)."""
    torch = _torch()
    view = memoryview(buffer).cast("B")
    if len(view) < _DESC_SIZE:
        raise ValueError(f"a torch tensor message has {len(view)} bytes, less than its {_DESC_SIZE}-byte "
                         "descriptor")
    fields = _DESC.unpack_from(view, 0)
    dtype = dflow_to_torch_dtype(dt.from_code(fields[2]))
    rank = fields[3]
    if not 0 <= rank <= _MAX_DIMS:
        raise ValueError(f"a torch tensor message says it has {rank} dims")
    shape = list(fields[4:4 + rank])
    size = fields[-1]
    if size > len(view) - _DESC_SIZE:
        raise ValueError(f"a torch tensor message says it holds {size} bytes, it has {len(view) - _DESC_SIZE}")
    if size == 0:
        return torch.empty(shape, dtype=dtype)
    with warnings.catch_warnings():  # a message's memory may be read-only: the tensor still views it
        warnings.simplefilter("ignore", UserWarning)
        flat = torch.frombuffer(view, dtype=torch.uint8, count=size, offset=_DESC_SIZE)
    return flat.view(dtype).reshape(shape)


def register_torch_tensor() -> None:
    """Send torch tensors as GE's torch messages (type 1023) from now on; idempotent."""
    msg_type_register._register_builtin(MSG_TYPE_TORCH_TENSOR_MSG, _torch().Tensor, _serialize_with_torch_tensor,
                                        _deserialize_with_torch_tensor, writer=_TorchWriter)


_register_torch_tensor = register_torch_tensor  # GE's name


def _check_options(options: dict, allowed: tuple, where: str) -> None:
    for key in options:
        if key not in allowed:
            raise TypeError(f"param:{key} is not support in @npu_model{where}.")


class NpuFunctionProcessPoint(PyFunctionProcessPoint):
    """An ``@npu_model`` function: a ``@pyflow`` function whose node carries ``_npu_sched_model``."""

    def fnode(self, *args: Any, **kwargs: Any) -> df.FlowNode:
        node = super().fnode(*args, **kwargs)
        node.set_attr("_npu_sched_model", 1)
        return node


class NpuActorProcessPoint(PyActorProcessPoint):
    """Base of ``@npu_model`` classes: ``Cls.fnode(*args, **kwargs)`` makes the node at the class's
    ``optimize_level``."""

    _npu_options: dict

    @classmethod
    def fnode(cls, *args: Any, **kwargs: Any) -> df.FlowNode:
        level = cls._npu_options.get("optimize_level", 1)
        if isinstance(level, bool) or not isinstance(level, int):
            raise TypeError(f"optimize_level must be a number, but got {type(level)}.")
        if level == 1:
            node = super().fnode(*args, **kwargs)
        elif level == 2:
            node = cls._exported_fnode(args, kwargs)
        else:
            raise TypeError(f"optimize_level:{level} is not support in @npu_model.")
        node.set_attr("_npu_sched_model", 1)
        return node

    @classmethod
    def _exported_fnode(cls, args: tuple, kwargs: dict) -> df.FlowNode:
        descs = cls._npu_options.get("input_descs")
        if descs is None:
            raise TypeError("optimize_level is 2, but input_descs is None.")
        layout = cls._layout()
        if len(layout) != 1:
            raise TypeError(f"optimize_level 2 exports one @method, {cls.__name__} has {len(layout)}")
        name, fd = layout[0]
        if len(fd.inputs) != len(descs):
            raise TypeError(f"{cls.__name__}.{name} takes {len(fd.inputs)} inputs, input_descs has {len(descs)}")
        node_name = cls.__name__ + "_fnode"
        ws = os.path.join(".", node_name + "_ws")
        for i, d in enumerate(descs):
            if not isinstance(d, TensorDesc):
                raise TypeError(f"input_descs[{i}] must be TensorDesc, but got {type(d).__name__}")
        try:
            path = _export_onnx(cls._decorated_class(*args, **kwargs), name, descs, len(fd.outputs), ws)
        except DfException:
            raise
        except Exception as e:  # the module's own code, torch's tracer or its ONNX exporter
            raise DfException(f"@npu_model node {node_name}: {cls.__name__}.{name} cannot be exported at "
                              f"optimize_level=2 ({type(e).__name__}: {e}); run it at optimize_level=1, or make "
                              "it traceable", _core.PARAM_INVALID) from e
        pp = df.GraphProcessPoint(df.Framework.ONNX, path)
        node = df.FlowNode(input_num=len(fd.inputs), output_num=len(fd.outputs), name=node_name)
        node.add_process_point(pp)
        setattr(node, name, _MethodWire(name, node, fd.inputs, fd.outputs))
        return node


def _export_onnx(module: Any, method: str, descs: List[TensorDesc], n_out: int, ws: str) -> str:
    """``module.method`` exported (``torch.onnx.export``) to ``ws/export.onnx`` from ``input_descs``: each
    negative dim becomes 1 in the example input and a dynamic axis of the model, as GE's export makes it."""
    torch = _torch()
    inputs, dynamic = [], {}
    for i, d in enumerate(descs):
        if not isinstance(d, TensorDesc):
            raise TypeError(f"input_descs[{i}] must be TensorDesc, but got {type(d).__name__}")
        shape = [1 if x < 0 else x for x in d._shape]
        inputs.append(torch.ones(*shape, dtype=dflow_to_torch_dtype(d._dtype)))
        axes = {k: f"x{i}_d{k}" for k, x in enumerate(d._shape) if x < 0}
        if axes:
            dynamic[f"x{i}"] = axes

    class _Method(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = module if isinstance(module, torch.nn.Module) else None
            self._call = getattr(module, method)

        def forward(self, *xs: Any) -> Any:
            return self._call(*xs)

    os.makedirs(ws, exist_ok=True)
    path = os.path.abspath(os.path.join(ws, "export.onnx"))
    outputs = [f"y{i}" for i in range(n_out)]
    for o in outputs:
        if dynamic:
            dynamic.setdefault(o, {})
    with torch.no_grad(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", torch.jit.TracerWarning)
        torch.onnx.export(_Method().eval(), tuple(inputs), path, input_names=[f"x{i}" for i in range(len(inputs))],
                          output_names=outputs, dynamic_axes=dynamic or None, opset_version=17)
    # A tracer warning means the trace took a Python value from a tensor (a branch on its data, a
    # shape turned into an int): the exported model would replay what the example input did, for
    # every input. Refused, where GE's dynamo export would have broken the graph there.
    traced = [w for w in caught if issubclass(w.category, torch.jit.TracerWarning)]
    if traced:
        os.remove(path)
        w = traced[0]
        raise RuntimeError(f"its trace depends on the example input, so the exported model would be wrong for "
                           f"other inputs (TracerWarning at {os.path.basename(w.filename)}:{w.lineno}: {w.message})")
    return path


def _from_class(decorated: type, options: dict) -> type:
    _check_options(options, _CLASS_OPTIONS, "")
    base = {k: v for k, v in options.items() if k not in ("optimize_level", "input_descs")}
    derived = _pyflow_class(decorated, base)
    return type(decorated.__name__, (NpuActorProcessPoint, derived), {
        "__module__": decorated.__module__, "__qualname__": decorated.__qualname__,
        "_decorated_class": decorated, "_default_options": dict(base), "_npu_options": dict(options)})


def _make_npu_model(function_or_class: Any, options: Optional[dict] = None) -> Any:
    options = dict(options or {})
    register_torch_tensor()
    if inspect.isfunction(function_or_class):
        _check_options(options, _FUNCTION_OPTIONS, " when applied to a function")
        return NpuFunctionProcessPoint(function_or_class, options)
    if inspect.isclass(function_or_class):
        return _from_class(function_or_class, options)
    raise TypeError("The @npu_model decorator must be applied to either a function or a class.")


def npu_model(*args: Any, **kwargs: Any) -> Callable:
    """``@npu_model`` or ``@npu_model(optimize_level=..., input_descs=[...], num_returns=...)`` on a torch
    function or ``nn.Module`` class (see the module's doc)."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return _make_npu_model(args[0], {})
    return functools.partial(_make_npu_model, options=kwargs)
