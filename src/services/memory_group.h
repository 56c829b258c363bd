// MemoryGroup: a named buffer pool on one device (GE's memory groups).
// A group has a size budget, optional cache pools (AllocCache: one device
// allocation carved into blocks up to a max alloc size, so steady-state mbuf
// traffic makes no device call), and members with permissions (admin, read,
// write, alloc). Note [Block sizes] in memory_group.cc says how blocks are
// sized and reused; Note [Waiting for memory] how an allocation waits for a
// block when the caches are full.
//
// Allocation without a cache pool is a device allocation and needs a bound
// device (a rt::ScopedDevice token); freeing such a block on the last mbuf
// release binds the group's device itself (one of the places in Note [Where
// hflow binds a device] in rt/device_binding.h), because the last reference
// may drop on any thread.
//
// Thread-safety: all methods are thread-safe (one mutex per group, mu_,
// guarding the members, caches and counters; GUARDED_BY below).
#ifndef HFLOW_SERVICES_MEMORY_GROUP_H_
#define HFLOW_SERVICES_MEMORY_GROUP_H_

#include <array>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rt/device_binding.h"
#include "services/mbuf.h"
#include "services/range_allocator.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace services {

enum Permission : uint32_t {
  kPermAdmin = 1,
  kPermRead = 2,
  kPermWrite = 4,
  kPermAlloc = 8,
  kPermAll = 15,
};

// "admin|read|write|alloc" style text of a permission mask.
std::string PermissionText(uint32_t perms);

struct GroupStats {
  uint64_t size_bytes = 0;         // budget
  uint64_t reserved_bytes = 0;     // caches + direct allocations
  uint64_t in_use_bytes = 0;       // blocks handed out
  uint64_t peak_in_use_bytes = 0;  // the most in_use_bytes has been
  uint64_t live_mbufs = 0;
  uint64_t waiting_allocs = 0;  // allocations waiting for a block now
  size_t caches = 0;
  // Direct blocks whose Free failed twice: still on the device, still in
  // reserved_bytes, freed again by Destroy.
  uint64_t unfreed_bytes = 0;
};

// How an allocation from the caches waits when none can serve it now.
struct AllocWait {
  // -1: until a block is free; 0: not at all (ResourceExhausted); else up to
  // this many ms (then Timeout).
  int32_t timeout_ms = 0;
  // Bytes of the cache the allocation must leave free: the reserve that
  // lets the consumers of queued messages allocate (Note [Waiting for
  // memory]). A request that could never fit beside it fails at once.
  uint64_t keep_free = 0;
};

class MemoryGroup : public std::enable_shared_from_this<MemoryGroup> {
 public:
  // The creator becomes admin with every permission.
  static std::shared_ptr<MemoryGroup> Create(
      std::shared_ptr<rt::DeviceContexts> contexts, int32_t device,
      std::string name, uint64_t size_bytes, std::string creator);
  ~MemoryGroup();

  const std::string& name() const { return name_; }
  int32_t device() const { return device_; }

  // Grants `perms` to `member`; `by` must be an admin.
  Status AddMember(const std::string& by, const std::string& member,
                   uint32_t perms);
  Status CheckPermission(const std::string& member, uint32_t perms) const;

  // Adds a cache pool of `size_bytes` serving blocks up to `max_alloc_bytes`.
  Status AllocCache(const rt::ScopedDevice& bound, uint64_t size_bytes,
                    uint64_t max_alloc_bytes);

  // An mbuf with a data part of `size` bytes, from a cache pool when one
  // serves the size (waiting for a free block as `wait` says), else as a
  // direct device allocation (which never waits). A size over every cache's
  // max alloc size is InvalidArgument at once.
  Status Alloc(const rt::ScopedDevice& bound, const std::string& member,
               uint64_t size, MbufPtr* out, const AllocWait& wait = {});

  // Alloc served from the cache pools only: that makes no device call, so
  // it needs no binding. NotFound when no cache serves the request now (no
  // cache, none large enough, all full); Alloc then has the full answer.
  Status AllocFromCache(const std::string& member, uint64_t size, MbufPtr* out,
                        uint64_t keep_free = 0);

  // Wakes every allocation waiting for a block with `reason`, and makes
  // later waits fail with it at once (allocations that need no wait still
  // succeed): a failed or stopping graph must not leave feeders waiting for
  // memory nobody will free.
  void CancelWaits(const Status& reason);
  // Lets waits wait again after CancelWaits (a graph reset).
  void ResumeWaits();

  // Releases every cache pool. Mbufs still alive keep the group object but
  // their blocks are no longer served; DestroyGroup refuses while any live.
  Status Destroy(const rt::ScopedDevice& bound);

  GroupStats Stats() const;

 private:
  Status CheckPermissionLocked(const std::string& member, uint32_t perms) const
      REQUIRES(mu_);
  // InvalidArgument for sizes no block size covers (over 2^62 bytes).
  Status CheckSize(uint64_t size) const;
  // A block of a cache pool for `size` bytes (its size in *block) leaving
  // `keep_free` bytes of that cache free, or null.
  void* TakeCachedLocked(uint64_t size, uint64_t keep_free, uint64_t* block)
      REQUIRES(mu_);
  // After TakeCachedLocked failed: the errors no wait can mend, then free
  // listed blocks for reuse, then wait as `wait` says.
  Status WaitForBlockLocked(util::MutexLock& lock, uint64_t size,
                            const AllocWait& wait, void** data, uint64_t* block)
      REQUIRES(mu_);
  Status CheckServableLocked(uint64_t size, uint64_t keep_free) const
      REQUIRES(mu_);
  // Moves every free-listed block back into its cache's ranges, so they
  // merge; false when there were none.
  bool FlushListsLocked() REQUIRES(mu_);
  Status AllocDirectLocked(const rt::ScopedDevice& bound, uint64_t size,
                           void** data, uint64_t* block) REQUIRES(mu_);
  std::string InUseText() const REQUIRES(mu_);
  friend class Mbuf;
  struct Cache {
    void* base = nullptr;
    uint64_t size = 0;
    uint64_t max_alloc = 0;
    uint64_t used = 0;      // bytes of blocks handed out
    RangeAllocator ranges;  // what is neither handed out nor listed
    // Free small blocks per size class (FreeList): a fixed table, so
    // steady-state alloc/release traffic allocates no host memory.
    std::array<std::vector<void*>, 65> free_lists;
    uint64_t listed = 0;  // bit c: free_lists[c] may hold blocks (c < 64)
    uint64_t listed_bytes = 0;
  };
  // Index of a small block size's free list: log2 for powers of two; the
  // one other small size a cache hands out, its max alloc size, gets the
  // last slot.
  static size_t FreeList(uint64_t block);
  static uint64_t ListedBlock(const Cache& c, size_t list);

  MemoryGroup(std::shared_ptr<rt::DeviceContexts> contexts, int32_t device,
              std::string name, uint64_t size_bytes);
  void Release(void* data, uint64_t block_bytes);
  std::string Where() const;

  // Shared: an mbuf may outlive the service that made its group.
  const std::shared_ptr<rt::DeviceContexts> contexts_;
  const int32_t device_;
  const std::string name_;
  const uint64_t size_bytes_;

  mutable util::Mutex mu_;
  std::map<std::string, uint32_t> members_ GUARDED_BY(mu_);
  std::vector<Cache> caches_ GUARDED_BY(mu_);
  // Direct blocks a failed Free left behind (block, bytes): Note [A Free
  // that fails] in memory_group.cc.
  std::vector<std::pair<void*, uint64_t>> unfreed_ GUARDED_BY(mu_);
  uint64_t reserved_ GUARDED_BY(mu_) = 0;
  uint64_t in_use_ GUARDED_BY(mu_) = 0;
  uint64_t live_ GUARDED_BY(mu_) = 0;
  uint64_t peak_in_use_ GUARDED_BY(mu_) = 0;
  bool destroyed_ GUARDED_BY(mu_) = false;
  // Allocations waiting for a block (Release wakes them only when there
  // are any, so the plentiful case costs no notify).
  std::condition_variable freed_;
  int waiters_ GUARDED_BY(mu_) = 0;
  Status cancelled_ GUARDED_BY(mu_);  // CancelWaits' reason
};

}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_MEMORY_GROUP_H_
