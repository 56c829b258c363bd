// `dataflow._core`: the extension module the Python package sits on, and
// the data type table its parts share (py_core.h).
//
// Thread-safety: the module is initialised once, under the GIL; the tables
// are constant.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "python/py_core.h"

namespace hflow {
namespace python {
namespace {

namespace py = pybind11;

struct DtypeEntry {
  int32_t code;
  const char* format;  // numpy's (struct module) format character
  char kind;           // numpy's dtype.kind
  size_t size;
};

// GE's DataType numbers (FlowFunc's TensorDataType uses the same).
constexpr DtypeEntry kDtypes[] = {
    {0, "f", 'f', 4}, {1, "e", 'f', 2},  {2, "b", 'i', 1},  {3, "i", 'i', 4},
    {4, "B", 'u', 1}, {6, "h", 'i', 2},  {7, "H", 'u', 2},  {8, "I", 'u', 4},
    {9, "q", 'i', 8}, {10, "Q", 'u', 8}, {11, "d", 'f', 8}, {12, "?", 'b', 1},
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

int32_t DtypeOfNumpy(const py::dtype& dt) {
  // kind and size, not the format: 'l' and 'q' are both int64 here.
  const char kind = dt.kind();
  const size_t size = static_cast<size_t>(dt.itemsize());
  for (const DtypeEntry& e : kDtypes) {
    if (e.kind == kind && e.size == size) return e.code;
  }
  return -1;
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
