// Status tests: codes, messages, context prefixes, copies.
#include "hflow/status.h"

#include <gtest/gtest.h>

namespace hflow {
namespace {

Status Fails() {
  HFLOW_RETURN_IF_ERROR(Status::Timeout("fetch after 50 ms"));
  return Status::Internal("not reached");
}

TEST(StatusTest, OkIsDefaultAndCheap) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, ErrorsCarryCodeAndMessage) {
  Status s = Status::NoContext("Malloc on device 2: no valid context");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsNoContext());
  EXPECT_EQ(s.ToString(), "no context: Malloc on device 2: no valid context");
  Status copy = s;
  EXPECT_EQ(copy, s);
  EXPECT_EQ(Status::DeviceLost("x").ToString(), "device lost: x");
  EXPECT_EQ(Status(StatusCode::kOk, "ignored").ok(), true);
}

TEST(StatusTest, WithContextPrefixesMessage) {
  Status s = Status::NotFound("queue 7").WithContext("deploy node 'add': ");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "deploy node 'add': queue 7");
  EXPECT_TRUE(Status::OK().WithContext("x").ok());
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  Status s = Fails();
  EXPECT_TRUE(s.IsTimeout());
  EXPECT_EQ(s.message(), "fetch after 50 ms");
}

TEST(StatusTest, EveryCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(StatusCode::kNotSupported); ++c) {
    EXPECT_STRNE(StatusCodeName(static_cast<StatusCode>(c)), "unknown");
  }
}

}  // namespace
}  // namespace hflow
