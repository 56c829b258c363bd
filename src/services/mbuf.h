// Mbuf: a reference-counted message buffer, the unit that moves through
// device queues. The head carries the flow info (transaction id, flags, ret
// code, start/end time, up to 64 bytes of user data, dtype and shape); the
// data part lives in device memory of one device, taken from a memory group.
// The last reference returns the data part to its group (MemoryGroup).
//
// Thread-safety: the reference count is atomic (shared_ptr); the head and
// data are not synchronised: one owner writes before enqueueing, readers read
// after dequeueing (the queue's lock orders the two).
#ifndef HFLOW_SERVICES_MBUF_H_
#define HFLOW_SERVICES_MBUF_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "hflow/status.h"
#include "util/recycling_allocator.h"

namespace hflow {
namespace services {

inline constexpr size_t kMaxUserData = 64;

// Flow flags (as FlowFunc's FlowFlag).
inline constexpr uint32_t kFlowFlagEos = 1;
inline constexpr uint32_t kFlowFlagSeg = 2;

// A head's dims. Their storage is recycled per thread (a message's shape
// is copied into its head on every feed and every AllocTensorMsg, and a
// steady stream must not allocate: Note [Recycled blocks and their
// threads] in util/recycling_allocator.h); up to 8 dims share one block.
using Dims = std::vector<int64_t, util::RecyclingArrayAllocator<int64_t, 8>>;

inline std::vector<int64_t> ToVector(const Dims& d) {
  return std::vector<int64_t>(d.begin(), d.end());
}

// One tensor of a tensor-list message: its place in the data part.
struct TensorDesc {
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

struct MbufHead {
  uint64_t trans_id = 0;
  uint32_t flags = 0;
  int32_t ret_code = 0;
  uint64_t start_time = 0;
  uint64_t end_time = 0;
  uint16_t msg_type = 0;  // FlowFunc MsgType
  int32_t dtype = 0;      // FlowFunc TensorDataType
  Dims shape;
  // Load balancing (FlowFunc OutOptions' BalanceConfig; 0: none): the
  // replica choice among a consumer's replicas, and the cell of a
  // transaction that pairing keys by with the transaction id.
  uint32_t route_label = 0;
  uint32_t data_label = 0;
  std::vector<TensorDesc> tensor_list;  // MSG_TYPE_TENSOR_LIST only
  uint64_t data_offset = 0;  // payload start within the data part (alignment)
  uint32_t align = 0;        // requested payload alignment (0: none)
  // A failed message (ret_code != 0): which node failed, as a tag the
  // deployment gives (1 + the node's index in its graph; 0: unknown).
  uint32_t error_node = 0;
  // An empty message (GE's "null data": AllocEmptyDataMsg, an
  // end-of-stream-only feed): it has no payload, whatever its type.
  bool null_data = false;
  uint8_t user_data[kMaxUserData] = {};
  uint32_t user_data_len = 0;

  // Copies user data; more than 64 bytes is an invalid argument.
  Status SetUserData(const void* data, size_t size, size_t offset = 0);
};

// What an output inherits from the input being processed: flow flags,
// times and user data, each only where the output has none of its own
// (Note [Outputs inherit the flow info] in mbuf.cc). The executor's
// outputs and a worker's chained ones (worker/worker_chain.cc) alike.
void InheritFlowInfo(const MbufHead& in, MbufHead* out);

// The rules for an output a node's call sets (Note [Stamping an output]
// in mbuf.cc), the executor's (exec::Router::OutputOf) and a worker's
// chained calls' (worker/worker_chain.cc) alike: `out` gets `trans()`'s
// transaction id unless it has one (trans() is called only then); unless
// it is one of the call's inputs passed on as it is (`passed_on()`, asked
// only of an output that had an id), a failure it carries without a node
// is named `error_tag`, and it inherits `input`'s flow info (may be null)
// unless it is an error message named already.
template <typename Trans, typename PassedOn>
void StampOutput(MbufHead* out, const Trans& trans, const PassedOn& passed_on,
                 uint32_t error_tag, const MbufHead* input) {
  if (out->trans_id == 0) {
    out->trans_id = trans();
  } else if (passed_on()) {
    return;
  }
  const bool named = out->ret_code != 0 && out->error_node != 0;
  if (out->ret_code != 0 && out->error_node == 0) out->error_node = error_tag;
  if (input != nullptr && !named) InheritFlowInfo(*input, out);
}

class MemoryGroup;
class Mbuf;
using MbufPtr = std::shared_ptr<Mbuf>;

class Mbuf {
 public:
  // Use MemoryGroup::Alloc. Public for MakeMbuf (and tests) only.
  Mbuf(std::shared_ptr<MemoryGroup> group, int32_t device, void* data,
       uint64_t size, uint64_t block_bytes);
  ~Mbuf();
  Mbuf(const Mbuf&) = delete;
  Mbuf& operator=(const Mbuf&) = delete;

  MbufHead& head() { return head_; }
  const MbufHead& head() const { return head_; }
  void* data() const { return data_; }
  uint64_t size() const { return size_; }
  int32_t device() const { return device_; }
  const std::shared_ptr<MemoryGroup>& group() const { return group_; }

 private:
  friend MbufPtr MakeHostMbuf(int32_t device, void* data, uint64_t size,
                              std::shared_ptr<const void> keep);
  MbufHead head_;
  std::shared_ptr<MemoryGroup> group_;
  // A data part in the caller's registered host memory (MakeHostMbuf): no
  // group, and the caller's release runs when the mbuf dies.
  std::shared_ptr<const void> keep_;
  int32_t device_;
  void* data_;
  uint64_t size_;
  uint64_t block_bytes_;  // what the group reserved (size class)
};

// An mbuf and its reference count in one block, recycled per thread:
// every message makes one.
inline MbufPtr MakeMbuf(std::shared_ptr<MemoryGroup> group, int32_t device,
                        void* data, uint64_t size, uint64_t block_bytes) {
  return std::allocate_shared<Mbuf>(util::RecyclingAllocator<Mbuf>(),
                                    std::move(group), device, data, size,
                                    block_bytes);
}

// An mbuf over `size` bytes of registered host memory at `data`, usable
// by `device` (a zero-copy feed): it belongs to no memory group, and
// `keep` (the caller's release) is dropped when its last reference goes.
MbufPtr MakeHostMbuf(int32_t device, void* data, uint64_t size,
                     std::shared_ptr<const void> keep);

}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_MBUF_H_
