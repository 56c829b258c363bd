// Executor (executor.h) and the kernels' shared helpers (kernels.h).
//
// Note [Value slots]
// Values are numbered at load (inputs, then constants, then each node's
// outputs), so a run indexes a vector instead of looking names up. A run
// owns its own slot vector: runs on several threads never share tensors.
// Each node's step lists the slots it frees afterwards (values whose last
// reader it is, not model outputs, not constants), so a deep network holds
// only the live activations, not all of them.
//
// Thread-safety: see executor.h.
#include "model/executor.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <map>

#include "model/kernels.h"

namespace hflow {
namespace model {

// ---- kernels.h helpers ----

const KernelTable& Kernels() {
  static const KernelTable* table = [] {
    auto* t = new KernelTable;
    AddElementwiseKernels(t);
    AddNnKernels(t);
    AddShapeKernels(t);
    return t;
  }();
  return *table;
}

at::ScalarType ToScalarType(DataType t) {
  switch (t) {
    case DataType::DT_FLOAT:
      return at::kFloat;
    case DataType::DT_FLOAT16:
      return at::kHalf;
    case DataType::DT_BF16:
      return at::kBFloat16;
    case DataType::DT_DOUBLE:
      return at::kDouble;
    case DataType::DT_INT8:
      return at::kChar;
    case DataType::DT_INT16:
      return at::kShort;
    case DataType::DT_INT32:
      return at::kInt;
    case DataType::DT_INT64:
      return at::kLong;
    case DataType::DT_UINT8:
      return at::kByte;
    case DataType::DT_BOOL:
      return at::kBool;
    default:
      return at::ScalarType::Undefined;
  }
}

DataType FromScalarType(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return DataType::DT_FLOAT;
    case at::kHalf:
      return DataType::DT_FLOAT16;
    case at::kBFloat16:
      return DataType::DT_BF16;
    case at::kDouble:
      return DataType::DT_DOUBLE;
    case at::kChar:
      return DataType::DT_INT8;
    case at::kShort:
      return DataType::DT_INT16;
    case at::kInt:
      return DataType::DT_INT32;
    case at::kLong:
      return DataType::DT_INT64;
    case at::kByte:
      return DataType::DT_UINT8;
    case at::kBool:
      return DataType::DT_BOOL;
    default:
      return DataType::DT_UNDEFINED;
  }
}

Status NodeError(const IrNode& n, const std::string& what) {
  return Status::InvalidArgument(n.Describe() + ": " + what);
}

bool HasAttr(const IrNode& n, const char* name) {
  return n.attrs.count(name) != 0;
}

namespace {

Status Kind(const IrNode& n, const char* name, IrAttr::Kind want,
            const char* what, const IrAttr** out) {
  *out = nullptr;
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return Status::OK();
  if (it->second.kind != want) {
    return NodeError(n,
                     std::string("attribute '") + name + "' must be " + what);
  }
  *out = &it->second;
  return Status::OK();
}

}  // namespace

Status AttrInt(const IrNode& n, const char* name, int64_t def, int64_t* out) {
  const IrAttr* a;
  HFLOW_RETURN_IF_ERROR(Kind(n, name, IrAttr::Kind::kInt, "an integer", &a));
  *out = a ? a->i : def;
  return Status::OK();
}

Status AttrFloat(const IrNode& n, const char* name, double def, double* out) {
  const IrAttr* a;
  HFLOW_RETURN_IF_ERROR(Kind(n, name, IrAttr::Kind::kFloat, "a float", &a));
  *out = a ? a->f : def;
  return Status::OK();
}

Status AttrString(const IrNode& n, const char* name, const std::string& def,
                  std::string* out) {
  const IrAttr* a;
  HFLOW_RETURN_IF_ERROR(Kind(n, name, IrAttr::Kind::kString, "a string", &a));
  *out = a ? a->s : def;
  return Status::OK();
}

Status AttrInts(const IrNode& n, const char* name,
                const std::vector<int64_t>& def, std::vector<int64_t>* out) {
  const IrAttr* a;
  HFLOW_RETURN_IF_ERROR(
      Kind(n, name, IrAttr::Kind::kInts, "a list of integers", &a));
  *out = a ? a->ints : def;
  return Status::OK();
}

std::vector<int64_t> IntsOf(const at::Tensor& t) {
  at::Tensor l = t.to(at::kLong).contiguous().reshape({-1});
  const int64_t* p = l.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + l.numel());
}

int64_t NormAxis(int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  TORCH_CHECK(a >= 0 && a < std::max<int64_t>(rank, 1), "axis ", axis,
              " is out of range for rank ", rank);
  return a;
}

// ---- Executor ----

struct Executor::Impl {
  struct Step {
    Kernel kernel;
    std::vector<int> in;     // slot per input; -1: absent
    std::vector<int> out;    // slot per output; -1: unused
    std::vector<int> frees;  // slots dead after this step
    std::string what;        // "node 'x' (Conv)"
  };
  size_t slots = 0;
  std::vector<int> input_slots, output_slots;
  std::vector<at::Tensor> constants;  // slots inputs.size() ...
  std::vector<Step> steps;
  int threads = 1;
};

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

Status Executor::CheckOps(const ModelIr& ir) {
  std::map<std::string, std::vector<std::string>> missing;
  for (const IrNode& n : ir.nodes) {
    if (Kernels().count(n.op) == 0) missing[n.op].push_back(n.name);
  }
  if (missing.empty()) return Status::OK();
  std::string what;
  for (const auto& [op, nodes] : missing) {
    what +=
        (what.empty() ? "" : "; ") + op + " (node '" + nodes[0] + "'" +
        (nodes.size() > 1 ? " and " + std::to_string(nodes.size() - 1) + " more"
                          : "") +
        ")";
  }
  return Status::NotSupported(
      ir.source + ": operators the model executor does not run: " + what +
      "; the supported operators are listed in the user guide's \"Model "
      "nodes\" section");
}

Status Executor::Create(const ModelIr& ir, std::vector<TensorView> constants,
                        int intra_op_threads, std::unique_ptr<Executor>* out) {
  // The IR passed CheckIr at import; its constants now live on the device
  // (`constants`), their bytes dropped from the IR.
  HFLOW_RETURN_IF_ERROR(CheckOps(ir));
  if (constants.size() != ir.constants.size()) {
    return Status::Internal("model executor: constants do not match the IR");
  }
  auto impl = std::make_unique<Impl>();
  impl->threads = std::max(1, intra_op_threads);
  std::map<std::string, int> slot;
  auto add = [&](const std::string& name) {
    const int s = static_cast<int>(impl->slots++);
    if (!name.empty()) slot[name] = s;
    return s;
  };
  for (const IrValue& v : ir.inputs) impl->input_slots.push_back(add(v.name));
  for (size_t i = 0; i < ir.constants.size(); ++i) {
    add(ir.constants[i].first);
    const TensorView& c = constants[i];
    impl->constants.push_back(at::from_blob(
        c.data, c.dims, at::TensorOptions(ToScalarType(c.dtype))));
  }
  std::vector<int> last_use(impl->slots, -1);
  for (const IrNode& n : ir.nodes) {
    Impl::Step step;
    step.what = n.Describe();
    HFLOW_RETURN_IF_ERROR(
        Kernels().at(n.op).make(n, &step.kernel).WithContext(ir.source + ": "));
    for (const std::string& in : n.inputs) {
      step.in.push_back(in.empty() ? -1 : slot.at(in));
    }
    for (const std::string& o : n.outputs) {
      step.out.push_back(o.empty() ? -1 : add(o));
    }
    impl->steps.push_back(std::move(step));
  }
  last_use.resize(impl->slots, -1);
  for (size_t i = 0; i < impl->steps.size(); ++i) {
    for (int s : impl->steps[i].in) {
      if (s >= 0) last_use[s] = static_cast<int>(i);
    }
  }
  for (const IrValue& v : ir.outputs) {
    const int s = slot.at(v.name);
    impl->output_slots.push_back(s);
    last_use[s] = static_cast<int>(impl->steps.size());  // never freed
  }
  const int first_value =
      static_cast<int>(ir.inputs.size() + ir.constants.size());
  for (int s = first_value; s < static_cast<int>(impl->slots); ++s) {
    if (last_use[s] >= 0 &&
        last_use[s] < static_cast<int>(impl->steps.size())) {
      impl->steps[last_use[s]].frees.push_back(s);
    }
  }
  out->reset(new Executor(std::move(impl)));
  return Status::OK();
}

Status Executor::Run(const std::vector<TensorView>& inputs,
                     std::vector<OutputTensor>* outputs) const {
  const Impl& m = *impl_;
  if (inputs.size() != m.input_slots.size()) {
    return Status::InvalidArgument(
        "the model takes " + std::to_string(m.input_slots.size()) +
        " inputs, got " + std::to_string(inputs.size()));
  }
  // Per thread (Note [Value slots]); ATen's intra-op count is the calling
  // thread's own setting under OpenMP.
  if (at::get_num_threads() != m.threads) at::set_num_threads(m.threads);
  std::vector<at::Tensor> v(m.slots);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorView& t = inputs[i];
    v[m.input_slots[i]] =
        at::from_blob(t.data, t.dims, at::TensorOptions(ToScalarType(t.dtype)));
  }
  std::copy(m.constants.begin(), m.constants.end(),
            v.begin() + static_cast<long>(m.input_slots.size()));
  Tensors in, out;
  for (const Impl::Step& step : m.steps) {
    in.clear();
    for (int s : step.in) in.push_back(s >= 0 ? v[s] : at::Tensor());
    out.assign(step.out.size(), at::Tensor());
    try {
      step.kernel(in, &out);
    } catch (const std::exception& e) {
      std::string msg = e.what();
      // c10's messages carry a C++ backtrace after the first line.
      if (size_t nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
      return Status::InvalidArgument(step.what + " failed: " + msg);
    }
    for (size_t i = 0; i < step.out.size(); ++i) {
      if (step.out[i] >= 0) v[step.out[i]] = std::move(out[i]);
    }
    for (int s : step.frees) v[s].reset();
  }
  outputs->clear();
  for (int s : m.output_slots) {
    at::Tensor t = v[s].contiguous();
    OutputTensor o;
    o.dtype = FromScalarType(t.scalar_type());
    o.dims = t.sizes().vec();
    o.data = t.data_ptr();
    o.bytes = t.nbytes();
    o.keep = std::make_shared<at::Tensor>(std::move(t));
    outputs->push_back(std::move(o));
  }
  return Status::OK();
}

bool Executor::Holds(DataType t) {
  return ToScalarType(t) != at::ScalarType::Undefined;
}

std::vector<std::pair<std::string, std::string>> Executor::SupportedOps() {
  std::vector<std::pair<std::string, std::string>> ops;
  for (const auto& [name, info] : Kernels()) ops.emplace_back(name, info.group);
  return ops;
}

}  // namespace model
}  // namespace hflow
