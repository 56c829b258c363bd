// What libge_runner's GE-side files share (old string ABI): the state
// behind DataFlowInfo, hflow's FlowMsg, and conversions between GE's types
// and the bridge's views (bridge.h).
//
// Thread-safety: plain data; a FlowMsg belongs to one thread at a time.
#ifndef HFLOW_GE_API_RUNNER_RUNNER_INTERNAL_H_
#define HFLOW_GE_API_RUNNER_RUNNER_INTERNAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ge/ge_api.h"
#include "ge/ge_data_flow_api.h"
#include "ge_api/runner/bridge.h"

namespace ge {

// Flow information of a transaction or a message (GE's fields).
struct FlowInfoData {
  uint64_t start_time = 0;
  uint64_t end_time = 0;
  uint32_t flags = 0;
  uint64_t transaction_id = 0;
  std::vector<uint8_t> user_data;  // at most 64 bytes
  int32_t ret_code = 0;

  Status SetUserData(const void* data, size_t size, size_t offset);
  Status GetUserData(void* data, size_t size, size_t offset) const;
  hflow::gebridge::InfoView View() const;
  void From(const hflow::gebridge::InfoView& v);
};

class DataFlowInfoImpl {
 public:
  FlowInfoData info;
};

class DataFlowInfoUtils {
 public:
  static FlowInfoData& Data(const DataFlowInfo& i) { return i.impl_->info; }
};

// hflow's FlowMsg: a tensor, raw bytes (also user-defined types) or nothing.
class HostFlowMsg : public FlowMsg {
 public:
  MsgType GetMsgType() const override { return type_; }
  void SetMsgType(MsgType t) override { type_ = t; }
  Tensor* GetTensor() const override;
  Status GetRawData(void*& data_ptr, uint64_t& data_size) const override;
  int32_t GetRetCode() const override { return info_.ret_code; }
  void SetRetCode(int32_t c) override { info_.ret_code = c; }
  void SetStartTime(uint64_t t) override { info_.start_time = t; }
  uint64_t GetStartTime() const override { return info_.start_time; }
  void SetEndTime(uint64_t t) override { info_.end_time = t; }
  uint64_t GetEndTime() const override { return info_.end_time; }
  void SetFlowFlags(uint32_t f) override { info_.flags = f; }
  uint32_t GetFlowFlags() const override { return info_.flags; }
  uint64_t GetTransactionId() const override { return info_.transaction_id; }
  void SetTransactionId(uint64_t id) override { info_.transaction_id = id; }
  Status SetUserData(const void* data, size_t size, size_t offset) override {
    return info_.SetUserData(data, size, offset);
  }
  Status GetUserData(void* data, size_t size, size_t offset) const override {
    return info_.GetUserData(data, size, offset);
  }

  MsgType type_ = MsgType::MSG_TYPE_TENSOR_DATA;
  bool empty_ = false;
  std::shared_ptr<Tensor> tensor_;  // tensor messages
  std::vector<uint8_t> raw_;        // raw and user-defined messages
  FlowInfoData info_;
};

// A view of `t` for the bridge; `dims` keeps the dims alive.
hflow::gebridge::TensorView ViewOf(const Tensor& t, std::vector<int64_t>* dims);
// A tensor holding a copy of `v`.
Tensor TensorOf(const hflow::gebridge::TensorView& v);

namespace runner {
// GE's options as the bridge's key-value pairs (the views point into
// `text`: keep the object while the bridge call runs).
struct KeyValues {
  std::vector<std::string> text;
  std::vector<hflow::gebridge::KeyValue> kv;
  explicit KeyValues(const std::map<AscendString, AscendString>& options);
};

// "AddGraph(graph 3)": a call's name in messages.
std::string Call(const char* name, uint32_t graph_id);
}  // namespace runner

}  // namespace ge

#endif  // HFLOW_GE_API_RUNNER_RUNNER_INTERNAL_H_
