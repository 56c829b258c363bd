// BalanceConfig: how a UDF asks the runtime to spread its outputs over the
// instances of the next node (affinity policy plus a weight matrix). Attached
// to an output through OutOptions; not thread-safe.
#ifndef HFLOW_FLOW_FUNC_BALANCE_CONFIG_H_
#define HFLOW_FLOW_FUNC_BALANCE_CONFIG_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "flow_func_defines.h"

namespace FlowFunc {

enum class AffinityPolicy : int32_t {
  NO_AFFINITY = 0,
  ROW_AFFINITY = 1,
  COL_AFFINITY = 2
};

// Packed because its layout is shared with message heads.
#pragma pack(push, 1)
struct BalanceWeight {
  int32_t rowNum = 0;
  int32_t colNum = 0;
  // rowNum x colNum weights, row-major, owned by the caller and alive while
  // the config is used; null means every weight is 1.
  const int32_t* matrix = nullptr;
};
#pragma pack(pop)

class FLOW_FUNC_VISIBILITY BalanceConfig {
 public:
  BalanceConfig() = default;
  virtual ~BalanceConfig() = default;

  virtual void SetAffinityPolicy(AffinityPolicy affinityPolicy) = 0;
  virtual AffinityPolicy GetAffinityPolicy() const = 0;
  virtual void SetBalanceWeight(const BalanceWeight& balanceWeight) = 0;
  virtual const BalanceWeight& GetBalanceWeight() const = 0;
  // Position (row, col) in the weight matrix of each message sent.
  virtual void SetDataPos(
      const std::vector<std::pair<int32_t, int32_t>>& dataPos) = 0;
  virtual const std::vector<std::pair<int32_t, int32_t>>& GetDataPos()
      const = 0;
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_BALANCE_CONFIG_H_
