"""``FlowGraph``: the graph of FlowData and FlowNodes up to the chosen outputs, its feeds and fetches.

Outputs are grouped per node as GE does (``_extract_output_nodes``/``_map_outputs_index``): the
graph's outputs are each output node (in first-use order) with its output indexes sorted, and
fetch index i maps to the position of the user's i-th output. Inputs are the FlowData reached from
the outputs, sorted by name. The graph file is made and added to the session on the first feed or
fetch; hflow builds it then.

``set_contains_n_mapping_node`` is accepted and has no effect (hflow needs no hint).

Thread-safety: feeds and fetches may run on different threads (``_core`` releases the GIL while
blocked); adding the graph is locked.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from dataflow import _context, _core
from dataflow import _graph_json
from dataflow import data_type as dt
from dataflow.dataflow import FlowData, FlowFlag, FlowNode, FlowOutput
from dataflow.tensor import FlowInfo, Tensor
from dataflow.utils import log
from dataflow.utils.msg_type_register import msg_type_register
from dataflow.utils.name_scope import name_scope
from dataflow.utils.utils import DfException, check_str_dict, check_type

# Note [Python feed/fetch overhead]: at 64 B a round trip costs hflow itself a few microseconds,
# so the Python around it decides the ratio to C++ (the py_feed_fetch_round_trip_64B bench row).
# The common case therefore skips what it does not need: a plain C-contiguous ndarray is fed
# without becoming a Tensor, a feed without FlowInfo sends a shared default tuple, and fetched
# tensors and infos are made without re-checking what _core already checked. Any other input
# takes the full path, with all of its checks and messages.
_NO_INFO = (0, 0, 0, 0, b"", 0)  # FlowInfo()._to_tuple()
_FEED_DICT_TEXT = str(Dict[FlowData, Any])  # GE's wording of the type, made once (not per feed)


class FlowGraph:
    """``FlowGraph(outputs, graph_options=None, name=None)``: a DataFlow graph ending in ``outputs``."""

    def __init__(self, outputs: List[FlowOutput], graph_options: Optional[Dict[str, str]] = None,
                 name: Optional[str] = None, graphpp_builder_async: bool = False) -> None:
        if isinstance(outputs, FlowOutput):
            outputs = [outputs]
        if not isinstance(outputs, (list, tuple)) or not outputs or not all(isinstance(o, FlowOutput) for o in outputs):
            raise DfException(f"Argument outputs must be {List[FlowOutput]} (not empty), but got {outputs!r}")
        self._outputs = list(outputs)
        self._graph_options = check_str_dict("graph_options", graph_options)
        with name_scope(name, "FlowGraph") as unique:
            self.name = unique
        self._graphpp_builder_async = graphpp_builder_async
        self._exception_catch = False
        self._inputs_align: Optional[dict] = None
        self._added = False
        self._built = False  # fed once (hflow builds on the first feed) or built for a fetch
        self._add_lock = threading.Lock()
        self._extract_output_nodes()
        self._extract_input_datas()
        _graph_json.collect_nodes(self._outputs)  # dangling inputs / cycles fail here, as early as GE
        _, self._generation = _context.ensure_session()
        self._graph_id = _context.next_graph_id()

    # -- structure ---------------------------------------------------------------------------------

    def _extract_output_nodes(self) -> None:
        groups: dict[str, tuple[FlowNode, list[int]]] = {}
        for out in self._outputs:
            groups.setdefault(out.node.name, (out.node, []))[1].append(out.index)
        base: dict[str, int] = {}
        seq = 0
        for node_name, (_, idxs) in groups.items():  # dicts keep first-use order
            idxs.sort()
            base[node_name] = seq
            seq += len(idxs)
        remaining = {k: list(v[1]) for k, v in groups.items()}
        self._output_idx_mapping: list[int] = []
        for out in self._outputs:
            idxs = remaining[out.node.name]
            pos = idxs.index(out.index)
            idxs[pos] = -1  # the same output listed twice maps to two positions
            self._output_idx_mapping.append(base[out.node.name] + pos)
        self._out_nodes = list(groups.values())

    def _extract_input_datas(self) -> None:
        found: dict[int, FlowData] = {}
        seen: set[int] = set()
        stack = [o.node for o in self._outputs]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            for anchor in node._input_anchors:
                if isinstance(anchor, FlowData):
                    found[id(anchor)] = anchor
                elif isinstance(anchor, FlowOutput):
                    stack.append(anchor.node)
        self._input_datas = sorted(found.values(), key=lambda d: d.name)

    def _graph_json(self) -> str:
        return _graph_json.graph_json_text(self.name, self._input_datas, self._out_nodes, self._outputs,
                                           self._exception_catch, self._inputs_align)

    # -- settings before the first feed ------------------------------------------------------------

    def _check_not_added(self, what: str) -> None:
        if self._added:
            raise DfException(f"can not call {what} after feed data")

    def set_contains_n_mapping_node(self, contains_n_mapping_node: bool) -> None:
        """Accepted for GE compatibility; hflow needs no such hint, so it has no effect."""
        self._check_not_added("set_contains_n_mapping_node")
        check_type("contains_n_mapping_node", contains_n_mapping_node, bool)

    def set_inputs_align_attrs(self, align_max_cache_num: int, align_timeout: int,
                               dropout_when_not_align: bool = False) -> None:
        """Align the inputs of one transaction: cache up to ``align_max_cache_num``, wait ``align_timeout``
        ms (-1 forever), drop unaligned data when ``dropout_when_not_align``."""
        self._check_not_added("set_inputs_align_attrs")
        check_type("align_max_cache_num", align_max_cache_num, int)
        check_type("align_timeout", align_timeout, int)
        check_type("dropout_when_not_align", dropout_when_not_align, bool)
        if align_max_cache_num < 0 or align_max_cache_num > 1024:
            raise DfException(f"align_max_cache_num={align_max_cache_num} is out of range [0, 1024]")
        if align_timeout < -1 or align_timeout == 0 or align_timeout > 600 * 1000:
            raise DfException(f"align_timeout={align_timeout} must be -1 or in range(0, 600 * 1000]")
        self._inputs_align = {"max_cache_num": align_max_cache_num, "timeout_ms": align_timeout,
                              "dropout": dropout_when_not_align}

    def set_exception_catch(self, enable_exception_catch: bool = False) -> None:
        """With it, a UDF's raise_exception makes that transaction's fetch return USER_RAISE_EXCEPTION."""
        self._check_not_added("set_exception_catch")
        check_type("enable_exception_catch", enable_exception_catch, bool)
        self._exception_catch = enable_exception_catch

    # -- session -------------------------------------------------------------------------------------

    def _session(self) -> tuple[Any, int]:
        """The session with this graph added: (session, 0), or (session, code) when adding failed
        (a fetch returns the code; ``_core.last_error()`` says why; a feed raises it, see ``_feed_session``)."""
        session = _context.session_for(self._generation)
        if self._added:
            return session, _core.SUCCESS
        with self._add_lock:
            if not self._added:
                ret = session.add_graph(self._graph_id, self._graph_json(), f"FlowGraph '{self.name}'",
                                        dict(self._graph_options))
                if ret != _core.SUCCESS:
                    log.error("Failed to add FlowGraph %s: %d %s", self.name, ret, _core.last_error())
                    return session, int(ret)
                self._added = True
                log.info("FlowGraph %s (id %d) added with options %s", self.name, self._graph_id,
                         self._graph_options)
        return session, _core.SUCCESS

    def _feed_session(self) -> Any:
        """The session with this graph added, for a feed: DfException(code) when adding fails, as GE's
        feed_data/feed raise it (GE adds the graph on the first feed)."""
        session, code = self._session()
        if code != _core.SUCCESS:
            raise DfException(f"Failed to add FlowGraph {self.name}: {_core.last_error()}", code)
        return session

    def _session_for_fetch(self) -> tuple[Any, int]:
        """As ``_session``, and built: a fetch before any feed builds the graph (GE would fail it as
        not built; building lets it wait for data and time out as usual)."""
        session, code = self._session()
        if code != _core.SUCCESS or self._built:
            return session, code
        code = int(session.build_graph(self._graph_id))
        if code != _core.SUCCESS:
            log.error("Failed to build FlowGraph %s: %d %s", self.name, code, _core.last_error())
            return session, code
        self._built = True
        return session, code

    def _fed(self, code: int) -> int:
        if code == _core.SUCCESS:
            self._built = True
        return int(code)

    @staticmethod
    def _check_timeout(timeout: Any) -> int:
        check_type("timeout", timeout, int, "<class 'int'> (ms, -1 = forever)")
        return timeout

    def _select_inputs(self, feed_dict: Any, partial_inputs: bool) -> Tuple[int, list[tuple[int, FlowData]]]:
        check_type("feed_dict", feed_dict, dict, _FEED_DICT_TEXT)
        check_type("partial_inputs", partial_inputs, bool)
        for key in feed_dict:
            if not isinstance(key, FlowData):
                raise DfException(f"Argument feed_dict must be {_FEED_DICT_TEXT}, but its keys include "
                                  f"{type(key).__name__}: {key!r}: feed_dict keys must be FlowData")
            if key not in self._input_datas:
                log.warning("FlowData %s is not an input of FlowGraph %s; ignored", key.name, self.name)
        chosen = []
        for i, data in enumerate(self._input_datas):
            if data in feed_dict:
                chosen.append((i, data))
            elif not partial_inputs:
                log.error("Missing input %s in feed_dict %s", data.name, [k.name for k in feed_dict])
                return _core.PARAM_INVALID, []
        if not chosen:
            log.error("no inputs %s found in feed_dict %s", [d.name for d in self._input_datas],
                      [k.name for k in feed_dict])
            return _core.PARAM_INVALID, []
        return _core.SUCCESS, chosen

    def _map_indexes(self, indexes: Any) -> Optional[list[int]]:
        if indexes is None:
            return list(self._output_idx_mapping)
        if not isinstance(indexes, (list, tuple)) or any(isinstance(i, bool) or not isinstance(i, int) for i in indexes):
            raise DfException(f"Argument indexes must be {List[int]}, but got {indexes!r}")
        n = len(self._output_idx_mapping)
        if any(i < 0 or i >= n for i in indexes):
            log.error("The value of indexes %s should in [0, %d).", list(indexes), n)
            return None
        return [self._output_idx_mapping[i] for i in indexes]

    # -- tensors -------------------------------------------------------------------------------------

    @staticmethod
    def _to_tensor(data: FlowData, value: Any) -> Tensor:
        if isinstance(value, Tensor):
            if data._schema is not None and value._desc != data._schema:
                return Tensor(value, tensor_desc=data._schema)
            return value
        return Tensor(value, tensor_desc=data._schema)

    @staticmethod
    def _tensor_payload(t: Tensor, name: str) -> tuple[int, np.ndarray]:
        if t._desc.dtype == dt.DT_STRING:
            raise DfException(f"FlowData {name}: DT_STRING tensors cannot be fed to hflow", _core.PARAM_INVALID)
        arr = t.numpy()
        if not arr.flags.c_contiguous:
            arr = np.ascontiguousarray(arr).reshape(arr.shape)  # ascontiguousarray makes 0-d arrays 1-d
        return (t._desc.dtype.dtype, arr)

    def feed_data(self, feed_dict: Dict[FlowData, Any], flow_info: Optional[FlowInfo] = None, timeout: int = -1,
                  partial_inputs: bool = False) -> int:
        """Feed one transaction of tensors; returns a GE status code (0 = success).

        An empty ``feed_dict`` with the EOS flag in ``flow_info`` feeds end-of-stream. As GE's: a
        ``flow_info`` that is not a FlowInfo returns PARAM_INVALID, and a graph that cannot be added
        (bad graph options) raises DfException with the code."""
        if flow_info is not None and not isinstance(flow_info, FlowInfo):
            log.error("Argument flow_info must be %s, but got %s", FlowInfo, type(flow_info).__name__)
            return _core.PARAM_INVALID
        timeout = self._check_timeout(timeout)
        info = _NO_INFO if flow_info is None else flow_info._to_tuple()
        if (feed_dict is None or isinstance(feed_dict, dict)) and not feed_dict:
            if not info[2] & FlowFlag.DATA_FLOW_FLAG_EOS:
                log.error("feed_dict is empty but flow_flags=%d has no EOS flag", info[2])
                return _core.PARAM_INVALID
            session = self._feed_session()
            return self._fed(session.feed_tensors(self._graph_id, [], [], info, timeout))
        code, chosen = self._select_inputs(feed_dict, partial_inputs)
        if code != _core.SUCCESS:
            return code
        indexes, tensors = [], []
        for i, data in chosen:
            value = feed_dict[data]
            # Fast path (Note [Python feed/fetch overhead]): a C-contiguous numpy array of a
            # supported dtype for an input without a schema goes as it is, no Tensor made.
            if data._schema is None and type(value) is np.ndarray and value.flags.c_contiguous:
                d = dt._np_dtype_to_dflow_dtype.get(value.dtype)
                if d is not None:
                    tensors.append((d.dtype, value))
                    indexes.append(i)
                    continue
            try:
                tensors.append(self._tensor_payload(self._to_tensor(data, value), data.name))
            except DfException as e:
                log.error("feed_data of FlowGraph %s refused: %s", self.name, e.message)
                return e.error_code
            indexes.append(i)
        session = self._feed_session()
        return self._fed(session.feed_tensors(self._graph_id, indexes, tensors, info, timeout))

    def fetch_data(self, indexes: Optional[List[int]] = None, timeout: int = -1) -> Tuple[List[Tensor], FlowInfo, int]:
        """Fetch one transaction of tensors: ``(tensors, flow_info, code)``."""
        timeout = self._check_timeout(timeout)
        mapped = self._map_indexes(indexes)
        if mapped is None:
            return [], FlowInfo(), _core.PARAM_INVALID
        session, code = self._session_for_fetch()
        if code != _core.SUCCESS:
            return [], FlowInfo(), code
        code, tensors, info = session.fetch_tensors(self._graph_id, mapped, timeout)
        flow_info = FlowInfo._from_tuple(info)
        if code != _core.SUCCESS and code != _core.SUBHEALTHY:
            log.error("failed to fetch data from %s: %d %s", self.name, code, _core.last_error())
            return [], flow_info, int(code)
        return [Tensor._fetched(arr, dt.from_code(c)) for c, arr in tensors], flow_info, int(code)

    # -- Python objects ------------------------------------------------------------------------------

    def _to_message(self, data: FlowData, value: Any) -> tuple:
        info = FlowInfo()._to_tuple()
        if value is None:
            return (_core.MSG_TYPE_TENSOR_DATA, None, info)
        if isinstance(value, Tensor):  # feed checks its desc against the schema
            return (_core.MSG_TYPE_TENSOR_DATA, self._tensor_payload(value, data.name), info)
        msg_type = msg_type_register.get_msg_type(type(value))
        if msg_type is None:
            msg_type = _core.MSG_TYPE_PICKLED_MSG
        try:
            payload = msg_type_register.get_serialize_func(msg_type)(value)
        except Exception as e:
            raise DfException(f"FlowData {data.name}: cannot serialize {type(value).__name__} as msg type "
                              f"{msg_type}: {e}", _core.PARAM_INVALID) from e
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise DfException(f"FlowData {data.name}: the serializer of msg type {msg_type} returned "
                              f"{type(payload).__name__}, not bytes", _core.PARAM_INVALID)
        return (int(msg_type), payload, info)

    def feed(self, feed_dict: Dict[FlowData, Any], timeout: int = -1, partial_inputs: bool = False) -> int:
        """Feed Python objects: Tensor -> tensor message, None -> empty message, a registered class ->
        its msg type, anything else pickled (msg type 65535). A Tensor that cannot go (a desc unlike its
        FlowData's schema, DT_STRING) returns PARAM_INVALID, as GE's does; an object that cannot be
        serialized raises DfException (nothing is fed then)."""
        timeout = self._check_timeout(timeout)
        code, chosen = self._select_inputs(feed_dict, partial_inputs)
        if code != _core.SUCCESS:
            return code
        messages = []
        for _, data in chosen:
            value = feed_dict[data]
            if not isinstance(value, Tensor):
                messages.append(self._to_message(data, value))
                continue
            try:  # as GE's: a tensor that cannot go returns its code
                if data._schema is not None and value._desc != data._schema:
                    raise DfException(f"The desc of the tensor is different from that of the data:{data.name}.")
                messages.append(self._to_message(data, value))
            except DfException as e:
                log.error("failed to convert data to flow msg, error msg = %s", e.message)
                return e.error_code
        session = self._feed_session()
        return self._fed(session.feed_messages(self._graph_id, [i for i, _ in chosen], messages, timeout))

    @staticmethod
    def _from_message(msg_type: int, payload: Any) -> Any:
        if msg_type == _core.MSG_TYPE_TENSOR_DATA:
            if payload is None:
                return None
            code, arr = payload
            return Tensor._fetched(arr, dt.from_code(code))
        if msg_type == _core.MSG_TYPE_RAW_MSG:
            return bytes(payload) if payload is not None else None
        if msg_type_register.registered(msg_type):
            return msg_type_register.get_deserialize_func(msg_type)(payload)
        raise DfException(f"msg type:{msg_type} is not registered")

    def fetch(self, indexes: Optional[List[int]] = None, timeout: int = -1) -> Tuple[List[Any], int]:
        """Fetch Python objects (inverse of ``feed``; raw messages come back as bytes): ``(objects, code)``."""
        timeout = self._check_timeout(timeout)
        mapped = self._map_indexes(indexes)
        if mapped is None:
            return [], _core.PARAM_INVALID
        session, code = self._session_for_fetch()
        if code != _core.SUCCESS:
            return [], code
        code, messages = session.fetch_messages(self._graph_id, mapped, timeout)
        if code != _core.SUCCESS and code != _core.SUBHEALTHY:
            # As GE: the messages fetched still come back (an end-of-stream
            # message returns FAILED with its message).
            log.error("failed to fetch flow msg from %s: %d %s", self.name, code, _core.last_error())
            if not messages:
                return [], int(code)
        outputs = []
        for msg_type, payload, info in messages:
            if info is not None and len(info) > 5 and info[5] != 0:
                log.error("model execute failed, ret = %d", info[5])
                return [], int(info[5])
            if msg_type != _core.MSG_TYPE_TENSOR_DATA and msg_type != _core.MSG_TYPE_RAW_MSG and \
                    not msg_type_register.registered(msg_type):
                log.error("flow msg type %d is not registered", msg_type)
                return [], _core.PARAM_INVALID
            outputs.append(self._from_message(int(msg_type), payload))
        return outputs, int(code)
