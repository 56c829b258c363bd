// The batch built-ins (DataFlow's CountBatch and TimeBatch):
//
//   in_i ──[_BuiltIn_CountBatch | _BuiltIn_TimeBatch]── out_i   (per input)
//
// Attributes: CountBatch: batch_size, slide_stride, timeout (ms), padding,
// batch_dim, drop_remainder; TimeBatch: time_window (ms), timeout (ms),
// batch_dim, padding, drop_remainder. The batching itself is batcher.h's;
// this file adapts it to FlowFunc messages and drives timeouts from the
// TimerService, whose callbacks emit through the same context as Proc.
//
// Thread-safety: Proc and timer callbacks share BatchState under its mutex.
#include <cstring>
#include <memory>
#include <vector>

#include "flow_func/builtin/batcher.h"
#include "flow_func/builtin/timer.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::FlowMsg;

BatchItem ToItem(const FlowMsg& m) {
  BatchItem item;
  item.trans_id = m.GetTransactionId();
  item.start_time = m.GetStartTime();
  item.end_time = m.GetEndTime();
  item.flags = m.GetFlowFlags();
  if (FlowFunc::Tensor* t = m.GetTensor()) {
    item.dtype = static_cast<int32_t>(t->GetDataType());
    item.shape = t->GetShape();
    const uint8_t* p = static_cast<const uint8_t*>(t->GetData());
    item.data.assign(p, p + t->GetDataSize());
  }
  return item;
}

// Adapts a batcher type (CountBatcher / TimeBatcher) to the FlowFunc API.
template <typename Batcher>
struct BatchState {
  util::Mutex mu;
  // One per input.
  std::vector<std::unique_ptr<Batcher>> batchers GUARDED_BY(mu);
  FlowFunc::MetaContext* ctx = nullptr;  // set by Init, before any sharing
  uint64_t timer GUARDED_BY(mu) = 0;
  // Bumped at every re-arm: a callback that finds another generation is
  // stale and does nothing (it may have been cancelled while running).
  uint64_t gen GUARDED_BY(mu) = 0;

  int32_t Emit(size_t input, std::vector<BatchItem>& out) {
    for (BatchItem& b : out) {
      std::shared_ptr<FlowMsg> m =
          IsEmptyMessage(b)
              ? ctx->AllocEmptyDataMsg(FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA)
              : ctx->AllocTensorMsg(
                    b.shape, static_cast<FlowFunc::TensorDataType>(b.dtype));
      if (!m) return FlowFunc::FLOW_FUNC_ERR_MEM_BUF_ERROR;
      if (!b.data.empty()) {
        std::memcpy(m->GetTensor()->GetData(), b.data.data(), b.data.size());
      }
      m->SetTransactionId(b.trans_id);
      m->SetStartTime(b.start_time);
      m->SetEndTime(b.end_time);
      m->SetFlowFlags(b.flags);
      int32_t rc = ctx->SetOutput(static_cast<uint32_t>(input), m);
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
    }
    out.clear();
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
};

// Re-arms the timer for the earliest deadline of any input.
template <typename Batcher>
void Rearm(const std::shared_ptr<BatchState<Batcher>>& st) REQUIRES(st->mu);

template <typename Batcher>
void OnTimer(const std::weak_ptr<BatchState<Batcher>>& weak, uint64_t gen) {
  auto st = weak.lock();
  if (!st) return;
  util::MutexLock lock(st->mu);
  if (st->gen != gen) return;
  st->timer = 0;
  uint64_t now = TimerService::NowMs();
  for (size_t i = 0; i < st->batchers.size(); ++i) {
    std::vector<BatchItem> out;
    st->batchers[i]->OnTick(now, &out);
    if (st->Emit(i, out) != FlowFunc::FLOW_FUNC_SUCCESS) {
      FLOW_FUNC_LOG_ERROR("batch timeout: emitting input %zu failed", i);
    }
  }
  Rearm(st);
}

template <typename Batcher>
void Rearm(const std::shared_ptr<BatchState<Batcher>>& st) REQUIRES(st->mu) {
  std::optional<uint64_t> next;
  for (const auto& b : st->batchers) {
    auto d = b->NextDeadline();
    if (d && (!next || *d < *next)) next = d;
  }
  // Never wait here: a running callback may be blocked on our lock.
  if (st->timer != 0) TimerService::Instance().Cancel(st->timer, false);
  st->timer = 0;
  uint64_t gen = ++st->gen;
  if (next) {
    std::weak_ptr<BatchState<Batcher>> weak = st;
    // +1: NowMs truncates, so a deadline of t ms could otherwise fire up to
    // 1 ms before t ms have really passed.
    st->timer = TimerService::Instance().Schedule(
        *next + 1, [weak, gen] { OnTimer<Batcher>(weak, gen); });
  }
}

template <typename Batcher, typename Options>
class BatchFunc : public FlowFunc::MetaFlowFunc {
 public:
  ~BatchFunc() override {
    uint64_t timer;
    {
      util::MutexLock lock(state_->mu);
      ++state_->gen;  // callbacks still to come find nothing to do
      timer = state_->timer;
      state_->timer = 0;
    }
    if (timer != 0) TimerService::Instance().Cancel(timer, /*wait=*/true);
  }

  int32_t Init() override {
    // Nothing else sees the state yet (no timer is armed before Proc); the
    // lock, uncontended, is for the analysis.
    util::MutexLock lock(state_->mu);
    state_->ctx = context_;
    for (size_t i = 0; i < context_->GetInputNum(); ++i) {
      Options opt;
      int32_t rc = ReadOptions(&opt);
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
      opt.input_index = static_cast<uint32_t>(i);
      std::unique_ptr<Batcher> b;
      Status s = Batcher::Create(opt, &b);
      if (!s.ok()) {
        FLOW_FUNC_LOG_ERROR("%s", s.ToString().c_str());
        return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
      }
      state_->batchers.push_back(std::move(b));
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& in) override {
    util::MutexLock lock(state_->mu);
    uint64_t now = TimerService::NowMs();
    int32_t result = FlowFunc::FLOW_FUNC_SUCCESS;
    for (size_t i = 0; i < in.size() && i < state_->batchers.size(); ++i) {
      if (!in[i]) continue;
      std::vector<BatchItem> out;
      Status s = state_->batchers[i]->Push(ToItem(*in[i]), now, &out);
      if (!s.ok()) {
        FLOW_FUNC_LOG_ERROR("%s", s.ToString().c_str());
        result = FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
      }
      int32_t rc = state_->Emit(i, out);
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) result = rc;
    }
    Rearm(state_);
    return result;
  }

 protected:
  template <typename T, typename V>
  void Read(const char* name, V* field) {
    T v;
    if (context_->GetAttr(name, v) == FlowFunc::FLOW_FUNC_SUCCESS) *field = v;
  }
  virtual int32_t ReadOptions(Options* opt) = 0;

 private:
  std::shared_ptr<BatchState<Batcher>> state_ =
      std::make_shared<BatchState<Batcher>>();
};

class CountBatchFunc : public BatchFunc<CountBatcher, CountBatchOptions> {
 protected:
  int32_t ReadOptions(CountBatchOptions* o) override {
    Read<int64_t>("batch_size", &o->batch_size);
    Read<int64_t>("slide_stride", &o->slide_stride);
    Read<int64_t>("timeout", &o->timeout_ms);
    Read<bool>("padding", &o->padding);
    Read<int64_t>("batch_dim", &o->batch_dim);
    Read<bool>("drop_remainder", &o->drop_remainder);
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
};

class TimeBatchFunc : public BatchFunc<TimeBatcher, TimeBatchOptions> {
 protected:
  int32_t ReadOptions(TimeBatchOptions* o) override {
    Read<int64_t>("time_window", &o->time_window_ms);
    Read<int64_t>("timeout", &o->timeout_ms);
    Read<int64_t>("batch_dim", &o->batch_dim);
    Read<bool>("padding", &o->padding);
    Read<bool>("drop_remainder", &o->drop_remainder);
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
};

}  // namespace
}  // namespace flow_func
}  // namespace hflow

REGISTER_FLOW_FUNC("_BuiltIn_CountBatch", hflow::flow_func::CountBatchFunc);
REGISTER_FLOW_FUNC("_BuiltIn_TimeBatch", hflow::flow_func::TimeBatchFunc);
