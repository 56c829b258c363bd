// The daemon fuzz target's UDF library (C++11, built as
// libhflow_fuzz_echo.so):
//
//   x ──[Echo]── out   out = a copy of every byte of x's data
//
// It reads the whole data part its input's head describes, so a head that
// claims more than the bytes that came with it is an out-of-bounds read
// AddressSanitizer reports.
#include <cstring>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

namespace {

class Echo : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& in) override {
    if (in.empty() || !in[0]) return FLOW_FUNC_FAILED;
    const void* data = nullptr;
    uint64_t size = 0;
    if (Tensor* t = in[0]->GetTensor()) {
      data = t->GetData();
      size = t->GetDataSize();
    } else {
      void* raw = nullptr;
      if (in[0]->GetRawData(raw, size) != FLOW_FUNC_SUCCESS) {
        return FLOW_FUNC_FAILED;
      }
      data = raw;
    }
    std::shared_ptr<FlowMsg> out = context_->AllocTensorMsg(
        {static_cast<int64_t>(size)}, TensorDataType::DT_UINT8);
    if (!out || out->GetTensor() == nullptr) return FLOW_FUNC_FAILED;
    if (size > 0) std::memcpy(out->GetTensor()->GetData(), data, size);
    return context_->SetOutput(0, out);
  }
};

REGISTER_FLOW_FUNC("Echo", Echo);

}  // namespace
