"""Registration of Python UDFs with ``_core`` and the driver objects hflow calls.

A Python process point (a ``proc_wrapper`` class or a ``@pyflow`` function/class) becomes a set of
functions, each registered under a process-unique name ``"<qualname>.<function>#<n>"`` with
``_core.register_py_udf``. For each node instance hflow calls the factory (GIL held) and then the
driver's ``init``/``proc``/``reset``. The driver sets this thread's running state (device/instance
ids, the run context for ``alloc_tensor``, the node label for logs) around each call, logs any
escaping exception with its traceback naming the node and function, and returns FLOW_FUNC_FAILED
for it.

Thread-safety: the name counter is locked; a driver serves one node instance.
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from dataflow import _core
from dataflow.flow_func import flow_func as ff
from dataflow.utils.utils import DfAbortException, DfException, _running_state

_counter = itertools.count()
_counter_lock = threading.Lock()
_forced_names: Optional[list[str]] = None  # registering_as's, under _counter_lock
_name_prefix = ""  # set_name_prefix's, under _counter_lock


def set_name_prefix(prefix: str) -> None:
    """Names registered from now on (not forced) start with ``prefix`` (a worker process's own)."""
    global _name_prefix
    with _counter_lock:
        _name_prefix = prefix


@contextlib.contextmanager
def registering_as(names: list[str]) -> Iterator[None]:
    """The next PyUdf made registers its functions as ``names`` (a worker process repeating the
    host's registration), not under new numbered names."""
    global _forced_names
    with _counter_lock:
        _forced_names = list(names)
    try:
        yield
    finally:
        with _counter_lock:
            _forced_names = None


@dataclass
class FuncDef:
    """One function of a Python process point."""

    method: str  # the user-visible function name
    inputs: list[int]
    outputs: list[int]
    stream: bool
    call: Callable[[Any, Any, list], int]  # (instance, raw run context, raw inputs) -> code
    registered: str = ""


def parse_mapping(mapping: str, where: str) -> tuple[list[int], list[int], bool]:
    """Parse "i0,i1,o0[,stream_input]" into (inputs, outputs, stream); DfException(PARAM_INVALID) naming
    ``where``."""
    if not isinstance(mapping, str):
        raise DfException(f"{where}: argument func_list of proc_wrapper must be a str such as 'i0,o0', but got "
                          f"{mapping!r}")
    inputs: list[int] = []
    outputs: list[int] = []
    stream = False
    for raw in mapping.split(","):
        tok = raw.strip()
        if not tok:
            continue
        if tok == "stream_input":
            stream = True
            continue
        kind, num = tok[0], tok[1:]
        if kind not in "io" or not num.isdigit():
            raise DfException(f"{where}: bad item {tok!r} in mapping {mapping!r} (argument func_list of "
                              "proc_wrapper): write iN, oN or stream_input")
        (inputs if kind == "i" else outputs).append(int(num))
    for lst, what in ((inputs, "input"), (outputs, "output")):
        if len(set(lst)) != len(lst):
            raise DfException(f"{where}: mapping {mapping!r} (argument func_list of proc_wrapper) names an "
                              f"{what} twice")
    return inputs, outputs, stream


class _Enter:
    """Sets the thread's running state for one driver call and restores it after."""

    def __init__(self, driver: "Driver", ctx: Any) -> None:
        self._d = driver
        self._ctx = ctx

    def __enter__(self) -> None:
        s = _running_state()
        self._saved = (s.device_id, s.instance_id, s.instance_num, s.in_udf, s.run_context, s.label)
        s.device_id, s.instance_id, s.instance_num = self._d.device_id, self._d.instance_id, self._d.instance_num
        s.in_udf, s.run_context, s.label = True, self._ctx, self._d.label

    def __exit__(self, *exc: object) -> None:
        s = _running_state()
        (s.device_id, s.instance_id, s.instance_num, s.in_udf, s.run_context, s.label) = self._saved


_hooks_run: set = set()  # env hooks this process ran, under _hooks_lock
_hooks_lock = threading.Lock()


def run_env_hook(hook: Callable[[], Any]) -> None:
    """Runs a node's ``env_hook_func`` unless this process ran it already (a worker runs it before
    unpickling the process point, then again here would be twice). Raises what the hook raises."""
    with _hooks_lock:  # held while it runs: a second instance waits for the first's hook
        if hook not in _hooks_run:
            hook()
            _hooks_run.add(hook)  # a hook that raised runs again for the next instance


def in_worker() -> bool:
    """Whether this interpreter is a Python worker (``hflow.udfIsolation``), not the host."""
    with _counter_lock:
        return bool(_name_prefix)


def running_ids(params: Any) -> tuple:
    """(device id, instance id, instance count) of the instance ``params`` (a ``_core`` MetaParams)
    belongs to; None for any the params cannot say."""
    ids = []
    for getter in ("get_running_device_id", "get_running_instance_id", "get_running_instance_num"):
        try:
            ids.append(int(getattr(params, getter)()))
        except Exception:
            ids.append(None)
    return tuple(ids)


def checked_code(label: str, what: str, code: Any) -> int:
    """``code`` if it is an int FLOW_FUNC code; else FLOW_FUNC_FAILED, logged naming ``label``."""
    if isinstance(code, bool) or not isinstance(code, int):
        ff.logger.error("%s %s returned %r, not an int FLOW_FUNC code", label, what, code)
        return ff.FLOW_FUNC_FAILED
    return code


def guarded_proc(label: str, function: str, call: Callable[[], Any]) -> int:
    """Runs one proc call of a UDF's ``function``: its code, checked; SUCCESS when it aborts
    (DfAbortException, logged); FAILED, with the traceback logged, when it raises."""
    try:
        code = call()
    except DfAbortException as e:
        ff.logger.warn("%s function '%s': proc is aborted, %s", label, function, e)
        return ff.FLOW_FUNC_SUCCESS
    except Exception:
        ff.logger.error("%s function '%s' raised an exception:\n%s", label, function, traceback.format_exc())
        return ff.FLOW_FUNC_FAILED
    return checked_code(label, f"function '{function}'", code)


class Driver:
    """What ``_core`` calls for one node instance of a Python process point."""

    def __init__(self, owner: "PyUdf") -> None:
        self._owner = owner
        self._instance: Any = None
        self.device_id: Optional[int] = None
        self.instance_id: Optional[int] = None
        self.instance_num: Optional[int] = None
        self.label = owner.label()

    def init(self, params: Any) -> int:
        """Make the user object and run its init; 0 on success."""
        self.device_id, self.instance_id, self.instance_num = running_ids(params)
        if self._owner.visible_device and self.device_id is not None:
            if in_worker():  # a worker serves one device; the host's environment is every node's
                os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(self.device_id)
            self.device_id = 0  # the one device the node sees, as GE's logical id
        with _Enter(self, None):
            try:
                if self._owner.env_hook is not None:
                    run_env_hook(self._owner.env_hook)
                self._instance = self._owner.make_instance()
                code = self._owner.init_instance(self._instance, params)
            except Exception:
                ff.logger.error("%s: init raised an exception:\n%s", self.label, traceback.format_exc())
                return ff.FLOW_FUNC_FAILED
            return checked_code(self.label, "init", code)

    def proc(self, name: str, ctx: Any, inputs: list) -> int:
        """Run function ``name`` (a registered name) on ``inputs``; returns a FLOW_FUNC code."""
        fd = self._owner.by_registered.get(name)
        if fd is None:
            ff.logger.error("%s: no function registered as %r", self.label, name)
            return ff.FLOW_FUNC_ERR_PARAM_INVALID
        with _Enter(self, ctx):
            return guarded_proc(self.label, fd.method, lambda: fd.call(self._instance, ctx, inputs))

    def reset(self, params: Any) -> int:
        """ResetGraph: ask hflow to recreate the instance."""
        return ff.FLOW_FUNC_ERR_NOT_SUPPORT



class PyUdf:
    """A registered Python process point: its functions and how to make and init its object."""

    def __init__(self, qualname: str, funcs: list[FuncDef], make_instance: Callable[[], Any],
                 init_instance: Callable[[Any, Any], Any]) -> None:
        self.qualname = qualname
        self.funcs = funcs
        self.make_instance = make_instance
        self.init_instance = init_instance
        self.node_names: list[str] = []
        # Process options (dataflow/_node_options.py): recorded, run once per process, logical id 0.
        self.resources: dict = {}
        self.env_hook: Optional[Callable[[], Any]] = None
        self.visible_device = False
        global _forced_names
        with _counter_lock:
            n = next(_counter)
            forced, _forced_names = _forced_names, None
            prefix = _name_prefix
        if forced is not None and len(forced) != len(funcs):
            raise ValueError(f"{qualname}: {len(funcs)} functions here, {len(forced)} in the host program")
        for i, fd in enumerate(funcs):
            fd.registered = forced[i] if forced is not None else f"{prefix}{qualname}.{fd.method}#{n}"
        self.by_registered = {fd.registered: fd for fd in funcs}
        _core.register_py_udf([fd.registered for fd in funcs], [fd.stream for fd in funcs], lambda: Driver(self))

    def label(self) -> str:
        """"FlowNode 'name'" of the node(s) running this process point."""
        names = ",".join(self.node_names) or "?"
        return f"FlowNode '{names}' ({self.qualname})"

    def check_node(self, node_name: str, input_num: int, output_num: int) -> None:
        """DfException(PARAM_INVALID) when a function's mapping does not fit the node's inputs/outputs."""
        for fd in self.funcs:
            for idx in fd.inputs:
                if idx >= input_num:
                    raise DfException(f"{self.qualname}.{fd.method}: its mapping names input {idx}, but FlowNode "
                                     f"'{node_name}' has {input_num} input(s)")
            for idx in fd.outputs:
                if idx >= output_num:
                    raise DfException(f"{self.qualname}.{fd.method}: its mapping names output {idx}, but FlowNode "
                                     f"'{node_name}' has {output_num} output(s)")
        self.node_names.append(node_name)

    def func_list(self) -> list[dict]:
        """The graph-file ``func_list``."""
        return [{"func_name": fd.registered, "inputs_index": fd.inputs, "outputs_index": fd.outputs,
                 "stream_input": fd.stream} for fd in self.funcs]


def from_class(cls: type, mappings: dict[str, str]) -> PyUdf:
    """A PyUdf for a class with ``proc_wrapper`` methods (``mappings``: method -> mapping)."""
    funcs = []
    for method, mapping in mappings.items():
        if not callable(getattr(cls, method, None)):
            raise DfException(f"Argument py_func: {cls.__qualname__} has no method {method!r} named by proc_wrapper")
        ins, outs, stream = parse_mapping(mapping, f"{cls.__qualname__}.{method}")

        def call(inst: Any, ctx: Any, inputs: list, _m: str = method) -> int:
            return getattr(inst, _m)(ctx, inputs)

        funcs.append(FuncDef(method, ins, outs, stream, call))

    def init_instance(inst: Any, params: Any) -> Any:
        init = getattr(inst, "init_flow_func", None)
        if init is None:
            return ff.FLOW_FUNC_SUCCESS
        code = init(params)
        if code is None:
            ff.logger.error("%s.init_flow_func returned None, not an int FLOW_FUNC code", cls.__qualname__)
            return ff.FLOW_FUNC_FAILED
        return code

    return PyUdf(cls.__qualname__, funcs, cls, init_instance)
