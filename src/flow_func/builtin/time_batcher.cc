// TimeBatcher: the state machine behind the built-in TimeBatch function
// (batches of the messages of one time window or segment). Note [Batch
// semantics] in batcher.cc records what GE does and where hflow differs.
// Not thread-safe (see batcher.h).
#include <string>
#include <utility>

#include "flow_func/builtin/batcher.h"
#include "flow_func/builtin/batcher_internal.h"

namespace hflow {
namespace flow_func {

using batcher_internal::Cat;
using batcher_internal::CheckBatchDimOption;
using batcher_internal::CheckSameKind;
using batcher_internal::CheckTensor;
using batcher_internal::CheckTimeout;
using batcher_internal::Concat;
using batcher_internal::EosMarker;
using batcher_internal::SetFlowInfo;
using batcher_internal::Who;

// ----------------------------------------------------------------- TimeBatch

Status TimeBatcher::Create(const TimeBatchOptions& o,
                           std::unique_ptr<TimeBatcher>* batcher) {
  if (o.time_window_ms == 0 || o.time_window_ms < -1) {
    return Status::InvalidArgument(
        Cat("TimeBatch option time_window_ms=", o.time_window_ms,
            " is invalid; use a window > 0 ms, or -1 to batch whole "
            "segments closed by SEG/EOS flags"));
  }
  HFLOW_RETURN_IF_ERROR(CheckTimeout("TimeBatch", o.timeout_ms));
  HFLOW_RETURN_IF_ERROR(CheckBatchDimOption("TimeBatch", o.batch_dim));
  if (o.padding) {
    return Status::InvalidArgument(
        "TimeBatch option padding=true is not supported (GE does not "
        "implement it either); set padding=false");
  }
  batcher->reset(new TimeBatcher(o));
  return Status::OK();
}

Status TimeBatcher::Admit(const BatchItem& item) const {
  const std::string who = Who("TimeBatch", opt_.input_index);
  if (item.start_time > item.end_time) {
    return Status::InvalidArgument(
        Cat(who, "message start_time ", item.start_time,
            " is after its end_time ", item.end_time));
  }
  if (!pending_.empty() && item.start_time < pending_.back().end_time) {
    return Status::InvalidArgument(
        Cat(who, "message starts at ", item.start_time,
            " before the previous message ended at ", pending_.back().end_time,
            "; send messages in time order without overlap"));
  }
  const uint64_t begin =
      pending_.empty() ? item.start_time : pending_.front().start_time;
  if (opt_.time_window_ms > 0 &&
      item.end_time - begin > static_cast<uint64_t>(opt_.time_window_ms)) {
    return Status::InvalidArgument(
        Cat(who, "messages from ", begin, " to ", item.end_time, " span ",
            item.end_time - begin,
            " ms, more than time_window_ms=", opt_.time_window_ms,
            "; use a window that is a multiple of the message duration"));
  }
  HFLOW_RETURN_IF_ERROR(CheckTensor(who, opt_.batch_dim, item));
  if (pending_.empty()) return Status::OK();
  return CheckSameKind(who, opt_.batch_dim, pending_.front(), item);
}

Status TimeBatcher::Push(BatchItem item, uint64_t now_ms,
                         std::vector<BatchItem>* out) {
  if (IsEmptyMessage(item)) {
    if ((item.flags & kBatchFlagEos) == 0) {
      pending_.clear();
      return Status::InvalidArgument(
          Cat(Who("TimeBatch", opt_.input_index),
              "message has no tensor and no EOS flag; only an EOS message "
              "may be empty"));
    }
    if (pending_.empty() || !Close(kBatchFlagEos, out)) {
      out->push_back(EosMarker(item));
    }
    return Status::OK();
  }
  if (Status s = Admit(item); !s.ok()) {
    pending_.clear();
    return s;
  }
  if (pending_.empty()) first_arrival_ms_ = now_ms;
  const BatchItem info = EosMarker(item);
  pending_.push_back(std::move(item));
  const BatchItem& last = pending_.back();
  const bool full =
      opt_.time_window_ms > 0 && last.end_time - pending_.front().start_time ==
                                     static_cast<uint64_t>(opt_.time_window_ms);
  const bool eos = (last.flags & kBatchFlagEos) != 0;
  if (full || eos || (last.flags & kBatchFlagSeg) != 0) {
    // A dropped remainder must still pass the end of stream on.
    if (!Close(0, out) && eos) out->push_back(info);
  }
  return Status::OK();
}

bool TimeBatcher::IsShort() const {
  return opt_.time_window_ms > 0 &&
         pending_.back().end_time - pending_.front().start_time <
             static_cast<uint64_t>(opt_.time_window_ms);
}

// Sends the held messages as one batch, or drops a short one under
// drop_remainder. Clears the state; returns whether a batch went out.
bool TimeBatcher::Close(uint32_t extra_flags, std::vector<BatchItem>* out) {
  const bool send = !(opt_.drop_remainder && IsShort());
  if (send) {
    std::vector<const BatchItem*> parts;
    for (const BatchItem& m : pending_) parts.push_back(&m);
    BatchItem batch = Concat(parts, opt_.batch_dim);
    SetFlowInfo(pending_.front(), pending_.back(), extra_flags, &batch);
    out->push_back(std::move(batch));
  }
  pending_.clear();
  return send;
}

void TimeBatcher::OnTick(uint64_t now_ms, std::vector<BatchItem>* out) {
  const std::optional<uint64_t> deadline = NextDeadline();
  if (deadline && now_ms >= *deadline) (void)Close(0, out);
}

std::optional<uint64_t> TimeBatcher::NextDeadline() const {
  if (opt_.timeout_ms == 0 || pending_.empty()) return std::nullopt;
  return first_arrival_ms_ + static_cast<uint64_t>(opt_.timeout_ms);
}

void TimeBatcher::Flush(std::vector<BatchItem>* out) {
  if (!pending_.empty()) (void)Close(0, out);
}

}  // namespace flow_func
}  // namespace hflow
