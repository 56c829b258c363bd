"""Device and context control of hflow's simulated runtime (``_core.rt``), for users and tests
checking that dataflow calls leave the calling thread's context alone.

Functions return hflow status codes (0 = success); ``rt.last_error()`` says why one failed. The
runtime exists once GE is initialised, so the first call after ``df.init`` initialises GE (as the
first FlowGraph would). With no runtime yet and no ``df.init``, a call raises DfException with
NOT_INIT; the runtime outlives ``df.finalize``, so calls after it go on working.

Thread-safety: the current device/context are per thread, as in ACL.
"""
from __future__ import annotations

from dataflow import _context, _core


class _Runtime:
    """``_core.rt`` once GE is initialised: each attribute read makes sure the runtime exists."""

    def __getattr__(self, name):
        _context.ensure_runtime()
        return getattr(_core.rt, name)


_rt = _Runtime()


def last_error() -> str:
    """Why this thread's last failed rt call failed ('' when none)."""
    return _core.rt.last_error()


def set_device(device_id: int) -> int:
    """Bind this thread to ``device_id``."""
    return _rt.set_device(device_id)


def reset_device(device_id: int) -> int:
    """Release ``device_id`` for this process."""
    return _rt.reset_device(device_id)


def get_device() -> tuple[int, int]:
    """``(code, device_id)`` of this thread."""
    return _rt.get_device()


def create_context(device_id: int) -> tuple[int, int]:
    """``(code, handle)`` of a new context on ``device_id`` (it becomes current)."""
    return _rt.create_context(device_id)


def destroy_context(handle: int) -> int:
    """Destroy a context."""
    return _rt.destroy_context(handle)


def set_current_context(handle: int) -> int:
    """Make ``handle`` this thread's current context."""
    return _rt.set_current_context(handle)


def get_current_context() -> int:
    """This thread's current context handle (0 = none)."""
    return _rt.get_current_context()


def device_ids() -> list[int]:
    """The cluster's device ids."""
    fn = getattr(_rt, "device_ids", None)
    if fn is not None:
        return list(fn())
    return list(range(_rt.device_count()))


def device_count() -> int:
    """How many devices the cluster has."""
    fn = getattr(_rt, "device_count", None)
    return int(fn()) if fn is not None else len(device_ids())
