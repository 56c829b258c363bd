// Mbuf (see mbuf.h). Thread-safety: as documented there.
#include "services/mbuf.h"

#include <string>

#include "services/memory_group.h"

namespace hflow {
namespace services {

// Note [Outputs inherit the flow info]
// GE makes a UDF's messages from the head of the input being processed, so
// an output carries that input's flow flags (an EOS fed at the host reaches
// the fetcher through every node), times and user data unless the UDF set
// its own.
//
// An input passed on is never written (Note [An input passed on is not
// written] in exec/router.cc): it is one mbuf that other consumers may be
// reading on their own threads (TSan caught the stores into it). A field
// is written only when it would change.
// Note [Stamping an output]
// An output leaves its node's call as part of the call's transaction: it
// gets the transaction's id when the UDF left it none, and then it is new,
// so it is the node's to finish: a ret code the UDF set on it names the
// node, and it inherits the input's flow info. An input the UDF passes on
// as it is (it has its id) is one mbuf other consumers may be reading on
// their threads right now, and is left untouched (Note [An input passed
// on is not written] in exec/router.cc). An error message that names its
// node already (a failure a worker's island passed on, as the executor's
// EmitError would) inherits nothing, as EmitError's does not.
void InheritFlowInfo(const MbufHead& in, MbufHead* out) {
  if (out->user_data_len == 0 && in.user_data_len != 0) {
    (void)out->SetUserData(in.user_data, in.user_data_len);
  }
  if (out->flags == 0 && in.flags != 0) out->flags = in.flags;
  if (out->start_time == 0 && out->end_time == 0 &&
      (in.start_time != 0 || in.end_time != 0)) {
    out->start_time = in.start_time;
    out->end_time = in.end_time;
  }
}

Status MbufHead::SetUserData(const void* data, size_t size, size_t offset) {
  if (offset > kMaxUserData || size > kMaxUserData - offset) {
    return Status::InvalidArgument(
        "mbuf user data: " + std::to_string(size) + " bytes at offset " +
        std::to_string(offset) + " exceed the 64-byte limit");
  }
  if (size > 0) std::memcpy(user_data + offset, data, size);
  if (offset + size > user_data_len) {
    user_data_len = static_cast<uint32_t>(offset + size);
  }
  return Status::OK();
}

Mbuf::Mbuf(std::shared_ptr<MemoryGroup> group, int32_t device, void* data,
           uint64_t size, uint64_t block_bytes)
    : group_(std::move(group)),
      device_(device),
      data_(data),
      size_(size),
      block_bytes_(block_bytes) {}

Mbuf::~Mbuf() {
  if (group_) group_->Release(data_, block_bytes_);
}

MbufPtr MakeHostMbuf(int32_t device, void* data, uint64_t size,
                     std::shared_ptr<const void> keep) {
  MbufPtr m = MakeMbuf(nullptr, device, data, size, 0);
  m->keep_ = std::move(keep);
  return m;
}

}  // namespace services
}  // namespace hflow
