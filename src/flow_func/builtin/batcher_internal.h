// The tensor side shared by CountBatcher and TimeBatcher (batcher.cc):
// option and message checks whose errors name the built-in and input,
// joining checked messages into one batch tensor, zero padding, and the
// flow info a batch carries. Internal to the batchers; not part of
// batcher.h's interface.
//
// Thread-safety: pure functions on values passed in; reentrant.
#ifndef HFLOW_FLOW_FUNC_BUILTIN_BATCHER_INTERNAL_H_
#define HFLOW_FLOW_FUNC_BUILTIN_BATCHER_INTERNAL_H_

#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "flow_func/builtin/batcher.h"
#include "flow_func/lib/flow_func_internal.h"
#include "hflow/status.h"

namespace hflow {
namespace flow_func {
namespace batcher_internal {

// Timeouts are carried as uint32 milliseconds, as GE's attrs are.
inline constexpr int64_t kMaxTimeoutMs = std::numeric_limits<uint32_t>::max();

template <typename... Args>
std::string Cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// "[2,3]".
std::string ShapeStr(const std::vector<int64_t>& shape);

// The dtype's entry in flow_func_internal.h's table, or null when unknown
// or not whole bytes per element.
const FlowFunc::internal::DataTypeInfo* FindDtype(int32_t dtype);
// GE's name of the dtype, or "dtype <n>".
std::string DtypeStr(int32_t dtype);

// The prefix of every data error: which built-in and which input.
std::string Who(const char* func, uint32_t input);

// Option checks shared by both batchers' Create.
Status CheckTimeout(const char* func, int64_t timeout_ms);
Status CheckBatchDimOption(const char* func, int64_t batch_dim);

// Checks a message on its own: known dtype, sane shape, data size, rank.
Status CheckTensor(const std::string& who, int64_t batch_dim,
                   const BatchItem& item);
// Checks that `item` may join a batch whose first message is `first`.
Status CheckSameKind(const std::string& who, int64_t batch_dim,
                     const BatchItem& first, const BatchItem& item);

// Joins `parts` (already checked alike): stacking when batch_dim < 0, else
// concatenation along batch_dim.
BatchItem Concat(const std::vector<const BatchItem*>& parts, int64_t batch_dim);
// A message of `like`'s dtype and shape, all zeros (CountBatch padding).
BatchItem ZerosLike(const BatchItem& like);
// The flow info of `info` without its tensor, flagged EOS: the empty
// message that carries the flag on when no batch does.
BatchItem EosMarker(const BatchItem& info);
// A batch's flow info: start_time of `first`, trans_id, end_time and flags
// (plus `extra_flags`) of `last`.
void SetFlowInfo(const BatchItem& first, const BatchItem& last,
                 uint32_t extra_flags, BatchItem* out);

}  // namespace batcher_internal
}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_BUILTIN_BATCHER_INTERNAL_H_
