"""The Python UDF API (GE's ``dataflow.flow_func``): logger, FlowMsg, FlowMsgQueue, MetaRunContext
and the FLOW_FUNC_*/MSG_TYPE_*/FLOW_FLAG_* constants (PyMetaParams and BalanceConfig: params.py).

These wrap the ``_core`` objects hflow hands to a Python UDF's init/proc. A UDF object is used by
the one executor thread running that call; do not keep FlowMsg/contexts beyond the call unless a
message is kept alive on purpose.

``FlowMsgQueue.get(timeout=...)`` takes milliseconds, as GE's does (it passes the value to the UDF
queue's dequeue), not seconds as ``queue.Queue`` would.

Thread-safety: wrappers are not locked; the logger is safe from any thread.
"""
from __future__ import annotations

import logging
import queue
import sys
from enum import IntEnum
from typing import Any, List, Optional, Tuple, Union

import numpy as np

from dataflow import _core
from dataflow import data_type as dt
from dataflow.tensor import MAX_USER_DATA_SIZE, Tensor
from dataflow.utils.msg_type_register import msg_type_register
from dataflow.flow_func.params import AffinityPolicy, BalanceConfig, PyMetaParams  # noqa: F401
from dataflow.utils.utils import DfAbortException, DfException, _running_state

FLOW_FUNC_SUCCESS = _core.FLOW_FUNC_SUCCESS
FLOW_FUNC_FAILED = _core.FLOW_FUNC_FAILED
FLOW_FUNC_ERR_PARAM_INVALID = _core.FLOW_FUNC_ERR_PARAM_INVALID
FLOW_FUNC_ERR_ATTR_NOT_EXITS = _core.FLOW_FUNC_ERR_ATTR_NOT_EXITS
FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH = _core.FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH
FLOW_FUNC_ERR_TIME_OUT_ERROR = _core.FLOW_FUNC_ERR_TIME_OUT_ERROR
FLOW_FUNC_STATUS_REDEPLOYING = _core.FLOW_FUNC_STATUS_REDEPLOYING
FLOW_FUNC_STATUS_EXIT = _core.FLOW_FUNC_STATUS_EXIT
FLOW_FUNC_ERR_DRV_ERROR = _core.FLOW_FUNC_ERR_DRV_ERROR
FLOW_FUNC_ERR_QUEUE_ERROR = _core.FLOW_FUNC_ERR_QUEUE_ERROR
FLOW_FUNC_ERR_MEM_BUF_ERROR = _core.FLOW_FUNC_ERR_MEM_BUF_ERROR
FLOW_FUNC_ERR_EVENT_ERROR = _core.FLOW_FUNC_ERR_EVENT_ERROR
FLOW_FUNC_ERR_USER_DEFINE_START = _core.FLOW_FUNC_ERR_USER_DEFINE_START
FLOW_FUNC_ERR_USER_DEFINE_END = _core.FLOW_FUNC_ERR_USER_DEFINE_END
FLOW_FUNC_ERR_NOT_SUPPORT = _core.FLOW_FUNC_ERR_NOT_SUPPORT

MSG_TYPE_TENSOR_DATA = _core.MSG_TYPE_TENSOR_DATA
MSG_TYPE_RAW_MSG = _core.MSG_TYPE_RAW_MSG
MSG_TYPE_TENSOR_LIST = _core.MSG_TYPE_TENSOR_LIST
MSG_TYPE_USER_DEFINE_START = _core.MSG_TYPE_USER_DEFINE_START
MSG_TYPE_PICKLED_MSG = _core.MSG_TYPE_PICKLED_MSG
FLOW_FLAG_EOS = _core.FLOW_FLAG_EOS
FLOW_FLAG_SEG = _core.FLOW_FLAG_SEG


class FlowFuncLogType(IntEnum):
    """GE's log types (hflow has one UDF log; both go to it)."""

    DEBUG_LOG = 0
    RUN_LOG = 1


class FlowFuncLogLevel(IntEnum):
    """Log levels, as ``_core`` numbers them."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3


DEBUG_LOG = FlowFuncLogType.DEBUG_LOG
RUN_LOG = FlowFuncLogType.RUN_LOG
DEBUG = FlowFuncLogLevel.DEBUG
INFO = FlowFuncLogLevel.INFO
WARN = FlowFuncLogLevel.WARN
ERROR = FlowFuncLogLevel.ERROR

_py_levels = {DEBUG: logging.DEBUG, INFO: logging.INFO, WARN: logging.WARNING, ERROR: logging.ERROR}
_pylog = logging.getLogger("dataflow.udf")
_pylog.addHandler(logging.NullHandler())


class _CoreLog:
    """hflow's UDF log through ``_core``: the spec's ``FlowFuncLogger`` class (``log(level, msg)``,
    ``is_log_enable(level)``) or module functions ``log(type, level, msg)``/``is_log_enable(type, level)``."""

    def __init__(self) -> None:
        cls = getattr(_core, "FlowFuncLogger", None)
        self._obj: Any = None
        if cls is not None:
            try:
                self._obj = cls()
            except TypeError:
                self._obj = cls
        self._fn_log = getattr(_core, "log", None)
        self._fn_enabled = getattr(_core, "is_log_enable", None)

    def enabled(self, log_type: int, level: int) -> bool:
        try:
            if self._obj is not None:
                return bool(self._obj.is_log_enable(level))
            if self._fn_enabled is not None:
                return bool(self._fn_enabled(log_type, level))
        except Exception:
            pass
        return True

    def write(self, log_type: int, level: int, line: str) -> None:
        try:
            if self._obj is not None:
                self._obj.log(level, line)
            elif self._fn_log is not None:
                self._fn_log(log_type, level, line)
        except Exception:
            pass


class FlowFuncLogger:
    """The UDF logger: writes through hflow's UDF log (with the node's header) and mirrors each
    line to the stdlib logger "dataflow.udf"."""

    def __init__(self) -> None:
        self._impl = _CoreLog()

    @staticmethod
    def _caller() -> str:
        f = sys._getframe(2)
        return f"[{f.f_code.co_filename}:{f.f_lineno}][{f.f_code.co_name}]"

    def is_log_enable(self, log_type: FlowFuncLogType = DEBUG_LOG, log_level: FlowFuncLogLevel = INFO) -> bool:
        """Whether a line of ``log_level`` would be written to the ``log_type`` log."""
        if not isinstance(log_type, FlowFuncLogType) or not isinstance(log_level, FlowFuncLogLevel):
            return False
        return self._impl.enabled(int(log_type), int(log_level))

    def get_log_header(self) -> str:
        """The running node's log header ("" outside a UDF)."""
        fn = getattr(_core, "get_log_header", None)
        if fn is not None:
            try:
                return str(fn())
            except Exception:
                pass
        return _running_state().label

    def _write(self, log_type: FlowFuncLogType, level: FlowFuncLogLevel, where: str, message: str,
               args: tuple) -> None:
        try:
            text = message % args if args else message
        except Exception:
            text = str(message)
        line = f"{where} {text}"
        label = _running_state().label
        _pylog.log(_py_levels[level], "%s%s", f"[{label}] " if label else "", line)
        if self._impl.enabled(int(log_type), int(level)):
            self._impl.write(int(log_type), int(level), line)

    def debug(self, message: str, *args: Any) -> None:
        """Log a debug line (``message % args``)."""
        self._write(DEBUG_LOG, DEBUG, self._caller(), message, args)

    def info(self, message: str, *args: Any) -> None:
        """Log an info line."""
        self._write(DEBUG_LOG, INFO, self._caller(), message, args)

    def warn(self, message: str, *args: Any) -> None:
        """Log a warning line."""
        self._write(DEBUG_LOG, WARN, self._caller(), message, args)

    def error(self, message: str, *args: Any) -> None:
        """Log an error line."""
        self._write(DEBUG_LOG, ERROR, self._caller(), message, args)

    def run_error(self, message: str, *args: Any) -> None:
        """Log a run-log error line."""
        self._write(RUN_LOG, ERROR, self._caller(), message, args)

    def run_info(self, message: str, *args: Any) -> None:
        """Log a run-log info line."""
        self._write(RUN_LOG, INFO, self._caller(), message, args)


logger = FlowFuncLogger()


class FlowMsg:
    """A flow message inside a UDF (wraps ``_core.FlowMsg``)."""

    def __init__(self, flow_msg: Any) -> None:
        if isinstance(flow_msg, FlowMsg):
            flow_msg = flow_msg._flow_msg
        self._flow_msg = flow_msg

    def __repr__(self) -> str:
        return f"FlowMsg(type={self.get_msg_type()})"

    def get_msg_type(self) -> int:
        """The message type (MSG_TYPE_*)."""
        return int(self._flow_msg.get_msg_type())

    def set_msg_type(self, msg_type: int) -> None:
        """Set the message type."""
        self._flow_msg.set_msg_type(int(msg_type))

    def get_tensor(self) -> Optional[Tensor]:
        """The message's tensor as a dataflow Tensor (None for a non-tensor or empty message)."""
        t = self._flow_msg.get_tensor()
        return None if t is None else Tensor(self._flow_msg)

    def get_raw_data(self) -> memoryview:
        """The raw payload: a writable zero-copy memoryview valid while this message lives."""
        return self._flow_msg.get_raw_data()

    def get_ret_code(self) -> int:
        """The message's return code."""
        return int(self._flow_msg.get_ret_code())

    def set_ret_code(self, ret_code: int) -> None:
        """Set the return code."""
        self._flow_msg.set_ret_code(int(ret_code))

    def get_start_time(self) -> int:
        """The start time."""
        return int(self._flow_msg.get_start_time())

    def set_start_time(self, start_time: int) -> None:
        """Set the start time."""
        self._flow_msg.set_start_time(int(start_time))

    def get_end_time(self) -> int:
        """The end time."""
        return int(self._flow_msg.get_end_time())

    def set_end_time(self, end_time: int) -> None:
        """Set the end time."""
        self._flow_msg.set_end_time(int(end_time))

    def get_flow_flags(self) -> int:
        """The flow flags (FLOW_FLAG_*)."""
        return int(self._flow_msg.get_flow_flags())

    def set_flow_flags(self, flow_flags: int) -> None:
        """Set the flow flags."""
        self._flow_msg.set_flow_flags(int(flow_flags))

    def set_route_label(self, route_label: int) -> None:
        """Set the route label."""
        self._flow_msg.set_route_label(int(route_label))

    def get_transaction_id(self) -> int:
        """The transaction id."""
        return int(self._flow_msg.get_transaction_id())

    def set_transaction_id(self, transaction_id: int) -> None:
        """Set the transaction id."""
        self._flow_msg.set_transaction_id(int(transaction_id))


def msg_to_object(msg: Any) -> Any:
    """The Python value of a UDF message: Tensor (None if empty), a registered type, or raw memoryview."""
    raw = msg._flow_msg if isinstance(msg, FlowMsg) else msg
    t = int(raw.get_msg_type())
    if t == MSG_TYPE_TENSOR_DATA:
        return None if raw.get_tensor() is None else Tensor(raw)
    if msg_type_register.registered(t):
        return msg_type_register.get_deserialize_func(t)(raw.get_raw_data())
    return raw.get_raw_data()


class FlowMsgQueue(queue.Queue):
    """A stream function's input: a read-only ``queue.Queue`` look-alike over the UDF queue.

    ``get`` returns the message's Python value (see ``msg_to_object``); ``timeout`` is in ms.
    """

    def __init__(self, flow_msg_queue: Any) -> None:
        super().__init__()
        self._flow_msg_queue = flow_msg_queue
        self.maxsize = int(flow_msg_queue.depth())

    def task_done(self) -> None:
        """Not allowed on a UDF queue."""
        raise NotImplementedError("This method is not allowed.")

    def join(self) -> None:
        """Not allowed on a UDF queue."""
        raise NotImplementedError("This method is not allowed.")

    def qsize(self) -> int:
        """Messages waiting."""
        return int(self._flow_msg_queue.size())

    def empty(self) -> bool:
        """Whether no message waits."""
        return self.qsize() == 0

    def full(self) -> bool:
        """Whether the queue is at its depth."""
        return 0 < self.maxsize <= self.qsize()

    def put(self, item: Any, block: bool = True, timeout: Optional[float] = None) -> None:
        """Not allowed on an input queue."""
        raise NotImplementedError("This method is not allowed.")

    def put_nowait(self, item: Any) -> None:
        """Not allowed on an input queue."""
        raise NotImplementedError("This method is not allowed.")

    def get(self, block: bool = True, timeout: Optional[int] = None) -> Any:
        """The next message's value (``timeout`` in ms), as GE's: queue.Empty when none comes in time (and
        on any failure without ``block``); DfAbortException when the node is redeploying or exiting;
        DfException with the code on another failure; ValueError for a negative ``timeout``."""
        if not block:
            wait = 0
        elif timeout is None:
            wait = -1
        elif isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"'timeout' must be a non-negative number, but argument timeout is {timeout!r}")
        else:
            wait = int(timeout)
        code, msg = self._flow_msg_queue.dequeue(wait)
        if code == FLOW_FUNC_SUCCESS:
            return msg_to_object(msg)
        if not block or code == FLOW_FUNC_ERR_TIME_OUT_ERROR:
            raise queue.Empty
        if code == FLOW_FUNC_STATUS_REDEPLOYING:
            raise DfAbortException("Redeploying, schedule aborted!", code)
        if code == FLOW_FUNC_STATUS_EXIT:
            raise DfAbortException("Process exiting, schedule aborted!", code)
        raise DfException("Queue get item failed", code)

    def get_nowait(self) -> Any:
        """``get(block=False)``."""
        return self.get(block=False)


class MetaRunContext:
    """The context of one proc call: allocate messages, set outputs, user data, exceptions.

    Its argument checks raise TypeError (ValueError for a negative size), as GE's do for a bad dtype or
    output."""

    def __init__(self, run_context: Any) -> None:
        if isinstance(run_context, MetaRunContext):
            run_context = run_context._context
        self._context = run_context

    def __repr__(self) -> str:
        return "MetaRunContext()"

    def alloc_tensor_msg(self, shape: Union[List[int], Tuple[int, ...]], dtype: Any, align: int = 64) -> Optional[FlowMsg]:
        """A new tensor message (None when allocation fails); dtype: DType or numpy dtype."""
        d = dt.to_dtype(dtype)
        if not isinstance(shape, (list, tuple)):
            raise TypeError(f"Argument shape must be a list or tuple of int, but got {shape!r}")
        msg = self._context.alloc_tensor_msg([int(x) for x in shape], d.dtype, int(align))
        return None if msg is None else FlowMsg(msg)

    def alloc_raw_data_msg(self, size: int, align: int = 64) -> Optional[FlowMsg]:
        """A new raw-data message of ``size`` bytes (None on failure)."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"Argument size must be a non-negative int, but got {size!r}")
        msg = self._context.alloc_raw_data_msg(size, int(align))
        return None if msg is None else FlowMsg(msg)

    def alloc_empty_data_msg(self) -> Optional[FlowMsg]:
        """A new empty (null data) tensor message."""
        msg = self._context.alloc_empty_msg(MSG_TYPE_TENSOR_DATA)
        return None if msg is None else FlowMsg(msg)

    def to_flow_msg(self, tensor: Tensor) -> FlowMsg:
        """A message carrying ``tensor`` (no copy when it came from alloc_tensor in this UDF)."""
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Argument tensor must be Tensor, but got {type(tensor).__name__}")
        if tensor._flow_msg is not None:
            return FlowMsg(tensor._flow_msg)
        return self._array_msg(tensor._np())

    def _array_msg(self, arr: np.ndarray) -> FlowMsg:
        d = dt._np_dtype_to_dflow_dtype.get(arr.dtype)
        if d is None:  # GE: alloc_tensor_msg's TypeError for the dtype
            raise TypeError(f"The dtype of data is {arr.dtype} is invalid: it is not a dtype a tensor message holds.")
        msg = self.alloc_tensor_msg(list(arr.shape), d)
        if msg is None:
            raise DfException(f"Failed to alloc a tensor message of shape {list(arr.shape)}", FLOW_FUNC_FAILED)
        if arr.size:
            np.asarray(msg._flow_msg.get_tensor().numpy())[...] = arr
        return msg

    def _as_msg(self, output: Any, what: str) -> Any:
        if isinstance(output, FlowMsg):
            return output._flow_msg
        if isinstance(output, Tensor):
            return self.to_flow_msg(output)._flow_msg
        if isinstance(output, np.ndarray):
            return self._array_msg(output)._flow_msg
        if hasattr(_core, "FlowMsg") and isinstance(output, _core.FlowMsg):
            return output
        raise TypeError(f"{what} type {type(output)} is unsupported: it must be FlowMsg, Tensor or numpy.ndarray.")

    def set_output(self, index: int, output: Any, balance_config: Optional[BalanceConfig] = None) -> int:
        """Send ``output`` (FlowMsg, Tensor or ndarray) on output ``index``; returns a FLOW_FUNC code."""
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"Argument index must be int, but got {type(index).__name__}")
        msg = self._as_msg(output, "The output")
        if balance_config is None:
            return int(self._context.set_output(index, msg))
        if not isinstance(balance_config, BalanceConfig):
            raise TypeError("Argument balance_config must be BalanceConfig")
        return int(self._context.set_output(index, msg, balance_config.get_inner_config()))

    def set_multi_outputs(self, index: int, outputs: List[Any], balance_config: BalanceConfig) -> int:
        """Send several messages on output ``index`` with one balance config."""
        if not isinstance(outputs, (list, tuple)):
            raise TypeError("Argument outputs must be a list")
        if not isinstance(balance_config, BalanceConfig):
            raise TypeError("Argument balance_config must be BalanceConfig")
        msgs = [self._as_msg(o, f"The outputs:{i}") for i, o in enumerate(outputs)]
        return int(self._context.set_multi_outputs(index, msgs, balance_config.get_inner_config()))

    def run_flow_model(self, model_key: str, input_msgs: List[Any], timeout: int) -> Tuple[int, List[FlowMsg]]:
        """Run the model the node's process point invokes under ``model_key`` (``add_invoked_closure``) on
        ``input_msgs`` (FlowMsg, Tensor or ndarray), waiting up to ``timeout`` ms (-1: forever).

        Returns ``(FLOW_FUNC_SUCCESS, outputs)``, each output a FlowMsg ``set_output`` takes; on any failure
        ``(FLOW_FUNC_FAILED, [])``, as GE's does (the log line names the key and the cause).
        """
        if not isinstance(model_key, str):
            raise TypeError(f"Argument model_key must be str, but got {type(model_key).__name__}")
        if not isinstance(input_msgs, (list, tuple)):
            raise TypeError(f"Argument input_msgs must be a list, but got {type(input_msgs).__name__}")
        if isinstance(timeout, bool) or not isinstance(timeout, int):
            raise TypeError(f"Argument timeout must be int, but got {type(timeout).__name__}")
        msgs = [self._as_msg(m, f"The input_msgs:{i}") for i, m in enumerate(input_msgs)]
        code, outputs = self._context.run_flow_model(model_key, msgs, int(timeout))
        if code != FLOW_FUNC_SUCCESS:
            return FLOW_FUNC_FAILED, []
        return FLOW_FUNC_SUCCESS, [FlowMsg(m) for m in outputs]

    def get_user_data(self, size: int, offset: int = 0) -> bytearray:
        """The input's user data: a 64-byte buffer whose first ``size`` bytes are those at ``offset``
        (all zero on failure), as GE returns it."""
        buf = bytearray(MAX_USER_DATA_SIZE)
        code, data = self._context.get_user_data(int(size), int(offset))
        if code == FLOW_FUNC_SUCCESS and data is not None:
            data = bytes(data)[:MAX_USER_DATA_SIZE]
            buf[:len(data)] = data
        return buf

    def raise_exception(self, exception_code: int, user_context_id: int) -> None:
        """Raise a data-flow exception for transaction ``user_context_id``."""
        self._context.raise_exception(int(exception_code), int(user_context_id))

    def get_exception(self) -> tuple:
        """``(exists, exception_code, user_context_id)``."""
        return tuple(self._context.get_exception())
