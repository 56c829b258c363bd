// Kernels: how the model executor runs each ModelIr operator on ATen. A
// KernelMaker turns one IrNode into a Kernel once, at load: it reads and
// checks the node's attributes (an error names the node and attribute), so
// a run does no parsing. A Kernel maps input tensors to output tensors
// (absent optional inputs are undefined tensors).
//
// This header includes ATen: only the executor's translation units
// (executor.cc, ops_*.cc) include it, each costing seconds to compile.
//
// Thread-safety: makers are reentrant; a Kernel is called by one thread at
// a time (its executor's), and keeps no state between calls.
#ifndef HFLOW_MODEL_KERNELS_H_
#define HFLOW_MODEL_KERNELS_H_

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "model/ir.h"

namespace hflow {
namespace model {

using Tensors = std::vector<at::Tensor>;
using Kernel = std::function<void(const Tensors& in, Tensors* out)>;
using KernelMaker = Status (*)(const IrNode& node, Kernel* out);

struct OpInfo {
  KernelMaker make;
  const char* group;  // "elementwise", "nn", "shape", "reduction" (docs)
};
using KernelTable = std::map<std::string, OpInfo>;

// Each ops_*.cc adds its operators.
void AddElementwiseKernels(KernelTable* table);
void AddNnKernels(KernelTable* table);
void AddShapeKernels(KernelTable* table);

// Every operator the executor runs, by ONNX name.
const KernelTable& Kernels();

at::ScalarType ToScalarType(DataType t);
DataType FromScalarType(at::ScalarType t);

// Attribute readers: the value, or `def` when absent; an attribute of
// another kind is an error naming node and attribute.
Status AttrInt(const IrNode& n, const char* name, int64_t def, int64_t* out);
Status AttrFloat(const IrNode& n, const char* name, double def, double* out);
Status AttrString(const IrNode& n, const char* name, const std::string& def,
                  std::string* out);
Status AttrInts(const IrNode& n, const char* name,
                const std::vector<int64_t>& def, std::vector<int64_t>* out);
bool HasAttr(const IrNode& n, const char* name);

// An InvalidArgument naming the node: "node 'x' (Conv): <what>".
Status NodeError(const IrNode& n, const std::string& what);

// The values of a 1-D int64 (or int32) tensor, as read from a shape-like
// input at run time.
std::vector<int64_t> IntsOf(const at::Tensor& t);

// A negative axis counted from the end, into [0, rank).
int64_t NormAxis(int64_t axis, int64_t rank);

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_KERNELS_H_
