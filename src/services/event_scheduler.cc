// DeviceAgent (see event_scheduler.h).
// Thread-safety: queue_, stopping_ and failed_ are guarded by mu_.
#include "services/event_scheduler.h"

#include <chrono>
#include <string>

#include "util/thread_name.h"

namespace hflow {
namespace services {

const char* SubEventName(SubEvent e) {
  switch (e) {
    case SubEvent::kCreateGroup:
      return "CreateGroup";
    case SubEvent::kAddGroup:
      return "AddGroup";
    case SubEvent::kAllocCache:
      return "AllocCache";
    case SubEvent::kAllocMbuf:
      return "AllocMbuf";
    case SubEvent::kFreeMbuf:
      return "FreeMbuf";
    case SubEvent::kCopyQMbuf:
      return "CopyQMbuf";
  }
  return "?";
}

DeviceAgent::DeviceAgent(std::shared_ptr<rt::DeviceContexts> contexts,
                         int32_t device, Handler handler)
    : contexts_(std::move(contexts)),
      device_(device),
      handler_(std::move(handler)),
      thread_([this] { Loop(); }) {}

DeviceAgent::~DeviceAgent() {
  {
    util::MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void DeviceAgent::Complete(Pending* p, Status s) {
  if (!p->completed.exchange(true)) p->done.set_value(std::move(s));
}

void DeviceAgent::Fail(const Status& reason) {
  std::deque<std::shared_ptr<Pending>> dropped;
  std::shared_ptr<Pending> running;
  {
    util::MutexLock lock(mu_);
    if (failed_.ok()) failed_ = reason;
    dropped.swap(queue_);
    running = current_;
  }
  if (running) Complete(running.get(), reason);
  for (auto& p : dropped) Complete(p.get(), reason);
}

Status DeviceAgent::Call(const EventRequest& request, EventReply* reply,
                         int32_t timeout_ms) {
  auto p = std::make_shared<Pending>();
  p->request = request;
  std::future<Status> f = p->done.get_future();
  {
    util::MutexLock lock(mu_);
    if (!failed_.ok()) return failed_;
    if (stopping_) return Status::Cancelled("event scheduler is stopping");
    queue_.push_back(p);
  }
  cv_.notify_one();
  if (timeout_ms >= 0 && f.wait_for(std::chrono::milliseconds(timeout_ms)) !=
                             std::future_status::ready) {
    return Status::Timeout("no reply within " + std::to_string(timeout_ms) +
                           " ms");
  }
  Status s = f.get();
  if (s.ok() && reply != nullptr) *reply = std::move(p->reply);
  return s;
}

void DeviceAgent::Loop() {
  util::SetCurrentThreadName("esched-" + std::to_string(device_));
  // Bind once, at thread start: every handler runs under this token.
  rt::ScopedDevice bound(contexts_.get(), device_);
  for (;;) {
    std::shared_ptr<Pending> p;
    {
      util::MutexLock lock(mu_);
      while (!stopping_ && queue_.empty()) lock.Wait(cv_);
      if (queue_.empty()) break;
      p = std::move(queue_.front());
      queue_.pop_front();
      current_ = p;
    }
    Status s = bound.status();
    if (s.ok()) s = handler_(bound, p->request, &p->reply);
    // Drop what the request holds (FreeMbuf's reference) before answering:
    // when SubmitEventSync returns, the device side has let go.
    p->request = EventRequest{};
    {
      util::MutexLock lock(mu_);
      current_.reset();
    }
    Complete(p.get(), std::move(s));
  }
  std::deque<std::shared_ptr<Pending>> left;
  {
    util::MutexLock lock(mu_);
    left.swap(queue_);
  }
  for (auto& q : left) {
    Complete(q.get(), Status::Cancelled("event scheduler stopped"));
  }
}

}  // namespace services
}  // namespace hflow
