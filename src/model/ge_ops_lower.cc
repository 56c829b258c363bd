// The Lowering helper of the GE-operator lowering (ge_ops_lower.h): GE
// inputs by name, attributes with their defaults, constants read from and
// added to the IR, and node emission.
//
// Thread-safety: see ge_ops_lower.h.
#include "model/ge_ops_lower.h"

#include <cstring>

namespace hflow {
namespace model {
namespace ge_lower {

// ---- Lowering ----

Status Lowering::Error(const std::string& what) const {
  return Status::InvalidArgument(op_.Describe() + ": " + what);
}
Status Lowering::Unsupported(const std::string& what) const {
  return Status::NotSupported(op_.Describe() + ": " + what);
}

int Lowering::Index(const std::string& name) const {
  for (size_t i = 0; i < op_.input_names.size(); ++i) {
    if (op_.input_names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Lowering::In(const char* name) const {
  const int i = Index(name);
  return i >= 0 && size_t(i) < op_.inputs.size() ? op_.inputs[i] : "";
}

Status Lowering::Need(const char* name, std::string* value) const {
  *value = In(name);
  if (value->empty()) {
    return Error(std::string("input '") + name + "' is required but " +
                 (Index(name) < 0 ? "not registered" : "not linked"));
  }
  return Status::OK();
}

Status Lowering::Dynamic(const char* name,
                         std::vector<std::string>* values) const {
  values->clear();
  for (int i = 0;; ++i) {
    const std::string n = name + std::to_string(i);
    if (Index(n) < 0) break;
    values->push_back(In(n.c_str()));
    if (values->back().empty()) {
      return Error("dynamic input '" + n + "' is not linked");
    }
  }
  if (values->empty()) {
    return Error(std::string("dynamic input '") + name + "' has no entries (" +
                 name + "0, " + name + "1, ...)");
  }
  return Status::OK();
}

Status Lowering::Out(size_t index, std::string* value) const {
  if (index >= op_.outputs.size() || op_.outputs[index].empty()) {
    return Error("output " + std::to_string(index) + " is missing");
  }
  *value = op_.outputs[index];
  return Status::OK();
}

const IrAttr* Lowering::Find(const char* name) const {
  auto it = op_.attrs.find(name);
  return it == op_.attrs.end() ? nullptr : &it->second;
}

Status Lowering::Kind(const char* name, IrAttr::Kind kind, const char* what,
                      const IrAttr** out) const {
  *out = Find(name);
  if (*out != nullptr && (*out)->kind != kind) {
    return Error(std::string("attribute '") + name + "' must be " + what);
  }
  return Status::OK();
}

Status Lowering::Int(const char* name, int64_t def, int64_t* out) const {
  const IrAttr* a;
  HFLOW_RETURN_IF_ERROR(Kind(name, IrAttr::Kind::kInt, "an int", &a));
  *out = a ? a->i : def;
  return Status::OK();
}

Status Lowering::Bool(const char* name, bool def, bool* out) const {
  const IrAttr* a;
  HFLOW_RETURN_IF_ERROR(Kind(name, IrAttr::Kind::kInt, "a bool", &a));
  *out = a ? a->i != 0 : def;
  return Status::OK();
}

Status Lowering::Float(const char* name, double def, double* out) const {
  const IrAttr* a = Find(name);
  // A float written as a whole number may come back as an int.
  if (a != nullptr && a->kind == IrAttr::Kind::kInt) {
    *out = static_cast<double>(a->i);
    return Status::OK();
  }
  HFLOW_RETURN_IF_ERROR(Kind(name, IrAttr::Kind::kFloat, "a float", &a));
  *out = a ? a->f : def;
  return Status::OK();
}

Status Lowering::Str(const char* name, const std::string& def,
                     std::string* out) const {
  const IrAttr* a;
  HFLOW_RETURN_IF_ERROR(Kind(name, IrAttr::Kind::kString, "a string", &a));
  *out = a ? a->s : def;
  return Status::OK();
}

Status Lowering::Ints(const char* name, const std::vector<int64_t>& def,
                      std::vector<int64_t>* out) const {
  const IrAttr* a = Find(name);
  if (a != nullptr && a->kind == IrAttr::Kind::kInt) {  // one int for a list
    *out = {a->i};
    return Status::OK();
  }
  HFLOW_RETURN_IF_ERROR(Kind(name, IrAttr::Kind::kInts, "a list of ints", &a));
  *out = a ? a->ints : def;
  return Status::OK();
}

Status Lowering::RequiredInt(const char* name, int64_t* out) const {
  if (Find(name) == nullptr) {
    return Error(std::string("attribute '") + name + "' is required");
  }
  return Int(name, 0, out);
}

Status Lowering::RequiredInts(const char* name,
                              std::vector<int64_t>* out) const {
  if (Find(name) == nullptr) {
    return Error(std::string("attribute '") + name + "' is required");
  }
  return Ints(name, {}, out);
}

Status Lowering::RequiredStr(const char* name, std::string* out) const {
  if (Find(name) == nullptr) {
    return Error(std::string("attribute '") + name + "' is required");
  }
  return Str(name, "", out);
}

Status Lowering::IntsOfSize(const char* name, size_t n,
                            const std::vector<int64_t>& def, const char* what,
                            std::vector<int64_t>* out) const {
  if (def.empty()) {
    HFLOW_RETURN_IF_ERROR(RequiredInts(name, out));
  } else {
    HFLOW_RETURN_IF_ERROR(Ints(name, def, out));
  }
  if (out->size() != n) {
    return Error(std::string("attribute '") + name + "' must have " +
                 std::to_string(n) + " entries (" + what + "), got " +
                 std::to_string(out->size()));
  }
  return Status::OK();
}

const IrTensor* Lowering::Constant(const std::string& value) const {
  for (const auto& [name, t] : ir_->constants) {
    if (name == value) return &t;
  }
  return nullptr;
}

Status Lowering::ConstInts(const char* name, std::vector<int64_t>* out) const {
  std::string v;
  HFLOW_RETURN_IF_ERROR(Need(name, &v));
  const IrTensor* t = Constant(v);
  if (t == nullptr ||
      (t->dtype != DataType::DT_INT32 && t->dtype != DataType::DT_INT64)) {
    return Error(std::string("input '") + name +
                 "' must be an int32 or int64 Const op (hflow's model "
                 "executor takes it as a fixed attribute)");
  }
  out->clear();
  const size_t es = ElementSize(t->dtype);
  for (size_t at = 0; at + es <= t->data().size(); at += es) {
    if (es == 8) {
      int64_t x;
      std::memcpy(&x, &t->data()[at], 8);
      out->push_back(x);
    } else {
      int32_t x;
      std::memcpy(&x, &t->data()[at], 4);
      out->push_back(x);
    }
  }
  return Status::OK();
}

Status Lowering::ConstInt(const char* name, int64_t* out) const {
  std::vector<int64_t> v;
  HFLOW_RETURN_IF_ERROR(ConstInts(name, &v));
  if (v.size() != 1) {
    return Error(std::string("input '") + name +
                 "' must hold one integer, got " + std::to_string(v.size()));
  }
  *out = v[0];
  return Status::OK();
}

int64_t Lowering::RankOf(const std::string& value) const {
  for (const IrValue& v : ir_->inputs) {
    if (v.name == value) return v.has_shape ? int64_t(v.dims.size()) : -1;
  }
  const IrTensor* t = Constant(value);
  return t ? int64_t(t->dims.size()) : -1;
}

std::string Lowering::Tmp(const std::string& suffix) const {
  return op_.name + "/" + suffix;
}

std::string Lowering::AddConst(const std::string& suffix, IrTensor t) {
  ir_->constants.emplace_back(Tmp(suffix), std::move(t));
  return ir_->constants.back().first;
}

std::string Lowering::AddInts(const std::string& suffix,
                              const std::vector<int64_t>& v) {
  IrTensor t;
  t.dtype = DataType::DT_INT64;
  t.dims = {int64_t(v.size())};
  t.bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * 8);
  return AddConst(suffix, std::move(t));
}

std::string Lowering::AddScalar(const std::string& suffix, float v) {
  IrTensor t;
  t.dtype = DataType::DT_FLOAT;
  t.bytes.assign(reinterpret_cast<const char*>(&v), sizeof v);
  return AddConst(suffix, std::move(t));
}

void Lowering::Emit(const std::string& type, std::vector<std::string> inputs,
                    std::vector<std::string> outputs, Attrs attrs) {
  IrNode n;
  n.op = type;
  // An intermediate node is named after its value ("conv1/to_nchw"); the
  // node writing the op's own output after the op, for messages.
  const std::string prefix = op_.name + "/";
  n.name =
      outputs.size() == 1 && outputs[0].compare(0, prefix.size(), prefix) == 0
          ? outputs[0]
          : op_.name;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attrs = std::move(attrs);
  ir_->nodes.push_back(std::move(n));
}

std::string Lowering::Emit1(const std::string& type,
                            std::vector<std::string> inputs,
                            const std::string& out, Attrs attrs) {
  Emit(type, std::move(inputs), {out}, std::move(attrs));
  return out;
}

}  // namespace ge_lower
}  // namespace model
}  // namespace hflow
