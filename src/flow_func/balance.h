// Load balancing on the UDF side (GE's SetBalanceScatter/SetBalanceGather
// nodes and OutOptions' BalanceConfig): the node's balance kind and the
// checks and label arithmetic of SetOutput/SetMultiOutputs with options
// (Note [Balance options] in balance.cc). The router picks replicas by the
// route label (Note [Replica choice] in exec/router.cc); pairing keys by
// (transaction, data label).
//
// Thread-safety: pure functions; reentrant.
#ifndef HFLOW_FLOW_FUNC_BALANCE_H_
#define HFLOW_FLOW_FUNC_BALANCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "flow_func/out_options.h"

namespace hflow {
namespace flow_func {

// FlowNode::SetBalanceScatter / SetBalanceGather (one at most per node).
enum class BalanceKind : uint8_t { kNone, kScatter, kGather };

// "scatter", "gather" or "none".
const char* BalanceName(BalanceKind kind);

// The labels one message gets from a balance config.
struct BalanceLabels {
  uint32_t route_label = 0;
  uint32_t data_label = 0;
};

// GE's BalanceOptionFilter for `count` messages sent by node `node` (of
// balance kind `kind`): FLOW_FUNC_SUCCESS with *labels empty when
// `options` carry no balance config (messages pass unchanged), with one
// entry per message otherwise; FLOW_FUNC_ERR_PARAM_INVALID (logged) when a
// check fails.
int32_t BalanceLabelsFor(const std::string& node, BalanceKind kind,
                         const FlowFunc::OutOptions& options, size_t count,
                         std::vector<BalanceLabels>* labels);

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_BALANCE_H_
