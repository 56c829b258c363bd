"""The process options of ``@pyflow`` and ``@npu_model`` nodes, with GE's meaning.

- ``resources``: what a function needs, ``{"memory": MB, "num_cpus": n, "num_npus": 1}`` (GE's keys;
  ``num_npus`` is reserved and only 1). Checked and kept on the process point (``PyUdf.resources``);
  hflow places nodes by the deploy info, so they do not move a node.
- ``env_hook_func``: a function of no arguments that prepares the Python environment (imports,
  ``sys.path``, environment variables) before the UDF is made. It runs once per process that runs
  the node: in this interpreter before the node's first instance is made, and in a Python worker
  (``hflow.udfIsolation``) before the process point itself is unpickled, so it can make the
  process point's module importable, as GE runs it before loading the pickled UDF.
- ``visible_device_enable``: GE's UDF process then sees only its own NPU (``ASCEND_RT_VISIBLE_DEVICES``)
  and ``get_running_device_id()`` gives the logical id 0. hflow does the same for the node's
  functions: ``get_running_device_id()`` is 0 inside them, and a Python worker (one per device)
  sets ``ASCEND_RT_VISIBLE_DEVICES`` to its device before the process point is made. In-process
  the variable is left alone: it is the host's, shared by every node.

Bad values raise ``DfException`` (``PARAM_INVALID``) naming the option and the function, when the
decorator runs.

Thread-safety: pure checks; ``attach`` runs where the process point is made (one thread).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from dataflow import _core
from dataflow.utils.utils import DfException

_RESOURCE_KEYS = ("memory", "num_cpus", "num_npus")


def _fail(where: str, message: str) -> DfException:
    return DfException(f"{where}: {message}", _core.PARAM_INVALID)


def check_resources(value: Any, where: str) -> dict:
    """``resources`` as a dict of GE's keys to positive ints."""
    if not isinstance(value, dict):
        raise _fail(where, f"option resources must be a dict such as {{'memory': 100, 'num_cpus': 1}}, "
                           f"got {type(value).__name__}")
    for key, num in value.items():
        if key not in _RESOURCE_KEYS:
            raise _fail(where, f"option resources has key {key!r}; the keys are {', '.join(_RESOURCE_KEYS)}")
        if isinstance(num, bool) or not isinstance(num, int) or num <= 0:
            raise _fail(where, f"option resources[{key!r}] must be a positive int, got {num!r}")
    if value.get("num_npus", 1) != 1:
        raise _fail(where, f"option resources['num_npus'] can only be 1 (GE reserves it), got {value['num_npus']}")
    return dict(value)


def check_env_hook(value: Any, where: str) -> Callable[[], Any]:
    """``env_hook_func``: a callable taking no arguments."""
    if not callable(value):
        raise _fail(where, f"option env_hook_func must be a function of no arguments, got {value!r}")
    try:
        inspect.signature(value).bind()
    except TypeError:
        raise _fail(where, f"option env_hook_func {getattr(value, '__qualname__', value)!r} must take no "
                           "arguments") from None
    except ValueError:  # a builtin without a signature: trust it
        pass
    return value


def check_visible_device(value: Any, where: str) -> bool:
    """``visible_device_enable``: a bool."""
    if not isinstance(value, bool):
        raise _fail(where, f"option visible_device_enable must be a bool, got {value!r}")
    return value


def check(options: dict, where: str) -> None:
    """Checks the process options in ``options`` (a decorator's keyword arguments)."""
    if "resources" in options:
        check_resources(options["resources"], where)
    if "env_hook_func" in options:
        check_env_hook(options["env_hook_func"], where)
    if "visible_device_enable" in options:
        check_visible_device(options["visible_device_enable"], where)


def attach(udf: Any, options: dict) -> Any:
    """Puts the process options of ``options`` on ``udf`` (a ``_driver.PyUdf``); returns it."""
    udf.resources = dict(options.get("resources") or {})
    udf.env_hook = options.get("env_hook_func")
    udf.visible_device = bool(options.get("visible_device_enable", False))
    return udf
