// The Python stack for hflow ctxcheck's findings (hflow/ctxcheck.h; Note
// [Script stacks]): the extension modules (dataflow._core, acl) register a
// provider that reads the calling thread's Python frames, so a finding from
// a Python program names the script's file, line and function and the
// Python thread's name.
//
// Thread-safety: RegisterPythonStack runs under the GIL (module import).
// The provider runs on any thread and reads frames only where that thread
// holds the GIL; elsewhere it answers "no script".
#ifndef HFLOW_PYTHON_PY_SCRIPT_STACK_H_
#define HFLOW_PYTHON_PY_SCRIPT_STACK_H_

namespace hflow {
namespace python {

// Registers the Python stack provider with hflow ctxcheck. Frames in the
// dataflow package and in Python's standard library are not the user's.
void RegisterPythonStack();

}  // namespace python
}  // namespace hflow

#endif  // HFLOW_PYTHON_PY_SCRIPT_STACK_H_
