// GE code mapping tests: every hflow status code onto GE's, every GE code
// back, GE's numeric values, and the fetch rule for a UDF's ret code.
#include "session/ge_codes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace hflow {
namespace ge {
namespace {

using ::testing::HasSubstr;

// The values of GE's headers, spelled out so a typo in ge_codes.h fails.
TEST(GeCodesTest, ValuesAreGes) {
  EXPECT_EQ(kGeSuccess, 0u);
  EXPECT_EQ(kGeFailed, 4294967295u);
  EXPECT_EQ(kGeParamInvalid, 145000u);
  EXPECT_EQ(kGeExecNotInit, 145001u);
  EXPECT_EQ(kGeMemoryAllocation, 245000u);
  EXPECT_EQ(kGeSubhealthy, 345102u);
  EXPECT_EQ(kGeUserRaiseException, 345103u);
  EXPECT_EQ(kGeDataNotAligned, 345104u);
  EXPECT_EQ(kGeInternalError, 545000u);
  EXPECT_EQ(kGeModelExecuteTimeout, 545601u);
  EXPECT_EQ(kGeRedeploying, 545602u);
  EXPECT_EQ(kGeEndOfSequence, 1343225863u);
}

TEST(GeCodesTest, EveryStatusCodeMapsOntoGe) {
  const std::pair<StatusCode, uint32_t> cases[] = {
      {StatusCode::kOk, kGeSuccess},
      {StatusCode::kInvalidArgument, kGeParamInvalid},
      {StatusCode::kNotFound, kGeParamInvalid},
      {StatusCode::kTimeout, kGeModelExecuteTimeout},
      {StatusCode::kNoContext, kGeFailed},
      {StatusCode::kContextMismatch, kGeFailed},
      {StatusCode::kDeviceLost, kGeFailed},
      {StatusCode::kOutOfMemory, kGeMemoryAllocation},
      {StatusCode::kResourceExhausted, kGeFailed},
      {StatusCode::kFailedPrecondition, kGeFailed},
      {StatusCode::kInternal, kGeInternalError},
      {StatusCode::kAlreadyExists, kGeFailed},
      {StatusCode::kPermissionDenied, kGeFailed},
      {StatusCode::kCancelled, kGeFailed},
      {StatusCode::kNotSupported, kGeFailed},
      {StatusCode::kNotAligned, kGeDataNotAligned},
  };
  for (const auto& [code, ge] : cases) {
    Status s = code == StatusCode::kOk ? Status::OK() : Status(code, "m");
    EXPECT_EQ(GeCodeOf(s), ge) << StatusCodeName(code);
  }
}

TEST(GeCodesTest, EveryGeCodeMapsBack) {
  const std::pair<uint32_t, StatusCode> cases[] = {
      {kGeFailed, StatusCode::kInternal},
      {kGeParamInvalid, StatusCode::kInvalidArgument},
      {kGeExecNotInit, StatusCode::kFailedPrecondition},
      {kGeMemoryAllocation, StatusCode::kOutOfMemory},
      {kGeMemoryOperateFailed, StatusCode::kInternal},
      {kGeDeviceMemoryOperateFailed, StatusCode::kInternal},
      {kGeSubhealthy, StatusCode::kDeviceLost},
      {kGeUserRaiseException, StatusCode::kFailedPrecondition},
      {kGeDataNotAligned, StatusCode::kNotAligned},
      {kGeInternalError, StatusCode::kInternal},
      {kGeModelExecuteTimeout, StatusCode::kTimeout},
      {kGeRedeploying, StatusCode::kDeviceLost},
      {kGeEndOfSequence, StatusCode::kCancelled},
      {1234, StatusCode::kFailedPrecondition},  // a UDF's code
      {kGeMaxExternalCode, StatusCode::kFailedPrecondition},
      {kGeMaxExternalCode + 1, StatusCode::kInternal},  // unknown
  };
  EXPECT_TRUE(StatusOfGeCode(kGeSuccess).ok());
  for (const auto& [ge, code] : cases) {
    Status s = StatusOfGeCode(ge);
    EXPECT_EQ(s.code(), code) << ge;
    // The message names the number and GE's name for it.
    EXPECT_THAT(s.message(), HasSubstr("GE code " + std::to_string(ge) + " (" +
                                       GeCodeName(ge) + ")"));
  }
  EXPECT_THAT(StatusOfGeCode(kGeModelExecuteTimeout).message(),
              HasSubstr("within the timeout"));
  EXPECT_THAT(StatusOfGeCode(1234).message(), HasSubstr("a UDF returned"));
}

// The codes GE's API itself returns survive the trip hflow -> GE -> hflow.
TEST(GeCodesTest, RoundTripsWhereGeHasTheCode) {
  for (StatusCode c : {StatusCode::kInvalidArgument, StatusCode::kTimeout,
                       StatusCode::kOutOfMemory, StatusCode::kInternal}) {
    EXPECT_EQ(StatusOfGeCode(GeCodeOf(Status(c, "m"))).code(), c)
        << StatusCodeName(c);
  }
}

TEST(GeCodesTest, NamesEveryCode) {
  EXPECT_STREQ(GeCodeName(kGeSuccess), "SUCCESS");
  EXPECT_STREQ(GeCodeName(kGeFailed), "FAILED");
  EXPECT_STREQ(GeCodeName(kGeParamInvalid), "ACL_ERROR_GE_PARAM_INVALID");
  EXPECT_STREQ(GeCodeName(kGeExecNotInit), "ACL_ERROR_GE_EXEC_NOT_INIT");
  EXPECT_STREQ(GeCodeName(kGeMemoryAllocation),
               "ACL_ERROR_GE_MEMORY_ALLOCATION");
  EXPECT_STREQ(GeCodeName(kGeMemoryOperateFailed),
               "ACL_ERROR_GE_MEMORY_OPERATE_FAILED");
  EXPECT_STREQ(GeCodeName(kGeDeviceMemoryOperateFailed),
               "ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED");
  EXPECT_STREQ(GeCodeName(kGeSubhealthy), "ACL_ERROR_GE_SUBHEALTHY");
  EXPECT_STREQ(GeCodeName(kGeUserRaiseException),
               "ACL_ERROR_GE_USER_RAISE_EXCEPTION");
  EXPECT_STREQ(GeCodeName(kGeDataNotAligned), "ACL_ERROR_GE_DATA_NOT_ALIGNED");
  EXPECT_STREQ(GeCodeName(kGeInternalError), "ACL_ERROR_GE_INTERNAL_ERROR");
  EXPECT_STREQ(GeCodeName(kGeModelExecuteTimeout),
               "ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT");
  EXPECT_STREQ(GeCodeName(kGeRedeploying), "ACL_ERROR_GE_REDEPLOYING");
  EXPECT_STREQ(GeCodeName(kGeEndOfSequence), "END_OF_SEQUENCE");
  EXPECT_STREQ(GeCodeName(7), "USER_CODE");
  EXPECT_STREQ(GeCodeName(kGeMaxExternalCode + 1), "UNKNOWN");
}

// GE's tensor fetch: an error status wins, then a raised exception, then
// the UDF's ret code (FAILED when GE would not pass it through), else
// SUCCESS.
TEST(GeCodesTest, FetchCodeCarriesTheUdfRetCode) {
  GeFetchFacts raised;
  raised.raised_exception = true;
  EXPECT_EQ(GeFetchCode(Status::OK(), 0), kGeSuccess);
  EXPECT_EQ(GeFetchCode(Status::OK(), 1001), 1001u);
  EXPECT_EQ(GeFetchCode(Status::OK(), 9999999), 9999999u);
  EXPECT_EQ(GeFetchCode(Status::OK(), 10000000), kGeFailed);
  EXPECT_EQ(GeFetchCode(Status::OK(), -1), kGeFailed);
  EXPECT_EQ(GeFetchCode(Status::OK(), 1001, raised), kGeUserRaiseException);
  EXPECT_EQ(GeFetchCode(Status::OK(), 0, raised), kGeUserRaiseException);
  EXPECT_EQ(GeFetchCode(Status::Timeout("t"), 1001), kGeModelExecuteTimeout);
  EXPECT_EQ(GeFetchCode(Status::Cancelled("c"), 0, raised), kGeFailed);
}

// A try-fetch (timeout 0) that finds nothing is FAILED in GE, a waiting one
// the timeout code.
TEST(GeCodesTest, FetchTimeoutDependsOnTheTimeout) {
  GeFetchFacts f;
  f.timeout_ms = 0;
  EXPECT_EQ(GeFetchCode(Status::Timeout("t"), 0, f), kGeFailed);
  f.timeout_ms = 1000;
  EXPECT_EQ(GeFetchCode(Status::Timeout("t"), 0, f), kGeModelExecuteTimeout);
  f.timeout_ms = -1;
  EXPECT_EQ(GeFetchCode(Status::Timeout("t"), 0, f), kGeModelExecuteTimeout);
}

// GE's FlowMsg fetch leaves ret codes in the messages and turns an
// end-of-sequence output into FAILED.
TEST(GeCodesTest, FlowMsgFetchKeepsRetCodesInTheMessages) {
  GeFetchFacts f;
  f.api = GeFetchApi::kFlowMsgs;
  EXPECT_EQ(GeFetchCode(Status::OK(), 1001, f), kGeSuccess);
  f.end_of_sequence = true;
  EXPECT_EQ(GeFetchCode(Status::OK(), 0, f), kGeFailed);
  f.raised_exception = true;
  EXPECT_EQ(GeFetchCode(Status::OK(), 0, f), kGeUserRaiseException);
  // The tensor fetch ignores the end-of-sequence fact.
  f = GeFetchFacts{};
  f.end_of_sequence = true;
  EXPECT_EQ(GeFetchCode(Status::OK(), 0, f), kGeSuccess);
}

}  // namespace
}  // namespace ge
}  // namespace hflow
