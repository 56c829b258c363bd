// Python UDFs: register_py_udf puts a Python class's functions into
// FlowFunc's registry (RegisterMultiFunc, the process's own registrations),
// so a graph-file node naming them in its func_list runs them in-process on
// the executor threads like any C++ UDF. Each node instance gets one
// PythonUdf (a MetaMultiFunc) around a Python *driver* made by the
// registration's factory; Init, Proc and ResetFlowFuncState call the
// driver's init, proc and reset with the GIL held.
//
// A Python exception escaping the driver is logged with its traceback,
// naming the node and the function, and becomes FLOW_FUNC_FAILED; it never
// crosses into hflow's C++.
//
// Note [Python objects past the interpreter]
// Registrations are never removed (the registry keeps creators for the
// process's life), so the factories they hold are never released; a
// PythonUdf destroyed after the interpreter finalized drops its driver
// without touching it. The package's atexit hook finalizes hflow first, so
// in a normal exit every driver is released with the interpreter alive.
//
// Thread-safety: the creators run on deploy threads, the procs on executor
// threads; each takes the GIL before touching Python (Note [The GIL and
// hflow's threads] in py_core.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_multi_func.h"
#include "python/py_bridge.h"
#include "python/py_core.h"
#include "python/py_udf_types.h"

namespace hflow {
namespace python {
namespace {

namespace py = pybind11;
namespace ff = FlowFunc;

void LogFailure(const std::string& what, const std::string& detail) {
  FLOW_FUNC_LOG_ERROR("Python UDF %s raised: %s", what.c_str(), detail.c_str());
}

class PythonUdf : public ff::MetaMultiFunc {
 public:
  explicit PythonUdf(py::object driver) : driver_(std::move(driver)) {}
  ~PythonUdf() override {
    if (!Py_IsInitialized()) {
      (void)driver_.release();  // Note [Python objects past the interpreter]
      return;
    }
    UdfGil gil;
    driver_ = py::object();
  }

  int32_t Init(const std::shared_ptr<ff::MetaParams>& params) override {
    node_ = params == nullptr ? "" : params->GetName();
    return Call("init", "init",
                [&] { return driver_.attr("init")(UdfParams{params}); });
  }

  int32_t ResetFlowFuncState(
      const std::shared_ptr<ff::MetaParams>& params) override {
    return Call("reset", "reset", [&] {
      if (!py::hasattr(driver_, "reset")) {
        return py::object(py::int_(ff::FLOW_FUNC_ERR_NOT_SUPPORT));
      }
      return driver_.attr("reset")(UdfParams{params});
    });
  }

  template <typename Input, typename Handle>
  int32_t Proc(const std::string& name,
               const std::shared_ptr<ff::MetaRunContext>& ctx,
               const std::vector<std::shared_ptr<Input>>& inputs) {
    return Call("proc", name, [&] {
      py::list in;
      for (const auto& i : inputs) in.append(Handle{i});
      return driver_.attr("proc")(name, UdfContext{ctx}, in);
    });
  }

 private:
  // Runs `f` with the GIL; its result is the code (an int, or None for
  // success).
  template <typename F>
  int32_t Call(const char* method, const std::string& function, F&& f) {
    UdfGil gil;
    const std::string what =
        "'" + function + "' of node '" + node_ + "' (" + method + ")";
    try {
      py::object r = f();
      if (r.is_none()) return ff::FLOW_FUNC_SUCCESS;
      if (!py::isinstance<py::int_>(r)) {
        LogFailure(what, "returned " + std::string(py::str(r.get_type())) +
                             ", not an int code");
        return ff::FLOW_FUNC_FAILED;
      }
      return r.cast<int32_t>();
    } catch (py::error_already_set& e) {
      LogFailure(what, e.what());
      return ff::FLOW_FUNC_FAILED;
    } catch (const std::exception& e) {
      LogFailure(what, e.what());
      return ff::FLOW_FUNC_FAILED;
    }
  }

  py::object driver_;
  std::string node_;
};

// One registration: its functions and the factory making drivers. Leaked
// on purpose (Note [Python objects past the interpreter]).
struct Registration {
  std::vector<std::string> names;
  std::vector<bool> stream;
  py::object factory;
};

// The instance in `slot`, made by the factory when the slot is empty.
PythonUdf* InstanceIn(const Registration& reg,
                      std::shared_ptr<ff::MetaMultiFunc>& slot) {
  if (slot != nullptr) return dynamic_cast<PythonUdf*>(slot.get());
  UdfGil gil;
  try {
    slot = std::make_shared<PythonUdf>(reg.factory());
  } catch (py::error_already_set& e) {
    LogFailure("factory of '" + reg.names.front() + "'", e.what());
    return nullptr;
  } catch (const std::exception& e) {
    LogFailure("factory of '" + reg.names.front() + "'", e.what());
    return nullptr;
  }
  return static_cast<PythonUdf*>(slot.get());
}

template <typename Input, typename Handle, typename Proc>
int32_t Publish(const Registration& reg, bool stream,
                std::shared_ptr<ff::MetaMultiFunc>& slot,
                std::map<ff::AscendString, Proc>& procs) {
  PythonUdf* udf = InstanceIn(reg, slot);
  if (udf == nullptr) return ff::FLOW_FUNC_FAILED;
  for (size_t i = 0; i < reg.names.size(); ++i) {
    if (reg.stream[i] != stream) continue;
    const std::string name = reg.names[i];
    procs[ff::AscendString(name.c_str())] =
        [udf, name](const std::shared_ptr<ff::MetaRunContext>& ctx,
                    const std::vector<std::shared_ptr<Input>>& in) {
          return udf->Proc<Input, Handle>(name, ctx, in);
        };
  }
  return ff::FLOW_FUNC_SUCCESS;
}

void RegisterPyUdf(const std::vector<std::string>& names,
                   const std::vector<bool>& stream, py::object factory) {
  if (names.empty() || names.size() != stream.size()) {
    throw py::value_error(
        "register_py_udf needs one stream flag per function name");
  }
  if (!PyCallable_Check(factory.ptr())) {
    throw py::type_error("register_py_udf: the factory must be callable");
  }
  auto* reg = new Registration{names, stream, std::move(factory)};
  for (size_t i = 0; i < names.size(); ++i) {
    bool ok = false;
    if (stream[i]) {
      ff::MULTI_FUNC_WITH_Q_CREATOR_FUNC creator =
          [reg](std::shared_ptr<ff::MetaMultiFunc>& slot,
                std::map<ff::AscendString, ff::PROC_FUNC_WITH_CONTEXT_Q>& p) {
            return Publish<ff::FlowMsgQueue, UdfQueue>(*reg, true, slot, p);
          };
      ok = ff::RegisterMultiFunc(names[i].c_str(), creator);
    } else {
      ff::MULTI_FUNC_CREATOR_FUNC creator =
          [reg](std::shared_ptr<ff::MetaMultiFunc>& slot,
                std::map<ff::AscendString, ff::PROC_FUNC_WITH_CONTEXT>& p) {
            return Publish<ff::FlowMsg, UdfMsg>(*reg, false, slot, p);
          };
      ok = ff::RegisterMultiFunc(names[i].c_str(), creator);
    }
    if (!ok) {
      throw py::value_error("function name '" + names[i] +
                            "' is empty or already registered in this "
                            "process; give each Python UDF function a "
                            "unique name");
    }
  }
}

}  // namespace

std::unique_ptr<ff::MetaMultiFunc> NewPythonUdf(py::object driver) {
  return std::make_unique<PythonUdf>(std::move(driver));
}

int32_t ProcPythonUdf(ff::MetaMultiFunc& udf, const std::string& name,
                      const std::shared_ptr<ff::MetaRunContext>& ctx,
                      const std::vector<std::shared_ptr<ff::FlowMsg>>& in) {
  return static_cast<PythonUdf&>(udf).Proc<ff::FlowMsg, UdfMsg>(name, ctx, in);
}

int32_t ProcPythonUdf(
    ff::MetaMultiFunc& udf, const std::string& name,
    const std::shared_ptr<ff::MetaRunContext>& ctx,
    const std::vector<std::shared_ptr<ff::FlowMsgQueue>>& in) {
  return static_cast<PythonUdf&>(udf).Proc<ff::FlowMsgQueue, UdfQueue>(name,
                                                                       ctx, in);
}

void BindUdf(py::module_& m) {
  m.def("register_py_udf", &RegisterPyUdf, py::arg("names"), py::arg("stream"),
        py::arg("factory"),
        "Registers Python UDF functions: a node whose func_list names them "
        "gets one driver per instance from factory().");
  m.def("_keep_udf_thread_states", &SetKeepThreadStates, py::arg("keep"),
        "Tests only: whether hflow threads keep their Python thread state "
        "between UDF calls (default True; call before df.init).");
  m.def(
      "_udf_thread_states",
      [] {
        ThreadStateCounts c = KeptThreadStates();
        return py::make_tuple(c.filed, c.reaped);
      },
      "Tests only: (kept thread states filed by exiting hflow threads, "
      "those deleted since).");
}

}  // namespace python
}  // namespace hflow
