"""``FuncWsCreator``: makes a UDF workspace whose functions are a Python class's methods (GE's API).

``FuncWsCreator("sub:i0:i1:o0,add:i2:o1", "Clz", "./ws").generate()`` writes, under the
workspace folder:

- ``CMakeLists.txt``: builds ``src_cpp/*.cpp`` into ``libfunc_<clz>.so`` and copies
  ``src_python/`` beside it (tpl/tpl_cmake.py);
- ``src_cpp/func_<clz>.cpp``: a FlowFunc MetaMultiFunc with one proc per function, each calling
  the Python object's method of the same name through hflow's bridge (tpl/tpl_wrapper_code.py);
- ``src_python/func_<clz>.py``: the class ``<Clz>``, one placeholder method per function, for the
  user to fill in (tpl/tpl_py_func_code.py);
- ``func_<clz>.json``: the compile config a ``FuncProcessPoint(compile_config_path=...)`` names.

``<clz>`` is the class name in snake_case; without a class name it is made from the first four
function names (``Sub`` + ``Add``). The functions string is checked whole before anything is
written: each function is ``name:tok[:tok...]`` (at least two tokens), a token being ``iN`` (node
input N), ``oN`` (node output N) or ``stream_input``; the inputs of all functions together must be
0..n-1, each once, and the outputs (which functions may share) 0..m-1. A bad string or class name
raises ValueError, as GE's does, saying what to write instead.

Differences from GE: the workspace builds and runs on hflow only (its C++ includes hflow's bridge
header; GE's embeds its own interpreter), the compile config says ``"heavy_load": false`` (hflow
would run the node in an ``hflow-worker`` process, which has no Python), names that are Python or
C++ keywords or repeat are refused, and ``flow_func_infos`` with a function object (GE's pickled
``py_func`` workspaces) is not supported: ``FuncProcessPoint(py_func=...)`` runs such a class
in-process on hflow without any workspace.

Thread-safety: a creator is used by one thread; two creators writing one folder race as any two
writers of the same files do.
"""
from __future__ import annotations

import json
import keyword
import os
import re
import shutil
from typing import Any, Optional

import dataflow.utils.log as log
from dataflow.tools.tpl.tpl_cmake import gen_func_cmake
from dataflow.tools.tpl.tpl_py_func_code import gen_py_func_code
from dataflow.tools.tpl.tpl_wrapper_code import gen_wrapper_code

_FUNCTIONS_HELP = ("write comma-separated functions name:token[:token...], each token iN (node input N), "
                   "oN (node output N) or stream_input, e.g. 'sub:i0:i1:o0,add:i2:o1'")
_TOKEN = re.compile(r"([io])([0-9]+)")
# C++ keywords (a class name becomes a C++ class) and the names the generated C++ uses itself.
_CPP_RESERVED = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
    co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
    extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
    nullptr operator or or_eq private protected public register reinterpret_cast requires return
    short signed sizeof static static_assert static_cast struct switch template this thread_local
    throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
    xor xor_eq FlowFunc hflow hflow_ws ws std
""".split())


def _convert_camel_to_snake(value: str) -> str:
    """GE's rule: ``MyFunc`` -> ``my_func``, ``HTTPServer`` -> ``http_server``."""
    s = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", value)
    return re.sub("([a-z0-9])([A-Z])", r"\1_\2", s).lower()


class FuncWsCreator:
    """Parses a functions string and class name and writes the workspace (``generate``)."""

    def __init__(self, funcs_param: str, clz_name: str = "", ws_dir: str = "",
                 flow_func_infos: Optional[Any] = None) -> None:
        if not isinstance(funcs_param, str):
            raise TypeError(f"functions (-f/--functions) must be a str, but got {funcs_param!r}; {_FUNCTIONS_HELP}")
        if not isinstance(clz_name, str):
            raise TypeError(f"clz_name (-c/--clz_name) must be a str, but got {clz_name!r}")
        if not isinstance(ws_dir, str):
            raise TypeError(f"workspace (-w/--workspace) must be a str, but got {ws_dir!r}")
        if flow_func_infos is not None and flow_func_infos.get_func_object() is not None:
            raise NotImplementedError(
                "a workspace for a pickled function object (GE's FuncProcessPoint(py_func=..., workspace_dir=...)) "
                "is not made on hflow: FuncProcessPoint(py_func=...) runs the class in-process without a workspace")
        self.ws_dir = os.path.abspath(ws_dir) if ws_dir != "" else os.getcwd()
        self.cmake = "CMakeLists.txt"
        self.src_dir = "src_cpp"
        self.py_src_dir = "src_python"
        self.flow_func_infos = flow_func_infos
        self.func_names: list[str] = []
        self.input_output_indexes: list[tuple[list[int], list[int]]] = []
        self.stream_inputs: list[bool] = []
        self._extract_func_indexes(funcs_param)
        # Checked here, not when the config is written (GE), so a bad string writes nothing.
        self.input_num = self._extract_input_num()
        self.output_num = self._extract_output_num()
        self.clz_name = clz_name
        self._gen_names()

    def generate(self) -> None:
        """Write the workspace: sources, then CMakeLists.txt, then the compile config (last, as GE)."""
        if os.path.exists(self.ws_dir) and not os.path.isdir(self.ws_dir):
            raise ValueError(f"workspace (-w/--workspace) {self.ws_dir} is a file; give a folder (made if missing)")
        self._gen_func_code()
        self._write(self.cmake, gen_func_cmake(self.prj_name, self.src_dir, self.py_src_dir, self.cfg_name))
        self._gen_compile_cfg()

    def copy_py_src_file(self, py_src_file: str) -> None:
        """Use ``py_src_file`` as the workspace's Python source (``src_python/func_<clz>.py``)."""
        dest = os.path.join(self.ws_dir, self.py_src_dir, self.py_name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copy(py_src_file, dest)

    def get_config_file(self) -> str:
        """The compile config's path (what ``FuncProcessPoint(compile_config_path=...)`` takes)."""
        return os.path.join(self.ws_dir, self.cfg_name)

    @staticmethod
    def _convert_camel_to_snake(value: str) -> str:
        return _convert_camel_to_snake(value)

    def _extract_func_indexes(self, funcs_param: str) -> None:
        for cfg in funcs_param.split(","):
            parts = cfg.split(":")
            if len(parts) < 3:
                raise ValueError(f"params {cfg!r} format invalid: a function needs a name and at least two "
                                 f"tokens; {_FUNCTIONS_HELP}")
            name = parts[0].strip()
            if not (name.isidentifier() and name.isascii()) or keyword.iskeyword(name):
                raise ValueError(f"params {cfg!r} function name format invalid: {name!r} must be an ASCII Python "
                                 f"identifier that is not a keyword; {_FUNCTIONS_HELP}")
            if name == "init_flow_func" or name.startswith("__"):
                raise ValueError(f"params {cfg!r} function name format invalid: {name!r} is taken by the generated "
                                 f"class; choose another function name")
            if name in self.func_names:
                raise ValueError(f"params {cfg!r}: function {name!r} is given twice; give each function once")
            inputs: list[int] = []
            outputs: list[int] = []
            stream = False
            for raw in parts[1:]:
                tok = raw.strip()
                if tok == "stream_input":
                    stream = True
                    continue
                m = _TOKEN.fullmatch(tok)
                if m is None:
                    raise ValueError(f"params {cfg!r} input/output format invalid: token {tok!r} is not iN, oN or "
                                     f"stream_input; {_FUNCTIONS_HELP}")
                index = int(m.group(2))
                if m.group(1) == "i":
                    inputs.append(index)
                elif index in outputs:
                    raise ValueError(f"params {cfg!r}: output o{index} is given twice in function {name!r}")
                else:
                    outputs.append(index)
            self.func_names.append(name)
            self.input_output_indexes.append((inputs, outputs))
            self.stream_inputs.append(stream)

    def _extract_input_num(self) -> int:
        indexes = sorted(i for ins, _ in self.input_output_indexes for i in ins)
        for expected, idx in enumerate(indexes):
            if expected < idx:
                raise ValueError(f"input index {expected} is not configured: the functions' inputs must be "
                                 f"i0..i{len(indexes) - 1}, each once")
            if expected > idx:
                raise ValueError(f"input index {idx} is configured repeatedly: each node input goes to one "
                                 f"function; give i{idx} once")
        return len(indexes)

    def _extract_output_num(self) -> int:
        indexes = sorted({o for _, outs in self.input_output_indexes for o in outs})
        for expected, idx in enumerate(indexes):
            if expected != idx:
                raise ValueError(f"output index {expected} is not configured: the functions' outputs must "
                                 f"cover o0..o{indexes[-1]} (functions may share one)")
        return len(indexes)

    def _gen_names(self) -> None:
        if self.clz_name == "":
            # At most four function names, so many functions do not make a huge name (GE's rule).
            self.clz_name = "".join(name.title() for name in self.func_names[:4])
        clz = self.clz_name
        if not (clz.isidentifier() and clz.isascii()) or keyword.iskeyword(clz) or clz in _CPP_RESERVED:
            raise ValueError(f"clz_name {clz!r} format invalid: -c/--clz_name must be an ASCII identifier that is "
                             f"not a Python or C++ keyword, e.g. 'Adder'")
        snake = _convert_camel_to_snake(clz)
        self.prj_name = f"func_{snake}"
        self.py_module_name = self.prj_name
        self.bin_name = f"lib{self.prj_name}.so"
        self.cfg_name = f"{self.prj_name}.json"
        self.cpp_name = f"{self.prj_name}.cpp"
        self.py_name = f"{self.prj_name}.py"

    def _write(self, rel_path: str, text: str) -> str:
        path = os.path.join(self.ws_dir, rel_path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        log.info("create file %s end", path)
        return path

    def _gen_func_code(self) -> None:
        self._write(os.path.join(self.src_dir, self.cpp_name),
                    gen_wrapper_code(self.clz_name, self.func_names, self.py_module_name, self.stream_inputs,
                                     self.prj_name))
        py_path = os.path.join(self.ws_dir, self.py_src_dir, self.py_name)
        if os.path.exists(py_path):
            log.warning("overwriting %s with a new placeholder class (as GE's tool does)", py_path)
        self._write(os.path.join(self.py_src_dir, self.py_name),
                    gen_py_func_code(self.clz_name, self.func_names, self.py_module_name,
                                     self.input_output_indexes, self.stream_inputs))

    def _gen_compile_cfg(self) -> None:
        funcs = [{"func_name": name, "inputs_index": ins, "outputs_index": outs, "stream_input": stream}
                 for name, (ins, outs), stream in zip(self.func_names, self.input_output_indexes,
                                                       self.stream_inputs)]
        desc: dict[str, Any] = {
            "func_list": funcs,
            "input_num": self.input_num,
            "output_num": self.output_num,
            "target_bin": self.bin_name,
            "workspace": self.ws_dir,
            "cmakelist_path": self.cmake,
            # GE's true asks for a UDF process with its own interpreter; hflow's would mean an
            # hflow-worker process, which has no Python. The node runs in the calling program.
            "heavy_load": False,
        }
        infos = self.flow_func_infos
        if infos is not None:
            resources = infos.get_running_resources_info()
            if resources:
                desc["running_resources_info"] = resources
            visible = infos.get_visible_device_enable()
            if visible is not None:
                desc["visible_device_enable"] = visible
        self._write(self.cfg_name, json.dumps(desc, indent=4) + "\n")
