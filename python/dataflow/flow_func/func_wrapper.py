"""``init_wrapper`` and ``proc_wrapper``: decorators turning a class's methods into UDF functions.

``proc_wrapper("i0,i1,o0")`` names the node inputs the method reads and outputs it writes (append
",stream_input" for a stream function, which receives FlowMsgQueue objects). The decorated method
is called as ``method(self, run_context: MetaRunContext, inputs: list[FlowMsg])`` and returns a
FLOW_FUNC code. An exception escaping it is logged with its traceback, naming the node and the
function, and becomes FLOW_FUNC_FAILED (a DfAbortException becomes success, as in GE).

Thread-safety: the decorators only record metadata (under FlowFuncRegister's lock).
"""
from __future__ import annotations

import functools
import inspect
import traceback
from typing import Any, Callable, Optional

from dataflow import _core
from dataflow.flow_func import flow_func as ff
from dataflow.flow_func.func_register import FlowFuncRegister
from dataflow.utils.utils import DfAbortException, DfException, _running_state


def _where(func_name: str) -> str:
    label = _running_state().label
    return f"{label} function '{func_name}'" if label else f"function '{func_name}'"


def _wrap_inputs(inputs: Any) -> list:
    out = []
    for m in inputs:
        if isinstance(m, (ff.FlowMsg, ff.FlowMsgQueue)):
            out.append(m)
        elif hasattr(_core, "FlowMsgQueue") and isinstance(m, _core.FlowMsgQueue):
            out.append(ff.FlowMsgQueue(m))
        else:
            out.append(ff.FlowMsg(m))
    return out


def proc_wrapper(func_list: Optional[str] = None) -> Callable[[Callable], Callable]:
    """Make a method a proc function; ``func_list`` is its mapping string, e.g. "i0,i1,o0"."""
    if func_list is not None and not isinstance(func_list, str):
        raise DfException(f"Argument func_list must be a str such as 'i0,o0', but got {func_list!r}")

    def wrapper(func: Callable) -> Callable:
        if func_list is not None:
            module = inspect.getmodule(func)
            module_name = module.__name__ if module is not None else func.__module__
            clz_name = func.__qualname__.rsplit(".", 1)[0] if "." in func.__qualname__ else func.__qualname__
            FlowFuncRegister.register_flow_func(module_name, clz_name, func.__name__, func_list)

        @functools.wraps(func)
        def proc_func(self: Any, run_context: Any, input_flow_msgs: Any) -> int:
            try:
                return func(self, ff.MetaRunContext(run_context), _wrap_inputs(input_flow_msgs))
            except DfAbortException as e:
                ff.logger.warn("%s: proc is aborted, %s", _where(func.__name__), e)
                return ff.FLOW_FUNC_SUCCESS
            except Exception:
                ff.logger.error("%s raised an exception:\n%s", _where(func.__name__), traceback.format_exc())
                return ff.FLOW_FUNC_FAILED

        proc_func.__df_proc_mapping__ = func_list  # type: ignore[attr-defined]
        return proc_func

    return wrapper


def init_wrapper() -> Callable[[Callable], Callable]:
    """Make ``init_flow_func(self, meta_params: PyMetaParams) -> int`` the class's init."""

    def wrapper(func: Callable) -> Callable:
        @functools.wraps(func)
        def proc_init(self: Any, meta_params: Any) -> int:
            try:
                params = meta_params if isinstance(meta_params, ff.PyMetaParams) else ff.PyMetaParams(meta_params)
                return func(self, params)
            except Exception:
                ff.logger.error("%s raised an exception:\n%s", _where(func.__name__), traceback.format_exc())
                return ff.FLOW_FUNC_FAILED

        return proc_init

    return wrapper
