"""Host data types: ``TensorDesc``, ``Tensor`` (over a numpy array or a UDF tensor), ``FlowInfo``,
and ``alloc_tensor``.

A host ``Tensor`` holds a numpy array; ``numpy()`` returns it without a copy. Inside a Python UDF a
``Tensor`` may instead wrap a ``_core.Tensor`` living in a flow message's memory (``numpy()`` is then
a zero-copy view that keeps the message alive).

Thread-safety: objects are not locked; share them between threads read-only.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

import numpy as np

from dataflow import _core
from dataflow import data_type as dt
from dataflow.utils import log
from dataflow.utils.utils import DfException, _running_state

MAX_USER_DATA_SIZE = 64


class TensorDesc:
    """A tensor's data type and shape."""

    def __init__(self, dtype: dt.DType, shape: Union[List[int], Tuple[int, ...]]) -> None:
        if not isinstance(dtype, dt.DType):
            raise DfException(f"Argument dtype must be {dt.DType}, but got {dtype}", _core.DATATYPE_INVALID)
        if not isinstance(shape, (list, tuple)) or any(
            isinstance(d, bool) or not isinstance(d, (int, np.integer)) for d in shape
        ):
            raise DfException(f"Argument shape must be List[int] or Tuple[int], but got {shape!r}",
                              _core.SHAPE_INVALID)
        self._dtype = dtype
        self._shape = [int(d) for d in shape]

    @property
    def dtype(self) -> dt.DType:
        """The data type."""
        return self._dtype

    @property
    def shape(self) -> List[int]:
        """The shape (a copy)."""
        return list(self._shape)

    def __str__(self) -> str:
        return f"TensorDesc(dtype={self._dtype}, shape={self._shape})"

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorDesc) and self._dtype == other._dtype and self._shape == other._shape

    __hash__ = None  # type: ignore[assignment]


def _is_str_dtype(npd: np.dtype) -> bool:
    return np.issubdtype(npd, np.str_) or np.issubdtype(npd, np.bytes_)


class Tensor:
    """A tensor: ``Tensor(data, tensor_desc=None)``; data is array-like, a numpy array or a Tensor.

    With ``tensor_desc`` the shape must match and the data is converted to its dtype.
    """

    def __init__(self, data: Any, tensor_desc: Optional[TensorDesc] = None) -> None:
        self._flow_msg: Any = None  # _core.FlowMsg owning a UDF tensor (alloc_tensor in a UDF)
        self._udf_tensor: Any = None  # _core.Tensor inside a UDF
        if tensor_desc is not None and not isinstance(tensor_desc, TensorDesc):
            raise DfException(f"Argument tensor_desc must be {TensorDesc}, but got {type(tensor_desc).__name__}",
                              _core.PARAM_INVALID)
        if _core_has("FlowMsg") and isinstance(data, _core.FlowMsg):
            self._flow_msg = data
            data = data.get_tensor()
            if data is None:
                raise DfException("The flow message holds no tensor", _core.PARAM_INVALID)
        if _core_has("Tensor") and isinstance(data, _core.Tensor):
            self._udf_tensor = data
            self._array = None
            self._desc = TensorDesc(dt.from_code(data.get_dtype()), list(data.get_shape()))
            return
        if isinstance(data, Tensor):
            if tensor_desc is None or tensor_desc == data._desc:
                self._array = np.array(data._np(), copy=True)
                self._desc = data._desc
                return
            data = data._np()
        if not isinstance(data, np.ndarray):
            try:
                data = np.array(data)
            except Exception as e:
                raise DfException(f"Argument data cannot be made a numpy array: {e}", _core.PARAM_INVALID) from e
        if tensor_desc is not None:
            if list(data.shape) != tensor_desc._shape:
                raise DfException(
                    f"The shape of argument data is {list(data.shape)}, but the argument tensor_desc is {tensor_desc}.",
                    _core.SHAPE_INVALID,
                )
            want = dt.np_dtype_of(tensor_desc._dtype)
            if want is None:
                raise DfException(f"The dtype of argument tensor_desc is {tensor_desc._dtype} which is not supported.",
                                  _core.DATATYPE_INVALID)
            if tensor_desc._dtype == dt.DT_STRING:
                if not _is_str_dtype(data.dtype):
                    raise DfException(f"Argument data must be str or bytes for a DT_STRING tensor_desc, but its dtype "
                                      f"is {data.dtype}", _core.PARAM_INVALID)
            elif data.dtype != np.dtype(want):
                log.warning("converting data of dtype %s to %s as its tensor_desc says", data.dtype, tensor_desc._dtype)
                try:
                    data = np.asarray(data, want)
                except Exception as e:
                    raise ValueError(f"Failed to convert type {data.dtype} to type {tensor_desc._dtype}.") from e
            self._desc = tensor_desc
        elif _is_str_dtype(data.dtype):
            self._desc = TensorDesc(dt.DT_STRING, list(data.shape))
        else:
            d = dt._np_dtype_to_dflow_dtype.get(data.dtype)
            if d is None:
                raise DfException(
                    f"The dtype of data is {data.dtype}, which dataflow does not support", _core.DATATYPE_INVALID
                )
            self._desc = TensorDesc(d, list(data.shape))
        self._array = data

    @classmethod
    def _fetched(cls, array: np.ndarray, dtype: dt.DType) -> "Tensor":
        """A Tensor around an array _core fetched, with its GE dtype (nothing to check)."""
        t = cls.__new__(cls)
        t._flow_msg = t._udf_tensor = None
        t._array = array
        desc = TensorDesc.__new__(TensorDesc)
        desc._dtype, desc._shape = dtype, list(array.shape)
        t._desc = desc
        return t

    def __str__(self) -> str:
        return f"Tensor({self._np()}, tensor_desc={self._desc})"

    __repr__ = __str__

    @property
    def tensor_desc(self) -> TensorDesc:
        """The tensor's TensorDesc."""
        return self._desc

    def numpy(self, copy: bool = False) -> np.ndarray:
        """The data as a numpy array: the tensor's own memory unless ``copy``. A DT_STRING tensor needs
        ``copy=True`` (DfException otherwise), as in GE."""
        if self._desc._dtype == dt.DT_STRING and not copy:
            raise DfException("String tensor must set copy param true.", _core.PARAM_INVALID)
        arr = self._np()
        return np.array(arr, copy=True) if copy else arr

    def _np(self) -> np.ndarray:
        """The data, no copy and no check (the package's own reads)."""
        if self._udf_tensor is not None:
            return np.asarray(self._udf_tensor.numpy())
        return self._array

    def get_shape(self) -> List[int]:
        """The shape."""
        if self._udf_tensor is not None:
            return list(self._udf_tensor.get_shape())
        return list(self._array.shape)

    def get_data_type(self) -> Any:
        """The numpy type of the data (None for DT_BF16)."""
        return dt.np_dtype_of(self._desc._dtype)

    def get_data_size(self) -> int:
        """The data size in bytes."""
        if self._udf_tensor is not None:
            return int(self._udf_tensor.get_data_size())
        return int(self._array.nbytes)

    def get_element_cnt(self) -> int:
        """The number of elements."""
        if self._udf_tensor is not None:
            return int(self._udf_tensor.get_element_cnt())
        return int(self._array.size)

    def reshape(self, shape: Union[List[int], Tuple[int, ...]]) -> int:
        """Reshape in place (same element count); returns 0 or a FLOW_FUNC error code."""
        if not isinstance(shape, (list, tuple)) or any(isinstance(d, bool) or not isinstance(d, int) for d in shape):
            raise DfException(f"Argument shape must be {List[int]} or {Tuple[int]}, but got {shape!r}",
                              _core.PARAM_INVALID)
        if self._udf_tensor is not None:
            ret = int(self._udf_tensor.reshape(list(shape)))
            if ret == 0:
                self._desc = TensorDesc(self._desc._dtype, list(shape))
            return ret
        try:
            self._array = self._array.reshape(shape)
        except ValueError:
            return _core.FLOW_FUNC_ERR_PARAM_INVALID
        self._desc = TensorDesc(self._desc._dtype, list(shape))
        return 0


def _core_has(name: str) -> bool:
    return hasattr(_core, name)


def _aligned_empty(shape: List[int], npd: np.dtype, align: int) -> np.ndarray:
    count = int(np.prod(shape)) if shape else 1
    nbytes = count * npd.itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    offset = (-raw.ctypes.data) % align
    return raw[offset:offset + nbytes].view(npd).reshape(shape)


def alloc_tensor(shape: Union[List[int], Tuple[int, ...]], dtype: Any, align: int = 64) -> Tensor:
    """A new uninitialised Tensor of ``shape`` and ``dtype`` (a DType or numpy dtype).

    On the host: over a fresh numpy array aligned to ``align`` bytes. Inside a UDF: a tensor message
    allocated through the running context, so setting it as an output copies nothing.
    """
    # GE raises TypeError for a bad dtype here (its binding, for a bad shape): so do the checks of shape.
    if not isinstance(shape, (list, tuple)) or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in shape):
        raise TypeError(f"Argument shape must be a list or tuple of non-negative int, but got {shape!r}")
    d = dt.to_dtype(dtype)
    if isinstance(align, bool) or not isinstance(align, int) or align <= 0 or align & (align - 1):
        raise ValueError(f"Argument align must be a positive power of two, but got {align!r}")
    state = _running_state()
    if state.in_udf and state.run_context is not None:
        msg = state.run_context.alloc_tensor_msg(list(shape), d.dtype, align)
        if msg is None:
            raise DfException(f"Failed to alloc a tensor message of shape {list(shape)} and {d}", _core.FAILED)
        return Tensor(msg)
    npd = dt.np_dtype_of(d)
    if npd is None or d == dt.DT_STRING:
        raise TypeError(f"The dtype of data is {d} is invalid: argument dtype {d} cannot be allocated on the host")
    return Tensor(_aligned_empty(list(shape), np.dtype(npd), align))


_FIELD_BITS = {"start_time": 64, "end_time": 64, "flow_flags": 32, "transaction_id": 64}


def _check_field(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DfException(f"Argument {name} of FlowInfo must be {int}, but got {type(value).__name__}: {value!r}",
                          _core.PARAM_INVALID)
    bits = _FIELD_BITS[name]
    if not 0 <= value < (1 << bits):
        raise DfException(f"Argument {name} of FlowInfo must be in [0, 2**{bits}), but got {value}",
                          _core.PARAM_INVALID)


class FlowInfo:
    """Per-feed/fetch information: times, flow flags, transaction id and up to 64 bytes of user data."""

    MAX_USER_DATA_SIZE = MAX_USER_DATA_SIZE

    def __init__(self, start_time: int = 0, end_time: int = 0, flow_flags: int = 0, transaction_id: int = 0) -> None:
        for n, v in (("start_time", start_time), ("end_time", end_time), ("flow_flags", flow_flags),
                     ("transaction_id", transaction_id)):
            _check_field(n, v)
        self._start_time = start_time
        self._end_time = end_time
        self._flow_flags = flow_flags
        self._transaction_id = transaction_id
        self._user_data = bytearray(MAX_USER_DATA_SIZE)
        self._data_size = 0

    def __str__(self) -> str:
        return (f"FlowInfo(start_time={self._start_time}, end_time={self._end_time}, flow_flags={self._flow_flags}, "
                f"transaction_id={self._transaction_id})")

    __repr__ = __str__

    @property
    def user_data(self) -> bytearray:
        """The 64-byte user data buffer."""
        return self._user_data

    @property
    def data_size(self) -> int:
        """How many leading bytes of user_data are set."""
        return self._data_size

    def _int_prop(name: str) -> property:  # type: ignore[misc]
        attr = "_" + name

        def getter(self: "FlowInfo") -> int:
            return getattr(self, attr)

        def setter(self: "FlowInfo", value: int) -> None:
            _check_field(name, value)
            setattr(self, attr, value)

        return property(getter, setter, doc=f"The {name.replace('_', ' ')}.")

    start_time = _int_prop("start_time")
    end_time = _int_prop("end_time")
    flow_flags = _int_prop("flow_flags")
    transaction_id = _int_prop("transaction_id")
    del _int_prop

    @staticmethod
    def _check_range(size: int, offset: int) -> None:
        for n, v in (("size", size), ("offset", offset)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise DfException(f"Argument {n} must be a non-negative int, but got {v!r}")
        if size == 0:
            raise DfException(f"The size is 0 or empty. It should in (0, {MAX_USER_DATA_SIZE}]")
        if offset >= MAX_USER_DATA_SIZE or MAX_USER_DATA_SIZE - offset < size:
            raise DfException(
                f"Offset {offset} add userData size {size} can not be greater than {MAX_USER_DATA_SIZE}."
            )

    def set_user_data(self, user_data: Union[bytes, bytearray, memoryview], offset: int = 0) -> None:
        """Write ``user_data`` (bytes-like, or a list of byte values) at ``offset`` (offset + len <= 64)."""
        try:
            if not isinstance(user_data, (bytes, bytearray, memoryview, list, tuple)):
                raise TypeError(type(user_data).__name__)
            data = bytes(user_data)
        except (TypeError, ValueError) as e:
            raise DfException(f"Argument user_data must be bytearray, bytes or a list of byte values, but got "
                              f"{user_data!r} ({e})", _core.PARAM_INVALID) from e
        self._check_range(len(data), offset)
        self._user_data[offset:offset + len(data)] = data
        self._data_size = max(self._data_size, offset + len(data))

    def get_user_data(self, size: int = 0, offset: int = 0) -> bytearray:
        """``size`` bytes of user data from ``offset``."""
        self._check_range(size, offset)
        return self._user_data[offset:offset + size]

    def _to_tuple(self) -> tuple:
        return (self._start_time, self._end_time, self._flow_flags, self._transaction_id,
                bytes(self._user_data[:self._data_size]), 0)

    @classmethod
    def _from_tuple(cls, t: Any) -> "FlowInfo":
        if t is None:
            return cls()
        # _core's fields are in range already: skip __init__'s checks (a fetch makes one per call).
        info = cls.__new__(cls)
        info._start_time, info._end_time, info._flow_flags, info._transaction_id = t[0], t[1], t[2], t[3]
        ud = bytes(t[4]) if len(t) > 4 and t[4] is not None else b""
        ud = ud[:MAX_USER_DATA_SIZE]
        info._user_data = bytearray(ud) + bytearray(MAX_USER_DATA_SIZE - len(ud))
        info._data_size = len(ud)
        return info
