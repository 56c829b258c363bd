"""Graph building blocks of GE's DataFlow Python API on hflow: process points, FlowData,
FlowNode and their attributes; also re-exports the IO types and FlowGraph.

Objects only record what the user declares; ``FlowGraph`` turns them into hflow's graph-file JSON.
Names default as in GE ("FlowData", "FlowData_1", ...; "FlowNode", ...).

Thread-safety: graph objects are not locked; build a graph on one thread.
"""
from __future__ import annotations

import inspect
import os
from enum import Enum, IntEnum, auto
from typing import Any, Dict, List, Optional, Tuple, Union

from dataflow import _core, _worker
from dataflow import data_type as df_dt
from dataflow._context import finalize, init
from dataflow.flow_func import _driver
from dataflow.flow_func.func_register import FlowFuncRegister
from dataflow.tensor import FlowInfo, Tensor, TensorDesc, alloc_tensor
from dataflow.utils import log
from dataflow.utils.name_scope import name_scope
from dataflow.utils.utils import DfException, check_int, check_str_dict, check_type

MSG_TYPE_TENSOR_DATA = _core.MSG_TYPE_TENSOR_DATA
MSG_TYPE_PICKLED_MSG = _core.MSG_TYPE_PICKLED_MSG
MSG_TYPE_USER_DEFINE_START = _core.MSG_TYPE_USER_DEFINE_START


class Framework(Enum):
    """Model frameworks of GraphProcessPoint."""

    TENSORFLOW = auto()
    ONNX = auto()
    MINDSPORE = auto()


class FlowFlag(IntEnum):
    """Flow flags of FlowInfo."""

    DATA_FLOW_FLAG_EOS = 1 << 0
    DATA_FLOW_FLAG_SEG = 1 << 1


def _check_bool(name: str, value: Any) -> bool:
    check_type(name, value, bool)
    return value


def _check_int(name: str, value: Any, minimum: int) -> int:
    return check_int(name, value, minimum)


class CountBatch:
    """Batch ``batch_size`` messages of a node input (``slide_stride``, ``timeout`` ms, ``padding``)."""

    def __init__(self, batch_size: int = 0, slide_stride: int = 0, timeout: int = 0, padding: bool = False) -> None:
        self.batch_size = _check_int("batch_size", batch_size, 0)
        self.slide_stride = _check_int("slide_stride", slide_stride, 0)
        self.timeout = _check_int("timeout", timeout, 0)
        self.padding = _check_bool("padding", padding)

    def _json(self) -> dict:
        return {"count_batch": {"batch_size": self.batch_size, "slide_stride": self.slide_stride,
                                "timeout": self.timeout, "padding": self.padding}}


class TimeBatch:
    """Batch a node input's messages over ``time_window`` ms along ``batch_dim``."""

    def __init__(self, time_window: int = 0, batch_dim: int = -1, drop_remainder: bool = False, *,
                 timeout: int = 0, padding: bool = False) -> None:
        self.time_window = _check_int("time_window", time_window, 0)
        self.batch_dim = _check_int("batch_dim", batch_dim, -1)
        self.drop_remainder = _check_bool("drop_remainder", drop_remainder)
        self.timeout = _check_int("timeout", timeout, 0)
        self.padding = _check_bool("padding", padding)

    def _json(self) -> dict:
        return {"time_batch": {"time_window": self.time_window, "timeout": self.timeout,
                               "batch_dim": self.batch_dim, "padding": self.padding,
                               "drop_remainder": self.drop_remainder}}


# GE loads a MINDSPORE process point's file with ge::Graph::LoadFromFile: hflow's LoadFromFile reads its
# own GE graph file (Graph::SaveToFile's), which the model library reads as "ge_graph".
_framework_str = {Framework.TENSORFLOW: "tensorflow", Framework.ONNX: "onnx", Framework.MINDSPORE: "ge_graph"}


class GraphProcessPoint:
    """A model process point: the model in ``graph_file`` runs as the node on the model executor: an ONNX file,
    a TensorFlow GraphDef, or (MINDSPORE, which GE loads with ``ge::Graph::LoadFromFile``) a GE graph file."""

    def __init__(self, framework: Framework, graph_file: str, load_params: Optional[Dict[str, str]] = None,
                 compile_config_path: Optional[str] = "", name: Optional[str] = None) -> None:
        if not isinstance(framework, Framework):
            raise DfException(f"Argument framework must be {Framework}, but got {framework!r}")
        check_type("graph_file", graph_file, str)
        self.framework = framework
        self.graph_file = graph_file
        self.load_params = check_str_dict("load_params", load_params)
        self.compile_config_path = compile_config_path or ""
        with name_scope(name, "GraphProcessPoint") as unique:
            self.name = unique

    def fnode(self, input_num: int, output_num: int, name: Optional[str] = None) -> "FlowNode":
        """A FlowNode running this process point."""
        node = FlowNode(input_num=input_num, output_num=output_num, name=name)
        node.add_process_point(self)
        return node

    def _ref(self) -> dict:
        ref = {"name": self.name, "type": "GraphPp", "framework": _framework_str[self.framework],
               "graph_file": os.path.abspath(self.graph_file)}
        if self.load_params:
            ref["load_params"] = dict(self.load_params)
        if self.compile_config_path:
            ref["compile_config"] = os.path.abspath(self.compile_config_path)
        return ref


class FlowGraphProcessPoint:
    """A flow graph used as a process point. hflow does not support it: building fails."""

    def __init__(self, flow_graph: Any, compile_config_path: Optional[str] = "", name: Optional[str] = None) -> None:
        from dataflow.flow_graph import FlowGraph

        check_type("flow_graph", flow_graph, FlowGraph)
        self.flow_graph = flow_graph
        self.compile_config_path = compile_config_path or ""
        with name_scope(name, "FlowGraphProcessPoint") as unique:
            self.name = unique

    def _ref(self) -> dict:
        return {"name": self.name, "type": "FlowGraphPp"}


_InitParam = Union[str, int, float, bool, df_dt.DType, list]


def _init_param_json(name: str, value: Any) -> Any:
    def scalar(v: Any) -> Any:
        if isinstance(v, df_dt.DType):
            return str(v)
        if isinstance(v, (bool, int, float, str)):
            return v
        return None

    s = scalar(value)
    if s is not None:
        return s
    if isinstance(value, (list, tuple)):
        items = list(value)
        if all(isinstance(v, (list, tuple)) for v in items) and items:
            if all(isinstance(x, int) and not isinstance(x, bool) for v in items for x in v):
                return [list(v) for v in items]
        else:
            kinds = {(bool if isinstance(v, bool) else df_dt.DType if isinstance(v, df_dt.DType) else type(v))
                     for v in items}
            if len(kinds) <= 1 and all(scalar(v) is not None for v in items):
                return [scalar(v) for v in items]
            if kinds <= {int, float}:
                return [float(v) for v in items]
    raise DfException(f"Argument attr_value of init param {name!r} must be str, int, float, bool, DType, a list of "
                      f"one of those, or a list of lists of int, but got {value!r}", _core.PARAM_INVALID)


class FuncProcessPoint:
    """A function process point: a C++ UDF (``compile_config_path``) or a Python UDF (``py_func``).

    ``py_func`` is a class whose methods carry ``@proc_wrapper("i0,o0")`` (and optionally
    ``@init_wrapper()`` on ``init_flow_func``). ``workspace_dir`` is accepted for compatibility:
    hflow runs Python UDFs in this process, so nothing is generated there.
    """

    def __init__(self, compile_config_path: Optional[str] = None, name: Optional[str] = None,
                 py_func: Any = None, workspace_dir: Optional[str] = None) -> None:
        self._py_udf: Optional[_driver.PyUdf] = None
        self.compile_config_path: Optional[str] = None
        self.workspace_dir = workspace_dir
        if py_func is not None:
            if compile_config_path is not None:
                raise DfException("Give FuncProcessPoint either argument compile_config_path or argument py_func, "
                                  "not both", _core.PARAM_INVALID)
            self._py_udf = self._make_py_udf(py_func)
            # How a worker process would make it (udf_isolation).
            _worker.recipe(py_func, [fd.registered for fd in self._py_udf.funcs])
        elif compile_config_path is not None:
            check_type("compile_config_path", compile_config_path, str)
            if not compile_config_path:
                raise DfException("Argument compile_config_path must not be empty", _core.PARAM_INVALID)
            self.compile_config_path = os.path.abspath(compile_config_path)
        else:
            raise DfException("FuncProcessPoint needs argument compile_config_path (C++ UDF) or argument py_func "
                              "(Python UDF)", _core.PARAM_INVALID)
        with name_scope(name, "FuncProcessPoint") as unique:
            self.name = unique
        self._init_params: dict[str, Any] = {}
        self._closures: dict[str, dict] = {}

    @staticmethod
    def _make_py_udf(py_func: Any) -> _driver.PyUdf:
        make = getattr(py_func, "_df_py_udf", None)
        if make is not None:  # @pyflow objects
            return make()
        if not inspect.isclass(py_func):
            raise DfException(f"Argument py_func must be a class with @proc_wrapper methods or a @pyflow object, "
                              f"but got {py_func!r}", _core.PARAM_INVALID)
        mappings = FlowFuncRegister.get_flow_func(py_func.__module__, py_func.__qualname__)
        if not mappings:
            raise DfException(f"flow func {py_func.__qualname__} has no method decorated with "
                              f"@proc_wrapper(\"i0,...,o0\")", _core.FLOW_FUNC_FAILED)
        return _driver.from_class(py_func, mappings)

    def set_init_param(self, attr_name: str, attr_value: _InitParam) -> None:
        """An init param the UDF reads (str/int/float/bool/DType, lists of them, list of lists of int)."""
        check_type("attr_name", attr_name, str)
        if not attr_name:
            raise DfException("Argument attr_name must not be empty", _core.PARAM_INVALID)
        self._init_params[attr_name] = _init_param_json(attr_name, attr_value)

    def add_invoked_closure(self, graph_key: str, pp: Union[GraphProcessPoint, FlowGraphProcessPoint]) -> None:
        """A model the UDF runs with ``run_context.run_flow_model(graph_key, ...)``; loaded with every instance
        of the node. A key given twice keeps its first model and logs an error, as GE does."""
        check_type("graph_key", graph_key, str)
        check_type("pp", pp, (GraphProcessPoint, FlowGraphProcessPoint))
        if graph_key in self._closures:
            log.error("invoked closure key '%s' of %s is already used: graph_key must be unique", graph_key,
                      self.name)
            return
        self._closures[graph_key] = pp._ref()


_ProcessPoint = Union[GraphProcessPoint, FuncProcessPoint, FlowGraphProcessPoint]


class FlowData:
    """A graph input: ``FlowData(schema=None, name=None)`` (schema: a TensorDesc fed data is checked
    against). GE's ``FlowData(Tensor, schema, name)`` positional form is accepted too."""

    def __init__(self, schema: Optional[TensorDesc] = None, name: Optional[str] = None, *args: Any,
                 data_cls: type = Tensor) -> None:
        if schema is Tensor:  # GE's positional data_cls
            schema, name = name, (args[0] if args else None)
        elif args:  # GE's FlowData(data_cls, schema, name) with something else as data_cls
            raise DfException(f"Argument data_cls must be equal to Tensor, but got {schema}")
        if data_cls is not Tensor:
            raise DfException(f"Argument data_cls must be equal to Tensor, but got {data_cls}")
        if schema is not None and type(schema) is not TensorDesc:
            raise DfException(f"Argument schema type must be TensorDesc, but got {type(schema)}")
        self._data_cls = data_cls
        self._schema = schema
        with name_scope(name, "FlowData") as unique:
            self.name = unique


class FlowOutput:
    """Output ``index`` of ``node``."""

    def __init__(self, node: "FlowNode", index: int) -> None:
        self.node = node
        self.index = index

    def __repr__(self) -> str:
        return f"FlowOutput({self.node.name}:{self.index})"


class FlowNode:
    """A graph node of ``input_num`` inputs and ``output_num`` outputs running one process point."""

    def __init__(self, input_num: int, output_num: int, name: Optional[str] = None) -> None:
        # GE leaves these to its binding (uint32_t); hflow checks them: DfException(PARAM_INVALID).
        self.input_num = check_int("input_num", input_num, 0)
        self.output_num = check_int("output_num", output_num, 0)
        with name_scope(name, "FlowNode", "FlowNode") as unique:
            self.name = unique
        self._input_anchors: list[Any] = [None] * input_num
        self._pp: Optional[_ProcessPoint] = None
        self._input_map: dict[int, int] = {}
        self._output_map: dict[int, int] = {}
        self._input_attrs: dict[int, dict] = {}
        self._attrs: dict[str, Union[bool, str, int]] = {"_flow_attr": True}
        self._balance: Optional[str] = None
        self.alias: Optional[str] = None

    def _connect(self, idx: int, arg: Any, pos: int) -> None:
        if isinstance(arg, FlowData):
            self._input_anchors[idx] = arg
        elif isinstance(arg, FlowOutput):
            if arg.node is self:
                raise DfException(f"The {pos}th input is the output of current flow node, so cannot be used as an input")
            self._input_anchors[idx] = arg
        else:
            raise DfException(f"Argument:{type(arg)} inputs must be {Union[FlowData, FlowOutput]}: input {pos} of "
                              f"FlowNode '{self.name}' must be FlowData or FlowOutput")

    def _outputs(self, indexes: List[int]) -> Union[None, FlowOutput, Tuple[FlowOutput, ...]]:
        if not indexes:
            return None
        if len(indexes) == 1:
            return FlowOutput(self, indexes[0])
        return tuple(FlowOutput(self, i) for i in indexes)

    def __call__(self, *inputs: Union[FlowData, FlowOutput]) -> Union[None, FlowOutput, Tuple[FlowOutput, ...]]:
        """Wire ``inputs`` to this node's inputs; returns its output(s)."""
        if len(inputs) != self.input_num:
            raise DfException(f"Flow node need {self.input_num} input, but got {len(inputs)} input")
        for idx, arg in enumerate(inputs):
            self._connect(idx, arg, idx)
        return self._outputs(list(range(self.output_num)))

    def _build_flow_node(self, *inputs: Any, input_indexes: List[int], output_indexes: List[int]) -> Any:
        if len(inputs) != len(input_indexes):
            raise DfException(f"Flow node func need {len(input_indexes)} input, but got {len(inputs)} input")
        for pos, arg in enumerate(inputs):
            self._connect(input_indexes[pos], arg, pos)
        return self._outputs(list(output_indexes))

    def add_process_point(self, pp: _ProcessPoint) -> "FlowNode":
        """Run ``pp`` on this node (hflow: one process point per node)."""
        self._check_pp_type(pp)
        if self._pp is not None and self._pp is not pp:
            raise DfException(f"FlowNode '{self.name}' already has process point '{self._pp.name}'; hflow runs one "
                              "process point per node")
        if self._pp is pp:
            return self
        if isinstance(pp, FuncProcessPoint) and pp._py_udf is not None:
            pp._py_udf.check_node(self.name, self.input_num, self.output_num)
        self._pp = pp
        return self

    @staticmethod
    def _check_pp_type(pp: Any) -> None:
        if not isinstance(pp, (GraphProcessPoint, FuncProcessPoint, FlowGraphProcessPoint)):
            raise DfException(f"Argument pp must be {_ProcessPoint}, but got {type(pp).__name__}")

    def _check_pp(self, pp: Any) -> None:
        self._check_pp_type(pp)
        if self._pp is None:
            self.add_process_point(pp)
        elif self._pp is not pp:
            raise DfException(f"pp '{pp.name}' is not the process point of FlowNode '{self.name}'")

    def map_input(self, node_input_index: int, pp: _ProcessPoint, pp_input_index: int,
                  input_attrs: Optional[List[Union[TimeBatch, CountBatch]]] = None) -> None:
        """Node input ``node_input_index`` feeds ``pp``'s input ``pp_input_index`` (with batch attrs)."""
        self._check_pp_type(pp)  # GE checks pp first (assert_args_type)
        check_type("node_input_index", node_input_index, int)
        if not 0 <= node_input_index < self.input_num:
            raise DfException(f"The arg node_input_index should in [0,{self.input_num})")
        check_int("pp_input_index", pp_input_index, 0)
        if input_attrs is not None and not isinstance(input_attrs, (list, tuple)):
            raise DfException("Argument input_attrs must be List[Union[TimeBatch, CountBatch]]")
        self._check_pp(pp)
        attrs: dict = {}
        for a in input_attrs or []:
            if not isinstance(a, (TimeBatch, CountBatch)):
                raise DfException("Argument input_attrs must be List[Union[TimeBatch, CountBatch]]")
            attrs.update(a._json())
        self._input_map[node_input_index] = pp_input_index
        if attrs:
            self._input_attrs[node_input_index] = attrs

    def map_output(self, node_output_index: int, pp: _ProcessPoint, pp_output_index: int) -> None:
        """Node output ``node_output_index`` comes from ``pp``'s output ``pp_output_index``."""
        self._check_pp_type(pp)
        check_type("node_output_index", node_output_index, int)
        if not 0 <= node_output_index < self.output_num:
            raise DfException(f"The arg node_output_index should in [0,{self.output_num})")
        check_int("pp_output_index", pp_output_index, 0)
        self._check_pp(pp)
        self._output_map[node_output_index] = pp_output_index

    def set_balance_scatter(self) -> None:
        """Outputs go to the instances the UDF's BalanceConfig picks."""
        self._balance = "scatter"

    def set_balance_gather(self) -> None:
        """Inputs are gathered from balanced upstream instances."""
        self._balance = "gather"

    def set_attr(self, attr_name: str, attr_value: Union[bool, str, int]) -> None:
        """A GE node attr: ``_flow_attr`` (bool), ``_flow_attr_depth`` (int), ``_flow_attr_enqueue_policy``
        ("FIFO"/"OVERWRITE") become the node's queue flow attrs; other attrs are kept and unused."""
        check_type("attr_name", attr_name, str)
        check_type("attr_value", attr_value, (bool, str, int), str(Union[bool, str, int]))
        if attr_name == "_flow_attr_depth":
            check_int("attr_value", attr_value, 1)
        if attr_name == "_flow_attr_enqueue_policy" and attr_value not in ("FIFO", "OVERWRITE"):
            raise DfException(f"Argument attr_value of _flow_attr_enqueue_policy must be 'FIFO' or 'OVERWRITE', "
                              f"but got {attr_value!r}", _core.PARAM_INVALID)
        if attr_name == "_flow_attr":
            check_type("attr_value", attr_value, bool)
        self._attrs[attr_name] = attr_value

    def set_alias(self, name: str) -> "FlowNode":
        """An alias (unique among FlowNodes): the node's name in the graph file, so deploy infos and
        hflow's messages name the node by it, as GE's deployment does; returns self."""
        if not isinstance(name, str):  # GE's name_scope raises it
            raise TypeError(f"name for name_scope must be a string, but argument name is {name!r}.")
        if name == self.name:
            self.alias = name
        else:
            with name_scope(name, "FlowNode", "FlowNode", False) as unique:
                self.alias = unique
        self._attrs["_flow_attr_flow_node_alias"] = self.alias
        return self


from dataflow.flow_graph import FlowGraph  # noqa: E402  (FlowGraph builds on the classes above)
