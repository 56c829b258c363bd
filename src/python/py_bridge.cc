// The bridge table behind the capsule "dataflow._core._udf_bridge"
// (include/flow_func/hflow_py_bridge.h). A UDF library calls it with the
// runtime's own C++ objects; each function takes the GIL, turns them into
// the handles a Python UDF gets and calls a Python driver made by
// `dataflow.tools.ws_runtime.WorkspaceDriver`, through py_udf.cc's
// PythonUdf. Nothing thrown crosses back into the library: a failure is
// logged, naming what failed, and becomes FLOW_FUNC_FAILED or a null handle.
//
// The table holds plain function pointers and C++ standard-library types
// whose layout does not depend on _GLIBCXX_USE_CXX11_ABI (shared_ptr,
// vector; strings cross as const char*), so a library built in GE's old-ABI
// mode can call it; no pybind11 type crosses, so the library needs neither
// pybind11 nor the same compiler as this module.
//
// Thread-safety: the table is constant; every entry takes the GIL (UdfGil)
// before it touches Python. One udf handle is used by one thread at a time.
#include "python/py_bridge.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/hflow_py_bridge.h"
#include "python/py_core.h"

namespace hflow {
namespace python {
namespace {

namespace py = pybind11;
namespace ff = FlowFunc;

// The Python class that drives a workspace UDF (python/dataflow/tools/).
constexpr const char* kDriverModule = "dataflow.tools.ws_runtime";
constexpr const char* kDriverClass = "WorkspaceDriver";

std::string Str(const char* s) { return s == nullptr ? "" : s; }

void* Create(const PyUdfSpec* spec) {
  if (spec == nullptr || spec->module == nullptr || spec->clz == nullptr ||
      (spec->func_num > 0 && spec->funcs == nullptr)) {
    FLOW_FUNC_LOG_ERROR(
        "hflow Python bridge: create got an incomplete PyUdfSpec "
        "(module, class and function names are required)");
    return nullptr;
  }
  const std::string what = Str(spec->module) + "." + Str(spec->clz);
  try {
    UdfGil gil;
    try {
      py::list funcs;
      for (uint32_t i = 0; i < spec->func_num; ++i) {
        funcs.append(Str(spec->funcs[i]));
      }
      py::object driver =
          py::module_::import(kDriverModule)
              .attr(kDriverClass)(Str(spec->py_dir), Str(spec->module),
                                  Str(spec->clz), funcs);
      return NewPythonUdf(std::move(driver)).release();
    } catch (py::error_already_set& e) {
      FLOW_FUNC_LOG_ERROR(
          "hflow Python bridge: making the driver of %s (%s.%s) raised: %s",
          what.c_str(), kDriverModule, kDriverClass, e.what());
      return nullptr;
    }
  } catch (const std::exception& e) {
    FLOW_FUNC_LOG_ERROR("hflow Python bridge: making the driver of %s: %s",
                        what.c_str(), e.what());
    return nullptr;
  }
}

// Runs `f` on the handle's PythonUdf, turning a missing handle and any
// exception into FLOW_FUNC_FAILED (PythonUdf already handles Python's).
template <typename F>
int32_t OnUdf(void* udf, const char* what, F&& f) {
  if (udf == nullptr) {
    FLOW_FUNC_LOG_ERROR("hflow Python bridge: %s called without a udf handle",
                        what);
    return ff::FLOW_FUNC_FAILED;
  }
  try {
    return f(*static_cast<ff::MetaMultiFunc*>(udf));
  } catch (const std::exception& e) {
    FLOW_FUNC_LOG_ERROR("hflow Python bridge: %s: %s", what, e.what());
    return ff::FLOW_FUNC_FAILED;
  }
}

int32_t Init(void* udf, const std::shared_ptr<ff::MetaParams>* params) {
  return OnUdf(udf, "init", [&](ff::MetaMultiFunc& u) {
    return u.Init(params == nullptr ? nullptr : *params);
  });
}

int32_t Reset(void* udf, const std::shared_ptr<ff::MetaParams>* params) {
  return OnUdf(udf, "reset", [&](ff::MetaMultiFunc& u) {
    return u.ResetFlowFuncState(params == nullptr ? nullptr : *params);
  });
}

template <typename Input>
int32_t ProcOf(void* udf, const char* func,
               const std::shared_ptr<ff::MetaRunContext>* ctx,
               const std::vector<std::shared_ptr<Input>>* inputs) {
  return OnUdf(udf, "proc", [&](ff::MetaMultiFunc& u) {
    if (func == nullptr || ctx == nullptr || inputs == nullptr) {
      FLOW_FUNC_LOG_ERROR(
          "hflow Python bridge: proc needs a function name, a run context "
          "and the inputs");
      return ff::FLOW_FUNC_FAILED;
    }
    return ProcPythonUdf(u, func, *ctx, *inputs);
  });
}

int32_t Proc(void* udf, const char* func,
             const std::shared_ptr<ff::MetaRunContext>* ctx,
             const std::vector<std::shared_ptr<ff::FlowMsg>>* inputs) {
  return ProcOf(udf, func, ctx, inputs);
}

int32_t ProcStream(void* udf, const char* func,
                   const std::shared_ptr<ff::MetaRunContext>* ctx,
                   const std::vector<std::shared_ptr<ff::FlowMsgQueue>>* in) {
  return ProcOf(udf, func, ctx, in);
}

// PythonUdf's destructor takes the GIL, or leaves the driver alone once the
// interpreter is gone (Note [Python objects past the interpreter]).
void Destroy(void* udf) { delete static_cast<ff::MetaMultiFunc*>(udf); }

const PyUdfBridge kBridge = {HFLOW_PY_UDF_BRIDGE_VERSION,
                             static_cast<uint32_t>(sizeof(PyUdfBridge)),
                             &Create,
                             &Init,
                             &Reset,
                             &Proc,
                             &ProcStream,
                             &Destroy};

}  // namespace

void BindBridge(py::module_& m) {
  // The name must be the attribute's full path for PyCapsule_Import.
  m.attr("_udf_bridge") = py::capsule(&kBridge, HFLOW_PY_UDF_BRIDGE_CAPSULE);
}

}  // namespace python
}  // namespace hflow
