// Python UDFs in worker processes: the host program's recipes and the
// worker's side. set_py_udf_recipe tells hflow how a worker can run a
// registered Python UDF (flow_func::RemoteRecipe: the interpreter to start,
// and the pickled process point, opaque here); _serve_worker makes this
// interpreter a worker process (worker/serve.h), whose loader is the
// package's dataflow._worker.load.
//
// Thread-safety: set_py_udf_recipe runs with the GIL; _serve_worker never
// returns (the process ends with _exit) and gives the GIL up while it
// serves; the loader takes it on the worker's slot threads (UdfGil).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "flow_func/udf_library.h"
#include "python/py_core.h"
#include "worker/serve.h"

namespace hflow {
namespace python {
namespace {

namespace py = pybind11;

void SetPyUdfRecipe(const std::vector<std::string>& names,
                    const std::vector<std::string>& launcher,
                    const py::bytes& payload, const std::string& error) {
  flow_func::RemoteRecipe r;
  r.launcher = launcher;
  r.payload = std::string(payload);
  r.error = error;
  for (const std::string& n : names) flow_func::SetRemoteRecipe(n, r);
}

int ServeWorker(int control_fd, long parent_pid, int heartbeat_ms,
                py::object load) {
  // Leaked on purpose: the process ends with _exit while slot threads may
  // still hold it.
  auto* loader = new py::object(std::move(load));
  worker::PayloadLoader f = [loader](const std::string& payload) -> Status {
    UdfGil gil;
    try {
      (*loader)(py::bytes(payload));
      return Status::OK();
    } catch (py::error_already_set& e) {
      return Status::InvalidArgument(e.what());
    }
  };
  py::gil_scoped_release release;
  return worker::ServeWorker(control_fd, parent_pid, heartbeat_ms,
                             std::move(f));
}

}  // namespace

void BindWorker(py::module_& m) {
  m.def("set_py_udf_recipe", &SetPyUdfRecipe, py::arg("names"),
        py::arg("launcher"), py::arg("payload"), py::arg("error"),
        "How a worker process runs these registered Python UDF functions: "
        "the program to start and the pickled process point (or why it "
        "cannot: error).");
  m.def("_serve_worker", &ServeWorker, py::arg("control_fd"),
        py::arg("parent_pid"), py::arg("heartbeat_ms"), py::arg("load"),
        "Makes this interpreter an hflow worker process (never returns "
        "while the host lives); load(payload) registers a recipe's "
        "functions.");
}

}  // namespace python
}  // namespace hflow
