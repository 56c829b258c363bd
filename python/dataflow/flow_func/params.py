"""Init parameters (``PyMetaParams``) and balance routing (``BalanceConfig``, ``AffinityPolicy``) of
Python UDFs, over ``_core.MetaParams``/``_core.BalanceConfig``.

Typed getters return ``(code, value)``: FLOW_FUNC_ERR_ATTR_NOT_EXITS when the param is not set,
FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH when it has another type.

Thread-safety: objects are not locked; a UDF instance uses its own.
"""
from __future__ import annotations

from enum import Enum
from typing import Any, List, Tuple

from dataflow import _core
from dataflow import data_type as dt
from dataflow.utils.utils import DfException, check_type

FLOW_FUNC_SUCCESS = _core.FLOW_FUNC_SUCCESS
FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH = _core.FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH


class PyMetaParams:
    """A UDF's init parameters and placement (wraps ``_core.MetaParams``)."""

    def __init__(self, meta_params: Any) -> None:
        self._meta_params = meta_params

    def __repr__(self) -> str:
        return f"PyMetaParams(name={self.get_name()!r})"

    def get_name(self) -> str:
        """The function's name."""
        return self._meta_params.get_name()

    def get_attr(self, name: str) -> Tuple[int, Any]:
        """``(code, value)`` of an init param, value typed as it was set."""
        return self._meta_params.get_attr(name)

    def _typed(self, name: str, check: Any, core_getter: str = "") -> Tuple[int, Any]:
        check_type("name", name, str)
        getter = getattr(self._meta_params, core_getter, None) if core_getter else None
        code, value = getter(name) if getter is not None else self._meta_params.get_attr(name)
        if code != FLOW_FUNC_SUCCESS:
            return code, None
        if not check(value):
            return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH, None
        return FLOW_FUNC_SUCCESS, value

    @staticmethod
    def _is(kind: type) -> Any:
        def check(v: Any) -> bool:
            if kind is int:
                return isinstance(v, int) and not isinstance(v, bool)
            if kind is float:
                return isinstance(v, float) or (isinstance(v, int) and not isinstance(v, bool))
            return isinstance(v, kind)
        return check

    @classmethod
    def _list_of(cls, kind: type) -> Any:
        one = cls._is(kind)
        return lambda v: isinstance(v, list) and all(one(x) for x in v)

    def get_attr_int(self, name: str) -> Tuple[int, int]:
        """An int init param."""
        return self._typed(name, self._is(int), "get_int")

    def get_attr_int_list(self, name: str) -> Tuple[int, List[int]]:
        """A list-of-int init param."""
        return self._typed(name, self._list_of(int), "get_int_list")

    def get_attr_int_list_list(self, name: str) -> Tuple[int, List[List[int]]]:
        """A list-of-list-of-int init param."""
        inner = self._list_of(int)
        return self._typed(name, lambda v: isinstance(v, list) and all(inner(x) for x in v),
                           "get_int_list_list")

    def get_attr_bool(self, name: str) -> Tuple[int, bool]:
        """A bool init param."""
        return self._typed(name, self._is(bool), "get_bool")

    def get_attr_bool_list(self, name: str) -> Tuple[int, List[bool]]:
        """A list-of-bool init param."""
        return self._typed(name, self._list_of(bool), "get_bool_list")

    def get_attr_float(self, name: str) -> Tuple[int, float]:
        """A float init param."""
        code, v = self._typed(name, self._is(float), "get_float")
        return code, (float(v) if v is not None else None)

    def get_attr_float_list(self, name: str) -> Tuple[int, List[float]]:
        """A list-of-float init param."""
        code, v = self._typed(name, self._list_of(float), "get_float_list")
        return code, ([float(x) for x in v] if v is not None else None)

    def get_attr_str(self, name: str) -> Tuple[int, str]:
        """A str init param."""
        return self._typed(name, self._is(str), "get_str")

    def get_attr_str_list(self, name: str) -> Tuple[int, List[str]]:
        """A list-of-str init param."""
        return self._typed(name, self._list_of(str), "get_str_list")

    def get_attr_tensor_dtype(self, name: str) -> Tuple[int, Any]:
        """A DType init param, as its numpy type."""
        code, v = self._typed(name, self._is(int), "get_dtype")
        if code != FLOW_FUNC_SUCCESS:
            return code, None
        return FLOW_FUNC_SUCCESS, dt.np_dtype_of(dt.from_code(v))

    def get_attr_tensor_dtype_list(self, name: str) -> Tuple[int, List[Any]]:
        """A list-of-DType init param, as numpy types."""
        code, v = self._typed(name, self._list_of(int), "get_dtype_list")
        if code != FLOW_FUNC_SUCCESS:
            return code, []
        return FLOW_FUNC_SUCCESS, [dt.np_dtype_of(dt.from_code(x)) for x in v]

    def get_input_num(self) -> int:
        """The function's input count."""
        return int(self._meta_params.get_input_num())

    def get_output_num(self) -> int:
        """The function's output count."""
        return int(self._meta_params.get_output_num())

    def get_work_path(self) -> str:
        """The work path."""
        return self._meta_params.get_work_path()

    def get_running_device_id(self) -> int:
        """The device this instance runs on."""
        return int(self._meta_params.get_running_device_id())

    def get_running_instance_id(self) -> int:
        """This instance's id."""
        return int(self._meta_params.get_running_instance_id())

    def get_running_instance_num(self) -> int:
        """The node's instance count."""
        return int(self._meta_params.get_running_instance_num())


class AffinityPolicy(Enum):
    """Balance affinity policies."""

    NO_AFFINITY = 0
    ROW_AFFINITY = 1
    COL_AFFINITY = 2

    @property
    def inner_type(self) -> int:
        """The numeric policy."""
        return self.value


class BalanceConfig:
    """Balance scatter/gather routing of an output: weight matrix, affinity and data positions."""

    def __init__(self, row_num: int, col_num: int, affinity_policy: AffinityPolicy = AffinityPolicy.NO_AFFINITY) -> None:
        for n, v in (("row_num", row_num), ("col_num", col_num)):
            check_type(n, v, int)
            if v <= 0:
                raise DfException(f"Argument {n} must be > 0, but got {v}")
        check_type("affinity_policy", affinity_policy, AffinityPolicy)
        self._impl = _core.BalanceConfig()
        self._impl.set_balance_weight(row_num, col_num)
        self._impl.set_affinity_policy(affinity_policy.value)

    def set_data_pos(self, pos: List[Tuple[int, int]]) -> None:
        """The (row, col) of each message set with this config."""
        if not isinstance(pos, (list, tuple)) or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, int) for x in p) for p in pos
        ):
            raise DfException(f"Argument pos must be {List[Tuple[int, int]]}, but got {pos!r}")
        self._impl.set_data_pos([(int(a), int(b)) for a, b in pos])

    def get_inner_config(self) -> Any:
        """The ``_core.BalanceConfig``."""
        return self._impl
