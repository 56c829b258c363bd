"""The Python side of a generated UDF workspace at run time (hflow's; GE has no such module).

A workspace's C++ library (``dataflow.tools.create_func_ws``) asks ``dataflow._core``'s bridge
(include/flow_func/hflow_py_bridge.h) for a driver per node instance; the bridge makes a
``WorkspaceDriver`` and calls its ``init``, ``proc`` and ``reset`` with the GIL held, exactly as it
calls the drivers of Python UDFs (flow_func/_driver.py). The driver loads the workspace's module
from the folder the library was loaded from (the build copies ``src_python/`` there), makes the
class's object, runs its ``init_flow_func``, and calls the method named after each function with
``(run_context, inputs)``. Around each call it sets the thread's running state (device and
instance ids, the run context ``df.alloc_tensor`` uses, the node's label for log lines), as the
Python UDF driver does. Every exception is logged with its traceback, naming the node, and
becomes FLOW_FUNC_FAILED.

Modules are loaded by file: each (folder, module) once per process, under the module's own name
when that name is free in ``sys.modules`` (so pickling by name works as in GE), else under a
name made unique, so two workspaces whose modules share a name (two ``func_adder.py``) each run
their own code. Like GE, the folder is appended to ``sys.path`` so modules beside it import.

Thread-safety: module loading is serialised by a lock; a driver serves one node instance, whose
calls hflow never overlaps.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import threading
import traceback
from types import ModuleType
from typing import Any, Optional

from dataflow.flow_func import flow_func as ff
from dataflow.flow_func import _driver
from dataflow.flow_func._driver import _Enter
from dataflow.flow_func.func_wrapper import _wrap_inputs

_load_lock = threading.Lock()
_loaded: dict[str, ModuleType] = {}  # module file (real path) -> module, under _load_lock


def load_module(py_dir: str, module: str) -> ModuleType:
    """The module in ``<py_dir>/<module>.py``, loaded once per process; raises when it cannot be."""
    path = os.path.realpath(os.path.join(py_dir, module + ".py"))
    with _load_lock:
        mod = _loaded.get(path)
        if mod is not None:
            return mod
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{path} does not exist: the workspace's CMakeLists.txt copies src_python/{module}.py beside "
                f"the library it builds; check that file exists in the workspace")
        if py_dir not in sys.path:
            sys.path.append(py_dir)
        name = module
        taken = sys.modules.get(name)
        if taken is not None and os.path.realpath(getattr(taken, "__file__", "") or "") != path:
            n = 2
            while f"{module}_{n}" in sys.modules:
                n += 1
            name = f"{module}_{n}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path} as a Python module")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        _loaded[path] = mod
        return mod


class WorkspaceDriver:
    """What the bridge calls for one node instance of a workspace UDF."""

    def __init__(self, py_dir: str, module: str, clz: str, funcs: list[str]) -> None:
        self._py_dir = py_dir
        self._module = module
        self._clz = clz
        self._funcs = list(funcs)
        self._instance: Any = None
        self.device_id: Optional[int] = None
        self.instance_id: Optional[int] = None
        self.instance_num: Optional[int] = None
        self.label = f"FlowNode '?' ({module}.{clz})"

    def init(self, params: Any) -> int:
        """Load the module, make the object and run its init_flow_func; a FLOW_FUNC code."""
        try:
            self.label = f"FlowNode '{params.get_name()}' ({self._module}.{self._clz})"
        except Exception:
            pass
        self.device_id, self.instance_id, self.instance_num = _driver.running_ids(params)
        with _Enter(self, None):
            try:
                self._instance = None
                instance = self._make()
                init = getattr(instance, "init_flow_func", None)
                code = ff.FLOW_FUNC_SUCCESS if init is None else init(ff.PyMetaParams(params))
            except Exception:
                ff.logger.error("%s: init raised an exception:\n%s", self.label, traceback.format_exc())
                return ff.FLOW_FUNC_FAILED
            code = _driver.checked_code(self.label, "init_flow_func", code)
            if code == ff.FLOW_FUNC_SUCCESS:
                self._instance = instance
            return code

    def proc(self, name: str, ctx: Any, inputs: list) -> int:
        """Call the object's method ``name`` with (run context, inputs); a FLOW_FUNC code."""
        if self._instance is None:
            ff.logger.error("%s: function '%s' called before a successful init", self.label, name)
            return ff.FLOW_FUNC_FAILED
        with _Enter(self, ctx):
            return _driver.guarded_proc(
                self.label, name,
                lambda: getattr(self._instance, name)(ff.MetaRunContext(ctx), _wrap_inputs(inputs)))

    def reset(self, params: Any) -> int:
        """GE's ResetFlowFuncState: a new object, initialised again."""
        return self.init(params)

    def _make(self) -> Any:
        mod = load_module(self._py_dir, self._module)
        cls = getattr(mod, self._clz, None)
        if cls is None:
            raise AttributeError(f"{mod.__file__} has no class {self._clz!r}; the workspace's C++ side runs "
                                 f"that class (regenerate the workspace if you renamed it)")
        instance = cls()
        missing = [f for f in self._funcs if not callable(getattr(instance, f, None))]
        if missing:
            raise AttributeError(f"class {self._clz} in {mod.__file__} has no method {', '.join(missing)}; "
                                 f"each function of the workspace ({', '.join(self._funcs)}) needs one")
        return instance
