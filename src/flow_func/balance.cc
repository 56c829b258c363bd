// Balance options (see balance.h).
// Thread-safety: pure functions.
#include "flow_func/balance.h"

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"

namespace hflow {
namespace flow_func {
namespace {
using FlowFunc::AffinityPolicy;
using FlowFunc::BalanceConfig;
constexpr uint64_t kMaxBalanceCells = 65536;
constexpr int32_t kInvalid = FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;

// Policy, grid size and every data position (GE's IsBalanceConfigValid).
bool ConfigValid(const std::string& node, const BalanceConfig& c) {
  const auto policy = static_cast<int32_t>(c.GetAffinityPolicy());
  if (policy < static_cast<int32_t>(AffinityPolicy::NO_AFFINITY) ||
      policy > static_cast<int32_t>(AffinityPolicy::COL_AFFINITY)) {
    FLOW_FUNC_LOG_ERROR(
        "node %s: BalanceConfig affinity policy %d is not one of "
        "NO_AFFINITY(0), ROW_AFFINITY(1), COL_AFFINITY(2)",
        node.c_str(), policy);
    return false;
  }
  const FlowFunc::BalanceWeight& w = c.GetBalanceWeight();
  if (w.rowNum <= 0 || w.colNum <= 0 ||
      static_cast<uint64_t>(w.rowNum) * static_cast<uint64_t>(w.colNum) >
          kMaxBalanceCells) {
    FLOW_FUNC_LOG_ERROR(
        "node %s: BalanceConfig weight is %d x %d; rowNum and colNum must "
        "be > 0 and rowNum * colNum <= %llu",
        node.c_str(), w.rowNum, w.colNum,
        static_cast<unsigned long long>(kMaxBalanceCells));
    return false;
  }
  const auto& pos = c.GetDataPos();
  for (size_t i = 0; i < pos.size(); ++i) {
    if (pos[i].first < 0 || pos[i].first >= w.rowNum || pos[i].second < 0 ||
        pos[i].second >= w.colNum) {
      FLOW_FUNC_LOG_ERROR(
          "node %s: BalanceConfig dataPos[%zu] = (%d, %d) is outside the "
          "%d x %d weight matrix",
          node.c_str(), i, pos[i].first, pos[i].second, w.rowNum, w.colNum);
      return false;
    }
  }
  return true;
}

// Scatter nodes send without affinity, gather nodes by row or column, and
// other nodes may not use a balance config (GE's CheckAffinityPolicy).
bool PolicyFitsNode(const std::string& node, BalanceKind kind,
                    AffinityPolicy policy) {
  const char* problem = nullptr;
  if (kind == BalanceKind::kNone) {
    problem =
        "is not a balance node (call SetBalanceScatter or SetBalanceGather "
        "on it, or write \"balance\" in the graph file)";
  } else if (kind == BalanceKind::kScatter &&
             policy != AffinityPolicy::NO_AFFINITY) {
    problem = "is a scatter node: its BalanceConfig must be NO_AFFINITY";
  } else if (kind == BalanceKind::kGather &&
             policy == AffinityPolicy::NO_AFFINITY) {
    problem =
        "is a gather node: its BalanceConfig must be ROW_AFFINITY or "
        "COL_AFFINITY";
  }
  if (problem == nullptr) return true;
  FLOW_FUNC_LOG_ERROR("node %s: SetOutput with a BalanceConfig: the node %s",
                      node.c_str(), problem);
  return false;
}

// GE's CalcRouteLabelAndDataLabel; 0 means "no label", hence the + 1.
BalanceLabels LabelsOf(const BalanceConfig& c, std::pair<int32_t, int32_t> p) {
  const auto cols = static_cast<uint32_t>(c.GetBalanceWeight().colNum);
  const uint32_t cell =
      static_cast<uint32_t>(p.first) * cols + static_cast<uint32_t>(p.second);
  BalanceLabels l;
  l.data_label = cell + 1;
  switch (c.GetAffinityPolicy()) {
    case AffinityPolicy::ROW_AFFINITY:
      l.route_label = static_cast<uint32_t>(p.first) + 1;
      break;
    case AffinityPolicy::COL_AFFINITY:
      l.route_label = static_cast<uint32_t>(p.second) + 1;
      break;
    default:
      l.route_label = cell + 1;
      break;
  }
  return l;
}

}  // namespace

const char* BalanceName(BalanceKind kind) {
  switch (kind) {
    case BalanceKind::kScatter:
      return "scatter";
    case BalanceKind::kGather:
      return "gather";
    default:
      return "none";
  }
}

// Note [Balance options]
// The checks run in GE's order with GE's code (FLOW_FUNC_ERR_PARAM_INVALID):
// config validity, the policy against the node's kind, then one data
// position per message. The weight matrix is checked for its shape only:
// GE never reads its values, and neither does hflow. Labels: data_label =
// cell + 1 with cell = row * colNum + col; route_label = row + 1 (ROW),
// col + 1 (COL), cell + 1 (NO_AFFINITY).
int32_t BalanceLabelsFor(const std::string& node, BalanceKind kind,
                         const FlowFunc::OutOptions& options, size_t count,
                         std::vector<BalanceLabels>* labels) {
  labels->clear();
  const BalanceConfig* c = options.GetBalanceConfig();
  if (c == nullptr) return FlowFunc::FLOW_FUNC_SUCCESS;
  if (!ConfigValid(node, *c)) return kInvalid;
  if (!PolicyFitsNode(node, kind, c->GetAffinityPolicy())) return kInvalid;
  const auto& pos = c->GetDataPos();
  if (pos.size() != count) {
    FLOW_FUNC_LOG_ERROR(
        "node %s: BalanceConfig has %zu dataPos for %zu message(s); give one "
        "position per message",
        node.c_str(), pos.size(), count);
    return kInvalid;
  }
  labels->reserve(count);
  for (const auto& p : pos) labels->push_back(LabelsOf(*c, p));
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

}  // namespace flow_func
}  // namespace hflow
