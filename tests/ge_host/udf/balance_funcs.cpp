// The balance (scatter/gather) UDFs of tests/ge_host/balance.cpp:
//
//   x ── BalCut (scatter) ── BalWork (a replica per device) ── BalJoin
//        (gather, ROW) ── BalSink (2 replicas) ── out
//
// BalCut cuts a transaction's int64 value v into the 6 cells of a 2 x 3
// grid (v * 100 + cell, NO_AFFINITY); BalWork appends the device it ran
// on; BalJoin re-sends each cell by row; BalSink appends its own device.
// So each fetched cell [v * 100 + cell, work device, sink device] tells the
// host where the cell went.
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/out_options.h"

using namespace FlowFunc;

namespace {

typedef std::vector<std::shared_ptr<FlowMsg> > Msgs;
const int32_t kRows = 2;
const int32_t kCols = 3;

OutOptions Grid(AffinityPolicy policy,
                const std::vector<std::pair<int32_t, int32_t> >& pos) {
  OutOptions o;
  BalanceConfig* c = o.MutableBalanceConfig();
  c->SetAffinityPolicy(policy);
  BalanceWeight w;
  w.rowNum = kRows;
  w.colNum = kCols;
  c->SetBalanceWeight(w);
  c->SetDataPos(pos);
  return o;
}

// The int64 values of a message's tensor (empty when it has none).
std::vector<int64_t> Values(const std::shared_ptr<FlowMsg>& m) {
  Tensor* t = m ? m->GetTensor() : nullptr;
  if (t == nullptr || t->GetDataType() != TensorDataType::DT_INT64) {
    return std::vector<int64_t>();
  }
  std::vector<int64_t> v(static_cast<size_t>(t->GetElementCnt()));
  if (!v.empty()) std::memcpy(&v[0], t->GetData(), v.size() * sizeof(int64_t));
  return v;
}

// A new int64 message holding `v`.
std::shared_ptr<FlowMsg> Make(MetaContext* ctx, const std::vector<int64_t>& v) {
  std::vector<int64_t> shape(1, static_cast<int64_t>(v.size()));
  std::shared_ptr<FlowMsg> m =
      ctx->AllocTensorMsg(shape, TensorDataType::DT_INT64);
  if (m) std::memcpy(m->GetTensor()->GetData(), &v[0], v.size() * 8);
  return m;
}

class BalCut : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    std::vector<int64_t> v = Values(in.empty() ? nullptr : in[0]);
    if (v.size() != 1) return FLOW_FUNC_ERR_PARAM_INVALID;
    Msgs cells;
    std::vector<std::pair<int32_t, int32_t> > pos;
    for (int32_t cell = 0; cell < kRows * kCols; ++cell) {
      std::shared_ptr<FlowMsg> m =
          Make(context_, std::vector<int64_t>(1, v[0] * 100 + cell));
      if (!m) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
      cells.push_back(m);
      pos.push_back(std::make_pair(cell / kCols, cell % kCols));
    }
    return context_->SetMultiOutputs(0, cells,
                                     Grid(AffinityPolicy::NO_AFFINITY, pos));
  }
};

class BalWork : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    std::vector<int64_t> v = Values(in.empty() ? nullptr : in[0]);
    if (v.size() != 1) return FLOW_FUNC_ERR_PARAM_INVALID;
    v.push_back(context_->GetRunningDeviceId());
    // A new message takes the labels of the input being processed.
    std::shared_ptr<FlowMsg> m = Make(context_, v);
    return m ? context_->SetOutput(0, m) : FLOW_FUNC_ERR_MEM_BUF_ERROR;
  }
};

class BalJoin : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    std::vector<int64_t> v = Values(in.empty() ? nullptr : in[0]);
    if (v.size() != 2) return FLOW_FUNC_ERR_PARAM_INVALID;
    const int32_t cell = static_cast<int32_t>(v[0] % 100);
    std::vector<std::pair<int32_t, int32_t> > pos(
        1, std::make_pair(cell / kCols, cell % kCols));
    return context_->SetOutput(0, in[0],
                               Grid(AffinityPolicy::ROW_AFFINITY, pos));
  }
};

class BalSink : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    std::vector<int64_t> v = Values(in.empty() ? nullptr : in[0]);
    if (v.size() != 2) return FLOW_FUNC_ERR_PARAM_INVALID;
    v.push_back(context_->GetRunningDeviceId());
    std::shared_ptr<FlowMsg> m = Make(context_, v);
    return m ? context_->SetOutput(0, m) : FLOW_FUNC_ERR_MEM_BUF_ERROR;
  }
};

}  // namespace

REGISTER_FLOW_FUNC("BalCut", BalCut);
REGISTER_FLOW_FUNC("BalWork", BalWork);
REGISTER_FLOW_FUNC("BalJoin", BalJoin);
REGISTER_FLOW_FUNC("BalSink", BalSink);
