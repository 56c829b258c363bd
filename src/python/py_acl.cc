// `acl`: the runtime part of pyACL, CANN's Python ACL API, on hflow's
// libascendcl (include/acl/*.h), so that a Python program written for
// pyACL runs on simulated devices, and `hflow ctxcheck` finds its unbound
// calls with the Python stack (py_script_stack.h).
//
// pyACL's conventions: pointers, contexts and sizes are Python ints; a call
// returns `ret` (ACL's error code, 0 = ACL_SUCCESS), or a tuple with `ret`
// last (`ptr, ret = acl.rt.malloc(size, policy)`). pyACL's other modules
// (models, operators, media) are not here (docs/ctxcheck.md says so).
//
// Thread-safety: each call is the ACL call of the same name, callable from
// any thread. The GIL stays held through a call (they are short on
// simulated devices), which lets ctxcheck read the caller's Python stack.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "acl/acl.h"
#include "python/py_script_stack.h"

namespace {

namespace py = pybind11;

void* Ptr(uintptr_t v) { return reinterpret_cast<void*>(v); }
uintptr_t Int(const void* p) { return reinterpret_cast<uintptr_t>(p); }

void BindDevices(py::module_& rt) {
  rt.def(
      "set_device", [](int32_t id) { return aclrtSetDevice(id); },
      py::arg("device_id"));
  rt.def(
      "reset_device", [](int32_t id) { return aclrtResetDevice(id); },
      py::arg("device_id"));
  rt.def("get_device", [] {
    int32_t id = -1;
    aclError ret = aclrtGetDevice(&id);
    return std::make_tuple(id, ret);
  });
  rt.def("get_device_count", [] {
    uint32_t n = 0;
    aclError ret = aclrtGetDeviceCount(&n);
    return std::make_tuple(n, ret);
  });
  rt.def("get_run_mode", [] {
    aclrtRunMode mode = ACL_HOST;
    aclError ret = aclrtGetRunMode(&mode);
    return std::make_tuple(static_cast<int>(mode), ret);
  });
  rt.def("synchronize_device", [] { return aclrtSynchronizeDevice(); });
}

void BindContexts(py::module_& rt) {
  rt.def(
      "create_context",
      [](int32_t id) {
        aclrtContext ctx = nullptr;
        aclError ret = aclrtCreateContext(&ctx, id);
        return std::make_tuple(Int(ctx), ret);
      },
      py::arg("device_id"));
  rt.def(
      "destroy_context",
      [](uintptr_t ctx) { return aclrtDestroyContext(Ptr(ctx)); },
      py::arg("context"));
  rt.def(
      "set_context",
      [](uintptr_t ctx) { return aclrtSetCurrentContext(Ptr(ctx)); },
      py::arg("context"));
  rt.def("get_context", [] {
    aclrtContext ctx = nullptr;
    aclError ret = aclrtGetCurrentContext(&ctx);
    return std::make_tuple(Int(ctx), ret);
  });
}

void BindMemory(py::module_& rt) {
  rt.def(
      "malloc",
      [](size_t size, int policy) {
        void* p = nullptr;
        aclError ret =
            aclrtMalloc(&p, size, static_cast<aclrtMemMallocPolicy>(policy));
        return std::make_tuple(Int(p), ret);
      },
      py::arg("size"), py::arg("policy"));
  rt.def(
      "free", [](uintptr_t p) { return aclrtFree(Ptr(p)); },
      py::arg("dev_ptr"));
  rt.def(
      "malloc_host",
      [](size_t size) {
        void* p = nullptr;
        aclError ret = aclrtMallocHost(&p, size);
        return std::make_tuple(Int(p), ret);
      },
      py::arg("size"));
  rt.def(
      "free_host", [](uintptr_t p) { return aclrtFreeHost(Ptr(p)); },
      py::arg("host_ptr"));
  rt.def(
      "memcpy",
      [](uintptr_t dst, size_t dest_max, uintptr_t src, size_t count,
         int kind) {
        return aclrtMemcpy(Ptr(dst), dest_max, Ptr(src), count,
                           static_cast<aclrtMemcpyKind>(kind));
      },
      py::arg("dst"), py::arg("dest_max"), py::arg("src"), py::arg("count"),
      py::arg("kind"));
  rt.def(
      "memset",
      [](uintptr_t p, size_t max_count, int32_t value, size_t count) {
        return aclrtMemset(Ptr(p), max_count, value, count);
      },
      py::arg("dev_ptr"), py::arg("max_count"), py::arg("value"),
      py::arg("count"));
  rt.def(
      "get_mem_info",
      [](int attr) {
        size_t free_bytes = 0;
        size_t total = 0;
        aclError ret = aclrtGetMemInfo(static_cast<aclrtMemAttr>(attr),
                                       &free_bytes, &total);
        return std::make_tuple(free_bytes, total, ret);
      },
      py::arg("attr"));
}

// A C-contiguous buffer's first byte, for the copy calls' host side. As in
// pyACL the address is valid while the object lives and is not resized. A
// strided view is refused: a copy of its byte count from its first
// element's address would run past it.
uintptr_t BufferAddress(py::handle obj, const char* call) {
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) {
    PyErr_Clear();
    throw py::value_error(std::string(call) +
                          ": the object must be a C-contiguous buffer "
                          "(bytes, bytearray, a contiguous numpy array: "
                          "numpy.ascontiguousarray makes one)");
  }
  const uintptr_t address = Int(view.buf);
  PyBuffer_Release(&view);
  return address;
}

void BindUtil(py::module_& util) {
  util.def(
      "bytes_to_ptr",
      [](py::handle data) { return BufferAddress(data, "bytes_to_ptr"); },
      py::arg("data"), "The address of a bytes-like object's buffer.");
  util.def(
      "numpy_to_ptr",
      [](py::handle array) { return BufferAddress(array, "numpy_to_ptr"); },
      py::arg("array"), "The address of a C-contiguous numpy array's data.");
  util.def(
      "ptr_to_bytes",
      [](uintptr_t p, size_t size) {
        if (p == 0 && size != 0) {
          throw py::value_error("ptr_to_bytes: the pointer is 0 (NULL)");
        }
        return py::bytes(static_cast<const char*>(Ptr(p)), size);
      },
      py::arg("ptr"), py::arg("size"), "A copy of `size` host bytes at `ptr`.");
}

}  // namespace

PYBIND11_MODULE(acl, m) {
  m.doc() =
      "pyACL's runtime calls (acl.init, acl.rt.*, acl.util) on hflow's "
      "simulated devices.";
  m.def(
      "init",
      [](const std::string& config_path) {
        return aclInit(config_path.empty() ? nullptr : config_path.c_str());
      },
      py::arg("config_path") = "");
  m.def("finalize", [] { return aclFinalize(); });
  py::module_ rt = m.def_submodule("rt", "Devices, contexts and memory.");
  BindDevices(rt);
  BindContexts(rt);
  BindMemory(rt);
  py::module_ util = m.def_submodule("util", "Host buffers and pointers.");
  BindUtil(util);
  hflow::python::RegisterPythonStack();
}
