// Built-in UDFs registered by libhflow at load time, usable from any graph
// without a compile config:
//
//   in0..inN ──[_BuiltIn_Identity]── out0..outN   (each input passed on)
//   in0, in1 ──[_BuiltIn_Add]── out0               (element-wise, any numeric
//   dtype)
//
// (The batch built-ins live in batch_udfs.cc.) Written against the public
// FlowFunc API, like any user UDF.
//
// Thread-safety: one instance per UDF instance; Proc is serialised by the
// runtime.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::FlowMsg;
using FlowFunc::TensorDataType;

class IdentityFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& in) override {
    for (size_t i = 0; i < in.size() && i < context_->GetOutputNum(); ++i) {
      int32_t rc = context_->SetOutput(static_cast<uint32_t>(i), in[i]);
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
};

template <typename T>
void AddAs(const void* a, const void* b, void* out, int64_t n) {
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  T* z = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) z[i] = static_cast<T>(x[i] + y[i]);
}

// IEEE half and bfloat16 go through float.
float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((man & 0x400u) == 0) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t sign = (bits >> 16) & 0x8000u;
  int32_t exp = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t man = bits & 0x7fffffu;
  if (((bits >> 23) & 0xff) == 0xff) {
    return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  }
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = man >> shift;
    if ((man >> (shift - 1)) & 1u) ++half;  // round half up
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13);
  if (man & 0x1000u) ++half;  // round to nearest
  return static_cast<uint16_t>(half);
}

float Bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

template <float (*Load)(uint16_t), uint16_t (*Store)(float)>
void AddHalfLike(const void* a, const void* b, void* out, int64_t n) {
  const uint16_t* x = static_cast<const uint16_t*>(a);
  const uint16_t* y = static_cast<const uint16_t*>(b);
  uint16_t* z = static_cast<uint16_t*>(out);
  for (int64_t i = 0; i < n; ++i) z[i] = Store(Load(x[i]) + Load(y[i]));
}

using AddFn = void (*)(const void*, const void*, void*, int64_t);

AddFn AdderFor(TensorDataType dt) {
  switch (dt) {
    case TensorDataType::DT_FLOAT:
      return AddAs<float>;
    case TensorDataType::DT_DOUBLE:
      return AddAs<double>;
    case TensorDataType::DT_INT8:
      return AddAs<int8_t>;
    case TensorDataType::DT_INT16:
      return AddAs<int16_t>;
    case TensorDataType::DT_INT32:
      return AddAs<int32_t>;
    case TensorDataType::DT_INT64:
      return AddAs<int64_t>;
    case TensorDataType::DT_UINT8:
      return AddAs<uint8_t>;
    case TensorDataType::DT_UINT16:
      return AddAs<uint16_t>;
    case TensorDataType::DT_UINT32:
      return AddAs<uint32_t>;
    case TensorDataType::DT_UINT64:
      return AddAs<uint64_t>;
    case TensorDataType::DT_FLOAT16:
      return AddHalfLike<HalfToFloat, FloatToHalf>;
    case TensorDataType::DT_BF16:
      return AddHalfLike<Bf16ToFloat, FloatToBf16>;
    default:
      return nullptr;
  }
}

class AddFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& in) override {
    if (in.size() != 2 || !in[0] || !in[1] || !in[0]->GetTensor() ||
        !in[1]->GetTensor()) {
      FLOW_FUNC_LOG_ERROR("_BuiltIn_Add needs two tensor inputs, got %zu",
                          in.size());
      return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
    }
    FlowFunc::Tensor* a = in[0]->GetTensor();
    FlowFunc::Tensor* b = in[1]->GetTensor();
    AddFn add = AdderFor(a->GetDataType());
    if (add == nullptr || a->GetDataType() != b->GetDataType() ||
        a->GetShape() != b->GetShape()) {
      FLOW_FUNC_LOG_ERROR(
          "_BuiltIn_Add needs two tensors of one numeric "
          "dtype and shape (dtypes %d and %d)",
          static_cast<int>(a->GetDataType()),
          static_cast<int>(b->GetDataType()));
      return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
    }
    std::shared_ptr<FlowMsg> out =
        context_->AllocTensorMsg(a->GetShape(), a->GetDataType());
    if (!out) return FlowFunc::FLOW_FUNC_ERR_MEM_BUF_ERROR;
    add(a->GetData(), b->GetData(), out->GetTensor()->GetData(),
        a->GetElementCnt());
    out->SetTransactionId(in[0]->GetTransactionId());
    out->SetStartTime(in[0]->GetStartTime());
    out->SetEndTime(in[0]->GetEndTime());
    return context_->SetOutput(0, out);
  }
};

}  // namespace
}  // namespace flow_func
}  // namespace hflow

REGISTER_FLOW_FUNC("_BuiltIn_Identity", hflow::flow_func::IdentityFunc);
REGISTER_FLOW_FUNC("_BuiltIn_Add", hflow::flow_func::AddFunc);
