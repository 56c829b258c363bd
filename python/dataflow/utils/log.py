"""The dataflow package's host-side log, with GE's functions: ``get_logger``, ``log``, ``debug``,
``info``, ``warning``, ``error``, ``set_log_level``, ``get_log_level`` and the levels ``DEBUG``,
``INFO``, ``WARNING``, ``ERROR``.

The log is the stdlib ``logging`` logger "DATAFLOW" (GE's name). On first use it gets one handler,
writing GE's line format to stderr, and its level from ``ASCEND_GLOBAL_LOG_LEVEL`` (``0`` debug,
``1`` info, ``2`` warning, ``3`` error, ``4`` off), else warning. Two deliberate differences from
GE, both in docs/python.md: GE writes to stdout, which mixes the log into a program's output, and
GE's default level is error, which would hide the warnings hflow gives for ignored arguments (its
C++ UDF log also defaults to warning). Records still propagate to the root logger, so
``logging``'s own configuration and pytest's ``caplog`` see them.

Python UDFs' lines go to the separate logger "dataflow.udf", which has a NullHandler: hflow's UDF
log prints them already.

Thread-safety: ``logging`` is thread-safe; the first ``get_logger`` is serialised by a lock.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any, Optional

__all__ = ["DEBUG", "INFO", "WARNING", "ERROR", "get_logger", "log", "debug", "info", "warning",
           "error", "set_log_level", "get_log_level"]

DEBUG = logging.DEBUG
INFO = logging.INFO
WARNING = logging.WARNING
ERROR = logging.ERROR

_LINE_FORMAT = ("[%(levelname)s] %(name)s(%(process)d,%(processName)s):%(asctime)s.%(msecs)03d "
                "[%(filename)s:%(lineno)d]%(thread)d %(funcName)s: %(message)s")
# ASCEND_GLOBAL_LOG_LEVEL's scale; 4 (off) is above every level the package logs at.
_ASCEND_LEVELS = {"0": DEBUG, "1": INFO, "2": WARNING, "3": ERROR, "4": logging.CRITICAL + 1}
_DEFAULT_LEVEL = WARNING

_logger: Optional[logging.Logger] = None
_lock = threading.Lock()


def get_logger() -> logging.Logger:
    """The package's logger, set up on first use (its handler and its level from the environment)."""
    global _logger
    if _logger is not None:
        return _logger
    with _lock:
        if _logger is None:
            logger = logging.getLogger("DATAFLOW")
            env = os.environ.get("ASCEND_GLOBAL_LOG_LEVEL")
            logger.setLevel(_ASCEND_LEVELS.get((env or "").strip(), _DEFAULT_LEVEL))
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter(_LINE_FORMAT, datefmt="%Y-%m-%d %H:%M:%S"))
            logger.addHandler(handler)
            _logger = logger
    return _logger


# stacklevel=2: the line format names the caller of debug()/info()/..., not this module.
def log(level: int, msg: str, *args: Any, **kwargs: Any) -> None:
    """Log ``msg % args`` at ``level`` (a ``logging`` level such as ``INFO``)."""
    kwargs.setdefault("stacklevel", 2)
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg: str, *args: Any, **kwargs: Any) -> None:
    """Log a debug line."""
    kwargs.setdefault("stacklevel", 2)
    get_logger().debug(msg, *args, **kwargs)


def info(msg: str, *args: Any, **kwargs: Any) -> None:
    """Log an info line."""
    kwargs.setdefault("stacklevel", 2)
    get_logger().info(msg, *args, **kwargs)


def warning(msg: str, *args: Any, **kwargs: Any) -> None:
    """Log a warning line."""
    kwargs.setdefault("stacklevel", 2)
    get_logger().warning(msg, *args, **kwargs)


def error(msg: str, *args: Any, **kwargs: Any) -> None:
    """Log an error line."""
    kwargs.setdefault("stacklevel", 2)
    get_logger().error(msg, *args, **kwargs)


def set_log_level(log_level: int) -> None:
    """Sets the package log's level (``DEBUG``, ``INFO``, ``WARNING``, ``ERROR`` or any ``logging``
    level or level name)."""
    get_logger().setLevel(log_level)


def get_log_level() -> int:
    """The package log's effective level."""
    return get_logger().getEffectiveLevel()
