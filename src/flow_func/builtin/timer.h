// TimerService: one named thread ("ff-timer") that runs callbacks at
// deadlines, for built-in UDFs whose output depends on time (batch
// timeouts), as GE's FlowFuncTimer does. Callbacks run on the timer thread:
// they must lock what they share with Proc and must not block for long.
// The thread binds no device: everything a callback does goes through the
// exchange service, which binds at its entry.
//
// Thread-safety: all methods are thread-safe. Cancel(id, wait=true) returns
// only when the callback is not running, so a UDF can cancel in its
// destructor.
#ifndef HFLOW_FLOW_FUNC_BUILTIN_TIMER_H_
#define HFLOW_FLOW_FUNC_BUILTIN_TIMER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace flow_func {

class TimerService {
 public:
  static TimerService& Instance();

  // Milliseconds on the steady clock (the time base of Schedule and of the
  // batchers' now_ms).
  static uint64_t NowMs();

  // Runs `fn` once at `deadline_ms` (NowMs base); returns an id > 0.
  uint64_t Schedule(uint64_t deadline_ms, std::function<void()> fn);
  // Cancels a pending callback. With `wait`, also waits while it is running
  // right now (never call that holding a lock the callback takes).
  void Cancel(uint64_t id, bool wait = true);

  ~TimerService();

 private:
  TimerService();
  void Loop();

  util::Mutex mu_;
  std::condition_variable cv_;
  // deadline -> id
  std::multimap<uint64_t, uint64_t> by_deadline_ GUARDED_BY(mu_);
  std::map<uint64_t, std::pair<uint64_t, std::function<void()>>> timers_
      GUARDED_BY(mu_);
  uint64_t next_id_ GUARDED_BY(mu_) = 1;
  uint64_t running_ GUARDED_BY(mu_) = 0;  // id of the callback in progress
  std::condition_variable done_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_BUILTIN_TIMER_H_
