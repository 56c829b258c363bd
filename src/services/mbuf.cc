// Mbuf (see mbuf.h). Thread-safety: as documented there.
#include "services/mbuf.h"

#include <string>

#include "services/memory_group.h"

namespace hflow {
namespace services {

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
