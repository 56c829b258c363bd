"""Host-side logging of the dataflow package, through the stdlib ``logging`` logger "dataflow".

Without logging configured, warnings and errors reach stderr through ``logging.lastResort`` (so a
refused feed says why); configure the "dataflow" logger to route or silence them. UDF lines go
to the child logger "dataflow.udf", which has a NullHandler: hflow's UDF log prints them already.

Thread-safety: ``logging`` is thread-safe.
"""
from __future__ import annotations

import logging

_logger = logging.getLogger("dataflow")


def debug(msg: str, *args: object) -> None:
    """Log a debug line."""
    _logger.debug(msg, *args)


def info(msg: str, *args: object) -> None:
    """Log an info line."""
    _logger.info(msg, *args)


def warning(msg: str, *args: object) -> None:
    """Log a warning line."""
    _logger.warning(msg, *args)


def error(msg: str, *args: object) -> None:
    """Log an error line."""
    _logger.error(msg, *args)
