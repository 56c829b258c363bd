// `dataflow._core.rt`: the device runtime's per-thread context calls
// (hflow/rt.h), so Python programs and tests can bind a device or context
// of their own and check that no dataflow call moves it. Contexts cross
// into Python as integer handles (0 = none). Returns hflow status codes (0
// = ok); `_core.rt.last_error()` gives the last failure's text. The calls
// need the runtime, which exists once hflow is initialized (the first
// FlowGraph).
//
// Thread-safety: the calls act on the calling thread's current context, as
// the runtime's do; the last error is per thread.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "hflow/device_runtime.h"
#include "hflow/rt.h"
#include "hflow/status.h"
#include "python/py_core.h"

namespace hflow {
namespace python {
namespace {

namespace py = pybind11;

thread_local std::string t_rt_error;

int Code(const Status& s) {
  t_rt_error = s.ok() ? "" : s.ToString();
  return static_cast<int>(s.code());
}

// The handles create_context and get_current_context gave out (and
// destroy_context has not taken back): any other integer is refused, never
// turned into a pointer.
std::mutex g_handles_mu;
std::set<uintptr_t> g_handles;  // GUARDED_BY(g_handles_mu)

bool Known(uintptr_t handle) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  return g_handles.count(handle) != 0;
}

Status Unknown(uintptr_t handle) {
  return Status::InvalidArgument(
      "context handle " + std::to_string(handle) +
      " was not made by create_context (or was destroyed)");
}

// A known handle's context; 0 is "no context" where `zero_ok`.
Status ContextOf(uintptr_t handle, bool zero_ok, rt::Context** out) {
  *out = reinterpret_cast<rt::Context*>(handle);
  if ((handle == 0 && zero_ok) || Known(handle)) return Status::OK();
  return Unknown(handle);
}

// Runs `call` on the context of a known handle.
template <typename Call>
int OnContext(uintptr_t handle, bool zero_ok, Call&& call) {
  rt::Context* ctx = nullptr;
  Status s = ContextOf(handle, zero_ok, &ctx);
  return Code(s.ok() ? call(ctx) : s);
}

}  // namespace

void BindRt(py::module_& m) {
  py::module_ r = m.def_submodule(
      "rt", "The device runtime's context calls (hflow/rt.h) for checks.");
  r.def(
      "set_device", [](int32_t d) { return Code(rt::SetDevice(d)); },
      py::arg("device"));
  r.def(
      "reset_device", [](int32_t d) { return Code(rt::ResetDevice(d)); },
      py::arg("device"));
  r.def("get_device", [] {
    int32_t d = -1;
    const int code = Code(rt::GetDevice(&d));
    return py::make_tuple(code, d);
  });
  r.def(
      "create_context",
      [](int32_t d) {
        rt::Context* ctx = nullptr;
        const int code = Code(rt::CreateContext(d, &ctx));
        const auto handle = reinterpret_cast<uintptr_t>(ctx);
        if (code == 0) {
          std::lock_guard<std::mutex> lock(g_handles_mu);
          g_handles.insert(handle);
        }
        return py::make_tuple(code, handle);
      },
      py::arg("device"));
  r.def(
      "destroy_context",
      [](uintptr_t h) {
        const int code = OnContext(
            h, false, [](rt::Context* c) { return rt::DestroyContext(c); });
        if (code == 0) {
          std::lock_guard<std::mutex> lock(g_handles_mu);
          g_handles.erase(h);
        }
        return code;
      },
      py::arg("context"));
  r.def(
      "set_current_context",
      [](uintptr_t h) {
        return OnContext(
            h, true, [](rt::Context* c) { return rt::SetCurrentContext(c); });
      },
      py::arg("context"));
  r.def("get_current_context", [] {
    // A context the runtime reports current is a real one (a device's
    // default context, say): it may be set current again.
    const auto handle = reinterpret_cast<uintptr_t>(rt::GetCurrentContext());
    if (handle != 0) {
      std::lock_guard<std::mutex> lock(g_handles_mu);
      g_handles.insert(handle);
    }
    return handle;
  });
  r.def(
      "get_context_device",
      [](uintptr_t h) {
        int32_t d = -1;
        const int code = OnContext(h, false, [&](rt::Context* c) {
          return rt::GetContextDevice(c, &d);
        });
        return py::make_tuple(code, d);
      },
      py::arg("context"));
  r.def("device_ids", [] {
    rt::DeviceRuntime* runtime = rt::CurrentRuntime();
    py::list ids;
    if (runtime != nullptr) {
      for (int32_t d : runtime->DeviceIds()) ids.append(d);
    }
    return ids;
  });
  r.def("last_error", [] { return t_rt_error; });
}

}  // namespace python
}  // namespace hflow
