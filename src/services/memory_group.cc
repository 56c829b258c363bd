// MemoryGroup (see memory_group.h).
// Thread-safety: every field after construction is guarded by mu_; device
// calls for caches and direct blocks run under the caller's binding token,
// except Release, which binds the group's device itself.
#include "services/memory_group.h"

#include <algorithm>
#include <string>

#include "hflow/rt.h"
#include "rt/spin_lock.h"

namespace hflow {
namespace services {
namespace {
constexpr uint64_t kMinBlock = 64;

// Sizes above this have no power-of-two block; no device has that memory.
constexpr uint64_t kMaxSize = uint64_t{1} << 62;

// The power-of-two block for `size` (at most kMaxSize).
uint64_t BlockSize(uint64_t size) {
  if (size <= kMinBlock) return kMinBlock;
  return uint64_t{1} << (64 - __builtin_clzll(size - 1));
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

std::string PermissionText(uint32_t perms) {
  std::string s;
  const char* names[] = {"admin", "read", "write", "alloc"};
  for (int i = 0; i < 4; ++i) {
    if (perms & (1u << i)) s += (s.empty() ? "" : "|") + std::string(names[i]);
  }
  return s.empty() ? "none" : s;
}

std::shared_ptr<MemoryGroup> MemoryGroup::Create(
    std::shared_ptr<DeviceContexts> contexts, int32_t device,
    std::string name, uint64_t size_bytes, std::string creator) {
  std::shared_ptr<MemoryGroup> g(new MemoryGroup(
      std::move(contexts), device, std::move(name), size_bytes));
  g->members_[creator] = kPermAll;
  return g;
}

MemoryGroup::MemoryGroup(std::shared_ptr<DeviceContexts> contexts,
                         int32_t device, std::string name, uint64_t size_bytes)
    : contexts_(std::move(contexts)),
      device_(device),
      name_(std::move(name)),
      size_bytes_(size_bytes) {}

MemoryGroup::~MemoryGroup() {
  // Normally Destroy ran; if not (an error path), give the caches back.
  if (!caches_.empty() || !unfreed_.empty()) {
    ScopedDevice bound(contexts_.get(), device_);
    for (Cache& c : caches_) (void)bound.runtime()->Free(device_, c.base);
    for (const auto& u : unfreed_) (void)bound.runtime()->Free(device_, u.first);
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
  std::lock_guard<std::mutex> lock(mu_);
  members_[member] |= perms;
  return Status::OK();
}

Status MemoryGroup::CheckPermission(const std::string& member,
                                    uint32_t perms) const {
  std::lock_guard<std::mutex> lock(mu_);
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

Status MemoryGroup::AllocCache(const ScopedDevice& bound, uint64_t size_bytes,
                               uint64_t max_alloc_bytes) {
  HFLOW_RETURN_IF_ERROR(bound.Require(device_));
  if (size_bytes == 0 || max_alloc_bytes == 0 || max_alloc_bytes > size_bytes) {
    return Status::InvalidArgument(
        Where() + ": cache size " + std::to_string(size_bytes) +
        " and max alloc size " + std::to_string(max_alloc_bytes) +
        " must be positive with max alloc <= size");
  }
  std::lock_guard<std::mutex> lock(mu_);
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
  reserved_ += size_bytes;
  caches_.push_back(std::move(c));
  return Status::OK();
}

Status MemoryGroup::Alloc(const ScopedDevice& bound, const std::string& member,
                          uint64_t size, MbufPtr* out) {
  HFLOW_RETURN_IF_ERROR(bound.Require(device_));
  HFLOW_RETURN_IF_ERROR(CheckSize(size));
  void* data = nullptr;
  uint64_t block = BlockSize(size == 0 ? 1 : size);
  {
    auto lock = LockSpinning(mu_);
    HFLOW_RETURN_IF_ERROR(CheckPermissionLocked(member, kPermAlloc));
    if (destroyed_) return Status::FailedPrecondition(Where() + " is destroyed");
    if (!caches_.empty()) {
      uint64_t largest = 0;
      for (const Cache& c : caches_) largest = std::max(largest, c.max_alloc);
      data = TakeCachedLocked(size, &block);
      if (data == nullptr && size > largest) {
        return Status::InvalidArgument(
            Where() + ": " + std::to_string(size) +
            " bytes exceed the max alloc size " + std::to_string(largest) +
            " of its caches; add a larger cache (AllocCache)");
      }
      if (data == nullptr) {
        return Status::ResourceExhausted(
            Where() + ": caches exhausted (" + std::to_string(in_use_) +
            " bytes in use by " + std::to_string(live_) +
            " mbufs); free mbufs or add a cache");
      }
    } else {
      if (block > size_bytes_ - reserved_) {
        return Status::ResourceExhausted(
            Where() + ": " + std::to_string(size) + " bytes exceed the group "
            "budget (" + std::to_string(reserved_) + " of " +
            std::to_string(size_bytes_) + " bytes reserved)");
      }
      HFLOW_RETURN_IF_ERROR(bound.runtime()->Malloc(device_, block, &data));
      reserved_ += block;
    }
    in_use_ += block;
    ++live_;
  }
  *out = std::make_shared<Mbuf>(shared_from_this(), device_, data, size, block);
  return Status::OK();
}

void* MemoryGroup::TakeCachedLocked(uint64_t size, uint64_t* block) {
  for (Cache& c : caches_) {
    if (size > c.max_alloc) continue;
    // Power-of-two classes below the max alloc size; the max alloc size
    // itself is the top class, so any size up to it fits a fresh cache.
    const uint64_t b = std::min(BlockSize(size == 0 ? 1 : size), c.max_alloc);
    auto& fl = c.free_lists[FreeList(b)];
    void* data = nullptr;
    if (!fl.empty()) {
      data = fl.back();
      fl.pop_back();
    } else if (c.bump + b <= c.size) {
      data = static_cast<char*>(c.base) + c.bump;
      c.bump += b;
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
                                   MbufPtr* out) {
  HFLOW_RETURN_IF_ERROR(CheckSize(size));
  void* data = nullptr;
  uint64_t block = 0;
  {
    auto lock = LockSpinning(mu_);
    HFLOW_RETURN_IF_ERROR(CheckPermissionLocked(member, kPermAlloc));
    if (destroyed_) return Status::FailedPrecondition(Where() + " is destroyed");
    data = TakeCachedLocked(size, &block);
    if (data == nullptr) {
      return Status::NotFound(Where() + ": no cache serves " +
                              std::to_string(size) + " bytes now");
    }
    in_use_ += block;
    ++live_;
  }
  *out = std::make_shared<Mbuf>(shared_from_this(), device_, data, size, block);
  return Status::OK();
}

// The last reference of an mbuf may drop on any thread; a direct block is a
// device allocation, so this binds the group's device itself.
void MemoryGroup::Release(void* data, uint64_t block_bytes) {
  auto lock = LockSpinning(mu_);
  in_use_ -= block_bytes;
  --live_;
  for (Cache& c : caches_) {
    char* base = static_cast<char*>(c.base);
    if (data >= c.base && static_cast<char*>(data) < base + c.size) {
      c.used -= block_bytes;
      if (c.used == 0) {
        // An empty cache starts afresh, so blocks of one size class never
        // keep it from serving another. The lists keep their capacity.
        for (uint64_t m = c.listed; m != 0; m &= m - 1) {
          c.free_lists[__builtin_ctzll(m)].clear();
        }
        c.free_lists.back().clear();
        c.listed = 0;
        c.bump = 0;
      } else {
        const size_t k = FreeList(block_bytes);
        c.free_lists[k].push_back(data);
        if (k < 64) c.listed |= uint64_t{1} << k;
      }
      return;
    }
  }
  lock.unlock();
  // Note [A Free that fails]
  // The last reference may drop anywhere, with no caller to tell, so a
  // failed Free (a transient driver error) is retried once. A block that
  // still cannot be freed is not forgotten: it stays counted in the budget
  // and listed, Stats shows it, and Destroy (the service's shutdown) tries
  // again, as it does for caches, instead of leaking it for good.
  ScopedDevice bound(contexts_.get(), device_);
  Status s = bound.status();
  if (s.ok()) s = bound.runtime()->Free(device_, data);
  if (!s.ok() && bound.status().ok()) s = bound.runtime()->Free(device_, data);
  RelockSpinning(lock);
  if (s.ok()) {
    reserved_ -= block_bytes;
  } else {
    unfreed_.emplace_back(data, block_bytes);
  }
}

Status MemoryGroup::Destroy(const ScopedDevice& bound) {
  HFLOW_RETURN_IF_ERROR(bound.Require(device_));
  std::lock_guard<std::mutex> lock(mu_);
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
  return first;
}

GroupStats MemoryGroup::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  GroupStats s;
  s.size_bytes = size_bytes_;
  s.reserved_bytes = reserved_;
  s.in_use_bytes = in_use_;
  s.live_mbufs = live_;
  s.caches = caches_.size();
  for (const auto& u : unfreed_) s.unfreed_bytes += u.second;
  return s;
}

}  // namespace services
}  // namespace hflow
