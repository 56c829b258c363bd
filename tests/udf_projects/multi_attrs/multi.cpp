// A multi-function UDF written as for CANN DataFlow (C++11, old string ABI):
//
//   in0 ──[ProcDouble: out0 = 2 * in0 (float)]── out0
//   in1 ──[ProcReport: out1 = attr check mask, out2 = the "name" attr bytes]
//
// Both procs share one MultiAttrs instance (ProcReport reports how many times
// ProcDouble ran). Init reads an attr of every AttrValue type and records a
// bit per check, so a test can see each value cross the ABI boundary.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "flow_func/flow_func_log.h"
#include "flow_func/meta_multi_func.h"

using namespace FlowFunc;

namespace {

class MultiAttrs : public MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams>& params) override {
    int bit = 0;
    Check(bit++, params->GetAttr("name", name_) == FLOW_FUNC_SUCCESS &&
                     std::strcmp(name_.GetString(), "hflow-udf") == 0);
    std::vector<AscendString> names;
    Check(bit++, params->GetAttr("names", names) == FLOW_FUNC_SUCCESS &&
                     names.size() == 2 && names[1] == AscendString("b"));
    int64_t i = 0;
    Check(bit++, params->GetAttr("count", i) == FLOW_FUNC_SUCCESS && i == 42);
    std::vector<int64_t> ints;
    Check(bit++, params->GetAttr("ints", ints) == FLOW_FUNC_SUCCESS &&
                     ints.size() == 3 && ints[2] == 3);
    std::vector<std::vector<int64_t> > nested;
    Check(bit++, params->GetAttr("shape_list", nested) == FLOW_FUNC_SUCCESS &&
                     nested.size() == 2 && nested[1].size() == 2 &&
                     nested[1][1] == 4);
    float f = 0;
    Check(bit++, params->GetAttr("scale", f) == FLOW_FUNC_SUCCESS && f == 0.5f);
    std::vector<float> fs;
    Check(bit++, params->GetAttr("scales", fs) == FLOW_FUNC_SUCCESS &&
                     fs.size() == 2 && fs[1] == 2.5f);
    bool b = false;
    Check(bit++, params->GetAttr("enabled", b) == FLOW_FUNC_SUCCESS && b);
    std::vector<bool> bs;
    Check(bit++, params->GetAttr("flags", bs) == FLOW_FUNC_SUCCESS &&
                     bs.size() == 2 && !bs[0] && bs[1]);
    TensorDataType dt = TensorDataType::DT_UNDEFINED;
    Check(bit++, params->GetAttr("out_type", dt) == FLOW_FUNC_SUCCESS &&
                     dt == TensorDataType::DT_INT32);
    std::vector<TensorDataType> dts;
    Check(bit++, params->GetAttr("types", dts) == FLOW_FUNC_SUCCESS &&
                     dts.size() == 2 && dts[0] == TensorDataType::DT_FLOAT);
    AscendString wrong;
    Check(bit++,
          params->GetAttr("count", wrong) == FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
    Check(bit++, params->GetAttr("absent", i) == FLOW_FUNC_ERR_ATTR_NOT_EXITS);
    Check(bit++, params->GetInputNum() == 2 && params->GetOutputNum() == 3);
    FLOW_FUNC_LOG_INFO("MultiAttrs %s init mask 0x%llx", params->GetName(),
                       static_cast<unsigned long long>(mask_));
    return FLOW_FUNC_SUCCESS;
  }

  int32_t ProcDouble(const std::shared_ptr<MetaRunContext>& ctx,
                     const std::vector<std::shared_ptr<FlowMsg> >& in) {
    ++doubles_;
    Tensor* t = in.at(0)->GetTensor();
    if (t == nullptr || t->GetDataType() != TensorDataType::DT_FLOAT) {
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    std::shared_ptr<FlowMsg> out =
        ctx->AllocTensorMsg(t->GetShape(), TensorDataType::DT_FLOAT);
    const float* x = static_cast<const float*>(t->GetData());
    float* y = static_cast<float*>(out->GetTensor()->GetData());
    for (int64_t k = 0; k < t->GetElementCnt(); ++k) y[k] = 2 * x[k];
    return ctx->SetOutput(0, out);
  }

  int32_t ProcReport(const std::shared_ptr<MetaRunContext>& ctx,
                     const std::vector<std::shared_ptr<FlowMsg> >&) {
    std::vector<int64_t> shape(1, 2);
    std::shared_ptr<FlowMsg> report =
        ctx->AllocTensorMsg(shape, TensorDataType::DT_INT64);
    int64_t* r = static_cast<int64_t*>(report->GetTensor()->GetData());
    r[0] = static_cast<int64_t>(mask_);
    r[1] = doubles_;
    std::vector<int64_t> len(1, static_cast<int64_t>(name_.GetLength()));
    std::shared_ptr<FlowMsg> text =
        ctx->AllocTensorMsg(len, TensorDataType::DT_UINT8);
    std::memcpy(text->GetTensor()->GetData(), name_.GetString(),
                name_.GetLength());
    int32_t rc = ctx->SetOutput(1, report);
    return rc != FLOW_FUNC_SUCCESS ? rc : ctx->SetOutput(2, text);
  }

 private:
  void Check(int bit, bool ok) {
    if (ok) mask_ |= (1ull << bit);
  }
  uint64_t mask_ = 0;
  int64_t doubles_ = 0;
  AscendString name_;
};

}  // namespace

FLOW_FUNC_REGISTRAR(MultiAttrs)
    .RegProcFunc("ProcDouble", &MultiAttrs::ProcDouble)
    .RegProcFunc("ProcReport", &MultiAttrs::ProcReport);
