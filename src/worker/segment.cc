// Segment and SegmentArena: see segment.h.
//
// Thread-safety: see segment.h.
#include "worker/segment.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace hflow {
namespace worker {

Status Segment::Create(const std::string& name, uint64_t bytes,
                       std::shared_ptr<Segment>* out) {
  const int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    return Status::Internal("worker segment: memfd_create: " +
                            std::string(std::strerror(errno)));
  }
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    Status s = Status::OutOfMemory("worker segment: cannot size " +
                                   std::to_string(bytes) +
                                   " bytes: " + std::strerror(errno));
    close(fd);
    return s;
  }
  return Map(fd, bytes, out);
}

Status Segment::Map(int fd, uint64_t bytes, std::shared_ptr<Segment>* out) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    Status s = Status::OutOfMemory("worker segment: cannot map " +
                                   std::to_string(bytes) +
                                   " bytes: " + std::strerror(errno));
    close(fd);
    return s;
  }
  std::shared_ptr<Segment> seg(new Segment());
  seg->fd_ = fd;
  seg->base_ = static_cast<char*>(p);
  seg->bytes_ = bytes;
  *out = std::move(seg);
  return Status::OK();
}

Segment::~Segment() {
  if (on_unmap_) on_unmap_();
  if (base_ != nullptr) munmap(base_, bytes_);
  if (fd_ >= 0) close(fd_);
}

SegmentArena::SegmentArena(std::shared_ptr<Segment> segment, uint64_t begin,
                           uint64_t end)
    : segment_(std::move(segment)), begin_(begin), size_(end - begin) {
  ranges_.Reset(size_);
}

Status SegmentArena::Take(uint64_t bytes, int32_t wait_ms, uint64_t* offset) {
  const uint64_t want = Rounded(bytes == 0 ? 1 : bytes);
  if (want > size_) {
    return Status::ResourceExhausted(
        "worker segment: a message of " + std::to_string(bytes) +
        " bytes does not fit its " + std::to_string(size_) + "-byte part");
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    if (cancelled_) {
      return Status::Cancelled("worker segment: the other process is gone");
    }
    const uint64_t at = ranges_.Take(want);
    if (at != services::RangeAllocator::kNone) {
      *offset = begin_ + at;
      return Status::OK();
    }
    if (freed_.wait_until(l, deadline) == std::cv_status::timeout &&
        ranges_.Largest() < want) {
      return Status::ResourceExhausted(
          "worker segment: no free block of " + std::to_string(bytes) +
          " bytes within " + std::to_string(wait_ms) + " ms (" +
          std::to_string(ranges_.free_bytes()) + " of " +
          std::to_string(size_) + " bytes free)");
    }
  }
}

void SegmentArena::Give(uint64_t offset, uint64_t bytes) {
  {
    std::lock_guard<std::mutex> l(mu_);
    ranges_.Give(offset - begin_, Rounded(bytes == 0 ? 1 : bytes));
  }
  freed_.notify_all();
}

void SegmentArena::Cancel() {
  {
    std::lock_guard<std::mutex> l(mu_);
    cancelled_ = true;
  }
  freed_.notify_all();
}

uint64_t SegmentArena::free_bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  return ranges_.free_bytes();
}

}  // namespace worker
}  // namespace hflow
