// ge::Operator (graph/operator.h). Part of libgraph.so (old string ABI).
//
// Thread-safety: as the handle: one thread builds, copies share the node.
#include <cstdio>

#include "ge_api/graph/graph_internal.h"

namespace ge {
namespace {
std::string Str(const char_t* s) { return s == nullptr ? "" : s; }

// Records the first misuse of `impl` (later calls keep building).
void Misuse(OperatorImpl* impl, const std::string& what) {
  if (impl->error.empty()) impl->error = what;
}

template <typename T>
graphStatus Get(const OperatorImpl& impl, const char_t* name, T* out) {
  auto it = impl.attrs.find(Str(name));
  if (it == impl.attrs.end()) return GRAPH_FAILED;
  const T* v = std::get_if<T>(&it->second);
  if (v == nullptr) return GRAPH_PARAM_INVALID;
  *out = *v;
  return GRAPH_SUCCESS;
}
}  // namespace

int OperatorImpl::InputIndex(const std::string& n) const {
  for (size_t i = 0; i < input_names.size(); ++i) {
    if (input_names[i] == n) return static_cast<int>(i);
  }
  return -1;
}
int OperatorImpl::OutputIndex(const std::string& n) const {
  for (size_t i = 0; i < output_names.size(); ++i) {
    if (output_names[i] == n) return static_cast<int>(i);
  }
  return -1;
}

Operator::Operator() = default;
Operator::Operator(const char_t* type) : Operator(type, type) {}
Operator::Operator(const char_t* name, const char_t* type)
    : operator_impl_(std::make_shared<OperatorImpl>()) {
  operator_impl_->name = Str(name);
  operator_impl_->type = Str(type);
}
Operator::Operator(const std::string& name, const std::string& type)
    : Operator(name.c_str(), type.c_str()) {}
Operator::~Operator() = default;

bool Operator::IsEmpty() const { return operator_impl_ == nullptr; }
std::string Operator::GetName() const {
  return operator_impl_ ? operator_impl_->name : "";
}
graphStatus Operator::GetName(AscendString& name) const {
  if (!operator_impl_) return GRAPH_FAILED;
  name = AscendString(operator_impl_->name.c_str());
  return GRAPH_SUCCESS;
}
std::string Operator::GetOpType() const {
  return operator_impl_ ? operator_impl_->type : "";
}
graphStatus Operator::GetOpType(AscendString& type) const {
  if (!operator_impl_) return GRAPH_FAILED;
  type = AscendString(operator_impl_->type.c_str());
  return GRAPH_SUCCESS;
}

Operator& Operator::SetInput(const char_t* dst_name, const Operator& src) {
  return SetInput(dst_name, src, 0U);
}
Operator& Operator::SetInput(const char_t* dst_name, const Operator& src,
                             const char_t* name) {
  if (!operator_impl_ || !src.operator_impl_) return *this;
  const int out = src.operator_impl_->OutputIndex(Str(name));
  if (out < 0) {
    Misuse(operator_impl_.get(), "SetInput(" + Str(dst_name) + "): '" +
                                     src.operator_impl_->name +
                                     "' has no output '" + Str(name) + "'");
    return *this;
  }
  return SetInput(dst_name, src, static_cast<uint32_t>(out));
}
Operator& Operator::SetInput(const char_t* dst_name, const Operator& src,
                             uint32_t index) {
  if (!operator_impl_) return *this;
  const int in = operator_impl_->InputIndex(Str(dst_name));
  if (in < 0) {
    Misuse(operator_impl_.get(),
           "SetInput: no input named '" + Str(dst_name) + "'");
    return *this;
  }
  return SetInput(static_cast<uint32_t>(in), src, index);
}
Operator& Operator::SetInput(uint32_t dst_index, const Operator& src,
                             uint32_t src_index) {
  if (!operator_impl_) return *this;
  if (!src.operator_impl_) {
    Misuse(operator_impl_.get(), "SetInput(" + std::to_string(dst_index) +
                                     "): the source operator is empty");
    return *this;
  }
  operator_impl_->inputs[dst_index] = {src.operator_impl_, src_index};
  return *this;
}

size_t Operator::GetInputsSize() const {
  return operator_impl_ ? operator_impl_->input_names.size() : 0;
}
size_t Operator::GetOutputsSize() const {
  return operator_impl_ ? operator_impl_->output_names.size() : 0;
}

#define HFLOW_GE_SET_ATTR(T, expr)                                 \
  Operator& Operator::SetAttr(const char_t* name, T attr_value) {  \
    if (operator_impl_) operator_impl_->attrs[Str(name)] = (expr); \
    return *this;                                                  \
  }
HFLOW_GE_SET_ATTR(int64_t, attr_value)
HFLOW_GE_SET_ATTR(int32_t, static_cast<int64_t>(attr_value))
HFLOW_GE_SET_ATTR(uint32_t, static_cast<int64_t>(attr_value))
HFLOW_GE_SET_ATTR(float, attr_value)
HFLOW_GE_SET_ATTR(bool, attr_value)
HFLOW_GE_SET_ATTR(const char_t*, Str(attr_value))
HFLOW_GE_SET_ATTR(const AscendString&, std::string(attr_value.GetString()))
HFLOW_GE_SET_ATTR(const std::vector<int64_t>&, attr_value)
HFLOW_GE_SET_ATTR(const std::vector<float>&, attr_value)
HFLOW_GE_SET_ATTR(const Tensor&, attr_value)
HFLOW_GE_SET_ATTR(DataType, attr_value)
#undef HFLOW_GE_SET_ATTR

graphStatus Operator::GetAttr(const char_t* name, int64_t& v) const {
  return operator_impl_ ? Get(*operator_impl_, name, &v) : GRAPH_FAILED;
}
graphStatus Operator::GetAttr(const char_t* name, int32_t& v) const {
  int64_t wide = 0;
  const graphStatus s = GetAttr(name, wide);
  if (s == GRAPH_SUCCESS) v = static_cast<int32_t>(wide);
  return s;
}
graphStatus Operator::GetAttr(const char_t* name, float& v) const {
  return operator_impl_ ? Get(*operator_impl_, name, &v) : GRAPH_FAILED;
}
graphStatus Operator::GetAttr(const char_t* name, bool& v) const {
  return operator_impl_ ? Get(*operator_impl_, name, &v) : GRAPH_FAILED;
}
graphStatus Operator::GetAttr(const char_t* name, AscendString& v) const {
  std::string s;
  const graphStatus r =
      operator_impl_ ? Get(*operator_impl_, name, &s) : GRAPH_FAILED;
  if (r == GRAPH_SUCCESS) v = AscendString(s.c_str(), s.size());
  return r;
}
graphStatus Operator::GetAttr(const char_t* name,
                              std::vector<int64_t>& v) const {
  return operator_impl_ ? Get(*operator_impl_, name, &v) : GRAPH_FAILED;
}
graphStatus Operator::GetAttr(const char_t* name, Tensor& v) const {
  return operator_impl_ ? Get(*operator_impl_, name, &v) : GRAPH_FAILED;
}
graphStatus Operator::GetAttr(const char_t* name, DataType& v) const {
  return operator_impl_ ? Get(*operator_impl_, name, &v) : GRAPH_FAILED;
}

graphStatus Operator::UpdateInputDesc(const char_t* name,
                                      const TensorDesc& desc) {
  if (!operator_impl_ || operator_impl_->InputIndex(Str(name)) < 0) {
    return GRAPH_FAILED;
  }
  operator_impl_->descs["in:" + Str(name)] = desc;
  return GRAPH_SUCCESS;
}
graphStatus Operator::UpdateOutputDesc(const char_t* name,
                                       const TensorDesc& desc) {
  if (!operator_impl_ || operator_impl_->OutputIndex(Str(name)) < 0) {
    return GRAPH_FAILED;
  }
  operator_impl_->descs["out:" + Str(name)] = desc;
  return GRAPH_SUCCESS;
}
TensorDesc Operator::GetInputDescByName(const char_t* name) const {
  if (!operator_impl_) return TensorDesc();
  auto it = operator_impl_->descs.find("in:" + Str(name));
  return it == operator_impl_->descs.end() ? TensorDesc() : it->second;
}
TensorDesc Operator::GetOutputDescByName(const char_t* name) const {
  if (!operator_impl_) return TensorDesc();
  auto it = operator_impl_->descs.find("out:" + Str(name));
  return it == operator_impl_->descs.end() ? TensorDesc() : it->second;
}

void Operator::InputRegister(const char_t* name) {
  if (operator_impl_) operator_impl_->input_names.push_back(Str(name));
}
void Operator::OutputRegister(const char_t* name) {
  if (operator_impl_) operator_impl_->output_names.push_back(Str(name));
}
void Operator::DynamicInputRegister(const char_t* name, uint32_t num) {
  for (uint32_t i = 0; i < num; ++i) {
    InputRegister((Str(name) + std::to_string(i)).c_str());
  }
}
void Operator::DynamicOutputRegister(const char_t* name, uint32_t num) {
  for (uint32_t i = 0; i < num; ++i) {
    OutputRegister((Str(name) + std::to_string(i)).c_str());
  }
}
}  // namespace ge
