"""hflow's UDF tools (GE's ``dataflow.tools``): ``create_func_ws`` makes a UDF workspace whose
functions are a Python class's methods, built and run by hflow like any C++ UDF.

Run ``python3 -m dataflow.tools.create_func_ws -f add:i0:i1:o0 -c Adder -w ./ws`` (see
create_func_ws.py) or use ``FuncWsCreator`` directly; docs/python.md "The workspace tool" says
what is generated and how hflow runs it. ``ws_runtime`` is what runs the workspace's Python side.

Thread-safety: see the submodules.
"""
from dataflow.tools.func_ws_creator import FuncWsCreator

__all__ = ["FuncWsCreator"]
