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
import runpy
import sys
from typing import Any

from dataflow import _core

_BOOT = ("import sys; sys.path[:0] = {path!r}; from dataflow import _worker; _worker.main()")


def _launcher() -> list[str]:
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [sys.executable, "-u", "-c", _BOOT.format(path=[package_parent])]


def _main_file() -> str:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return os.path.abspath(path) if path else ""


def recipe(py_func: Any, names: list[str]) -> None:
    """Tells hflow how a worker makes ``py_func``'s process point, registered as ``names``."""
    try:
        inner = pickle.dumps(py_func)
        error = ""
    except Exception as e:  # pickling may raise anything a __reduce__ does
        inner, error = b"", f"its process point cannot be pickled ({type(e).__name__}: {e})"
    # Two levels: the outer one holds plain values only, so the worker sets sys.path (and finds the
    # main script) before the inner one imports the process point's module.
    payload = pickle.dumps({"py_func": inner, "names": list(names), "sys_path": list(sys.path),
                            "main": _main_file()})
    _core.set_py_udf_recipe(list(names), _launcher() if not error else [], payload, error)


_main_loaded = False


def _load_main(path: str) -> None:
    """The host's main script as ``__hflow_main__``, standing in for ``__main__`` (once)."""
    global _main_loaded
    if _main_loaded or not path or not os.path.exists(path):
        return
    _main_loaded = True
    module = type(sys)("__hflow_main__")
    module.__file__ = path
    sys.modules["__hflow_main__"] = module
    sys.modules["__main__"] = module
    module.__dict__.update(runpy.run_path(path, run_name="__hflow_main__"))


def load(payload: bytes) -> None:
    """Registers the process point of ``payload`` (``recipe``'s) under the host's names."""
    from dataflow.dataflow import FuncProcessPoint
    from dataflow.flow_func import _driver

    data = pickle.loads(payload)
    for entry in reversed(data["sys_path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if b"__main__" in data["py_func"]:
        _load_main(data["main"])
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
    sys.exit(_core._serve_worker(fd, parent, beat, load))
