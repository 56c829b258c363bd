// The shared parts of the ACL calls: the Status-to-ACL code table, the
// device lists and pointers in messages, the one log line per failure and
// the current-device rule (bound context, else the default device, else
// ACL_ERROR_RT_CONTEXT_NULL).
#include "acl/acl_call.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acl_test_util.h"
#include "test_util.h"

namespace hflow {
namespace acl {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::StderrOf;

TEST(AclCallTest, StatusCodesMapToAclCodes) {
  EXPECT_EQ(AclCode(StatusCode::kOk), ACL_SUCCESS);
  EXPECT_EQ(AclCode(StatusCode::kInvalidArgument), ACL_ERROR_RT_PARAM_INVALID);
  EXPECT_EQ(AclCode(StatusCode::kNoContext), ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_EQ(AclCode(StatusCode::kFailedPrecondition),
            ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_EQ(AclCode(StatusCode::kContextMismatch),
            ACL_ERROR_RESOURCE_NOT_MATCH);
  EXPECT_EQ(AclCode(StatusCode::kDeviceLost), ACL_ERROR_RT_LOST_HEARTBEAT);
  EXPECT_EQ(AclCode(StatusCode::kOutOfMemory), ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT_EQ(AclCode(StatusCode::kTimeout), ACL_ERROR_RT_REPORT_TIMEOUT);
  EXPECT_EQ(AclCode(StatusCode::kNotSupported), ACL_ERROR_FEATURE_UNSUPPORTED);
  EXPECT_EQ(AclCode(StatusCode::kInternal), ACL_ERROR_RT_INTERNAL_ERROR);
}

TEST(AclCallTest, CodesHaveCannsNumbers) {
  // Programs compare against the numbers too (logs, Python's pyACL).
  EXPECT_EQ(ACL_ERROR_INVALID_PARAM, 100000);
  EXPECT_EQ(ACL_ERROR_UNINITIALIZE, 100001);
  EXPECT_EQ(ACL_ERROR_REPEAT_INITIALIZE, 100002);
  EXPECT_EQ(ACL_ERROR_REPEAT_FINALIZE, 100037);
  EXPECT_EQ(ACL_ERROR_RT_PARAM_INVALID, 107000);
  EXPECT_EQ(ACL_ERROR_RT_INVALID_DEVICEID, 107001);
  EXPECT_EQ(ACL_ERROR_RT_CONTEXT_NULL, 107002);
  EXPECT_EQ(ACL_ERROR_RT_MEMORY_ALLOCATION, 207001);
  EXPECT_EQ(ACL_ERROR_RT_INTERNAL_ERROR, 507000);
  EXPECT_EQ(static_cast<int>(ACL_MEMCPY_DEVICE_TO_DEVICE), 3);
  EXPECT_EQ(static_cast<int>(ACL_MEM_MALLOC_NORMAL_ONLY_P2P), 5);
  EXPECT_EQ(static_cast<int>(ACL_HBM_MEM_P2P_NORMAL), 9);
}

TEST(AclCallTest, DeviceListsAndPointers) {
  EXPECT_EQ(DeviceList({0, 1, 2, 3}), "0..3");
  EXPECT_EQ(DeviceList({2, 3, 4, 5}), "2..5");
  EXPECT_EQ(DeviceList({3, 6, 7}), "3,6,7");
  EXPECT_EQ(DeviceList({4, 5}), "4,5");
  EXPECT_EQ(DeviceList({}), "none");
  EXPECT_EQ(PointerText(nullptr), "NULL");
  EXPECT_THAT(PointerText(reinterpret_cast<void*>(0x1234)), HasSubstr("1234"));
}

TEST(AclCallTest, FailWritesOneLineNamingTheCallAndCode) {
  aclError code = 0;
  std::string err = StderrOf([&] {
    code = Fail([] { return std::string("aclrtSetDevice(9)"); },
                ACL_ERROR_RT_INVALID_DEVICEID, "device 9 is not there");
  });
  EXPECT_EQ(code, ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_EQ(err,
            "hflow acl: aclrtSetDevice(9): device 9 is not there "
            "[ACL error 107001]\n");
}

TEST(AclCallTest, SuccessBuildsNoCallText) {
  bool built = false;
  CallText call = [&] {
    built = true;
    return std::string("x");
  };
  EXPECT_EQ(FromStatus(call, Status::OK()), ACL_SUCCESS);
  EXPECT_FALSE(built);
}

class AclCurrentDeviceTest : public testing::AclTest {};

TEST_F(AclCurrentDeviceTest, BoundContextGivesItsDevice) {
  auto sim = testing::InstallSim({2, 3, 4, 5});
  ASSERT_TRUE(rt::SetDevice(4).ok());
  int32_t device = -1;
  EXPECT_EQ(CurrentDevice(
                *sim, [] { return std::string("t"); }, &device),
            ACL_SUCCESS);
  EXPECT_EQ(device, 4);
}

TEST_F(AclCurrentDeviceTest, UnboundFallsBackToTheDefaultDevice) {
  auto sim = testing::InstallSim({0, 1, 2, 3});
  testing::RunOnFreshThread([&] {
    int32_t device = -1;
    EXPECT_EQ(CurrentDevice(
                  *sim, [] { return std::string("t"); }, &device),
              ACL_SUCCESS);
    EXPECT_EQ(device, 0);
    // Naming the device binds nothing yet; the device call will.
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  });
}

TEST_F(AclCurrentDeviceTest, UnboundWithoutDefaultDeviceFails) {
  auto sim = testing::InstallSim({3, 6, 7});
  testing::RunOnFreshThread(
      [&] {
        int32_t device = -1;
        aclError code = 0;
        std::string err = StderrOf([&] {
          code = CurrentDevice(
              *sim, [] { return std::string("aclrtMalloc(...)"); }, &device);
        });
        EXPECT_EQ(code, ACL_ERROR_RT_CONTEXT_NULL);
        EXPECT_THAT(err, StartsWith("hflow acl: aclrtMalloc(...): no valid "
                                    "context is bound to the current thread "
                                    "'acl-worker' (EE1018)"));
        EXPECT_THAT(err, HasSubstr("devices 3,6,7"));
        EXPECT_THAT(err, HasSubstr("call aclrtSetDevice"));
      },
      "acl-worker");
  EXPECT_EQ(testing::ContextsCreated(*sim, {3, 6, 7}), 0u);
}

}  // namespace
}  // namespace acl
}  // namespace hflow
