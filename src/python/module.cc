// `dataflow._core`: the extension module the Python package sits on, and
// the data type table its parts share (py_core.h): GE's DT_* names, numpy's
// formats and the numpy dtype objects, made once.
//
// Thread-safety: the module is initialised once, under the GIL; the table
// is constant and the dtype cache is filled and read under the GIL.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "python/py_bridge.h"
#include "python/py_core.h"
#include "python/py_script_stack.h"

namespace hflow {
namespace python {
namespace {

struct DtypeEntry {
  int32_t code;
  const char* name;    // GE's
  const char* format;  // numpy's (struct module) format character, or null
  size_t size;         // 0 where format is null
};

// GE's DataType numbers (FlowFunc's TensorDataType uses the same). The
// last two have no numpy type hflow's tensors carry.
constexpr DtypeEntry kDtypes[] = {
    {0, "DT_FLOAT", "f", 4},       {1, "DT_FLOAT16", "e", 2},
    {2, "DT_INT8", "b", 1},        {3, "DT_INT32", "i", 4},
    {4, "DT_UINT8", "B", 1},       {6, "DT_INT16", "h", 2},
    {7, "DT_UINT16", "H", 2},      {8, "DT_UINT32", "I", 4},
    {9, "DT_INT64", "q", 8},       {10, "DT_UINT64", "Q", 8},
    {11, "DT_DOUBLE", "d", 8},     {12, "DT_BOOL", "?", 1},
    {13, "DT_STRING", nullptr, 0}, {27, "DT_BF16", nullptr, 0},
};
constexpr size_t kDtypeCount = sizeof(kDtypes) / sizeof(kDtypes[0]);

const DtypeEntry* Find(int32_t code) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

// Every fetched array needs its dtype; making one from the format string
// goes through numpy's parser each time, so each is made once. Leaked on
// purpose: the interpreter may be gone when static destructors run.
PyObject* g_numpy_dtypes[kDtypeCount] = {};

}  // namespace

const char* NumpyFormat(int32_t dtype) {
  const DtypeEntry* e = Find(dtype);
  return e == nullptr ? nullptr : e->format;
}

size_t DtypeSize(int32_t dtype) {
  const DtypeEntry* e = Find(dtype);
  return e == nullptr ? 0 : e->size;
}

pybind11::dtype NumpyDtype(int32_t dtype) {
  const DtypeEntry* e = Find(dtype);
  if (e == nullptr || e->format == nullptr) {
    throw pybind11::value_error("data type code " + std::to_string(dtype) +
                                " has no numpy type");
  }
  PyObject*& cached = g_numpy_dtypes[e - kDtypes];
  if (cached == nullptr) cached = pybind11::dtype(e->format).release().ptr();
  return pybind11::reinterpret_borrow<pybind11::dtype>(cached);
}

void BindDtypes(pybind11::module_& m) {
  for (const DtypeEntry& e : kDtypes) m.attr(e.name) = e.code;
}

}  // namespace python
}  // namespace hflow

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "hflow's C++ half of the dataflow package: GE's host API, Python UDFs "
      "and the runtime's context calls.";
  hflow::python::BindDtypes(m);
  hflow::python::BindHost(m);
  hflow::python::BindUdfTypes(m);
  hflow::python::BindUdf(m);
  hflow::python::BindBridge(m);
  hflow::python::BindRt(m);
  hflow::python::BindWorker(m);
  hflow::python::RegisterPythonStack();
}
