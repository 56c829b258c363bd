// The tensor side shared by CountBatcher (count_batcher.cc) and TimeBatcher
// (time_batcher.cc): checking messages, joining them into one batch tensor,
// zero padding and the flow info a batch carries; and the record of how
// both batchers follow GE. Pure functions on values passed in; reentrant.
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

#include <limits>
#include <string>

#include "flow_func/builtin/batcher_internal.h"
#include "flow_func/lib/flow_func_internal.h"

namespace hflow {
namespace flow_func {
namespace batcher_internal {

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

}  // namespace batcher_internal

using batcher_internal::FindDtype;

bool IsEmptyMessage(const BatchItem& item) {
  return item.shape.empty() && item.data.empty();
}

size_t ElementSize(int32_t dtype) {
  const auto* info = FindDtype(dtype);
  return info ? static_cast<size_t>(info->bits / 8) : 0;
}

}  // namespace flow_func
}  // namespace hflow
