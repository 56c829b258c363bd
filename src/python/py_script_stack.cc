// The Python stack provider for hflow ctxcheck (py_script_stack.h).
//
// Thread-safety: the provider reads frames only on a thread holding the
// GIL; the exclusion list is written once under the GIL at registration and
// read under it.
#include "python/py_script_stack.h"

#include <Python.h>
#include <frameobject.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "hflow/ctxcheck.h"

namespace hflow {
namespace python {
namespace {

namespace py = pybind11;

constexpr size_t kMaxFrames = 48;

// Folders whose frames are not the user's: the dataflow package's and
// Python's standard library. Leaked: read at exit by late findings.
std::vector<std::string>* g_not_user = nullptr;  // GUARDED_BY(the GIL)

std::string Utf8(PyObject* s) {
  if (s == nullptr || !PyUnicode_Check(s)) return "";
  const char* c = PyUnicode_AsUTF8(s);
  if (c == nullptr) {
    PyErr_Clear();
    return "";
  }
  return c;
}

bool IsUser(const std::string& file) {
  // "<frozen importlib._bootstrap>" and the like are Python's own;
  // "<string>" and "<stdin>" are the user's code given inline.
  if (file.rfind("<frozen", 0) == 0) return false;
  for (const std::string& dir : *g_not_user) {
    if (file.rfind(dir, 0) == 0) return false;
  }
  return true;
}

// The name threading gave the calling thread, read from its table without
// running Python code (no property, no call): "" when it is not there.
std::string ThreadName() {
  PyObject* key = PyUnicode_FromString("threading");
  PyObject* threading = key ? PyImport_GetModule(key) : nullptr;
  Py_XDECREF(key);
  if (threading == nullptr) {
    PyErr_Clear();
    return "";
  }
  std::string name;
  PyObject* active = PyObject_GetAttrString(threading, "_active");
  PyObject* ident = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
  if (active != nullptr && ident != nullptr && PyDict_Check(active)) {
    PyObject* thread = PyDict_GetItemWithError(active, ident);  // borrowed
    if (thread != nullptr) {
      PyObject* n = PyObject_GetAttrString(thread, "_name");
      name = Utf8(n);
      Py_XDECREF(n);
    }
  }
  Py_XDECREF(ident);
  Py_XDECREF(active);
  Py_DECREF(threading);
  PyErr_Clear();
  return name;
}

void ReadFrames(std::vector<CtxCheckScriptFrame>* out) {
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  Py_XINCREF(f);
  while (f != nullptr && out->size() < kMaxFrames) {
    PyCodeObject* code = PyFrame_GetCode(f);
    CtxCheckScriptFrame sf;
    sf.file = Utf8(code->co_filename);
#if PY_VERSION_HEX >= 0x030B0000
    sf.function = Utf8(code->co_qualname);
#else
    sf.function = Utf8(code->co_name);
#endif
    sf.line = PyFrame_GetLineNumber(f);
    sf.user = IsUser(sf.file);
    Py_DECREF(code);
    out->push_back(std::move(sf));
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
}

bool PythonStack(CtxCheckScriptStack* out) {
  // A thread without the GIL (hflow's own pool threads, a C++ caller) has
  // no Python frame this thread may read. PyGILState_Check alone answers
  // yes everywhere once a sub-interpreter exists: the thread must also be
  // the one whose state is current.
  if (!Py_IsInitialized() || PyGILState_Check() == 0) return false;
  PyThreadState* mine = PyGILState_GetThisThreadState();
  if (mine == nullptr || mine != _PyThreadState_UncheckedGet()) return false;
  // The caller may be inside an error path: keep its exception.
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  ReadFrames(&out->frames);
  out->thread = ThreadName();
  PyErr_Restore(type, value, traceback);
  out->language = "python";
  return !out->frames.empty();
}

// The folders of the dataflow package (found without importing it) and of
// the standard library.
std::vector<std::string> NotUserFolders() {
  std::vector<std::string> dirs;
  auto add = [&dirs](const std::string& d) {
    if (!d.empty()) dirs.push_back(d.back() == '/' ? d : d + "/");
  };
  try {
    py::module_ sysconfig = py::module_::import("sysconfig");
    for (const char* key : {"stdlib", "platstdlib"}) {
      py::object p = sysconfig.attr("get_path")(key);
      if (!p.is_none()) add(p.cast<std::string>());
    }
    py::object spec =
        py::module_::import("importlib.util").attr("find_spec")("dataflow");
    if (!spec.is_none()) {
      py::object locs = spec.attr("submodule_search_locations");
      if (!locs.is_none()) {
        for (py::handle l : locs) add(py::str(l).cast<std::string>());
      }
    }
  } catch (const py::error_already_set&) {
    // Without them every frame counts as the user's: still a location.
  }
  return dirs;
}

}  // namespace

void RegisterPythonStack() {
  if (g_not_user == nullptr) {
    g_not_user = new std::vector<std::string>(NotUserFolders());
  }
  SetCtxCheckScriptStackProvider(&PythonStack);
}

}  // namespace python
}  // namespace hflow
