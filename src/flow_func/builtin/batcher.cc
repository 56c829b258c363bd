// CountBatcher and TimeBatcher: the batching state machines behind the
// built-in CountBatch/TimeBatch functions. Pure computation on values passed
// in; not thread-safe (see batcher.h).
//
// Note [Batch semantics]
// ~~~~~~~~~~~~~~~~~~~~~~
// Sources: GE's dflow/udf/built_in/count_batch_flow_func.cpp and
// time_batch_flow_func.cpp (hicann/ge), inc/external/flow_graph/flow_attr.h
// and the DataFlow API pages "dataflow.CountBatch" / "dataflow.TimeBatch".
//
// CountBatch, as GE does it:
//  * A batch closes when batch_size messages are held; its tensor stacks
//    them along a NEW leading dimension ([n] + message shape). GE documents
//    batch_dim, flag and drop_remainder of CountBatch as "not enabled", so
//    stacking is all it does and messages must have identical shapes.
//  * Sliding: after a batch, GE drops the first min(slide_stride, held)
//    messages and any padding and keeps the rest; slide_stride 0 or
//    batch_size keeps nothing. Size 3, stride 1 over 1..6 gives [1,2,3],
//    [2,3,4], [3,4,5], [4,5,6].
//  * Timeout (ms, 0 = none): the clock starts when the first message of a
//    new batch arrives; on expiry the held messages are sent, padded with
//    zero tensors of the first message's shape up to batch_size when
//    padding is set.
//  * Errors (shape/dtype mismatch) discard the batch in progress.
// hflow additions and differences:
//  * batch_dim >= 0 concatenates along that existing dimension, shapes then
//    only have to agree outside it; -1 (the default) is GE's stacking. A
//    runtime mapping GE's CountBatch attr must pass -1, as GE ignores the
//    attr (whose struct default is 0).
//  * The timeout counts from the oldest FRESH message (one not yet sent in
//    any batch). GE's periodic timer would resend a sliding window's overlap
//    on every expiry when nothing new arrived; we never resend it alone.
//  * drop_remainder: a short batch (fewer real messages than batch_size, at
//    timeout, EOS or Flush) is dropped with everything held. It cannot be
//    combined with padding (Create rejects it). padding applies to every
//    short batch, not only timed-out ones.
//  * EOS (GE's CountBatch ignores flags): an EOS message, with data or
//    empty, flushes the fresh remainder as a short batch carrying EOS; when
//    nothing remains to send (or the remainder is dropped), an empty EOS
//    message carries the flag on. Overlap already sent is not resent. SEG
//    has no effect on counting.
//  * Output flow info: trans_id, flags of the LAST real message (GE leaves
//    them to the framework, which stamps the message that triggered the
//    output), start_time of the first, end_time of the last real message.
//  * Errors are Status values naming the input; the runtime reports them
//    downstream (GE sends an error message to every output).
//
// TimeBatch, as GE does it (window = time_window_ms):
//  * Times are the messages' own start/end times. A message with start >
//    end, or starting before the previous held message ended, is an error.
//  * span = end_time(new message) - start_time(first held message).
//    span == window closes the batch; span > window is an ERROR (GE does not
//    split: choose a window that is a multiple of the message duration).
//    Otherwise a message flagged SEG or EOS closes the batch. window == -1
//    batches whole segments: only SEG/EOS close it.
//  * batch_dim -1 stacks along a new leading dimension, d >= 0 concatenates
//    along d (d must be < rank); other dims and dtype must match.
//  * drop_remainder (window > 0 only): a batch closed with span < window is
//    dropped; if it was closed by EOS an empty EOS message is sent instead.
//  * An empty message must carry EOS: with nothing held it is passed on,
//    else it closes the held batch.
//  * GE's TimeBatch has no timeout and no padding ("not enabled").
// hflow additions and differences:
//  * timeout_ms (wall time since the first held message arrived) closes the
//    batch like SEG would; padding=true is rejected.
//  * The output carries start_time of the first and end_time of the last
//    message (as GE) plus trans_id and flags of the last one (GE sets none,
//    so an EOS that closes a batch would otherwise be lost).
//  * Flush closes the held batch like SEG (without adding a flag).

#include "flow_func/builtin/batcher.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "flow_func/lib/flow_func_internal.h"

namespace hflow {
namespace flow_func {
namespace {

constexpr int64_t kMaxTimeoutMs = std::numeric_limits<uint32_t>::max();

template <typename... Args>
std::string Cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

std::string ShapeStr(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? "," : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

// Dtypes come from the one table (flow_func_internal.h); the batcher
// stacks whole elements, so only types of whole bytes per element are
// supported (sub-byte types pack several elements per byte).
const FlowFunc::internal::DataTypeInfo* FindDtype(int32_t dtype) {
  const auto* info = FlowFunc::internal::FindDataType(
      static_cast<FlowFunc::TensorDataType>(dtype));
  if (info == nullptr || info->bits % 8 != 0) return nullptr;
  return info;
}

std::string DtypeStr(int32_t dtype) {
  const auto* info = FindDtype(dtype);
  return info ? info->ge_name : Cat("dtype ", dtype);
}

// The prefix of every data error: which built-in and which input.
std::string Who(const char* func, uint32_t input) {
  return Cat(func, " input ", input, ": ");
}

Status CheckTimeout(const char* func, int64_t timeout_ms) {
  if (timeout_ms >= 0 && timeout_ms < kMaxTimeoutMs) return Status::OK();
  return Status::InvalidArgument(Cat(func, " option timeout_ms=", timeout_ms,
                                     " is out of range [0, ", kMaxTimeoutMs,
                                     "); use 0 to wait without a timeout"));
}

Status CheckBatchDimOption(const char* func, int64_t batch_dim) {
  if (batch_dim >= -1) return Status::OK();
  return Status::InvalidArgument(
      Cat(func, " option batch_dim=", batch_dim,
          " is invalid; use -1 to stack along a new leading dimension or a "
          "dimension index >= 0 to concatenate along"));
}

// Checks a message on its own: known dtype, sane shape, data size, rank.
Status CheckTensor(const std::string& who, int64_t batch_dim,
                   const BatchItem& item) {
  const size_t elem = ElementSize(item.dtype);
  if (elem == 0) {
    return Status::InvalidArgument(
        Cat(who, "unsupported ", DtypeStr(item.dtype),
            "; send a numeric FlowFunc TensorDataType"));
  }
  size_t bytes = elem;
  for (int64_t d : item.shape) {
    if (d < 0 || (d > 0 && bytes > std::numeric_limits<size_t>::max() /
                                       static_cast<size_t>(d))) {
      return Status::InvalidArgument(
          Cat(who, "message shape ", ShapeStr(item.shape), " is invalid"));
    }
    bytes *= static_cast<size_t>(d);
  }
  if (item.data.size() != bytes) {
    return Status::InvalidArgument(Cat(
        who, "message holds ", item.data.size(), " bytes but shape ",
        ShapeStr(item.shape), " of ", DtypeStr(item.dtype), " needs ", bytes));
  }
  if (batch_dim >= static_cast<int64_t>(item.shape.size())) {
    return Status::InvalidArgument(
        Cat(who, "batch_dim=", batch_dim, " needs messages of rank > ",
            batch_dim, " but found shape ", ShapeStr(item.shape)));
  }
  return Status::OK();
}

// Checks that `item` may join a batch whose first message is `first`.
Status CheckSameKind(const std::string& who, int64_t batch_dim,
                     const BatchItem& first, const BatchItem& item) {
  if (item.dtype != first.dtype) {
    return Status::InvalidArgument(
        Cat(who, "expected dtype ", DtypeStr(first.dtype), ", found ",
            DtypeStr(item.dtype), "; messages of one batch share a dtype"));
  }
  bool same = item.shape.size() == first.shape.size();
  for (size_t i = 0; same && i < item.shape.size(); ++i) {
    same =
        static_cast<int64_t>(i) == batch_dim || item.shape[i] == first.shape[i];
  }
  if (same) return Status::OK();
  return Status::InvalidArgument(
      Cat(who, "expected shape ", ShapeStr(first.shape), ", found ",
          ShapeStr(item.shape),
          batch_dim < 0 ? "; stacked messages need identical shapes"
                        : Cat("; only dimension ", batch_dim, " may differ")));
}

// Joins `parts` (already checked alike): stacking when batch_dim < 0, else
// concatenation along batch_dim. Rows of the dimensions before batch_dim
// interleave: for each outer index, every part contributes its slab.
BatchItem Concat(const std::vector<const BatchItem*>& parts,
                 int64_t batch_dim) {
  const BatchItem& first = *parts.front();
  BatchItem out;
  out.dtype = first.dtype;
  out.shape = first.shape;
  size_t outer = 1;
  if (batch_dim < 0) {
    out.shape.insert(out.shape.begin(), static_cast<int64_t>(parts.size()));
  } else {
    for (int64_t i = 0; i < batch_dim; ++i) outer *= first.shape[i];
    out.shape[batch_dim] = 0;
    for (const BatchItem* p : parts)
      out.shape[batch_dim] += p->shape[batch_dim];
  }
  size_t total = 0;
  for (const BatchItem* p : parts) total += p->data.size();
  out.data.reserve(total);
  for (size_t o = 0; o < outer; ++o) {
    for (const BatchItem* p : parts) {
      const size_t slab = outer == 0 ? 0 : p->data.size() / outer;
      const auto begin = p->data.begin() + o * slab;
      out.data.insert(out.data.end(), begin, begin + slab);
    }
  }
  return out;
}

BatchItem ZerosLike(const BatchItem& like) {
  BatchItem z;
  z.dtype = like.dtype;
  z.shape = like.shape;
  z.data.assign(like.data.size(), 0);
  return z;
}

// The flow info of `item` without its tensor: the empty EOS message that
// carries the flag on when no batch does.
BatchItem EosMarker(const BatchItem& info) {
  BatchItem m;
  m.dtype = info.dtype;
  m.trans_id = info.trans_id;
  m.start_time = info.start_time;
  m.end_time = info.end_time;
  m.flags = kBatchFlagEos;
  return m;
}

void SetFlowInfo(const BatchItem& first, const BatchItem& last,
                 uint32_t extra_flags, BatchItem* out) {
  out->trans_id = last.trans_id;
  out->start_time = first.start_time;
  out->end_time = last.end_time;
  out->flags = last.flags | extra_flags;
}

}  // namespace

bool IsEmptyMessage(const BatchItem& item) {
  return item.shape.empty() && item.data.empty();
}

size_t ElementSize(int32_t dtype) {
  const auto* info = FindDtype(dtype);
  return info ? static_cast<size_t>(info->bits / 8) : 0;
}

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
