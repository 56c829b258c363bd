// `dataflow._core`: the extension module the Python package sits on, and
// the data type table its parts share (py_core.h).
//
// Thread-safety: the module is initialised once, under the GIL; the tables
// are constant.
#include <pybind11/pybind11.h>

#include "python/py_core.h"

namespace hflow {
namespace python {
namespace {

struct DtypeEntry {
  int32_t code;
  const char* format;  // numpy's (struct module) format character
  size_t size;
};

// GE's DataType numbers (FlowFunc's TensorDataType uses the same).
constexpr DtypeEntry kDtypes[] = {
    {0, "f", 4}, {1, "e", 2},  {2, "b", 1},  {3, "i", 4},
    {4, "B", 1}, {6, "h", 2},  {7, "H", 2},  {8, "I", 4},
    {9, "q", 8}, {10, "Q", 8}, {11, "d", 8}, {12, "?", 1},
};

const DtypeEntry* Find(int32_t code) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

}  // namespace

const char* NumpyFormat(int32_t dtype) {
  const DtypeEntry* e = Find(dtype);
  return e == nullptr ? nullptr : e->format;
}

size_t DtypeSize(int32_t dtype) {
  const DtypeEntry* e = Find(dtype);
  return e == nullptr ? 0 : e->size;
}

}  // namespace python
}  // namespace hflow

PYBIND11_MODULE(_core, m) {
  m.doc() =
      "hflow's C++ half of the dataflow package: GE's host API, Python UDFs "
      "and the runtime's context calls.";
  hflow::python::BindHost(m);
  hflow::python::BindUdfTypes(m);
  hflow::python::BindUdf(m);
  hflow::python::BindRt(m);
}
