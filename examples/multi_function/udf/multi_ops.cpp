// The multi_function example's UDF: one MetaMultiFunc class, two procs,
// registered with FLOW_FUNC_REGISTRAR (C++11, old string ABI, as for CANN
// DataFlow). Graph (see ../graph.txt):
//
//   graph input x ── node input 1 ─[input_map]─ pp input 0 ─[Scale]─ pp output
//   0 ─[output_map]─ node output 1 ── graph output 1 graph input y ── node
//   input 0 ─[input_map]─ pp input 1 ─[Sum]─── pp output 1 ─[output_map]─ node
//   output 0 ── graph output 0
//
// The compile config's func_list says which pp inputs and outputs belong to
// which proc: Scale reads pp input 0 and writes pp output 0 (x * "factor"),
// Sum reads pp input 1 and writes pp output 1 (the sum of y's elements, as a
// one-element tensor). Each proc runs as soon as its own input arrives. Both
// take int32 tensors; Init fails when the int attr "factor" is missing.
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_multi_func.h"

using namespace FlowFunc;

namespace {

class MultiOps : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams>& params) override {
    int32_t rc = params->GetAttr("factor", factor_);
    if (rc != FLOW_FUNC_SUCCESS) {
      FLOW_FUNC_LOG_ERROR("%s: the int attr \"factor\" is required (code %d)",
                          params->GetName(), rc);
      return rc;
    }
    FLOW_FUNC_LOG_INFO("%s: factor %lld on device %d", params->GetName(),
                       static_cast<long long>(factor_),
                       params->GetRunningDeviceId());
    return FLOW_FUNC_SUCCESS;
  }

  // pp input 0 -> pp output 0: every element times "factor".
  int32_t Scale(const std::shared_ptr<MetaRunContext>& ctx,
                const std::vector<std::shared_ptr<FlowMsg> >& in) {
    Tensor* t = Int32Tensor(in);
    if (t == nullptr) return FLOW_FUNC_ERR_PARAM_INVALID;
    std::shared_ptr<FlowMsg> out =
        ctx->AllocTensorMsg(t->GetShape(), TensorDataType::DT_INT32);
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    const int32_t* x = static_cast<const int32_t*>(t->GetData());
    int32_t* y = static_cast<int32_t*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < t->GetElementCnt(); ++i) {
      y[i] = static_cast<int32_t>(x[i] * factor_);
    }
    return ctx->SetOutput(0, out);
  }

  // pp input 1 -> pp output 1: the sum of the elements, shape [1].
  int32_t Sum(const std::shared_ptr<MetaRunContext>& ctx,
              const std::vector<std::shared_ptr<FlowMsg> >& in) {
    Tensor* t = Int32Tensor(in);
    if (t == nullptr) return FLOW_FUNC_ERR_PARAM_INVALID;
    std::vector<int64_t> shape(1, 1);
    std::shared_ptr<FlowMsg> out =
        ctx->AllocTensorMsg(shape, TensorDataType::DT_INT32);
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    const int32_t* x = static_cast<const int32_t*>(t->GetData());
    int32_t sum = 0;
    for (int64_t i = 0; i < t->GetElementCnt(); ++i) sum += x[i];
    *static_cast<int32_t*>(out->GetTensor()->GetData()) = sum;
    // Output indexes are pp output indexes (the func_list's outputs_index).
    return ctx->SetOutput(1, out);
  }

 private:
  // The proc's single input, when it is an int32 tensor.
  static Tensor* Int32Tensor(const std::vector<std::shared_ptr<FlowMsg> >& in) {
    if (in.size() != 1 || !in[0]) return nullptr;
    Tensor* t = in[0]->GetTensor();
    if (t == nullptr || t->GetDataType() != TensorDataType::DT_INT32) {
      FLOW_FUNC_LOG_ERROR("MultiOps takes one int32 tensor per proc");
      return nullptr;
    }
    return t;
  }

  int64_t factor_ = 0;
};

}  // namespace

FLOW_FUNC_REGISTRAR(MultiOps)
    .RegProcFunc("Scale", &MultiOps::Scale)
    .RegProcFunc("Sum", &MultiOps::Sum);
