// Batching cores of DataFlow's built-in CountBatch and TimeBatch functions.
//
// Both classes are pure state machines over the messages of ONE input: the
// runtime pushes messages in, calls OnTick() when NextDeadline() has passed
// and Flush() when it tears the stream down; finished batches are appended
// to caller-owned vectors. Nothing here starts threads or timers, reads a
// clock or touches a device: every time is passed in, so a run is a pure
// function of its inputs and tests need no sleeps. Cross-input alignment
// (GE checks that all inputs of a node carry the same flow info) is the
// runtime's job.
//
// Thread-safety: not thread-safe. One batcher belongs to one input; the
// runtime must serialise Push/OnTick/Flush on it (e.g. run them on the
// executor thread that owns the input).
//
// Note [Batch semantics] in batcher.cc records what GE does and where hflow
// differs.
#ifndef HFLOW_FLOW_FUNC_BUILTIN_BATCHER_H_
#define HFLOW_FLOW_FUNC_BUILTIN_BATCHER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "hflow/status.h"

namespace hflow {
namespace flow_func {

// Flow flags, same values as FlowFunc's FlowFlag (and services' Mbuf head).
inline constexpr uint32_t kBatchFlagEos = 1u << 0;  // end of stream
inline constexpr uint32_t kBatchFlagSeg = 1u << 1;  // end of a segment

// One message: a dense tensor (row-major bytes) plus its flow info.
// A message with an empty shape AND no data stands for "no tensor" (GE's
// empty data message); it is legal only as an EOS marker.
struct BatchItem {
  int32_t dtype = 0;  // FlowFunc TensorDataType number
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  uint64_t trans_id = 0;
  uint64_t start_time = 0;  // ms for TimeBatch windows
  uint64_t end_time = 0;
  uint32_t flags = 0;  // kBatchFlag*
};

// True for the "no tensor" form described above.
bool IsEmptyMessage(const BatchItem& item);

// Bytes per element of a FlowFunc TensorDataType; 0 for types the batchers
// do not know (they reject such messages).
size_t ElementSize(int32_t dtype);

// batch_dim: -1 stacks messages along a new leading dimension (what GE's
// CountBatch always does); d >= 0 concatenates along existing dimension d.
struct CountBatchOptions {
  int64_t batch_size = 0;       // messages per batch, >= 1
  int64_t slide_stride = 0;     // [0, batch_size]; 0 < s < batch_size slides
  int64_t timeout_ms = 0;       // [0, 2^32 - 1); 0 waits forever
  bool padding = false;         // fill short batches with zero messages
  int64_t batch_dim = -1;       // >= -1
  bool drop_remainder = false;  // drop short batches (not with padding)
  uint32_t input_index = 0;     // for error messages only
};

struct TimeBatchOptions {
  int64_t time_window_ms = 0;   // > 0, or -1 to batch whole segments
  int64_t timeout_ms = 0;       // [0, 2^32 - 1); 0 waits forever
  int64_t batch_dim = -1;       // >= -1, as for CountBatch
  bool padding = false;         // must stay false (unsupported, as in GE)
  bool drop_remainder = false;  // drop windows shorter than time_window_ms
  uint32_t input_index = 0;     // for error messages only
};

class CountBatcher {
 public:
  static Status Create(const CountBatchOptions& options,
                       std::unique_ptr<CountBatcher>* batcher);

  // Takes one message that arrived at `now_ms`. On error the message is
  // rejected and the batch in progress is discarded (as GE does).
  Status Push(BatchItem item, uint64_t now_ms, std::vector<BatchItem>* out);
  // Emits (or drops) the pending short batch once its timeout has passed.
  void OnTick(uint64_t now_ms, std::vector<BatchItem>* out);
  // When OnTick next has work; nullopt without a timeout or fresh messages.
  std::optional<uint64_t> NextDeadline() const;
  // End of stream without an EOS message: emits the fresh remainder (padded
  // or dropped per the options) and forgets everything.
  void Flush(std::vector<BatchItem>* out);
  // Messages held, including a sliding window's already emitted overlap.
  size_t pending() const { return pending_.size(); }

 private:
  struct Entry {
    BatchItem item;
    uint64_t arrival_ms;
  };
  explicit CountBatcher(const CountBatchOptions& options) : opt_(options) {}
  size_t fresh() const { return pending_.size() - emitted_; }
  Status Admit(const BatchItem& item) const;
  void EmitWindow(uint32_t extra_flags, std::vector<BatchItem>* out);
  void Retain();
  bool CloseShort(uint32_t extra_flags, std::vector<BatchItem>* out);
  void FinishEos(const BatchItem& eos, bool just_emitted,
                 std::vector<BatchItem>* out);
  void Reset();

  CountBatchOptions opt_;
  std::deque<Entry> pending_;
  size_t emitted_ = 0;  // leading entries already sent in some batch
};

class TimeBatcher {
 public:
  static Status Create(const TimeBatchOptions& options,
                       std::unique_ptr<TimeBatcher>* batcher);

  // As CountBatcher::Push; windows are judged on the messages' own
  // start/end times, the timeout on `now_ms`.
  Status Push(BatchItem item, uint64_t now_ms, std::vector<BatchItem>* out);
  void OnTick(uint64_t now_ms, std::vector<BatchItem>* out);
  std::optional<uint64_t> NextDeadline() const;
  void Flush(std::vector<BatchItem>* out);
  size_t pending() const { return pending_.size(); }

 private:
  explicit TimeBatcher(const TimeBatchOptions& options) : opt_(options) {}
  Status Admit(const BatchItem& item) const;
  bool IsShort() const;
  bool Close(uint32_t extra_flags, std::vector<BatchItem>* out);

  TimeBatchOptions opt_;
  std::vector<BatchItem> pending_;
  uint64_t first_arrival_ms_ = 0;
};

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_BUILTIN_BATCHER_H_
