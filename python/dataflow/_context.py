"""Process-wide dataflow state: ``init`` options, the GE initialisation and the session.

``init`` only stores options; the first ``FlowGraph`` calls ``_core.ge_initialize`` and makes the
``_core.Session`` (as GE does). A ``dataflow.rt`` call before any FlowGraph initialises GE alone
(``ensure_runtime``), since the device runtime exists only from then on. ``finalize`` (also run at
exit) drops the session, calls ``ge_finalize`` and resets default names; graphs made before it can
no longer feed or fetch. Each init/finalize cycle has a generation number so such stale graphs are told apart.

Thread-safety: all state is guarded by one lock.
"""
from __future__ import annotations

import atexit
import threading
from typing import Any, Optional

from dataflow import _core
from dataflow.utils import log
from dataflow.utils.name_scope import reset_name_scope
from dataflow.utils.utils import DfException, is_str_dict

_lock = threading.RLock()
_options: Optional[dict[str, str]] = None
_session: Any = None
_ge_initialized = False
_generation = 0
_graph_id_seed = 0


def init(flow_options: dict[str, str]) -> None:
    """Store the options (GE ``ge.*`` keys) the first FlowGraph initialises GE and its session with.

    A second call while initialised logs a warning and keeps the first options.
    """
    global _options
    if not is_str_dict(flow_options):
        # GE's message and code, for programs that catch them.
        raise DfException("Argument flow_options must be typing.Dict[str, str]", _core.PARAM_INVALID)
    flow_options["ge.graphRunMode"] = "0"  # GE sets it in the caller's dict too
    opts = dict(flow_options)
    with _lock:
        if _options is not None:
            log.warning("It's already initialized. flow_options=%s", _options)
            return
        _options = opts
        log.info("Init succeeded, set flow_options=%s", opts)


def finalize() -> None:
    """Release the session and GE; dataflow needs ``init`` again afterwards."""
    global _options, _session, _ge_initialized, _generation
    with _lock:
        session, _session = _session, None
        was_init = _ge_initialized
        _ge_initialized = False
        _options = None
        _generation += 1
        del session
        if was_init:
            ret = _core.ge_finalize()
            if ret != _core.SUCCESS:
                log.error("ge_finalize failed with %d: %s", ret, _core.last_error())
    reset_name_scope()


atexit.register(finalize)


def _ensure_ge() -> None:
    """GE initialised with the ``init`` options; the caller holds ``_lock``."""
    global _ge_initialized
    if _options is None:
        raise DfException("dataflow is not initialized: call df.init first (again after df.finalize)",
                          _core.NOT_INIT)
    if not _ge_initialized:
        ret = _core.ge_initialize(dict(_options))
        if ret != _core.SUCCESS:
            raise DfException(f"Failed to initialize GE with {_options}: {_core.last_error()}", ret)
        _ge_initialized = True


def ensure_runtime() -> None:
    """A device runtime exists: the installed one, or GE's, initialised now; DfException(NOT_INIT)
    when there is neither and no ``init``."""
    with _lock:
        # A runtime outlives finalize (contexts made on it stay valid), so rt calls go on working
        # until the next init, whose options may name another cluster.
        if _options is None and _core.rt.device_ids():
            return
        _ensure_ge()


def ensure_session() -> tuple[Any, int]:
    """The session and generation, initialising GE on first use; DfException(NOT_INIT) before init."""
    global _session
    with _lock:
        if _session is None:
            _ensure_ge()
            _session = _core.Session(dict(_options))
        return _session, _generation


def session_for(generation: int) -> Any:
    """The session if ``generation`` is current; DfException(NOT_INIT) after a finalize."""
    with _lock:
        if _session is None or generation != _generation:
            raise DfException("dataflow was finalized after this FlowGraph was made: call df.init first and "
                              "make the graph again", _core.NOT_INIT)
        return _session


def next_graph_id() -> int:
    """A new graph id (process-wide)."""
    global _graph_id_seed
    with _lock:
        gid = _graph_id_seed
        _graph_id_seed += 1
        return gid
