// MemoryGroup (see memory_group.h).
// Thread-safety: every field after construction is guarded by mu_; device
// calls for caches and direct blocks run under the caller's binding token,
// except Release, which binds the group's device itself.
#include "services/memory_group.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "hflow/rt.h"
#include "util/mutex.h"

namespace hflow {
namespace services {
namespace {
constexpr uint64_t kMinBlock = 64;
// Note [Block sizes]
// Small blocks (up to kSmallMax) take power-of-two size classes and go back
// to a free list per class when released: the hot path of small messages
// pops and pushes a vector, allocating nothing, and the waste of rounding
// is a few KiB at most. Larger blocks are sized exactly, to a multiple of
// kPage, and taken from and given back to the cache's free ranges
// (RangeAllocator, merged with their neighbours): rounding them to a power
// of two made a 1 MiB payload (plus its alignment slack) take 2 MiB, and
// halved what a pool could hold. Listed small blocks go back to the ranges
// when an allocation finds nothing (FlushListsLocked), and a cache whose
// blocks are all back starts afresh, so one size class never keeps the
// memory from another.
constexpr uint64_t kSmallMax = 64 << 10;
constexpr uint64_t kPage = 4096;

// Sizes above this have no power-of-two block; no device has that memory.
constexpr uint64_t kMaxSize = uint64_t{1} << 62;

// The power-of-two block for `size` (at most kMaxSize).
uint64_t BlockSize(uint64_t size) {
  if (size <= kMinBlock) return kMinBlock;
  return uint64_t{1} << (64 - __builtin_clzll(size - 1));
}

// The block a cache with max alloc size `max_alloc` hands out for `size`.
uint64_t BlockFor(uint64_t size, uint64_t max_alloc) {
  const uint64_t b = size <= kSmallMax ? BlockSize(size == 0 ? 1 : size)
                                       : (size + kPage - 1) / kPage * kPage;
  return std::min(b, max_alloc);
}
}  // namespace

Status MemoryGroup::CheckSize(uint64_t size) const {
  if (size <= kMaxSize) return Status::OK();
  return Status::InvalidArgument(Where() + ": " + std::to_string(size) +
                                 " bytes is more than any device holds");
}

size_t MemoryGroup::FreeList(uint64_t block) {
  return (block & (block - 1)) == 0 ? __builtin_ctzll(block) : 64;
}

uint64_t MemoryGroup::ListedBlock(const Cache& c, size_t list) {
  return list < 64 ? uint64_t{1} << list : c.max_alloc;
}

std::string PermissionText(uint32_t perms) {
  std::string s;
  const char* names[] = {"admin", "read", "write", "alloc"};
  for (int i = 0; i < 4; ++i) {
    if (perms & (1u << i)) s += (s.empty() ? "" : "|") + std::string(names[i]);
  }
  return s.empty() ? "none" : s;
}

std::shared_ptr<MemoryGroup> MemoryGroup::Create(
    std::shared_ptr<rt::DeviceContexts> contexts, int32_t device,
    std::string name, uint64_t size_bytes, std::string creator) {
  std::shared_ptr<MemoryGroup> g(new MemoryGroup(std::move(contexts), device,
                                                 std::move(name), size_bytes));
  // Not shared yet; the lock (uncontended) is for the analysis.
  util::MutexLock lock(g->mu_);
  g->members_[creator] = kPermAll;
  return g;
}

MemoryGroup::MemoryGroup(std::shared_ptr<rt::DeviceContexts> contexts,
                         int32_t device, std::string name, uint64_t size_bytes)
    : contexts_(std::move(contexts)),
      device_(device),
      name_(std::move(name)),
      size_bytes_(size_bytes) {}

MemoryGroup::~MemoryGroup() {
  // Normally Destroy ran; if not (an error path), give the caches back.
  if (!caches_.empty() || !unfreed_.empty()) {
    rt::ScopedDevice bound(contexts_.get(), device_);
    for (Cache& c : caches_) (void)bound.runtime()->Free(device_, c.base);
    for (const auto& u : unfreed_)
      (void)bound.runtime()->Free(device_, u.first);
  }
}

std::string MemoryGroup::Where() const {
  return "memory group '" + name_ + "' on device " + std::to_string(device_);
}

Status MemoryGroup::AddMember(const std::string& by, const std::string& member,
                              uint32_t perms) {
  if (perms == 0 || perms > kPermAll) {
    return Status::InvalidArgument(Where() + ": invalid permission mask " +
                                   std::to_string(perms) + " for member '" +
                                   member + "'");
  }
  HFLOW_RETURN_IF_ERROR(CheckPermission(by, kPermAdmin));
  util::MutexLock lock(mu_);
  members_[member] |= perms;
  return Status::OK();
}

Status MemoryGroup::CheckPermission(const std::string& member,
                                    uint32_t perms) const {
  util::MutexLock lock(mu_);
  return CheckPermissionLocked(member, perms);
}

Status MemoryGroup::CheckPermissionLocked(const std::string& member,
                                          uint32_t perms) const {
  auto it = members_.find(member);
  uint32_t have = it == members_.end() ? 0 : it->second;
  if ((have & perms) == perms) return Status::OK();
  return Status::PermissionDenied(
      Where() + ": member '" + member + "' needs " + PermissionText(perms) +
      " but has " + PermissionText(have) +
      (it == members_.end() ? " (not a member; add it with AddGroup)" : ""));
}

Status MemoryGroup::AllocCache(const rt::ScopedDevice& bound,
                               uint64_t size_bytes, uint64_t max_alloc_bytes) {
  HFLOW_RETURN_IF_ERROR(bound.Require(device_));
  if (size_bytes == 0 || max_alloc_bytes == 0 || max_alloc_bytes > size_bytes) {
    return Status::InvalidArgument(
        Where() + ": cache size " + std::to_string(size_bytes) +
        " and max alloc size " + std::to_string(max_alloc_bytes) +
        " must be positive with max alloc <= size");
  }
  util::MutexLock lock(mu_);
  if (destroyed_) return Status::FailedPrecondition(Where() + " is destroyed");
  if (size_bytes > size_bytes_ - reserved_) {
    return Status::ResourceExhausted(
        Where() + ": a cache of " + std::to_string(size_bytes) +
        " bytes exceeds the group budget (" + std::to_string(reserved_) +
        " of " + std::to_string(size_bytes_) + " bytes reserved)");
  }
  Cache c;
  HFLOW_RETURN_IF_ERROR(bound.runtime()->Malloc(device_, size_bytes, &c.base));
  c.size = size_bytes;
  c.max_alloc = max_alloc_bytes;
  c.ranges.Reset(size_bytes);
  reserved_ += size_bytes;
  caches_.push_back(std::move(c));
  return Status::OK();
}

Status MemoryGroup::Alloc(const rt::ScopedDevice& bound,
                          const std::string& member, uint64_t size,
                          MbufPtr* out, const AllocWait& wait) {
  HFLOW_RETURN_IF_ERROR(bound.Require(device_));
  HFLOW_RETURN_IF_ERROR(CheckSize(size));
  void* data = nullptr;
  uint64_t block = 0;
  {
    util::MutexLock lock(mu_, util::kSpinFirst);
    HFLOW_RETURN_IF_ERROR(CheckPermissionLocked(member, kPermAlloc));
    if (destroyed_)
      return Status::FailedPrecondition(Where() + " is destroyed");
    if (caches_.empty()) {
      HFLOW_RETURN_IF_ERROR(AllocDirectLocked(bound, size, &data, &block));
    } else {
      data = TakeCachedLocked(size, wait.keep_free, &block);
      if (data == nullptr) {
        HFLOW_RETURN_IF_ERROR(
            WaitForBlockLocked(lock, size, wait, &data, &block));
      }
    }
    in_use_ += block;
    ++live_;
    if (in_use_ > peak_in_use_) peak_in_use_ = in_use_;
  }
  *out = MakeMbuf(shared_from_this(), device_, data, size, block);
  return Status::OK();
}

Status MemoryGroup::AllocDirectLocked(const rt::ScopedDevice& bound,
                                      uint64_t size, void** data,
                                      uint64_t* block) {
  *block = BlockSize(size == 0 ? 1 : size);
  if (*block > size_bytes_ - reserved_) {
    return Status::ResourceExhausted(Where() + ": " + std::to_string(size) +
                                     " bytes exceed the group "
                                     "budget (" +
                                     std::to_string(reserved_) + " of " +
                                     std::to_string(size_bytes_) +
                                     " bytes reserved)");
  }
  HFLOW_RETURN_IF_ERROR(bound.runtime()->Malloc(device_, *block, data));
  reserved_ += *block;
  return Status::OK();
}

std::string MemoryGroup::InUseText() const {
  uint64_t size = 0;
  for (const Cache& c : caches_) size += c.size;
  return std::to_string(in_use_) + " of " + std::to_string(size) +
         " bytes in use by " + std::to_string(live_) + " mbufs";
}

Status MemoryGroup::CheckServableLocked(uint64_t size,
                                        uint64_t keep_free) const {
  uint64_t largest = 0;
  bool fits = false;
  for (const Cache& c : caches_) {
    largest = std::max(largest, c.max_alloc);
    if (size <= c.max_alloc &&
        BlockFor(size, c.max_alloc) + keep_free <= c.size) {
      fits = true;
    }
  }
  if (size > largest) {
    return Status::InvalidArgument(
        Where() + ": " + std::to_string(size) +
        " bytes exceed the max alloc size " + std::to_string(largest) +
        " of its caches; add a larger cache (AllocCache)");
  }
  if (!fits) {
    return Status::InvalidArgument(
        Where() + ": " + std::to_string(size) + " bytes with " +
        std::to_string(keep_free) +
        " bytes kept free never fit its caches; add a larger cache");
  }
  return Status::OK();
}

// Note [Waiting for memory]
// A full pool is usually a passing state: the blocks come back as soon as
// the graph's consumers (and the fetcher) take the queued messages. So an
// allocation the caches cannot serve waits on freed_, which Release
// notifies only while someone waits (the plentiful path pays one compare),
// up to the caller's timeout: feeders theirs, UDFs and executor copies a
// bounded one (a pool thread may be the very thread that would free the
// memory, so it never waits forever). Waiting alone can still deadlock:
// when queued messages fill a device's pool, their consumer finds no block
// for its output and nothing is ever freed. So allocations that only add
// to a device (feeds, copies in from another device) leave a reserve free
// (AllocWait::keep_free, set by the deployer): the consumers that turn
// queued messages into fewer or smaller ones can always allocate.
// CancelWaits ends every wait when the graph fails or stops.
Status MemoryGroup::WaitForBlockLocked(util::MutexLock& lock, uint64_t size,
                                       const AllocWait& wait, void** data,
                                       uint64_t* block) {
  HFLOW_RETURN_IF_ERROR(CheckServableLocked(size, wait.keep_free));
  if (FlushListsLocked()) {
    *data = TakeCachedLocked(size, wait.keep_free, block);
    if (*data != nullptr) return Status::OK();
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::max(0, wait.timeout_ms));
  for (;;) {
    if (!cancelled_.ok()) return cancelled_;
    if (destroyed_) {
      return Status::FailedPrecondition(Where() + " is destroyed");
    }
    const bool expired =
        wait.timeout_ms >= 0 && std::chrono::steady_clock::now() >= deadline;
    if (wait.timeout_ms == 0 || expired) {
      const std::string what =
          Where() + ": no block for " + std::to_string(size) + " bytes (" +
          InUseText() + ", " + std::to_string(wait.keep_free) + " kept free)";
      if (wait.timeout_ms == 0) {
        return Status::ResourceExhausted(what + "; caches exhausted");
      }
      return Status::Timeout(what + " after waiting " +
                             std::to_string(wait.timeout_ms) + " ms");
    }
    ++waiters_;
    if (wait.timeout_ms < 0) {
      lock.Wait(freed_);
    } else {
      lock.WaitUntil(freed_, deadline);
    }
    --waiters_;
    *data = TakeCachedLocked(size, wait.keep_free, block);
    if (*data != nullptr) return Status::OK();
    if (FlushListsLocked()) {
      *data = TakeCachedLocked(size, wait.keep_free, block);
      if (*data != nullptr) return Status::OK();
    }
  }
}

bool MemoryGroup::FlushListsLocked() {
  bool any = false;
  for (Cache& c : caches_) {
    if (c.listed_bytes == 0) continue;
    for (size_t k = 0; k < c.free_lists.size(); ++k) {
      const uint64_t b = ListedBlock(c, k);
      for (void* p : c.free_lists[k]) {
        c.ranges.Give(static_cast<char*>(p) - static_cast<char*>(c.base), b);
      }
      c.free_lists[k].clear();
    }
    c.listed = 0;
    c.listed_bytes = 0;
    any = true;
  }
  return any;
}

void* MemoryGroup::TakeCachedLocked(uint64_t size, uint64_t keep_free,
                                    uint64_t* block) {
  for (Cache& c : caches_) {
    if (size > c.max_alloc) continue;
    // Note [Block sizes]; the max alloc size is the top class, so any size
    // up to it fits a fresh cache.
    const uint64_t b = BlockFor(size, c.max_alloc);
    if (keep_free != 0 && c.used + b + keep_free > c.size) continue;
    void* data = nullptr;
    if (b <= kSmallMax) {
      auto& fl = c.free_lists[FreeList(b)];
      if (!fl.empty()) {
        data = fl.back();
        fl.pop_back();
        c.listed_bytes -= b;
      }
    }
    if (data == nullptr) {
      const uint64_t off = c.ranges.Take(b);
      if (off != RangeAllocator::kNone) data = static_cast<char*>(c.base) + off;
    }
    if (data != nullptr) {
      *block = b;
      c.used += b;
      return data;
    }
  }
  return nullptr;
}

Status MemoryGroup::AllocFromCache(const std::string& member, uint64_t size,
                                   MbufPtr* out, uint64_t keep_free) {
  HFLOW_RETURN_IF_ERROR(CheckSize(size));
  void* data = nullptr;
  uint64_t block = 0;
  {
    util::MutexLock lock(mu_, util::kSpinFirst);
    HFLOW_RETURN_IF_ERROR(CheckPermissionLocked(member, kPermAlloc));
    if (destroyed_)
      return Status::FailedPrecondition(Where() + " is destroyed");
    data = TakeCachedLocked(size, keep_free, &block);
    if (data == nullptr) {
      return Status::NotFound(Where() + ": no cache serves " +
                              std::to_string(size) + " bytes now");
    }
    in_use_ += block;
    ++live_;
    if (in_use_ > peak_in_use_) peak_in_use_ = in_use_;
  }
  *out = MakeMbuf(shared_from_this(), device_, data, size, block);
  return Status::OK();
}

void MemoryGroup::CancelWaits(const Status& reason) {
  {
    util::MutexLock lock(mu_);
    if (!cancelled_.ok()) return;
    cancelled_ =
        reason.ok() ? Status::Cancelled(Where() + ": cancelled") : reason;
  }
  freed_.notify_all();
}

void MemoryGroup::ResumeWaits() {
  util::MutexLock lock(mu_);
  cancelled_ = Status::OK();
}

// The last reference of an mbuf may drop on any thread; a direct block is a
// device allocation, so this binds the group's device itself.
void MemoryGroup::Release(void* data, uint64_t block_bytes) {
  util::MutexLock lock(mu_, util::kSpinFirst);
  in_use_ -= block_bytes;
  --live_;
  for (Cache& c : caches_) {
    char* base = static_cast<char*>(c.base);
    if (data >= c.base && static_cast<char*>(data) < base + c.size) {
      c.used -= block_bytes;
      if (c.used == 0) {
        // An empty cache starts afresh (Note [Block sizes]). The lists keep
        // their capacity.
        for (uint64_t m = c.listed; m != 0; m &= m - 1) {
          c.free_lists[__builtin_ctzll(m)].clear();
        }
        c.free_lists.back().clear();
        c.listed = 0;
        c.listed_bytes = 0;
        c.ranges.Reset(c.size);
      } else if (block_bytes <= kSmallMax) {
        const size_t k = FreeList(block_bytes);
        c.free_lists[k].push_back(data);
        if (k < 64) c.listed |= uint64_t{1} << k;
        c.listed_bytes += block_bytes;
      } else {
        c.ranges.Give(static_cast<char*>(data) - base, block_bytes);
      }
      const bool wake = waiters_ > 0;
      lock.Unlock();
      if (wake) freed_.notify_all();
      return;
    }
  }
  lock.Unlock();
  // Note [A Free that fails]
  // The last reference may drop anywhere, with no caller to tell, so a
  // failed Free (a transient driver error) is retried once. A block that
  // still cannot be freed is not forgotten: it stays counted in the budget
  // and listed, Stats shows it, and Destroy (the service's shutdown) tries
  // again, as it does for caches, instead of leaking it for good.
  rt::ScopedDevice bound(contexts_.get(), device_);
  Status s = bound.status();
  if (s.ok()) s = bound.runtime()->Free(device_, data);
  if (!s.ok() && bound.status().ok()) s = bound.runtime()->Free(device_, data);
  lock.LockSpinning();
  if (s.ok()) {
    reserved_ -= block_bytes;
  } else {
    unfreed_.emplace_back(data, block_bytes);
  }
}

Status MemoryGroup::Destroy(const rt::ScopedDevice& bound) {
  HFLOW_RETURN_IF_ERROR(bound.Require(device_));
  util::MutexLock lock(mu_);
  if (live_ > 0) {
    return Status::FailedPrecondition(
        Where() + ": " + std::to_string(live_) +
        " mbufs are still alive; release them before destroying the group");
  }
  // A cache whose Free fails stays listed, so a later Destroy (the
  // service's shutdown) frees it instead of leaking it for good.
  Status first;
  std::vector<Cache> kept;
  for (Cache& c : caches_) {
    Status s = bound.runtime()->Free(device_, c.base);
    if (s.ok()) continue;
    if (first.ok()) first = s;
    kept.push_back(std::move(c));
  }
  caches_ = std::move(kept);
  std::vector<std::pair<void*, uint64_t>> still;
  for (const auto& [block, bytes] : unfreed_) {
    Status s = bound.runtime()->Free(device_, block);
    if (s.ok()) continue;
    if (first.ok()) first = s;
    still.emplace_back(block, bytes);
  }
  unfreed_ = std::move(still);
  reserved_ = 0;
  for (const Cache& c : caches_) reserved_ += c.size;
  for (const auto& u : unfreed_) reserved_ += u.second;
  destroyed_ = true;
  freed_.notify_all();  // waiters see destroyed_
  return first;
}

GroupStats MemoryGroup::Stats() const {
  util::MutexLock lock(mu_);
  GroupStats s;
  s.size_bytes = size_bytes_;
  s.reserved_bytes = reserved_;
  s.in_use_bytes = in_use_;
  s.peak_in_use_bytes = peak_in_use_;
  s.waiting_allocs = static_cast<uint64_t>(waiters_);
  s.live_mbufs = live_;
  s.caches = caches_.size();
  for (const auto& u : unfreed_) s.unfreed_bytes += u.second;
  return s;
}

}  // namespace services
}  // namespace hflow
