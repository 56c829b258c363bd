"""Default names of graph objects, as GE makes them: "FlowData", "FlowData_1", "FlowData_2", ...

A name is counted per (namespace, base name): FlowNode names live in namespace "FlowNode", the
rest in the default namespace. ``reset_name_scope`` (called by ``finalize``) starts counting again.

Thread-safety: counters are per thread, as in GE.
"""
from __future__ import annotations

import threading
from typing import Optional


class _Counters(threading.local):
    def __init__(self) -> None:
        self.used: dict[tuple[Optional[str], str], int] = {}


_counters = _Counters()


class _Scope:
    def __init__(self, name: str, namespace: Optional[str], auto_name: bool) -> None:
        self._name = name
        self._namespace = namespace
        self._auto_name = auto_name

    def __enter__(self) -> str:
        key = (self._namespace, self._name)
        n = _counters.used.get(key, 0)
        if n > 0 and not self._auto_name:
            raise ValueError(f"name:{self._name} is already used, please modify.")
        _counters.used[key] = n + 1
        if n == 0:
            return self._name
        unique = f"{self._name}_{n}"
        # Count the generated name too, so an explicit later use of it is seen as taken.
        _counters.used[(self._namespace, unique)] = max(1, _counters.used.get((self._namespace, unique), 0))
        return unique

    def __exit__(self, *exc: object) -> None:
        return None


def name_scope(
    name: Optional[str], default_name: Optional[str] = None, namespace: Optional[str] = None, auto_name: bool = True
) -> _Scope:
    """A context manager whose ``__enter__`` returns a unique name (``name`` or ``default_name``)."""
    chosen = default_name if name is None else name
    if not isinstance(chosen, str):
        raise TypeError(f"name must be a string, but got {type(chosen).__name__}: {chosen!r}")
    if not chosen:
        raise ValueError("name must not be empty")
    if ":" in chosen:
        raise ValueError(f"name {chosen!r} must not contain ':'")
    if namespace is not None and not isinstance(namespace, str):
        raise TypeError("namespace for name_scope must be a string.")
    return _Scope(chosen, namespace, auto_name)


def reset_name_scope() -> None:
    """Forget every name used on this thread."""
    _counters.used = {}
