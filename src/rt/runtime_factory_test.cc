// rt::InitializeRuntime: sim by default on the default cluster, configurable
// devices and default device, clear errors for unknown backends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hflow/rt.h"
#include "test_util.h"

namespace hflow {
namespace rt {
namespace {

using ::testing::HasSubstr;

TEST(RuntimeFactoryTest, SimOnFourDevicesByDefault) {
  std::shared_ptr<DeviceRuntime> r;
  ASSERT_TRUE(InitializeRuntime(RuntimeOptions{}, &r).ok());
  EXPECT_EQ(CurrentRuntime(), r.get());
  EXPECT_STREQ(r->Name(), "sim");
  EXPECT_EQ(r->DeviceIds(), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(r->DefaultDevice(), 0);
}

TEST(RuntimeFactoryTest, DeviceSetWithoutZeroHasNoDefaultDevice) {
  RuntimeOptions opts;
  opts.cluster = MakeLocalCluster({3, 6, 7});
  ASSERT_TRUE(InitializeRuntime(opts).ok());
  EXPECT_EQ(CurrentRuntime()->DefaultDevice(), std::nullopt);
  testing::RunOnFreshThread([] {
    void* p = nullptr;
    EXPECT_EQ(Malloc(3, 8, &p).code(), StatusCode::kNoContext);
  });
  opts.default_device = 6;
  ASSERT_TRUE(InitializeRuntime(opts).ok());
  EXPECT_EQ(CurrentRuntime()->DefaultDevice(), 6);
}

TEST(RuntimeFactoryTest, BadOptionsAreRejected) {
  DeviceRuntime* before = CurrentRuntime();
  RuntimeOptions opts;
  opts.backend = "ascend";
  Status s = InitializeRuntime(opts);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'ascend'"));
  opts.backend = "cuda";
  EXPECT_EQ(InitializeRuntime(opts).code(), StatusCode::kNotSupported);
  opts.backend = "sim";
  opts.cluster = MakeLocalCluster({2, 3});
  opts.default_device = 0;
  s = InitializeRuntime(opts);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CurrentRuntime(), before);  // nothing installed on error
}

}  // namespace
}  // namespace rt
}  // namespace hflow
