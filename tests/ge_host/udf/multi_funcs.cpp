// Multi-function UDFs of the GE host programs (C++11, old string ABI):
//
//   GeHostMulti: Scale   pp in 0 ── pp out 0 = x * "factor" (int32)
//                Negate  pp in 1 ── pp out 1 = -x (int32)
//   MsgEcho:     EchoMsg pp in 0 ── pp out 0, by message type:
//                  int32 tensor       -> a new tensor, every element + 1
//                  raw / user-defined -> a new message of the same type
//                                        with the bytes reversed
//                  empty (null data)  -> passed on as is (flags and all)
//
// Each proc of GeHostMulti runs as soon as its own input arrives, so the
// host feeds and fetches the two halves by index. MsgEcho needs a run
// context because only MetaRunContext allocates raw-data messages.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_multi_func.h"

using namespace FlowFunc;

namespace {

typedef std::vector<std::shared_ptr<FlowMsg> > Msgs;

// The one input of a proc, when it is an int32 tensor.
Tensor* Int32Input(const Msgs& in) {
  if (in.size() != 1 || !in[0]) return nullptr;
  Tensor* t = in[0]->GetTensor();
  if (t == nullptr || t->GetDataType() != TensorDataType::DT_INT32) {
    return nullptr;
  }
  return t;
}

class GeHostMulti : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams>& params) override {
    int32_t rc = params->GetAttr("factor", factor_);
    if (rc != FLOW_FUNC_SUCCESS) {
      FLOW_FUNC_LOG_ERROR("%s: the int attr \"factor\" is required",
                          params->GetName());
    }
    return rc;
  }

  int32_t Scale(const std::shared_ptr<MetaRunContext>& ctx, const Msgs& in) {
    return Map(ctx, in, 0, factor_);
  }
  int32_t Negate(const std::shared_ptr<MetaRunContext>& ctx, const Msgs& in) {
    return Map(ctx, in, 1, -1);
  }

 private:
  // Output `pp_out` = input * k. Output indexes are pp output indexes.
  static int32_t Map(const std::shared_ptr<MetaRunContext>& ctx, const Msgs& in,
                     uint32_t pp_out, int64_t k) {
    Tensor* t = Int32Input(in);
    if (t == nullptr) return FLOW_FUNC_ERR_PARAM_INVALID;
    std::shared_ptr<FlowMsg> out =
        ctx->AllocTensorMsg(t->GetShape(), TensorDataType::DT_INT32);
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    const int32_t* x = static_cast<const int32_t*>(t->GetData());
    int32_t* y = static_cast<int32_t*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < t->GetElementCnt(); ++i) {
      y[i] = static_cast<int32_t>(x[i] * k);
    }
    return ctx->SetOutput(pp_out, out);
  }

  int64_t factor_ = 0;
};

class MsgEcho : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams>&) override {
    return FLOW_FUNC_SUCCESS;
  }

  int32_t EchoMsg(const std::shared_ptr<MetaRunContext>& ctx, const Msgs& in) {
    if (in.size() != 1 || !in[0]) return FLOW_FUNC_ERR_PARAM_INVALID;
    const std::shared_ptr<FlowMsg>& msg = in[0];
    if (msg->GetMsgType() == MsgType::MSG_TYPE_TENSOR_DATA) {
      Tensor* t = msg->GetTensor();
      if (t == nullptr || t->GetDataSize() == 0) return ctx->SetOutput(0, msg);
      if (t->GetDataType() != TensorDataType::DT_INT32) {
        return FLOW_FUNC_ERR_PARAM_INVALID;
      }
      std::shared_ptr<FlowMsg> out =
          ctx->AllocTensorMsg(t->GetShape(), TensorDataType::DT_INT32);
      if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
      const int32_t* x = static_cast<const int32_t*>(t->GetData());
      int32_t* y = static_cast<int32_t*>(out->GetTensor()->GetData());
      for (int64_t i = 0; i < t->GetElementCnt(); ++i) y[i] = x[i] + 1;
      return ctx->SetOutput(0, out);
    }
    void* data = nullptr;
    uint64_t size = 0;
    int32_t rc = msg->GetRawData(data, size);
    if (rc != FLOW_FUNC_SUCCESS) return rc;
    if (size == 0) return ctx->SetOutput(0, msg);
    std::shared_ptr<FlowMsg> out =
        ctx->AllocRawDataMsg(static_cast<int64_t>(size));
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    void* out_data = nullptr;
    uint64_t out_size = 0;
    rc = out->GetRawData(out_data, out_size);
    if (rc != FLOW_FUNC_SUCCESS || out_size != size) {
      return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    }
    const uint8_t* src = static_cast<const uint8_t*>(data);
    std::reverse_copy(src, src + size, static_cast<uint8_t*>(out_data));
    out->SetMsgType(msg->GetMsgType());
    return ctx->SetOutput(0, out);
  }
};

}  // namespace

FLOW_FUNC_REGISTRAR(GeHostMulti)
    .RegProcFunc("Scale", &GeHostMulti::Scale)
    .RegProcFunc("Negate", &GeHostMulti::Negate);
FLOW_FUNC_REGISTRAR(MsgEcho).RegProcFunc("EchoMsg", &MsgEcho::EchoMsg);
