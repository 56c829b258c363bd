// The UDF-library bridge of `dataflow._core` (py_bridge.cc): the
// PyCapsule "dataflow._core._udf_bridge" holding hflow::PyUdfBridge
// (include/flow_func/hflow_py_bridge.h), through which a C++ UDF library
// (a workspace of `dataflow.tools.create_func_ws`) runs a Python class's
// methods as its procs. The bridge reuses py_udf.cc's PythonUdf, so such
// a UDF gets the same handles, GIL handling and error reports as a Python
// UDF registered with register_py_udf.
//
// Thread-safety: BindBridge runs at import, under the GIL. NewPythonUdf
// needs the GIL; the Proc* functions take it themselves (Note [The GIL and
// hflow's threads] in py_core.h).
#ifndef HFLOW_PYTHON_PY_BRIDGE_H_
#define HFLOW_PYTHON_PY_BRIDGE_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_msg.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/meta_run_context.h"

namespace hflow {
namespace python {

// Adds the capsule `_udf_bridge` to the module.
void BindBridge(pybind11::module_& m);

// py_udf.cc: a PythonUdf around `driver` (an object with init(params),
// proc(name, ctx, inputs) and reset(params), as register_py_udf's drivers).
std::unique_ptr<FlowFunc::MetaMultiFunc> NewPythonUdf(pybind11::object driver);

// py_udf.cc: calls function `name` of a NewPythonUdf object.
int32_t ProcPythonUdf(
    FlowFunc::MetaMultiFunc& udf, const std::string& name,
    const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs);
int32_t ProcPythonUdf(
    FlowFunc::MetaMultiFunc& udf, const std::string& name,
    const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>& inputs);

}  // namespace python
}  // namespace hflow

#endif  // HFLOW_PYTHON_PY_BRIDGE_H_
