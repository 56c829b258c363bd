// Unit tests of ExchangeService (docs/architecture.md "Device-side
// services"), copies and host transfers: CopyMbuf issued on the destination
// device or from the source's context, its errors, and the bounds checks of
// WriteMbuf and ReadMbuf.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hflow/rt.h"
#include "services/exchange_service.h"
#include "services/exchange_service_test_util.h"
#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace {

using exchange_service_test::ExchangeServiceTest;
using exchange_service_test::Pattern;
using ::hflow::testing::MakeGroup;
using ::hflow::testing::RunOnFreshThread;
using ::testing::AllOf;
using ::testing::HasSubstr;

// --- Copies and host transfers
// --------------------------------------------------

TEST_F(ExchangeServiceTest, CopyMbufIsIssuedOnTheDestinationDevice) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "a", 1 << 16);
  MakeGroup(svc, 5, "b", 1 << 16);  // direct blocks: a Malloc on 5 as well
  MbufPtr src;
  ASSERT_TRUE(svc.AllocMbuf(2, "a", "deployer", 256, &src).ok());
  const auto data = Pattern(256, 1);
  ASSERT_TRUE(svc.WriteMbuf(src, data.data(), data.size()).ok());
  src->head().trans_id = 5;

  RunOnFreshThread(
      [&] {
        // The caller is bound to device 2's user context (the source's device).
        rt::Context* mine = nullptr;
        ASSERT_TRUE(sim_->CreateContext(2, &mine).ok());
        sim_->SetRecordCalls(true);
        MbufPtr dst;
        Status s = svc.CopyMbuf(src, 5, "b", "deployer", &dst);
        sim_->SetRecordCalls(false);
        ASSERT_TRUE(s.ok()) << s.ToString();
        EXPECT_EQ(sim_->GetCurrentContext(), mine);
        EXPECT_EQ(dst->device(), 5);
        EXPECT_EQ(dst->head().trans_id, 5u);
        std::vector<uint8_t> back(256);
        ASSERT_TRUE(svc.ReadMbuf(dst, back.data(), back.size()).ok());
        EXPECT_EQ(back, data);
        ASSERT_TRUE(sim_->DestroyContext(mine).ok());
      },
      "copier");

  int memcpys = 0, mallocs = 0;
  for (const rt::CallRecord& r : sim_->CallLog()) {
    if (r.op == rt::Op::kMemcpy) {
      ++memcpys;
      EXPECT_EQ(r.device, 5);
      EXPECT_EQ(r.bound_device, 5);
      EXPECT_FALSE(r.implicit_binding);
      EXPECT_EQ(r.result, StatusCode::kOk);
      EXPECT_EQ(r.thread, "copier");
    }
    if (r.op == rt::Op::kMalloc) {
      ++mallocs;
      EXPECT_EQ(r.device, 5);
      EXPECT_EQ(r.bound_device, 5);
    }
    EXPECT_NE(r.result, StatusCode::kNoContext);
    EXPECT_NE(r.result, StatusCode::kContextMismatch);
  }
  EXPECT_EQ(memcpys, 1);
  EXPECT_EQ(mallocs, 1);
}

// Note [Copies issued on the source]: a thread already on hflow's context
// of the source device (a pipeline stage) copies into a cached block with
// no context switch; a destination without a cache falls back to binding
// the destination. Either way the thread's binding is unchanged.
TEST_F(ExchangeServiceTest, CopyMbufFromTheSourcesContextIsIssuedThere) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "a", 1 << 20, 1 << 16, 4096);
  MakeGroup(svc, 5, "cached", 1 << 20, 1 << 16, 4096);
  MakeGroup(svc, 5, "direct", 1 << 16);  // no cache: a Malloc on 5
  MbufPtr src;
  ASSERT_TRUE(svc.AllocMbuf(2, "a", "deployer", 256, &src).ok());
  const auto data = Pattern(256, 3);
  ASSERT_TRUE(svc.WriteMbuf(src, data.data(), data.size()).ok());
  src->head().trans_id = 8;

  auto copy_and_log = [&](const std::string& group, MbufPtr* dst) {
    sim_->ClearCallLog();
    sim_->SetRecordCalls(true);
    Status s = svc.CopyMbuf(src, 5, group, "deployer", dst);
    sim_->SetRecordCalls(false);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return sim_->CallLog();
  };
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim_->SetDevice(2).ok());  // device 2's default context
    rt::Context* stage = sim_->GetCurrentContext();
    for (const std::string group : {"cached", "direct"}) {
      SCOPED_TRACE(group);
      MbufPtr dst;
      auto log = copy_and_log(group, &dst);
      ASSERT_NE(dst, nullptr);
      EXPECT_EQ(sim_->GetCurrentContext(), stage);
      EXPECT_EQ(dst->device(), 5);
      EXPECT_EQ(dst->head().trans_id, 8u);
      std::vector<uint8_t> back(256);
      ASSERT_TRUE(svc.ReadMbuf(dst, back.data(), back.size()).ok());
      EXPECT_EQ(back, data);
      int memcpys = 0, switches = 0;
      for (const rt::CallRecord& r : log) {
        EXPECT_NE(r.result, StatusCode::kNoContext);
        EXPECT_NE(r.result, StatusCode::kContextMismatch);
        EXPECT_FALSE(r.implicit_binding);
        switches += r.op == rt::Op::kSetCurrentContext;
        if (r.op != rt::Op::kMemcpy) continue;
        ++memcpys;
        const int32_t issuer = group == "cached" ? 2 : 5;
        EXPECT_EQ(r.device, issuer);
        EXPECT_EQ(r.bound_device, issuer);
      }
      EXPECT_EQ(memcpys, 1);
      if (group == "cached") {
        EXPECT_EQ(switches, 0) << "no context switch for a stage's copy";
      }
    }
    ASSERT_TRUE(sim_->ResetDevice(2).ok());
  });
}

// The source-issued path fails as the destination-issued one did: a full
// destination cache falls back and reports the exhaustion; a lost
// destination is named; neither leaves a block in use or the thread moved.
TEST_F(ExchangeServiceTest, CopyMbufFromTheSourcesContextFailsCleanly) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "a", 1 << 20, 1 << 16, 4096);
  MakeGroup(svc, 5, "tiny", 1 << 20, 1024, 256);  // four 256-byte blocks
  MbufPtr src;
  ASSERT_TRUE(svc.AllocMbuf(2, "a", "deployer", 200, &src).ok());
  std::shared_ptr<MemoryGroup> tiny;
  ASSERT_TRUE(svc.OpenGroup(5, "tiny", &tiny).ok());
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim_->SetDevice(2).ok());
    rt::Context* stage = sim_->GetCurrentContext();
    std::vector<MbufPtr> held(4);
    for (auto& m : held) {
      ASSERT_TRUE(svc.AllocMbuf(5, "tiny", "deployer", 256, &m).ok());
    }
    MbufPtr dst;
    Status s = svc.CopyMbuf(src, *tiny, "deployer", &dst);
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
    EXPECT_EQ(sim_->GetCurrentContext(), stage);
    held.clear();
    sim_->MarkDeviceLost(5);
    s = svc.CopyMbuf(src, *tiny, "deployer", &dst);
    EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("device 5"));
    EXPECT_EQ(dst, nullptr);
    EXPECT_EQ(tiny->Stats().in_use_bytes, 0u) << "the failed copy's block";
    EXPECT_EQ(sim_->GetCurrentContext(), stage);
    ASSERT_TRUE(sim_->ResetDevice(2).ok());
  });
}

TEST_F(ExchangeServiceTest, CopyMbufErrors) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "a", 1 << 16);
  MakeGroup(svc, 5, "tiny", 128);
  MbufPtr src, dst;
  ASSERT_TRUE(svc.AllocMbuf(2, "a", "deployer", 1000, &src).ok());
  EXPECT_EQ(svc.CopyMbuf(nullptr, 5, "tiny", "deployer", &dst).code(),
            StatusCode::kInvalidArgument);
  Status s = svc.CopyMbuf(src, 5, "missing", "deployer", &dst);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("'missing'"), HasSubstr("device 5")));
  s = svc.CopyMbuf(src, 5, "tiny", "stranger", &dst);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  s = svc.CopyMbuf(src, 5, "tiny", "deployer", &dst);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_EQ(dst, nullptr);
  // Copy within a device works too.
  ASSERT_TRUE(svc.CopyMbuf(src, 2, "a", "deployer", &dst).ok());
  EXPECT_EQ(dst->device(), 2);
  EXPECT_NE(dst->data(), src->data());
}

TEST_F(ExchangeServiceTest, WriteAndReadMbufAreBoundsChecked) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "g", 1 << 16, 4096, 1024);
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(3, "g", "deployer", 100, &m).ok());  // block 128
  auto data = Pattern(200, 9);
  std::vector<uint8_t> back(200, 0);
  // In bounds.
  ASSERT_TRUE(svc.WriteMbuf(m, data.data(), 100).ok());
  ASSERT_TRUE(svc.ReadMbuf(m, back.data(), 100).ok());
  EXPECT_TRUE(std::equal(back.begin(), back.begin() + 100, data.begin()));
  ASSERT_TRUE(svc.WriteMbuf(m, data.data() + 150, 50, 50).ok());
  ASSERT_TRUE(svc.ReadMbuf(m, back.data(), 50, 50).ok());
  EXPECT_TRUE(std::equal(back.begin(), back.begin() + 50, data.begin() + 150));
  EXPECT_TRUE(svc.WriteMbuf(m, data.data(), 0, 100).ok());  // empty at the end
  EXPECT_TRUE(svc.ReadMbuf(m, back.data(), 0, 100).ok());
  // Out of bounds, although the 128-byte block would hold them.
  struct Range {
    uint64_t bytes, offset;
  };
  for (Range r :
       {Range{101, 0}, Range{1, 100}, Range{50, 51}, Range{0, 101},
        Range{1, UINT64_MAX}, Range{UINT64_MAX, 1}, Range{UINT64_MAX, 0}}) {
    Status w = svc.WriteMbuf(m, data.data(), r.bytes, r.offset);
    EXPECT_EQ(w.code(), StatusCode::kInvalidArgument)
        << r.bytes << "@" << r.offset;
    EXPECT_THAT(w.message(), HasSubstr("WriteMbuf"));
    Status rd = svc.ReadMbuf(m, back.data(), r.bytes, r.offset);
    EXPECT_EQ(rd.code(), StatusCode::kInvalidArgument)
        << r.bytes << "@" << r.offset;
    EXPECT_THAT(rd.message(), HasSubstr("ReadMbuf"));
  }
  EXPECT_EQ(svc.WriteMbuf(nullptr, data.data(), 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(svc.ReadMbuf(nullptr, back.data(), 1).code(),
            StatusCode::kInvalidArgument);
  // The failed writes changed nothing.
  ASSERT_TRUE(svc.ReadMbuf(m, back.data(), 100).ok());
  EXPECT_TRUE(std::equal(back.begin(), back.begin() + 50, data.begin()));
  EXPECT_TRUE(
      std::equal(back.begin() + 50, back.begin() + 100, data.begin() + 150));
}

}  // namespace
}  // namespace services
}  // namespace hflow
