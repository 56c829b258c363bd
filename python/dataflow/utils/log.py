"""Host-side logging of the dataflow package, through the stdlib ``logging`` logger "dataflow".

The logger has a NullHandler so nothing is printed unless the application configures logging
(errors still reach stderr through ``logging.lastResort`` only when no handler exists anywhere;
the NullHandler suppresses that, so configure logging to see them).

Thread-safety: ``logging`` is thread-safe.
"""
from __future__ import annotations

import logging

_logger = logging.getLogger("dataflow")
_logger.addHandler(logging.NullHandler())


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
