"""``@pyflow`` and ``@method``: Python functions and classes as DataFlow nodes (GE's pyflow.py).

``@pyflow`` on a function makes an object whose ``fnode()`` is a FlowNode ("<name>_fnode") running
it: one input per parameter, ``num_returns`` outputs (or as many as the return annotation's tuple
has, default 1). On a class, each ``@method`` is one function of the node, with its own inputs and
outputs after the previous methods'; ``Cls.fnode(*args, **kwargs)`` saves the arguments and each
node instance calls ``Cls.__init__(*args, **kwargs)`` on its own object. The node has an attribute
per method to wire it: ``node.method(inputs...)``.

Inputs arrive as Python values (Tensor, None for an empty message, registered or pickled objects);
results are sent as such (a Tensor as a tensor message, None as an empty message, other objects
pickled). A generator yields several results; ``stream_input="Queue"`` gives FlowMsgQueue inputs;
``choice_output(item)`` False drops that output. ``resources``, ``env_hook_func`` and
``visible_device_enable`` take GE's meaning as far as hflow's processes allow (_node_options.py).

Thread-safety: decoration is not locked; node instances are independent objects.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import pickle
from typing import Any, Callable, Optional, Union

from dataflow import _core
from dataflow import _node_options
from dataflow import dataflow as df
from dataflow.flow_func import _driver
from dataflow.flow_func import flow_func as ff
from dataflow.tensor import Tensor
from dataflow.utils.msg_type_register import msg_type_register
from dataflow.utils.utils import DfException

_SUPPORTED = ("num_returns", "resources", "env_hook_func", "visible_device_enable", "stream_input", "choice_output")
_METHOD_SUPPORTED = ("num_returns", "choice_output", "stream_input")


def _param_count(func: Callable) -> int:
    return len([p for p in inspect.signature(func).parameters if p not in ("self", "cls")])


def _typing_num_returns(func: Callable) -> int:
    try:
        ann = inspect.signature(func, eval_str=True).return_annotation
    except Exception:  # an annotation that cannot be evaluated: use it as written
        ann = inspect.signature(func).return_annotation
    if ann is inspect.Signature.empty:
        return -1
    args = getattr(ann, "__args__", None)
    return len(args) if args else 1


def _num_returns(func: Callable, options: dict) -> int:
    typed = _typing_num_returns(func)
    if "num_returns" not in options:
        return typed if typed != -1 else 1
    n = options["num_returns"]
    # GE checks these with assert: AssertionError, in GE's order and words (raised, so that python -O
    # does not drop them as it drops GE's asserts).
    where = f" ({func.__qualname__}: num_returns={n!r})"
    if typed != -1 and typed != n:
        raise AssertionError(f"The number:{typed} of outputs specified by typing is different from the "
                             f"number:{n} specified by num_returns.{where}")
    if isinstance(n, bool) or not isinstance(n, int):
        raise AssertionError(f"The 'num_returns' option must be an integer.{where}")
    if n <= 0:
        raise AssertionError(f"The 'num_returns' option must be greater than 0.{where}")
    return n


def _check_stream(options: dict, where: str) -> bool:
    if "stream_input" not in options:
        return False
    if options["stream_input"] != "Queue":
        raise TypeError(f"Invalid stream input type: {options['stream_input']}, only support 'Queue' now. "
                        f"({where}: option stream_input)")
    return True


def _check_choice(options: dict, where: str) -> Optional[Callable[[Any], bool]]:
    choice = options.get("choice_output")
    if choice is not None and not callable(choice):
        raise TypeError(f"{where}: choice_output must be callable, got {choice!r}")
    return choice


def _to_msg(ctx: ff.MetaRunContext, value: Any) -> Any:
    if isinstance(value, Tensor):
        return ctx.to_flow_msg(value)._flow_msg
    if value is None:
        return ctx.alloc_empty_data_msg()._flow_msg
    msg_type = msg_type_register.get_msg_type(type(value))
    if msg_type is None:
        msg_type = ff.MSG_TYPE_PICKLED_MSG
    writer = msg_type_register._writer(msg_type)
    if writer is not None:  # straight into the message (torch tensors)
        size = writer.size(value)
        msg = ctx.alloc_raw_data_msg(size)
        if msg is None:
            raise DfException(f"Failed to alloc a raw message of {size} bytes", ff.FLOW_FUNC_FAILED)
        if size:
            writer.write(msg.get_raw_data())
        msg.set_msg_type(msg_type)
        return msg._flow_msg
    data = msg_type_register.get_serialize_func(msg_type)(value)
    msg = ctx.alloc_raw_data_msg(len(data))
    if msg is None:
        raise DfException(f"Failed to alloc a raw message of {len(data)} bytes", ff.FLOW_FUNC_FAILED)
    if len(data):
        msg.get_raw_data()[:] = data
    msg.set_msg_type(msg_type)
    return msg._flow_msg


class _Func:
    """One function of a pyflow node: how to call it and where its outputs go."""

    def __init__(self, fn: Callable, bound: bool, n_in: int, n_out: int, out_base: int, stream: bool,
                 choice: Optional[Callable[[Any], bool]]) -> None:
        self.fn, self.bound, self.n_in, self.n_out = fn, bound, n_in, n_out
        self.out_base, self.stream, self.choice = out_base, stream, choice

    def __call__(self, inst: Any, raw_ctx: Any, inputs: list) -> int:
        ctx = ff.MetaRunContext(raw_ctx)
        args = []
        for m in inputs:
            if hasattr(_core, "FlowMsgQueue") and isinstance(m, _core.FlowMsgQueue):
                args.append(ff.FlowMsgQueue(m))
                continue
            if int(m.get_ret_code()) != ff.FLOW_FUNC_SUCCESS:
                ff.logger.error("invalid input, ret_code=%d", int(m.get_ret_code()))
                return ff.FLOW_FUNC_FAILED
            args.append(ff.msg_to_object(m))
        call_args = ([inst] if self.bound else []) + args
        if inspect.isgeneratorfunction(self.fn):
            for results in self.fn(*call_args):
                code = self._send(ctx, results)
                if code != ff.FLOW_FUNC_SUCCESS:
                    return code
            return ff.FLOW_FUNC_SUCCESS
        return self._send(ctx, self.fn(*call_args))

    def _send(self, ctx: ff.MetaRunContext, results: Any) -> int:
        if self.n_out > 1:
            if not isinstance(results, tuple) or len(results) != self.n_out:
                got = f"{len(results)} results" if isinstance(results, tuple) else type(results).__name__
                ff.logger.error("%s: num_returns = %d, but it returned %s", self.fn.__qualname__, self.n_out, got)
                return ff.FLOW_FUNC_FAILED
            items = list(results)
        else:
            items = [results]
        for i, item in enumerate(items):
            if self.choice is not None and not self.choice(item):
                continue
            code = ctx.set_output(self.out_base + i, ff.FlowMsg(_to_msg(ctx, item)))
            if code != ff.FLOW_FUNC_SUCCESS:
                ff.logger.error("%s: set output %d failed with %d", self.fn.__qualname__, self.out_base + i, code)
                return ff.FLOW_FUNC_FAILED
        return ff.FLOW_FUNC_SUCCESS


def method(*args: Any, **kwargs: Any) -> Callable[[Callable], Callable]:
    """Mark a method of a ``@pyflow`` class as one of its node's functions (``num_returns``,
    ``choice_output``, ``stream_input="Queue"``)."""
    # GE checks these with assert: AssertionError, raised here so that python -O keeps them.
    if args:
        raise AssertionError(f"Unexpected args argument to @df.method, args='{args}', please use kwargs the "
                             f"arguments in the list {list(_METHOD_SUPPORTED)}, for example '@df.method()' or "
                             "'@df.method(num_returns=2)'.")
    for key in kwargs:
        if key not in _METHOD_SUPPORTED:
            raise AssertionError(f"Unexpected keyword argument to @df.method: '{key}'. The supported keyword "
                                 f"arguments are {list(_METHOD_SUPPORTED)}")

    def decorator(func: Callable) -> Callable:
        func.__df_num_returns__ = _num_returns(func, kwargs)  # type: ignore[attr-defined]
        _check_stream(kwargs, func.__qualname__)
        _check_choice(kwargs, func.__qualname__)
        func.__df_method_options__ = dict(kwargs)  # type: ignore[attr-defined]
        func.__df_method__ = True  # type: ignore[attr-defined]
        return func

    return decorator


def _check_options(options: dict, where: str = "@pyflow") -> None:
    for key in options:
        if key not in _SUPPORTED:
            raise TypeError(f"param:{key} is not support in @pyflow.")
    _node_options.check(options, where)


class PyFunctionProcessPoint:
    """A ``@pyflow`` function; ``fnode()`` makes its FlowNode."""

    def __init__(self, function: Callable, options: dict) -> None:
        _check_options(options, f"@pyflow function {function.__qualname__}")
        self._function = function
        self._options = dict(options)
        self.func_name = function.__name__
        self._stream = _check_stream(options, function.__qualname__)
        self._choice = _check_choice(options, function.__qualname__)
        self.input_num = _param_count(function)
        self.output_num = _num_returns(function, options)
        functools.update_wrapper(self, function, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"A @pyflow function cannot be called directly; use '{self.func_name}.fnode()'.")

    def _df_py_udf(self) -> _driver.PyUdf:
        fd = _driver.FuncDef(self.func_name, list(range(self.input_num)), list(range(self.output_num)), self._stream,
                             _Func(self._function, False, self.input_num, self.output_num, 0, self._stream,
                                   self._choice))
        return _node_options.attach(
            _driver.PyUdf(self._function.__qualname__, [fd], lambda: None, lambda inst, params: 0), self._options)

    def _df_process_options(self) -> dict:
        return self._options

    def __reduce__(self) -> tuple:
        # By name, as pickle takes functions: the decorated name now holds this object.
        module, qualname = self._function.__module__, self._function.__qualname__
        if "<locals>" in qualname:
            raise pickle.PicklingError(f"@pyflow function {qualname} is defined inside a function")
        try:
            found = _find(module, qualname)
        except (ImportError, AttributeError) as e:
            raise pickle.PicklingError(f"@pyflow function {qualname} cannot be found by name ({e})") from e
        if found is not self:
            raise pickle.PicklingError(f"@pyflow function {qualname}: its name in {module} now holds "
                                       "another object")
        return (_find, (module, qualname))

    def fnode(self, *args: Any, **kwargs: Any) -> df.FlowNode:
        """A FlowNode ("<name>_fnode") running this function."""
        node = df.FlowNode(input_num=self.input_num, output_num=self.output_num, name=self.func_name + "_fnode")
        node.add_process_point(df.FuncProcessPoint(py_func=self, workspace_dir="./" + node.name + "_ws"))
        return node


class _MethodWire:
    """``node.<method>(inputs...)``: wires one method's inputs, returns its outputs."""

    def __init__(self, name: str, node: df.FlowNode, ins: list[int], outs: list[int]) -> None:
        self._name, self._node, self._ins, self._outs = name, node, ins, outs

    def __call__(self, *inputs: Any) -> Any:
        if len(inputs) != len(self._ins):
            raise DfException(f"Func:{self._name} need {len(self._ins)} input, but fnode got {len(inputs)} input")
        return self._node._build_flow_node(*inputs, input_indexes=self._ins, output_indexes=self._outs)


class PyActorProcessPoint:
    """Base of ``@pyflow`` classes: ``Cls.fnode(*args, **kwargs)`` makes the FlowNode."""

    _decorated_class: type
    _default_options: dict

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("PyActorProcessPoint.__init__ should not be called. Please use the @df.pyflow decorator.")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = type(self).__name__
        raise TypeError(f"FlowNode functions cannot be called directly. Instead of running '{name}()', "
                        f"try '{name}.fnode()'.")

    @classmethod
    def _methods(cls) -> list[tuple[str, Callable, dict]]:
        found = []
        for name in dir(cls._decorated_class):
            if name.startswith("__"):
                continue
            m = getattr(cls._decorated_class, name)
            if callable(m) and getattr(m, "__df_method__", False):
                found.append((name, m, m.__df_method_options__))
        return found

    @classmethod
    def _layout(cls) -> list[tuple[str, _driver.FuncDef]]:
        """Each @method's name and function definition, inputs and outputs in declaration order."""
        methods = cls._methods()
        if not methods:
            raise DfException(f"@pyflow class {cls.__name__} has no @df.method methods")
        out = []
        n_in = n_out = 0
        for name, m, method_opts in methods:
            # class-level stream_input/choice_output apply to every method unless it sets its own
            opts = {k: v for k, v in cls._default_options.items() if k in ("stream_input", "choice_output")}
            opts.update(method_opts)
            ins = list(range(n_in, n_in + _param_count(m)))
            count = m.__df_num_returns__
            outs = list(range(n_out, n_out + count))
            stream = _check_stream(opts, m.__qualname__)
            out.append((name, _driver.FuncDef(name, ins, outs, stream,
                                              _Func(m, True, len(ins), count, n_out, stream,
                                                    _check_choice(opts, name)))))
            n_in, n_out = n_in + len(ins), n_out + count
        return out

    @classmethod
    def _py_udf(cls, args: tuple, kwargs: dict) -> _driver.PyUdf:
        decorated = cls._decorated_class

        def make_instance() -> Any:
            obj = object.__new__(cls)
            decorated.__init__(obj, *args, **kwargs)
            return obj

        funcs = [fd for _, fd in cls._layout()]
        return _node_options.attach(_driver.PyUdf(decorated.__qualname__, funcs, make_instance, lambda i, p: 0),
                                    cls._default_options)

    @classmethod
    def fnode(cls, *args: Any, **kwargs: Any) -> df.FlowNode:
        """A FlowNode ("<Cls>_fnode") with one function per @method; ``args``/``kwargs`` go to
        ``__init__`` of each node instance's object."""
        layout = cls._layout()
        n_in = sum(len(fd.inputs) for _, fd in layout)
        n_out = sum(len(fd.outputs) for _, fd in layout)
        node = df.FlowNode(input_num=n_in, output_num=n_out, name=cls.__name__ + "_fnode")
        node.add_process_point(df.FuncProcessPoint(name=cls.__name__, py_func=_ActorSpec(cls, args, kwargs),
                                                   workspace_dir="./" + node.name + "_ws"))
        for name, fd in layout:
            setattr(node, name, _MethodWire(name, node, fd.inputs, fd.outputs))
        return node


class _ActorSpec:
    """A ``@pyflow`` class with its ``__init__`` arguments: picklable (by the class's name, and the
    arguments' values) for a worker process."""

    def __init__(self, cls: type, args: tuple, kwargs: dict) -> None:
        self._cls, self._args, self._kwargs = cls, args, kwargs

    def _df_py_udf(self) -> _driver.PyUdf:
        return self._cls._py_udf(self._args, self._kwargs)

    def _df_process_options(self) -> dict:
        return self._cls._default_options

    def __reduce__(self) -> tuple:
        return (_ActorSpec, (self._cls, self._args, self._kwargs))


def _from_class(decorated: type, options: dict) -> type:
    for attribute in ("fnode", "_fnode", "_df_from_class"):
        if hasattr(decorated, attribute):
            raise TypeError(f"Creating a process point class from class {decorated.__name__} can not overwrite "
                            f"attribute {attribute}, please rename")
    _check_options(options, f"@pyflow class {decorated.__qualname__}")
    derived = type(decorated.__name__, (PyActorProcessPoint, decorated), {
        "__module__": decorated.__module__, "__qualname__": decorated.__qualname__,
        "_decorated_class": decorated, "_default_options": dict(options)})
    return derived


def _make_pyflow(function_or_class: Any, options: dict) -> Union[PyFunctionProcessPoint, type]:
    if inspect.isfunction(function_or_class):
        return PyFunctionProcessPoint(function_or_class, options)
    if inspect.isclass(function_or_class):
        return _from_class(function_or_class, options)
    raise TypeError("The @pyflow decorator must be applied to either a function or a class.")


def _find(module: str, qualname: str) -> Any:
    """The object ``qualname`` of ``module`` (imported)."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def pyflow(*args: Any, **kwargs: Any) -> Any:
    """Decorate a function or class to make DataFlow nodes of it: ``@pyflow`` or ``@pyflow(num_returns=2, ...)``."""
    if len(args) == 1 and not kwargs and callable(args[0]):
        return _make_pyflow(args[0], {})
    if args:
        raise TypeError("The @pyflow decorator must be applied to either a function or a class "
                        "(options are keyword arguments only).")
    return functools.partial(_make_pyflow, options=kwargs)
