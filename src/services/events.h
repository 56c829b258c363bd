// The six proxy events a host submits to a device's event scheduler
// (GE's deployer: CreateGroup, AddGroup, AllocCache, AllocMbuf, FreeMbuf,
// CopyQMbuf), as typed request structs, and the reply.
//
// Thread-safety: plain values.
#ifndef HFLOW_SERVICES_EVENTS_H_
#define HFLOW_SERVICES_EVENTS_H_

#include <cstdint>
#include <string>
#include <variant>

#include "services/mbuf.h"

namespace hflow {
namespace services {

enum class SubEvent {
  kCreateGroup,
  kAddGroup,
  kAllocCache,
  kAllocMbuf,
  kFreeMbuf,
  kCopyQMbuf,
};
const char* SubEventName(SubEvent e);

struct CreateGroupRequest {
  std::string group;
  uint64_t size_bytes = 0;
  std::string creator = "deployer";  // becomes admin
};
struct AddGroupRequest {
  std::string group;
  std::string member;
  uint32_t permissions = 0;  // services::Permission bits
  std::string by = "deployer";
};
struct AllocCacheRequest {
  std::string group;
  uint64_t size_bytes = 0;
  uint64_t max_alloc_bytes = 0;
};
struct AllocMbufRequest {
  std::string group;
  uint64_t size = 0;
  std::string member = "deployer";
};
struct FreeMbufRequest {
  MbufPtr mbuf;  // the reference the device side drops
};
// Moves one mbuf from `src_queue` to `dst_queue` (another device's, usually),
// copying the data part into `dst_group` on the destination device.
struct CopyQMbufRequest {
  uint32_t src_queue = 0;
  uint32_t dst_queue = 0;
  std::string dst_group;
  std::string member = "deployer";
  int32_t timeout_ms = 0;
};

using EventRequest =
    std::variant<CreateGroupRequest, AddGroupRequest, AllocCacheRequest,
                 AllocMbufRequest, FreeMbufRequest, CopyQMbufRequest>;

inline SubEvent SubEventOf(const EventRequest& r) {
  return static_cast<SubEvent>(r.index());
}

struct EventReply {
  MbufPtr mbuf;  // AllocMbuf: the new mbuf
};

}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_EVENTS_H_
