// The pieces of the `dataflow._core` extension module (the Python package's
// C++ half): the host API over the GE bridge (py_host.cc), Python UDFs on
// the FlowFunc API (py_udf.cc, py_udf_types.cc) and the runtime's context
// calls (py_rt.cc). Each Bind* adds its names to the module; module.cc
// calls them once, at import.
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

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>

namespace hflow {
namespace python {

void BindHost(pybind11::module_& m);
void BindUdf(pybind11::module_& m);
void BindUdfTypes(pybind11::module_& m);
void BindRt(pybind11::module_& m);

// numpy's format character for a GE/FlowFunc data type code (they share
// numbers), or null for a type numpy has no plain format for (DT_STRING,
// DT_BF16, unknown codes).
const char* NumpyFormat(int32_t dtype);
// Bytes per element of `dtype`; 0 when NumpyFormat is null.
size_t DtypeSize(int32_t dtype);

}  // namespace python
}  // namespace hflow

#endif  // HFLOW_PYTHON_PY_CORE_H_
