// DeviceQueue (see device_queue.h).
// Thread-safety: items_ and the closed state are guarded by mu_. Notifies
// are issued only when someone waits on that condition.
#include "services/device_queue.h"

#include <chrono>
#include <thread>

namespace hflow {
namespace services {
namespace {
constexpr int kYieldsBeforePark = 16;
}  // namespace

DeviceQueue::DeviceQueue(uint32_t id, int32_t device, uint32_t depth,
                         std::string name)
    : id_(id), device_(device), depth_(depth), name_(std::move(name)) {}

std::string DeviceQueue::Where() const {
  return "queue " + std::to_string(id_) +
         (name_.empty() ? "" : " ('" + name_ + "')") + " on device " +
         std::to_string(device_);
}

template <typename Ready>
Status DeviceQueue::Wait(std::unique_lock<std::mutex>& lock,
                         std::condition_variable& cv, int32_t timeout_ms,
                         const char* what, Ready ready) {
  auto done = [&] { return is_closed_ || ready(); };
  if (!done()) {
    if (timeout_ms == 0) {
      return Status::Timeout(Where() + ": " + what + " (no wait requested)");
    }
    // Note [Yield before parking]
    // A pipeline stage usually finds its queue empty only for the moment
    // its producer needs to finish the next message. Parking on the condvar
    // costs a futex sleep here and a futex wake in the producer (several µs
    // each on a loaded machine); yielding the core a few times first lets
    // the producer run (on this core, when the machine has fewer cores than
    // stages) and usually finds the item without either syscall. Only
    // parked waiters are counted, so producers skip the notify meanwhile.
    for (int i = 0; i < kYieldsBeforePark && !done(); ++i) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    }
  }
  if (!done()) {
    if (timeout_ms < 0) {
      cv.wait(lock, done);
    } else if (!cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                            done)) {
      return Status::Timeout(Where() + ": " + what + " after " +
                             std::to_string(timeout_ms) + " ms");
    }
  }
  return is_closed_ ? closed_ : Status::OK();
}

Status DeviceQueue::Enqueue(MbufPtr mbuf, int32_t timeout_ms) {
  if (!mbuf) return Status::InvalidArgument(Where() + ": null mbuf");
  std::unique_lock<std::mutex> lock(mu_);
  ++waiting_producers_;
  Status s = Wait(lock, not_full_, timeout_ms, "still full",
                  [&] { return items_.size() < depth_; });
  --waiting_producers_;
  HFLOW_RETURN_IF_ERROR(s);
  items_.push_back(std::move(mbuf));
  bool wake = waiting_consumers_ > 0;
  if (on_item_) on_item_();
  lock.unlock();
  if (wake) not_empty_.notify_one();
  return Status::OK();
}

Status DeviceQueue::PushOverDepth(MbufPtr mbuf) {
  if (!mbuf) return Status::InvalidArgument(Where() + ": null mbuf");
  std::unique_lock<std::mutex> lock(mu_);
  if (is_closed_) return closed_;
  items_.push_back(std::move(mbuf));
  bool wake = waiting_consumers_ > 0;
  if (on_item_) on_item_();
  lock.unlock();
  if (wake) not_empty_.notify_one();
  return Status::OK();
}

void DeviceQueue::SetListeners(Listener on_item, Listener on_space) {
  std::lock_guard<std::mutex> lock(mu_);
  on_item_ = std::move(on_item);
  on_space_ = std::move(on_space);
}

Status DeviceQueue::Dequeue(MbufPtr* out, int32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  ++waiting_consumers_;
  Status s = Wait(lock, not_empty_, timeout_ms, "still empty",
                  [&] { return !items_.empty(); });
  --waiting_consumers_;
  HFLOW_RETURN_IF_ERROR(s);
  *out = std::move(items_.front());
  items_.pop_front();
  bool wake = waiting_producers_ > 0;
  if (items_.size() + 1 >= depth_ && items_.size() < depth_ && on_space_) {
    on_space_();
  }
  lock.unlock();
  if (wake) not_full_.notify_one();
  return Status::OK();
}

Status DeviceQueue::Return(MbufPtr mbuf) {
  std::unique_lock<std::mutex> lock(mu_);
  if (is_closed_) return closed_;
  items_.push_front(std::move(mbuf));
  bool wake = waiting_consumers_ > 0;
  if (on_item_) on_item_();
  lock.unlock();
  if (wake) not_empty_.notify_one();
  return Status::OK();
}

void DeviceQueue::Close(const Status& reason) {
  std::deque<MbufPtr> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (is_closed_) return;
    is_closed_ = true;
    closed_ = reason.WithContext(Where() + ": ");
    dropped.swap(items_);
  }
  not_empty_.notify_all();
  not_full_.notify_all();
  // `dropped` releases its mbufs here, outside the lock.
}

size_t DeviceQueue::Size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return items_.size();
}

bool DeviceQueue::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return is_closed_;
}

}  // namespace services
}  // namespace hflow
