// Minimal FlowFunc::Tensor and FlowMsg implementations that are not the
// runtime's: for tests of the abstract classes' defaults and of how the
// runtime treats a message it did not make.
//
// Thread-safety: none needed; each test owns its objects.
#ifndef HFLOW_TESTS_FLOW_MSG_FAKES_H_
#define HFLOW_TESTS_FLOW_MSG_FAKES_H_

#include <cstdint>
#include <vector>

#include "flow_func/flow_msg.h"

namespace hflow {
namespace testing {

class BareTensor : public FlowFunc::Tensor {
 public:
  const std::vector<int64_t>& GetShape() const override { return shape_; }
  FlowFunc::TensorDataType GetDataType() const override {
    return FlowFunc::TensorDataType::DT_INT8;
  }
  void* GetData() const override { return nullptr; }
  uint64_t GetDataSize() const override { return 9; }
  int64_t GetElementCnt() const override { return 9; }

 private:
  std::vector<int64_t> shape_{9};
};

class BareMsg : public FlowFunc::FlowMsg {
 public:
  FlowFunc::MsgType GetMsgType() const override {
    return FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA;
  }
  FlowFunc::Tensor* GetTensor() const override { return &tensor_; }
  int32_t GetRetCode() const override { return 0; }
  void SetRetCode(int32_t) override {}
  void SetStartTime(uint64_t) override {}
  uint64_t GetStartTime() const override { return 0; }
  void SetEndTime(uint64_t) override {}
  uint64_t GetEndTime() const override { return 0; }
  void SetFlowFlags(uint32_t) override {}
  uint32_t GetFlowFlags() const override { return 0; }
  void SetRouteLabel(uint32_t) override {}
  mutable BareTensor tensor_;
};

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_FLOW_MSG_FAKES_H_
