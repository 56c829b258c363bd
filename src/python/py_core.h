// The pieces of the `dataflow._core` extension module (the Python package's
// C++ half): the host API over the GE bridge (py_host.cc), Python UDFs on
// the FlowFunc API (py_udf.cc, py_udf_types.cc) and the runtime's context
// calls (py_rt.cc), and the GIL on hflow's threads (py_gil.cc). Each Bind* adds
// its names to the module; module.cc calls them once, at import.
//
// Note [The GIL and hflow's threads]
// Python UDFs run on hflow's executor threads, host calls on the caller's.
// A call that may block or wait for a UDF (feed, fetch, build, remove,
// finalize, a queue's dequeue) releases the GIL first, and every entry from
// hflow into Python (a creator, Init, Proc, a destructor) takes it, so a
// host thread waiting in fetch_data never holds up the UDF that would
// answer it. Python objects are only touched with the GIL held: data is
// copied out of (or into) numpy arrays before the GIL is given up.
//
// Thread-safety: the Bind* functions run at import, under the GIL.
#ifndef HFLOW_PYTHON_PY_CORE_H_
#define HFLOW_PYTHON_PY_CORE_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>

namespace hflow {
namespace python {

void BindDtypes(pybind11::module_& m);  // GE's DT_* codes
void BindHost(pybind11::module_& m);
void BindUdf(pybind11::module_& m);
void BindUdfTypes(pybind11::module_& m);
void BindRt(pybind11::module_& m);
void BindWorker(pybind11::module_& m);  // Python UDFs in workers

// Holds the GIL on an hflow thread (an executor or deploy thread calling
// into Python), keeping the thread's Python thread state for the thread's
// life (Note [One thread state per hflow thread] in py_gil.cc). Use it, not
// pybind11's gil_scoped_acquire, wherever hflow calls into Python.
class UdfGil {
 public:
  UdfGil();
  ~UdfGil();
  UdfGil(const UdfGil&) = delete;
  UdfGil& operator=(const UdfGil&) = delete;

 private:
  PyGILState_STATE state_;
};

// Whether UdfGil keeps thread states (default true); threads that kept one
// already keep it. For tests only: switching it off brings back the
// per-call thread states the regression test detects.
void SetKeepThreadStates(bool keep);
// Kept states filed as orphans by exiting threads, and those deleted since
// (Note [One thread state per hflow thread]); for tests.
struct ThreadStateCounts {
  uint64_t filed = 0;
  uint64_t reaped = 0;
};
ThreadStateCounts KeptThreadStates();

// numpy's format character for a GE/FlowFunc data type code (they share
// numbers), or null for a type numpy has no plain format for (DT_STRING,
// DT_BF16, unknown codes).
const char* NumpyFormat(int32_t dtype);
// Bytes per element of `dtype`; 0 when NumpyFormat is null.
size_t DtypeSize(int32_t dtype);
// numpy's dtype for `dtype`, made once per type (GIL held); ValueError
// where NumpyFormat is null.
pybind11::dtype NumpyDtype(int32_t dtype);

}  // namespace python
}  // namespace hflow

#endif  // HFLOW_PYTHON_PY_CORE_H_
