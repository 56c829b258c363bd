"""The C++ half of a generated workspace: ``src_cpp/func_<name>.cpp``.

The generated file is a FlowFunc ``MetaMultiFunc`` with one ``<Name>Proc`` per function,
registered under the function's name (GE's layout). Unlike GE's, which starts an interpreter of
its own (it runs in a UDF process without Python), hflow's runs inside the Python program that
called ``dataflow.init``: it finds that interpreter's ``dataflow._core`` bridge at ``Init``
(include/flow_func/hflow_py_bridge.h) and hands every call, with the runtime's own objects, to a
``dataflow.tools.ws_runtime.WorkspaceDriver``, which runs the class of ``src_python/``. So the
library includes no Python or pybind11 header and links no libpython: it builds the same whichever
interpreter generated it, and in a process without Python (``hflow run``, a worker process) its
``Init`` fails with a log line naming the node instead of crashing.

Thread-safety: pure functions.
"""
from __future__ import annotations

from typing import Sequence

from dataflow.tools.tpl import render

_FILE = """\
// @cpp_name@: the C++ side of the hflow UDF workspace @prj_name@, generated
// by `python3 -m dataflow.tools.create_func_ws`. It runs the Python class
// @clz_name@ of src_python/@module_name@.py (copied beside the built
// library) inside the Python program that runs the graph: each proc below
// hands its run context and inputs to the object's method of the same name
// through hflow's bridge (hflow_py_bridge.h). Edit the Python file; this one
// needs no change. It links no libpython, so a process without Python (a C++
// host such as `hflow run`, a worker process under heavy_load or
// udf_isolation) fails Init with a log line naming the node.
//
// Thread-safety: hflow calls one instance from one thread at a time; the
// bridge takes the GIL for every call.
#include <dlfcn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flow_func_log.h"
#include "hflow_py_bridge.h"
#include "meta_multi_func.h"

namespace {
namespace hflow_ws {

constexpr const char* kModule = "@module_name@";
constexpr const char* kClass = "@clz_name@";
const char* const kFuncs[] = {@func_list@};
constexpr uint32_t kFuncNum = @func_num@u;
const char kAnchor = 0;  // an address inside this library, for dladdr

// The folder this library was loaded from: the build copies src_python/
// there.
std::string LibraryDir() {
  Dl_info info;
  if (dladdr(&kAnchor, &info) == 0 || info.dli_fname == nullptr) return ".";
  const std::string path(info.dli_fname);
  const std::string::size_type slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace hflow_ws

namespace ws = hflow_ws;

class @clz_name@ : public FlowFunc::MetaMultiFunc {
 public:
  @clz_name@() = default;
  ~@clz_name@() override {
    if (bridge_ != nullptr && udf_ != nullptr) bridge_->destroy(udf_);
  }

  int32_t Init(const std::shared_ptr<FlowFunc::MetaParams>& params) override {
    node_ = params == nullptr ? "?" : params->GetName();
    char error[512] = {0};
    bridge_ = hflow::FindPyUdfBridge(error, sizeof(error));
    if (bridge_ == nullptr) {
      FLOW_FUNC_LOG_ERROR("FlowNode '%s' (%s.%s, a Python UDF workspace): %s",
                          node_.c_str(), ws::kModule, ws::kClass, error);
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    const std::string dir = ws::LibraryDir();
    const hflow::PyUdfSpec spec = {dir.c_str(), ws::kModule, ws::kClass,
                                   ws::kFuncs, ws::kFuncNum};
    udf_ = bridge_->create(&spec);
    if (udf_ == nullptr) return FlowFunc::FLOW_FUNC_FAILED;  // logged
    return bridge_->init(udf_, &params);
  }

  int32_t ResetFlowFuncState(
      const std::shared_ptr<FlowFunc::MetaParams>& params) override {
    if (udf_ == nullptr) return FlowFunc::FLOW_FUNC_FAILED;
    return bridge_->reset(udf_, &params);
  }
@procs@
 private:
  using Context = std::shared_ptr<FlowFunc::MetaRunContext>;
  using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;
  using Queues = std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>;

  int32_t Call(const char* func, const Context& ctx, const Msgs& inputs) {
    if (udf_ == nullptr) return NotReady(func);
    return bridge_->proc(udf_, func, &ctx, &inputs);
  }

  int32_t Call(const char* func, const Context& ctx, const Queues& inputs) {
    if (udf_ == nullptr) return NotReady(func);
    return bridge_->proc_stream(udf_, func, &ctx, &inputs);
  }

  int32_t NotReady(const char* func) const {
    FLOW_FUNC_LOG_ERROR("FlowNode '%s' (%s.%s): '%s' called before Init",
                        node_.c_str(), ws::kModule, ws::kClass, func);
    return FlowFunc::FLOW_FUNC_FAILED;
  }

  const hflow::PyUdfBridge* bridge_ = nullptr;
  void* udf_ = nullptr;
  std::string node_;
};

}  // namespace

FLOW_FUNC_REGISTRAR(@clz_name@)@registrations@;
"""

_PROC = """
  // The function "@func@"@stream_note@.
  int32_t @proc_name@(
      const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
      const std::vector<std::shared_ptr<@input_type@>>& inputs) {
    return Call("@func@", ctx, inputs);
  }
"""


def proc_method_names(func_names: Sequence[str]) -> list[str]:
    """GE's C++ method name per function (``my_func`` -> ``MyFuncProc``), made unique."""
    names: list[str] = []
    for func in func_names:
        base = "".join(part[:1].upper() + part[1:] for part in func.split("_") if part) or "Func"
        name = f"{base}Proc"
        n = 2
        while name in names:
            name = f"{base}Proc{n}"
            n += 1
        names.append(name)
    return names


def gen_wrapper_code(clz_name: str, func_names: Sequence[str], module_name: str,
                     stream_inputs: Sequence[bool], prj_name: str = "") -> str:
    """The C++ source for class ``clz_name`` whose functions are ``func_names``."""
    procs = []
    registrations = []
    for func, proc, stream in zip(func_names, proc_method_names(func_names), stream_inputs):
        input_type = "FlowFunc::FlowMsgQueue" if stream else "FlowFunc::FlowMsg"
        note = ", a stream function: it gets the input queues" if stream else ""
        procs.append(render(_PROC, func=func, proc_name=proc, input_type=input_type, stream_note=note))
        registrations.append(f'\n    .RegProcFunc("{func}", &{clz_name}::{proc})')
    return render(_FILE, cpp_name=f"{module_name}.cpp", prj_name=prj_name or module_name, clz_name=clz_name,
                  module_name=module_name, func_list=", ".join(f'"{f}"' for f in func_names),
                  func_num=str(len(func_names)), procs="".join(procs), registrations="".join(registrations))
