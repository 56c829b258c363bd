// Helpers shared by the CountBatcher and TimeBatcher tests
// (batcher_*_test.cc): message builders (Msg, Num, Chunk, Eos), Vals to read
// a batch back, option builders (CountOpts, TimeOpts), Count/Time to create a
// batcher, PushRange and ExpectInvalid.
//
// Thread-safety: reentrant.
#ifndef HFLOW_FLOW_FUNC_BUILTIN_BATCHER_TEST_UTIL_H_
#define HFLOW_FLOW_FUNC_BUILTIN_BATCHER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/builtin/batcher.h"

namespace hflow {
namespace flow_func {
namespace batcher_test {

inline constexpr int32_t kF32 = 0, kI32 = 3, kU8 = 4, kI64 = 9;

template <typename T>
BatchItem Msg(int32_t dtype, std::vector<int64_t> shape, std::vector<T> v,
              uint64_t trans = 0, uint64_t start = 0, uint64_t end = 0,
              uint32_t flags = 0) {
  BatchItem m;
  m.dtype = dtype;
  m.shape = std::move(shape);
  m.data.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(m.data.data(), v.data(), m.data.size());
  m.trans_id = trans;
  m.start_time = start;
  m.end_time = end;
  m.flags = flags;
  return m;
}

// A one-element int32 message with value v and transaction id v.
inline BatchItem Num(int32_t v, uint32_t flags = 0) {
  return Msg<int32_t>(kI32, {1}, {v}, v, 10 * v, 10 * v + 5, flags);
}

// A 10 ms int32 chunk [start, start + 10) holding {start, start + 1}.
inline BatchItem Chunk(int32_t start, uint32_t flags = 0) {
  return Msg<int32_t>(kI32, {2}, {start, start + 1}, start, start, start + 10,
                      flags);
}

inline BatchItem Eos() {
  BatchItem m;
  m.trans_id = 99;
  m.flags = kBatchFlagEos;
  return m;
}

template <typename T>
std::vector<T> Vals(const BatchItem& m) {
  std::vector<T> v(m.data.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), m.data.data(), m.data.size());
  return v;
}

using Shape = std::vector<int64_t>;
using I32s = std::vector<int32_t>;

// Option builders: C++17 has no designated initializers.
struct CountOpts : CountBatchOptions {
  explicit CountOpts(int64_t size) { batch_size = size; }
  CountOpts& Stride(int64_t v) {
    slide_stride = v;
    return *this;
  }
  CountOpts& Timeout(int64_t v) {
    timeout_ms = v;
    return *this;
  }
  CountOpts& Padding() {
    padding = true;
    return *this;
  }
  CountOpts& Dim(int64_t v) {
    batch_dim = v;
    return *this;
  }
  CountOpts& Drop() {
    drop_remainder = true;
    return *this;
  }
  CountOpts& Input(uint32_t v) {
    input_index = v;
    return *this;
  }
};

struct TimeOpts : TimeBatchOptions {
  explicit TimeOpts(int64_t window) { time_window_ms = window; }
  TimeOpts& Timeout(int64_t v) {
    timeout_ms = v;
    return *this;
  }
  TimeOpts& Padding() {
    padding = true;
    return *this;
  }
  TimeOpts& Dim(int64_t v) {
    batch_dim = v;
    return *this;
  }
  TimeOpts& Drop() {
    drop_remainder = true;
    return *this;
  }
  TimeOpts& Input(uint32_t v) {
    input_index = v;
    return *this;
  }
};

inline std::unique_ptr<CountBatcher> Count(const CountBatchOptions& o) {
  std::unique_ptr<CountBatcher> b;
  Status s = CountBatcher::Create(o, &b);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return b;
}

inline std::unique_ptr<TimeBatcher> Time(const TimeBatchOptions& o) {
  std::unique_ptr<TimeBatcher> b;
  Status s = TimeBatcher::Create(o, &b);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return b;
}

// Pushes Num(first..last) at time 0 and returns all batches' values.
inline std::vector<I32s> PushRange(CountBatcher* b, int first, int last) {
  std::vector<BatchItem> out;
  for (int v = first; v <= last; ++v)
    EXPECT_TRUE(b->Push(Num(v), 0, &out).ok());
  std::vector<I32s> vals;
  for (const BatchItem& m : out) vals.push_back(Vals<int32_t>(m));
  return vals;
}

inline void ExpectInvalid(const Status& s, const std::string& needle) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
}

}  // namespace batcher_test
}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_BUILTIN_BATCHER_TEST_UTIL_H_
