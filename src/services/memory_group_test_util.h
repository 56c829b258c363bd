// The fixture shared by the memory group tests (memory_group_*_test.cc): a
// sim runtime with devices 2 to 5.
//
// Thread-safety: reentrant.
#ifndef HFLOW_SERVICES_MEMORY_GROUP_TEST_UTIL_H_
#define HFLOW_SERVICES_MEMORY_GROUP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <vector>

#include "hflow/rt.h"
#include "services/exchange_service.h"
#include "services/memory_group.h"
#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace memory_group_test {

using ::hflow::testing::MakeSim;

class MemoryGroupTest : public ::testing::Test {
 protected:
  const std::vector<int32_t> devices_ = {2, 3, 4, 5};
  std::shared_ptr<rt::SimRuntime> sim_ = MakeSim(devices_);
};

}  // namespace memory_group_test
}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_MEMORY_GROUP_TEST_UTIL_H_
