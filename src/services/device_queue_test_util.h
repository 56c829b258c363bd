// Helpers shared by the device queue tests (device_queue_*_test.cc): the
// settle and prompt bounds, Token (an mbuf without device memory) and Since.
//
// Thread-safety: reentrant.
#ifndef HFLOW_SERVICES_DEVICE_QUEUE_TEST_UTIL_H_
#define HFLOW_SERVICES_DEVICE_QUEUE_TEST_UTIL_H_

#include <chrono>
#include <memory>

#include "services/device_queue.h"

namespace hflow {
namespace services {
namespace device_queue_test {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a helper thread is given to reach its blocking wait.
inline constexpr milliseconds kSettle{30};
// Generous upper bound for "promptly" (the waits it bounds are otherwise
// forever): 1.5 s was once too short with four compilers beside the suite
// on two cores (DeviceLossWakesBlockedConsumers, stop 51).
inline constexpr milliseconds kPrompt{5000};

// An mbuf without device memory (no group), enough for queue mechanics.
inline MbufPtr Token(uint64_t trans_id, int32_t device = 3) {
  auto m = std::make_shared<Mbuf>(nullptr, device, nullptr, 0, 0);
  m->head().trans_id = trans_id;
  return m;
}

inline milliseconds Since(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
}

}  // namespace device_queue_test
}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_DEVICE_QUEUE_TEST_UTIL_H_
