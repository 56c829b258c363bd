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

rt::Context* ContextOf(uintptr_t handle) {
  return reinterpret_cast<rt::Context*>(handle);
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
        return py::make_tuple(code, reinterpret_cast<uintptr_t>(ctx));
      },
      py::arg("device"));
  r.def(
      "destroy_context",
      [](uintptr_t h) { return Code(rt::DestroyContext(ContextOf(h))); },
      py::arg("context"));
  r.def(
      "set_current_context",
      [](uintptr_t h) { return Code(rt::SetCurrentContext(ContextOf(h))); },
      py::arg("context"));
  r.def("get_current_context",
        [] { return reinterpret_cast<uintptr_t>(rt::GetCurrentContext()); });
  r.def(
      "get_context_device",
      [](uintptr_t h) {
        int32_t d = -1;
        const int code = Code(rt::GetContextDevice(ContextOf(h), &d));
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
