"""GE data types (``DT_*``) as ``DType`` objects, and their numpy equivalents.

``DType.dtype`` is GE's numeric dtype code (the codes ``_core`` uses). DT_STRING exists for API
compatibility; hflow cannot feed string tensors. DT_BF16 has no numpy type.

Thread-safety: immutable module data.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from dataflow import _core

__all__ = [
    "DType", "DT_FLOAT", "DT_FLOAT16", "DT_BF16", "DT_INT8", "DT_INT16", "DT_UINT16", "DT_UINT8", "DT_INT32",
    "DT_INT64", "DT_UINT32", "DT_UINT64", "DT_BOOL", "DT_DOUBLE", "DT_STRING",
]


class DType:
    """A GE data type; ``dtype`` is its GE code, ``str()`` its name ("DT_INT32")."""

    __slots__ = ("dtype", "_name")

    def __init__(self, dtype: int, name: str) -> None:
        self.dtype = int(dtype)
        self._name = name

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return self._name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DType) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(self.dtype)


DT_FLOAT = DType(_core.DT_FLOAT, "DT_FLOAT")
DT_FLOAT16 = DType(_core.DT_FLOAT16, "DT_FLOAT16")
DT_BF16 = DType(_core.DT_BF16, "DT_BF16")
DT_INT8 = DType(_core.DT_INT8, "DT_INT8")
DT_INT16 = DType(_core.DT_INT16, "DT_INT16")
DT_UINT16 = DType(_core.DT_UINT16, "DT_UINT16")
DT_UINT8 = DType(_core.DT_UINT8, "DT_UINT8")
DT_INT32 = DType(_core.DT_INT32, "DT_INT32")
DT_INT64 = DType(_core.DT_INT64, "DT_INT64")
DT_UINT32 = DType(_core.DT_UINT32, "DT_UINT32")
DT_UINT64 = DType(_core.DT_UINT64, "DT_UINT64")
DT_BOOL = DType(_core.DT_BOOL, "DT_BOOL")
DT_DOUBLE = DType(_core.DT_DOUBLE, "DT_DOUBLE")
DT_STRING = DType(_core.DT_STRING, "DT_STRING")

_ALL = [DT_FLOAT, DT_FLOAT16, DT_BF16, DT_INT8, DT_INT16, DT_UINT16, DT_UINT8, DT_INT32, DT_INT64, DT_UINT32,
        DT_UINT64, DT_BOOL, DT_DOUBLE, DT_STRING]
_code_to_dtype = {d.dtype: d for d in _ALL}

_dflow_dtype_to_np_dtype: dict[DType, Any] = {
    DT_FLOAT: np.float32, DT_FLOAT16: np.float16, DT_INT8: np.int8, DT_INT16: np.int16, DT_UINT16: np.uint16,
    DT_UINT8: np.uint8, DT_INT32: np.int32, DT_INT64: np.int64, DT_UINT32: np.uint32, DT_UINT64: np.uint64,
    DT_BOOL: np.bool_, DT_DOUBLE: np.float64, DT_STRING: np.bytes_,
}
_np_dtype_to_dflow_dtype: dict[np.dtype, DType] = {
    np.dtype(v): k for k, v in _dflow_dtype_to_np_dtype.items() if k is not DT_STRING
}


def from_code(code: int) -> DType:
    """The DType of a GE dtype code; ValueError when unknown (GE's get_python_dtype_from_dwrapper_dtype)."""
    d = _code_to_dtype.get(int(code))
    if d is None:
        raise ValueError(f"The data type {code} is not support.")
    return d


def to_dtype(dtype: Any, arg: str = "dtype") -> DType:
    """A DType from a DType or a numpy dtype-like (np.int32, "int32", ...); TypeError otherwise, as GE's
    ``alloc_tensor``/``alloc_tensor_msg`` raise it ("The dtype of data is X is invalid.")."""
    if isinstance(dtype, DType):
        return dtype
    try:
        npd = np.dtype(dtype)
    except TypeError:
        npd = None
    d: Optional[DType] = _np_dtype_to_dflow_dtype.get(npd) if npd is not None else None
    if d is None or dtype is None:
        raise TypeError(f"The dtype of data is {dtype!r} is invalid: argument {arg} must be a dataflow DType or a "
                        "supported numpy dtype.")
    return d


def np_dtype_of(dtype: DType) -> Any:
    """The numpy type of a DType (None for DT_BF16)."""
    return _dflow_dtype_to_np_dtype.get(dtype)
