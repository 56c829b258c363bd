// CountBatcher: the state machine behind the built-in CountBatch function
// (batches of a fixed number of messages, optionally sliding, padded or
// timed out). Note [Batch semantics] in batcher.cc records what GE does
// and where hflow differs. Not thread-safe (see batcher.h).
#include <algorithm>
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
using batcher_internal::ZerosLike;

// ---------------------------------------------------------------- CountBatch

Status CountBatcher::Create(const CountBatchOptions& o,
                            std::unique_ptr<CountBatcher>* batcher) {
  if (o.batch_size < 1) {
    return Status::InvalidArgument(
        Cat("CountBatch option batch_size=", o.batch_size,
            " is invalid; set the number of messages per batch (>= 1)"));
  }
  if (o.slide_stride < 0 || o.slide_stride > o.batch_size) {
    return Status::InvalidArgument(
        Cat("CountBatch option slide_stride=", o.slide_stride,
            " is out of range [0, batch_size=", o.batch_size,
            "]; use 0 or batch_size for disjoint batches, 1..batch_size-1 to "
            "slide"));
  }
  HFLOW_RETURN_IF_ERROR(CheckTimeout("CountBatch", o.timeout_ms));
  HFLOW_RETURN_IF_ERROR(CheckBatchDimOption("CountBatch", o.batch_dim));
  if (o.padding && o.drop_remainder) {
    return Status::InvalidArgument(
        "CountBatch options padding and drop_remainder are both set; a short "
        "batch can be padded or dropped, not both: clear one of them");
  }
  batcher->reset(new CountBatcher(o));
  return Status::OK();
}

Status CountBatcher::Admit(const BatchItem& item) const {
  const std::string who = Who("CountBatch", opt_.input_index);
  HFLOW_RETURN_IF_ERROR(CheckTensor(who, opt_.batch_dim, item));
  if (pending_.empty()) return Status::OK();
  return CheckSameKind(who, opt_.batch_dim, pending_.front().item, item);
}

Status CountBatcher::Push(BatchItem item, uint64_t now_ms,
                          std::vector<BatchItem>* out) {
  if (IsEmptyMessage(item)) {
    if ((item.flags & kBatchFlagEos) == 0) {
      Reset();
      return Status::InvalidArgument(
          Cat(Who("CountBatch", opt_.input_index),
              "message has no tensor and no EOS flag; only an EOS message "
              "may be empty"));
    }
    FinishEos(item, /*just_emitted=*/false, out);
    return Status::OK();
  }
  if (Status s = Admit(item); !s.ok()) {
    Reset();
    return s;
  }
  const bool eos = (item.flags & kBatchFlagEos) != 0;
  const BatchItem info = EosMarker(item);
  pending_.push_back(Entry{std::move(item), now_ms});
  bool emitted = false;
  if (pending_.size() >= static_cast<size_t>(opt_.batch_size)) {
    EmitWindow(0, out);
    Retain();
    emitted = true;
  }
  if (eos) FinishEos(info, emitted, out);
  return Status::OK();
}

// Sends everything held as one batch, zero-padded when short and padding
// is on. Marks all of it as sent.
void CountBatcher::EmitWindow(uint32_t extra_flags,
                              std::vector<BatchItem>* out) {
  std::vector<const BatchItem*> parts;
  for (const Entry& e : pending_) parts.push_back(&e.item);
  std::vector<BatchItem> pads;
  const size_t want = static_cast<size_t>(opt_.batch_size);
  if (opt_.padding && parts.size() < want) {
    pads.assign(want - parts.size(), ZerosLike(pending_.front().item));
    for (const BatchItem& p : pads) parts.push_back(&p);
  }
  BatchItem batch = Concat(parts, opt_.batch_dim);
  SetFlowInfo(pending_.front().item, pending_.back().item, extra_flags, &batch);
  out->push_back(std::move(batch));
  emitted_ = pending_.size();
}

// GE's retention rule: drop the first slide_stride messages (all of them
// when not sliding); what stays has been sent and is the next overlap.
void CountBatcher::Retain() {
  const size_t stride = static_cast<size_t>(opt_.slide_stride);
  if (stride > 0 && stride < static_cast<size_t>(opt_.batch_size)) {
    pending_.erase(pending_.begin(),
                   pending_.begin() + std::min(stride, pending_.size()));
  } else {
    pending_.clear();
  }
  emitted_ = pending_.size();
}

// Sends the short batch held (padded if so configured) unless
// drop_remainder says to drop it. Returns whether a batch went out.
bool CountBatcher::CloseShort(uint32_t extra_flags,
                              std::vector<BatchItem>* out) {
  if (opt_.drop_remainder) return false;
  EmitWindow(extra_flags, out);
  return true;
}

// The stream ends: send the fresh remainder with EOS, or let an empty EOS
// message carry the flag, and forget everything.
void CountBatcher::FinishEos(const BatchItem& eos, bool just_emitted,
                             std::vector<BatchItem>* out) {
  bool carried = just_emitted;
  if (fresh() > 0) carried = CloseShort(kBatchFlagEos, out);
  if (carried) {
    out->back().flags |= kBatchFlagEos;
  } else {
    out->push_back(EosMarker(eos));
  }
  Reset();
}

void CountBatcher::OnTick(uint64_t now_ms, std::vector<BatchItem>* out) {
  const std::optional<uint64_t> deadline = NextDeadline();
  if (!deadline || now_ms < *deadline) return;
  if (CloseShort(0, out)) {
    Retain();
  } else {
    Reset();
  }
}

std::optional<uint64_t> CountBatcher::NextDeadline() const {
  if (opt_.timeout_ms == 0 || fresh() == 0) return std::nullopt;
  return pending_[emitted_].arrival_ms + static_cast<uint64_t>(opt_.timeout_ms);
}

void CountBatcher::Flush(std::vector<BatchItem>* out) {
  if (fresh() > 0) (void)CloseShort(0, out);
  Reset();
}

void CountBatcher::Reset() {
  pending_.clear();
  emitted_ = 0;
}

}  // namespace flow_func
}  // namespace hflow
