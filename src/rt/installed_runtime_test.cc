// The installed runtime's record (Note [One runtime for ACL and GE]): the
// options InitializeRuntime made it from, the holds of the layers using it,
// forgetting both when it is replaced, and SameRuntime's notion of
// interchangeable options.
#include <gtest/gtest.h>

#include "hflow/rt.h"
#include "test_util.h"

namespace hflow {
namespace rt {
namespace {

class InstalledRuntimeTest : public ::testing::Test {
 protected:
  // From a clean slate even after tests that left a runtime installed (the
  // sanitizer runs put many tests in one process).
  void SetUp() override { InstallRuntime(nullptr); }
  void TearDown() override { InstallRuntime(nullptr); }
};

TEST_F(InstalledRuntimeTest, InitializeRuntimeRemembersItsOptions) {
  EXPECT_EQ(GetInstalledRuntime().runtime, nullptr);
  RuntimeOptions opts;
  opts.cluster = MakeLocalCluster({3, 6, 7});
  std::shared_ptr<DeviceRuntime> r;
  ASSERT_TRUE(InitializeRuntime(opts, &r).ok());
  InstalledRuntime inst = GetInstalledRuntime();
  EXPECT_EQ(inst.runtime, r);
  ASSERT_TRUE(inst.options.has_value());
  EXPECT_EQ(inst.options->cluster.LocalDeviceIds(),
            (std::vector<int32_t>{3, 6, 7}));
  EXPECT_EQ(inst.holds, 0);

  // A runtime installed directly (a test's) has no known options.
  auto sim = testing::InstallSim({0, 1});
  inst = GetInstalledRuntime();
  EXPECT_EQ(inst.runtime.get(), sim.get());
  EXPECT_FALSE(inst.options.has_value());
  InstallRuntime(nullptr);
  EXPECT_EQ(GetInstalledRuntime().runtime, nullptr);
  EXPECT_FALSE(GetInstalledRuntime().options.has_value());
}

TEST_F(InstalledRuntimeTest, HoldsCountOnTheInstalledRuntimeOnly) {
  std::shared_ptr<DeviceRuntime> r;
  ASSERT_TRUE(InitializeRuntime(RuntimeOptions{}, &r).ok());
  HoldRuntime(r.get());
  HoldRuntime(r.get());
  EXPECT_EQ(GetInstalledRuntime().holds, 2);
  ReleaseRuntime(r.get());
  EXPECT_EQ(GetInstalledRuntime().holds, 1);
  HoldRuntime(nullptr);
  ReleaseRuntime(nullptr);
  EXPECT_EQ(GetInstalledRuntime().holds, 1);

  // Replacing the runtime forgets its holds; holds and releases of the old
  // one change nothing afterwards.
  std::shared_ptr<DeviceRuntime> next;
  ASSERT_TRUE(InitializeRuntime(RuntimeOptions{}, &next).ok());
  EXPECT_EQ(GetInstalledRuntime().holds, 0);
  HoldRuntime(r.get());
  ReleaseRuntime(r.get());
  ReleaseRuntime(next.get());  // never below zero
  EXPECT_EQ(GetInstalledRuntime().holds, 0);
  HoldRuntime(next.get());
  EXPECT_EQ(GetInstalledRuntime().holds, 1);
}

TEST(SameRuntimeTest, ComparesBackendDevicesAndDefaultDevice) {
  RuntimeOptions a;
  RuntimeOptions b;
  EXPECT_TRUE(SameRuntime(a, b));
  b.record_calls = true;  // can be turned on later
  EXPECT_TRUE(SameRuntime(a, b));
  b.cluster.source = "cluster.json";  // where it came from does not matter
  EXPECT_TRUE(SameRuntime(a, b));

  b = a;
  b.backend = "cuda";
  EXPECT_FALSE(SameRuntime(a, b));

  b = a;
  b.cluster = MakeLocalCluster({0, 1, 2});
  EXPECT_FALSE(SameRuntime(a, b));
  b.cluster = MakeLocalCluster({0, 1, 2, 3}, kDefaultDeviceMemoryBytes / 2);
  EXPECT_FALSE(SameRuntime(a, b));
  b.cluster = MakeLocalCluster({3, 2, 1, 0});  // order does not matter
  EXPECT_TRUE(SameRuntime(a, b));

  // Default devices compare after resolving the cluster's rule.
  b = a;
  b.default_device = 0;
  EXPECT_TRUE(SameRuntime(a, b));
  b.default_device = 2;
  EXPECT_FALSE(SameRuntime(a, b));
  b.default_device = -1;
  EXPECT_FALSE(SameRuntime(a, b));
  RuntimeOptions c, d;
  c.cluster = d.cluster = MakeLocalCluster({3, 6, 7});
  d.default_device = -1;  // "none", which 3,6,7 has anyway
  EXPECT_TRUE(SameRuntime(c, d));
  d.cluster.default_device = 6;
  d.default_device.reset();
  EXPECT_FALSE(SameRuntime(c, d));
}

}  // namespace
}  // namespace rt
}  // namespace hflow
