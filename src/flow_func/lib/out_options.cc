// OutOptions and the concrete BalanceConfig behind it. Plain value holders:
// not thread-safe, like the per-call options they carry.
#include "flow_func/out_options.h"

#include <memory>
#include <utility>
#include <vector>

#include "flow_func/balance_config.h"

namespace FlowFunc {
namespace {

class BalanceConfigImpl final : public BalanceConfig {
 public:
  void SetAffinityPolicy(AffinityPolicy affinityPolicy) override {
    policy_ = affinityPolicy;
  }
  AffinityPolicy GetAffinityPolicy() const override { return policy_; }
  void SetBalanceWeight(const BalanceWeight& balanceWeight) override {
    weight_ = balanceWeight;
  }
  const BalanceWeight& GetBalanceWeight() const override { return weight_; }
  void SetDataPos(
      const std::vector<std::pair<int32_t, int32_t>>& dataPos) override {
    data_pos_ = dataPos;
  }
  const std::vector<std::pair<int32_t, int32_t>>& GetDataPos() const override {
    return data_pos_;
  }

 private:
  AffinityPolicy policy_ = AffinityPolicy::NO_AFFINITY;
  BalanceWeight weight_;
  std::vector<std::pair<int32_t, int32_t>> data_pos_;
};

}  // namespace

class OutOptionsImpl {
 public:
  // Lazily created so "no balance config" stays distinguishable.
  std::unique_ptr<BalanceConfig> balance_config;
};

OutOptions::OutOptions() : impl_(std::make_shared<OutOptionsImpl>()) {}

OutOptions::~OutOptions() = default;

BalanceConfig* OutOptions::MutableBalanceConfig() {
  if (impl_->balance_config == nullptr) {
    impl_->balance_config = std::make_unique<BalanceConfigImpl>();
  }
  return impl_->balance_config.get();
}

const BalanceConfig* OutOptions::GetBalanceConfig() const {
  return impl_->balance_config.get();
}

}  // namespace FlowFunc
