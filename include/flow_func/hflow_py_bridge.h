// hflow's bridge from a UDF library to the Python `dataflow` package of the
// process the library runs in (hflow only; GE has no such header). A C++
// UDF built with this header runs a Python class's methods as its procs,
// with the same objects a Python UDF of the package gets (the run context,
// FlowMsg, FlowMsgQueue and MetaParams handles of `dataflow.flow_func`),
// without linking libpython or pybind11: the library finds the bridge at
// run time, so it builds the same for every Python and loads into any
// process. `python3 -m dataflow.tools.create_func_ws` generates such UDFs.
//
// The bridge is a table of functions that the `dataflow._core` extension
// publishes as the PyCapsule "dataflow._core._udf_bridge" (the numpy C-API
// pattern). FindPyUdfBridge looks it up through the Python C API of the
// running interpreter (dlsym, so nothing Python is linked): it fails, with a
// reason, in a process without an initialised Python interpreter (a C++
// host such as `hflow run`, or an hflow-worker process), so a UDF can
// refuse to start there instead of crashing. Compiles as C++11.
//
// Use: in Init, `const hflow::PyUdfBridge* b = hflow::FindPyUdfBridge(err,
// sizeof(err));`, then b->create and b->init; each proc calls b->proc (or
// b->proc_stream for a stream function); the destructor calls b->destroy.
//
// Thread-safety: FindPyUdfBridge may be called from any thread (it takes
// the GIL itself). The table is immutable. Every bridge function takes the
// GIL itself and may be called from any thread, one call per udf handle at
// a time (the runtime never calls one instance's functions concurrently).
#ifndef HFLOW_FLOW_FUNC_HFLOW_PY_BRIDGE_H_
#define HFLOW_FLOW_FUNC_HFLOW_PY_BRIDGE_H_

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "flow_msg.h"
#include "flow_msg_queue.h"
#include "meta_params.h"
#include "meta_run_context.h"

// The capsule `dataflow._core` publishes, and the table version this header
// describes. A later version only appends members (check `size`).
#define HFLOW_PY_UDF_BRIDGE_CAPSULE "dataflow._core._udf_bridge"
#define HFLOW_PY_UDF_BRIDGE_VERSION 1u

namespace hflow {

// What Python object serves one node instance: class `clz` of the module
// `module`, loaded from <py_dir>/<module>.py (py_dir also goes on sys.path,
// so modules beside it import), which must have a method for each of the
// `func_num` names in `funcs`. The strings are read during create only.
struct PyUdfSpec {
  const char* py_dir;
  const char* module;
  const char* clz;
  const char* const* funcs;
  uint32_t func_num;
};

// The bridge's functions. A `udf` is create's handle; the functions returning
// int32_t return a FLOW_FUNC_* code (a Python exception is logged with its
// traceback, naming the node and the function, and becomes FLOW_FUNC_FAILED).
struct PyUdfBridge {
  uint32_t version;  // HFLOW_PY_UDF_BRIDGE_VERSION of the extension
  uint32_t size;     // sizeof(PyUdfBridge) of the extension
  // Makes the Python driver for `spec` (nothing of the user's runs yet);
  // null on failure, logged.
  void* (*create)(const PyUdfSpec* spec);
  // Imports the module, makes the object and runs its init_flow_func (if it
  // has one) with `params`.
  int32_t (*init)(void* udf,
                  const std::shared_ptr<FlowFunc::MetaParams>* params);
  // GE's ResetFlowFuncState: a new object, initialised again.
  int32_t (*reset)(void* udf,
                   const std::shared_ptr<FlowFunc::MetaParams>* params);
  // Calls the object's method `func` with (run context, [FlowMsg]).
  int32_t (*proc)(
      void* udf, const char* func,
      const std::shared_ptr<FlowFunc::MetaRunContext>* ctx,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* inputs);
  // The same for a stream function, with (run context, [FlowMsgQueue]).
  int32_t (*proc_stream)(
      void* udf, const char* func,
      const std::shared_ptr<FlowFunc::MetaRunContext>* ctx,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>* inputs);
  // Releases create's handle (safe after the interpreter finalized).
  void (*destroy)(void* udf);
};

// The running interpreter's bridge, or null with the reason written to
// `error` (`size` bytes, NUL-terminated) when there is none: no Python in
// this process, Python not initialised, `dataflow._core` not importable
// (its traceback goes to stderr) or of an older version.
inline const PyUdfBridge* FindPyUdfBridge(char* error, size_t size) {
  typedef int (*IsInitializedFn)(void);
  typedef int (*GilEnsureFn)(void);  // PyGILState_STATE is an int enum
  typedef void (*GilReleaseFn)(int);
  typedef void* (*CapsuleImportFn)(const char*, int);
  typedef void (*ErrPrintFn)(void);
  IsInitializedFn is_initialized = reinterpret_cast<IsInitializedFn>(
      dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  GilEnsureFn gil_ensure =
      reinterpret_cast<GilEnsureFn>(dlsym(RTLD_DEFAULT, "PyGILState_Ensure"));
  GilReleaseFn gil_release =
      reinterpret_cast<GilReleaseFn>(dlsym(RTLD_DEFAULT, "PyGILState_Release"));
  CapsuleImportFn capsule_import = reinterpret_cast<CapsuleImportFn>(
      dlsym(RTLD_DEFAULT, "PyCapsule_Import"));
  ErrPrintFn err_print =
      reinterpret_cast<ErrPrintFn>(dlsym(RTLD_DEFAULT, "PyErr_Print"));
  if (is_initialized == nullptr || gil_ensure == nullptr ||
      gil_release == nullptr || capsule_import == nullptr ||
      err_print == nullptr) {
    snprintf(error, size,
             "this process has no Python interpreter (a C++ host such as "
             "`hflow run`, or a worker process under heavy_load or "
             "udf_isolation); run the graph from a Python program that "
             "calls dataflow.init, with the node in that process");
    return nullptr;
  }
  if (is_initialized() == 0) {
    snprintf(error, size,
             "Python is not initialised in this process; run the graph from "
             "a Python program that calls dataflow.init");
    return nullptr;
  }
  const int gil = gil_ensure();
  const PyUdfBridge* bridge = static_cast<const PyUdfBridge*>(
      capsule_import(HFLOW_PY_UDF_BRIDGE_CAPSULE, 0));
  if (bridge == nullptr) err_print();  // the import's traceback, to stderr
  gil_release(gil);
  if (bridge == nullptr) {
    snprintf(error, size,
             "cannot import %s (see the traceback on stderr); is hflow's "
             "dataflow package on this interpreter's path?",
             HFLOW_PY_UDF_BRIDGE_CAPSULE);
    return nullptr;
  }
  if (bridge->version < HFLOW_PY_UDF_BRIDGE_VERSION ||
      bridge->size < sizeof(PyUdfBridge)) {
    snprintf(error, size,
             "dataflow._core offers bridge version %u, this UDF needs %u; "
             "rebuild the UDF against the SDK of the dataflow package it "
             "runs with",
             static_cast<unsigned>(bridge->version),
             static_cast<unsigned>(HFLOW_PY_UDF_BRIDGE_VERSION));
    return nullptr;
  }
  return bridge;
}

}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_HFLOW_PY_BRIDGE_H_
