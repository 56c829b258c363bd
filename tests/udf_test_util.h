// UdfHarness: runs UDF instances in tests without the executor layer: a sim
// cluster, an exchange service with a message group on one device, an
// output sink that records what the UDF emits, and helpers to make and read
// tensor messages.
//
// Thread-safety: the sink is thread-safe (timer callbacks emit too); the
// rest is for the test thread.
#ifndef HFLOW_TESTS_UDF_TEST_UTIL_H_
#define HFLOW_TESTS_UDF_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/mbuf_msg.h"
#include "flow_func/udf_instance.h"
#include "services/exchange_service.h"
#include "test_util.h"

namespace hflow {
namespace testing {

class UdfHarness {
 public:
  explicit UdfHarness(std::vector<int32_t> devices = {2, 3}, int32_t device = 2)
      : sim_(MakeSim(devices)), svc_(sim_.get()), device_(device) {
    Status s = svc_.SubmitEventSync(
        device, services::CreateGroupRequest{"msgs", 64 << 20}, nullptr);
    if (s.ok()) {
      s = svc_.SubmitEventSync(
          device, services::AllocCacheRequest{"msgs", 32 << 20, 4 << 20},
          nullptr);
    }
    EXPECT_TRUE(s.ok()) << s.ToString();
    allocator_ = std::make_shared<flow_func::MsgAllocator>(&svc_, device,
                                                           "msgs", "deployer");
  }

  // An env for `node` with `in`/`out` counts; outputs land in outputs().
  flow_func::InstanceEnv Env(const std::string& node, size_t in, size_t out,
                             flow_func::AttrMap attrs = {}) {
    flow_func::InstanceEnv env;
    env.node = node;
    env.device = device_;
    env.input_num = in;
    env.output_num = out;
    env.attrs = std::move(attrs);
    env.allocator = allocator_;
    env.output = [this](uint32_t idx,
                        std::shared_ptr<flow_func::MbufFlowMsg> msg) {
      std::lock_guard<std::mutex> lock(mu_);
      outputs_.emplace_back(idx, std::move(msg));
      cv_.notify_all();
      return 0;
    };
    return env;
  }

  template <typename T>
  std::shared_ptr<FlowFunc::FlowMsg> Tensor(FlowFunc::TensorDataType dt,
                                            std::vector<int64_t> shape,
                                            const std::vector<T>& values,
                                            uint64_t trans_id = 0) {
    std::shared_ptr<flow_func::MbufFlowMsg> msg;
    Status s = allocator_->AllocTensorMsg(shape, dt, 512, &msg);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!values.empty()) {
      std::memcpy(msg->GetTensor()->GetData(), values.data(),
                  values.size() * sizeof(T));
    }
    msg->SetTransactionId(trans_id);
    return msg;
  }

  template <typename T>
  static std::vector<T> Values(const FlowFunc::FlowMsg& msg) {
    FlowFunc::Tensor* t = msg.GetTensor();
    if (t == nullptr) return {};
    const T* p = static_cast<const T*>(t->GetData());
    return std::vector<T>(p, p + t->GetElementCnt());
  }

  // Waits until at least `n` outputs arrived (or `timeout`).
  bool WaitOutputs(size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return outputs_.size() >= n; });
  }

  std::vector<std::pair<uint32_t, std::shared_ptr<flow_func::MbufFlowMsg>>>
  outputs() {
    std::lock_guard<std::mutex> lock(mu_);
    return outputs_;
  }
  void ClearOutputs() {
    std::lock_guard<std::mutex> lock(mu_);
    outputs_.clear();
  }

  rt::SimRuntime& sim() { return *sim_; }
  services::ExchangeService& svc() { return svc_; }
  int32_t device() const { return device_; }
  // A binding token for the instance's device (what executors hold).
  std::unique_ptr<rt::ScopedDevice> Bind() {
    return std::make_unique<rt::ScopedDevice>(&contexts_, device_);
  }

 private:
  std::shared_ptr<rt::SimRuntime> sim_;
  services::ExchangeService svc_;
  int32_t device_;
  rt::DeviceContexts contexts_{sim_.get()};
  std::shared_ptr<flow_func::MsgAllocator> allocator_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<uint32_t, std::shared_ptr<flow_func::MbufFlowMsg>>>
      outputs_;
};

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_UDF_TEST_UTIL_H_
