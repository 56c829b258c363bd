// Helpers shared by the ExchangeService tests (exchange_service_*_test.cc):
// Since, a byte Pattern, and the fixture with a sim runtime of devices 2 to 5.
//
// Thread-safety: reentrant.
#ifndef HFLOW_SERVICES_EXCHANGE_SERVICE_TEST_UTIL_H_
#define HFLOW_SERVICES_EXCHANGE_SERVICE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "hflow/rt.h"
#include "services/exchange_service.h"
#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace exchange_service_test {

using ::hflow::testing::MakeSim;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline constexpr milliseconds kSettle{30};
inline constexpr milliseconds kPrompt{1500};

inline milliseconds Since(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
}

inline std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

class ExchangeServiceTest : public ::testing::Test {
 protected:
  const std::vector<int32_t> devices_ = {2, 3, 4, 5};
  std::shared_ptr<rt::SimRuntime> sim_ = MakeSim(devices_);
};

}  // namespace exchange_service_test
}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_EXCHANGE_SERVICE_TEST_UTIL_H_
