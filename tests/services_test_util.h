// Helpers shared by the services tests: device stats, proxy events with a
// bounded wait, and group setup.
//
// Thread-safety: reentrant.
#ifndef HFLOW_TESTS_SERVICES_TEST_UTIL_H_
#define HFLOW_TESTS_SERVICES_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>

#include "rt/sim/sim_runtime.h"
#include "services/exchange_service.h"

namespace hflow {
namespace testing {

inline rt::DeviceStats DevStats(rt::SimRuntime& sim, int32_t d) {
  rt::DeviceStats s;
  EXPECT_TRUE(sim.GetDeviceStats(d, &s).ok());
  return s;
}

inline Status Submit(services::ExchangeService& svc, int32_t device,
                     const services::EventRequest& r,
                     services::EventReply* reply = nullptr) {
  return svc.SubmitEventSync(device, r, reply, /*timeout_ms=*/5000);
}

// A group `name` on `device` with `size` bytes and, if cache > 0, one cache.
inline void MakeGroup(services::ExchangeService& svc, int32_t device,
                      const std::string& name, uint64_t size,
                      uint64_t cache = 0, uint64_t max_alloc = 0) {
  Status s = Submit(svc, device, services::CreateGroupRequest{name, size});
  ASSERT_TRUE(s.ok()) << s.ToString();
  if (cache > 0) {
    s = Submit(svc, device,
               services::AllocCacheRequest{name, cache, max_alloc});
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
}

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_SERVICES_TEST_UTIL_H_
