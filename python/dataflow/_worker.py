"""Python UDFs in worker processes (hflow's ``Options::udf_isolation``, ``hflow.udfIsolation``).

The host side: ``recipe(py_func, udf)`` pickles what a worker needs to make the same process point
(the ``py_func`` given to ``FuncProcessPoint``, the names its functions are registered under, the
host's ``sys.path`` and main script) and ``_core.set_py_udf_recipe`` hands it to hflow with the
program to start: this interpreter, running ``main()`` here. The worker side: ``main()`` reads the
worker's flags and serves hflow's control protocol in this interpreter (``_core._serve_worker``);
``load(payload)``, called by hflow before an instance of such a function is made, unpickles the
process point and registers its functions under the host's names, so hflow finds them.

A process point defined in the host's main script is found by running that script again in the
worker under the name ``__hflow_main__`` (not ``__main__``): guard the script's own work with
``if __name__ == "__main__":``, as Python's multiprocessing asks.

Thread-safety: ``load`` runs with the GIL (hflow's slot threads take it), once per payload.
"""
from __future__ import annotations

import os
import pickle
import pickletools
import runpy
import sys
from typing import Any

from dataflow import _core

_BOOT = ("import sys; sys.path[:0] = {path!r}; from dataflow import _worker; _worker.main()")


def _launcher() -> tuple[list[str], str]:
    """The worker's command line before hflow's flags, or why there is none."""
    exe = sys.executable
    if not exe or not os.path.basename(exe).startswith("python"):
        return [], f"this program ({exe or 'unknown'}) is not a Python interpreter that can start one"
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [exe, "-u", "-c", _BOOT.format(path=[package_parent])], ""


def _main_source() -> dict:
    """How the worker finds the host's main script: its module name when run with -m, else its file."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and getattr(spec, "name", None):
        return {"module": spec.name}
    path = getattr(main, "__file__", None)
    return {"file": os.path.abspath(path)} if path else {}


def _uses_main(pickled: bytes) -> bool:
    """Whether a protocol-3 pickle takes anything from ``__main__``: a GLOBAL opcode naming it, or
    the module name itself as an argument (a ``@pyflow`` function is pickled as a lookup by name)."""
    for op, arg, _ in pickletools.genops(pickled):
        if op.name == "GLOBAL" and str(arg).split(" ", 1)[0] == "__main__":
            return True
        if isinstance(arg, str) and arg == "__main__":
            return True
    return False


def recipe(py_func: Any, names: list[str]) -> None:
    """Tells hflow how a worker makes ``py_func``'s process point, registered as ``names``."""
    launcher, error = _launcher()
    inner, hook, uses_main, main = b"", b"", False, _main_source()
    env_hook = (getattr(py_func, "_df_process_options", dict)() or {}).get("env_hook_func")
    if not error:
        try:
            inner = pickle.dumps(py_func, protocol=3)  # GLOBAL opcodes: _uses_main reads them
            uses_main = _uses_main(inner)
            if env_hook is not None:
                hook = pickle.dumps(env_hook, protocol=3)
                uses_main = uses_main or _uses_main(hook)
        except Exception as e:  # pickling may raise anything a __reduce__ does
            error = f"its process point cannot be pickled ({type(e).__name__}: {e})"
    if uses_main and not main:
        error = ("its process point lives in __main__ of a program with no script file (an interactive "
                 "session, python -c); define it in a module")
    # Two levels: the outer one holds plain values only, so the worker sets sys.path (and finds the
    # main script) before the inner one imports the process point's module. Relative entries ('' is
    # the working directory) are made absolute: the worker may start elsewhere.
    payload = pickle.dumps({"py_func": inner, "env_hook": hook, "names": list(names), "uses_main": uses_main,
                            "sys_path": [os.path.abspath(p) for p in sys.path], "main": main})
    _core.set_py_udf_recipe(list(names), launcher if not error else [], payload, error)


_main_loaded = False


def _load_main(main: dict) -> None:
    """The host's main script as ``__hflow_main__``, standing in for ``__main__`` (once): its guarded
    ``if __name__ == "__main__":`` part does not run."""
    global _main_loaded
    if _main_loaded or not main:
        return
    _main_loaded = True
    module = type(sys)("__hflow_main__")
    sys.modules["__hflow_main__"] = module
    sys.modules["__main__"] = module
    if "module" in main:
        module.__dict__.update(runpy.run_module(main["module"], run_name="__hflow_main__", alter_sys=False))
    else:
        module.__file__ = main["file"]
        module.__dict__.update(runpy.run_path(main["file"], run_name="__hflow_main__"))


def load(payload: bytes) -> None:
    """Registers the process point of ``payload`` (``recipe``'s) under the host's names."""
    from dataflow.dataflow import FuncProcessPoint
    from dataflow.flow_func import _driver

    data = pickle.loads(payload)
    for entry in reversed(data["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if data["uses_main"]:
        _load_main(data["main"])
    if data.get("env_hook"):  # before the process point's own imports, as GE runs it
        _driver.run_env_hook(pickle.loads(data["env_hook"]))
    py_func = pickle.loads(data["py_func"])
    with _driver.registering_as(data["names"]):
        FuncProcessPoint._make_py_udf(py_func)


def main() -> None:
    """A worker process: ``--control-fd=N --parent-pid=P --heartbeat-ms=H`` (hflow starts it)."""
    flags = {}
    for arg in sys.argv[1:]:
        key, _, value = arg.partition("=")
        flags[key] = value
    try:
        fd, parent = int(flags["--control-fd"]), int(flags["--parent-pid"])
        beat = int(flags.get("--heartbeat-ms", "0"))
    except (KeyError, ValueError):
        sys.stderr.write("dataflow._worker: hflow starts this itself (--control-fd=N --parent-pid=P)\n")
        sys.exit(2)
    # Process points this worker's imports make on their own (a module that builds a graph at import)
    # register under names of the worker's own, never the host's ones that load() repeats.
    from dataflow.flow_func import _driver

    _driver.set_name_prefix(f"worker{os.getpid()}:")
    sys.exit(_core._serve_worker(fd, parent, beat, load))
