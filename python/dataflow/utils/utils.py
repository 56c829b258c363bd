"""Exceptions, argument checks and the per-thread "running in a UDF" state.

``DfException`` is GE's: ``error_code`` (PARAM_INVALID unless given) and ``message``; ``str(e)`` is
"DfException:<code>:<message>". The ``check_*`` helpers raise it with PARAM_INVALID and GE's wording
("Argument NAME must be <class 'int'>"), as GE's ``assert_args_type`` does.

hflow runs Python UDFs in-process on executor threads, so the running device/instance ids that GE
keeps in process globals (one UDF per process there) are kept per thread here: the UDF driver sets
them around every init/proc call and restores the previous values afterwards.

Thread-safety: all state is thread-local.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

from dataflow import _core
from dataflow.utils import log


class DfException(Exception):
    """A dataflow error carrying a GE status code (``error_code``) and a ``message``."""

    def __init__(self, message: Any, error_code: Optional[int] = None) -> None:
        super().__init__()  # as GE's: e.args is (), str(e) says it all
        self.message = message
        self.error_code = int(error_code) if error_code is not None else _core.PARAM_INVALID

    def __str__(self) -> str:
        return f"DfException:{self.error_code}:{self.message}"

    def __repr__(self) -> str:
        return self.__str__()


class DfAbortException(DfException):
    """Raised to abandon a proc call (e.g. the UDF queue is being torn down); proc then succeeds."""


class _RunState(threading.local):
    def __init__(self) -> None:
        self.device_id: Optional[int] = None
        self.instance_id: Optional[int] = None
        self.instance_num: Optional[int] = None
        self.in_udf: bool = False
        self.run_context: Any = None  # the _core.MetaRunContext of the running proc call
        self.label: str = ""  # "<node>/<function>" of the running call, for logs


_state = _RunState()


def _running_state() -> _RunState:
    return _state


def get_running_device_id() -> Optional[int]:
    """The device id of the UDF running on this thread (None, with an error log, on the host)."""
    if _state.device_id is None:
        log.error("running device id is not set: not called from inside a UDF")
    return _state.device_id


def get_running_instance_id() -> Optional[int]:
    """The instance id of the UDF running on this thread (None on the host)."""
    if _state.instance_id is None:
        log.error("running instance id is not set: not called from inside a UDF")
    return _state.instance_id


def get_running_instance_num() -> Optional[int]:
    """The instance count of the UDF node running on this thread (None on the host)."""
    if _state.instance_num is None:
        log.error("running instance num is not set: not called from inside a UDF")
    return _state.instance_num


def set_running_device_id(device_id: Optional[int]) -> None:
    """Set this thread's running device id (the UDF driver does; GE's tests do too)."""
    _state.device_id = device_id


def set_running_instance_id(instance_id: Optional[int]) -> None:
    """Set this thread's running instance id."""
    _state.instance_id = instance_id


def set_running_instance_num(instance_num: Optional[int]) -> None:
    """Set this thread's running instance count."""
    _state.instance_num = instance_num


def get_running_in_udf() -> bool:
    """Whether this thread is inside a Python UDF's init or proc call."""
    return _state.in_udf


def _is_a(value: Any, types: Any) -> bool:
    """isinstance, except that a bool is not an int unless ``bool`` is listed."""
    if not isinstance(value, types):
        return False
    listed = types if isinstance(types, tuple) else (types,)
    return not isinstance(value, bool) or bool in listed


def type_text(types: Any) -> str:
    """``types`` as GE's argument checks print them: "<class 'int'>", "<class 'bool'> or <class 'str'>"."""
    if isinstance(types, tuple):
        return " or ".join(str(t) for t in types)
    return str(types)


def check_type(name: str, value: Any, types: Any, what: Optional[str] = None) -> None:
    """Raise DfException(PARAM_INVALID) "Argument NAME must be WHAT, but got ..." when ``value`` is not an
    instance of ``types``, as GE's argument checks (``assert_args_type``) do; WHAT defaults to GE's
    wording of ``types``. ``bool`` is never accepted where ``int`` is asked for unless ``bool`` is listed.
    """
    if type(value) is types:  # the common case, first: feeds check several arguments each
        return
    if not _is_a(value, types):
        raise DfException(f"Argument {name} must be {what or type_text(types)}, but got "
                          f"{type(value).__name__}: {value!r}", _core.PARAM_INVALID)


df_check_type = check_type  # the older name


def check_int(name: str, value: Any, minimum: Optional[int] = None) -> int:
    """Check ``value`` is an int (not bool) at least ``minimum``; return it. DfException(PARAM_INVALID)."""
    check_type(name, value, int)
    if minimum is not None and value < minimum:
        raise DfException(f"Argument {name} must be >= {minimum}, but got {value}", _core.PARAM_INVALID)
    return value


def is_str_dict(value: Any) -> bool:
    """Whether ``value`` is a dict whose keys and values are all str."""
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def check_str_dict(name: str, value: Any) -> dict:
    """Check ``value`` is a dict[str, str] (None is an empty dict); return a copy. DfException(PARAM_INVALID)
    "Argument NAME must be typing.Dict[str, str]", GE's wording for ``init``'s options."""
    if value is None:
        return {}
    if not is_str_dict(value):
        raise DfException(f"Argument {name} must be typing.Dict[str, str], but got {value!r}", _core.PARAM_INVALID)
    return dict(value)
