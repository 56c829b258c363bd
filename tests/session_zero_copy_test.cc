// Zero-copy feed and fetch through the public API (Session::FeedViews,
// FetchViews, RegisterHostMemory): a fetched view reads the output's
// message in place and outlives RemoveGraph and Finalize; a view fed from
// registered host memory reaches the nodes without a copy (through an
// identity node it comes back as the very same bytes); a fed view's
// release runs exactly once on success, on a timeout and on failures; the
// registration cannot end under live messages; every call restores the
// caller's context. On device sets without 0 and with it.
//
//   x ── id@d0 ── out            (Graph1: the zero-copy round trip)
//   x ── id@d0 ── id2@d1 ── out  (Graph2: one hop, the only copy)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::ChainGraph;
using ::hflow::testing::DevicesName;
using ::testing::HasSubstr;

constexpr int64_t kElems = 4096;  // 32 KiB of int64

// A host buffer for views, with a release callback that counts.
struct Buffer {
  std::vector<int64_t> values;
  std::atomic<int> releases{0};
  explicit Buffer(int64_t first) : values(kElems) {
    for (int64_t i = 0; i < kElems; ++i) values[size_t(i)] = first + i;
  }
  // A view of the whole buffer whose keep counts its release.
  TensorView View() {
    TensorView v;
    v.dtype = DataType::kInt64;
    v.shape = {kElems};
    v.data = values.data();
    v.bytes = values.size() * sizeof(int64_t);
    v.keep = std::shared_ptr<const void>(values.data(),
                                         [this](const void*) { ++releases; });
    return v;
  }
};

int64_t At(const TensorView& v, int64_t i) {
  int64_t x;
  std::memcpy(&x, static_cast<const char*>(v.data) + i * 8, 8);
  return x;
}

class ZeroCopyTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override { Init(); }
  void Init(uint32_t queue_depth = 64) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.queue_depth = queue_depth;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
    sim_ = std::static_pointer_cast<rt::SimRuntime>(
        rt::GetInstalledRuntime().runtime);
    ASSERT_NE(sim_, nullptr);
  }
  void TearDown() override { (void)Finalize(); }
  int32_t Dev(size_t i) const { return GetParam()[i]; }
  void Build(Session& s, uint32_t id, bool hop) {
    std::vector<testing::ChainStage> stages = {
        {"id", "_BuiltIn_Identity", {Dev(0)}}};
    if (hop) stages.push_back({"id2", "_BuiltIn_Identity", {Dev(1)}});
    ASSERT_TRUE(s.AddGraph(id, ChainGraph("zc", stages)).ok());
    Status st = s.BuildGraph(id);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  uint64_t PoolBytesInUse() const { return testing::Holdings(*sim_).mem_bytes; }

  std::shared_ptr<rt::SimRuntime> sim_;
};

TEST_P(ZeroCopyTest, FetchedViewReadsTheOutputInPlace) {
  Session s;
  Build(s, 1, false);
  Buffer in(100);
  ASSERT_TRUE(s.FeedData(1, {in.View().ToTensor()}, {}, 1000).ok());
  ASSERT_TRUE(s.FeedData(1, {in.View().ToTensor()}, {}, 1000).ok());
  sim_->SetCountCalls(true);
  sim_->ResetCallCounts();
  std::vector<TensorView> out;
  FlowInfo info;
  Status st = s.FetchViews(1, &out, &info, 1000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sim_->CallCount(rt::Op::kMemcpy), 0u) << "a view copies nothing";
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DataType::kInt64);
  EXPECT_EQ(out[0].shape, std::vector<int64_t>{kElems});
  ASSERT_EQ(out[0].bytes, size_t(kElems) * 8);
  EXPECT_EQ(At(out[0], 0), 100);
  EXPECT_EQ(At(out[0], kElems - 1), 100 + kElems - 1);
  EXPECT_EQ(info.transaction_id, 1u);
  // The copying fetch of the same kind of output does copy: the count bites.
  std::vector<Tensor> copied;
  ASSERT_TRUE(s.FetchData(1, &copied, &info, 1000).ok());
  EXPECT_EQ(sim_->CallCount(rt::Op::kMemcpy), 1u);
  EXPECT_EQ(copied[0].As<int64_t>()[0], 100);
}

TEST_P(ZeroCopyTest, FetchedViewOutlivesRemoveGraph) {
  Session s;
  Build(s, 1, true);
  Buffer in(7);
  ASSERT_TRUE(s.FeedData(1, {in.View().ToTensor()}, {}, 1000).ok());
  std::vector<TensorView> out;
  FlowInfo info;
  ASSERT_TRUE(s.FetchViews(1, &out, &info, 1000).ok());
  Status st = s.RemoveGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  // The view keeps its message's pool, and reads as before.
  EXPECT_GT(PoolBytesInUse(), 0u);
  EXPECT_EQ(At(out[0], 0), 7);
  EXPECT_EQ(At(out[0], kElems - 1), 7 + kElems - 1);
  out.clear();
  EXPECT_EQ(PoolBytesInUse(), 0u) << "the pool goes with the last view";
  // The session still works.
  Build(s, 2, true);
  ASSERT_TRUE(s.FeedData(2, {in.View().ToTensor()}, {}, 1000).ok());
  ASSERT_TRUE(s.FetchViews(2, &out, &info, 1000).ok());
  EXPECT_EQ(At(out[0], 1), 8);
}

TEST_P(ZeroCopyTest, FetchedViewOutlivesFinalize) {
  std::vector<TensorView> out;
  {
    Session s;
    Build(s, 1, true);
    Buffer in(-5);
    ASSERT_TRUE(s.FeedData(1, {in.View().ToTensor()}, {}, 1000).ok());
    FlowInfo info;
    ASSERT_TRUE(s.FetchViews(1, &out, &info, 1000).ok());
    Status st = Finalize();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  EXPECT_EQ(At(out[0], 0), -5);
  EXPECT_EQ(At(out[0], kElems - 1), -5 + kElems - 1);
  EXPECT_GT(PoolBytesInUse(), 0u);
  out.clear();
  testing::SimHoldings left = testing::Holdings(*sim_);
  EXPECT_TRUE(left.empty()) << "after the last view: " << left.ToString();
}

TEST_P(ZeroCopyTest, RegisteredViewTravelsWithoutACopy) {
  Session s;
  Build(s, 1, false);
  Buffer in(42);
  Status st = RegisterHostMemory(in.values.data(), in.values.size() * 8);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sim_->RegisteredHostBytes(), uint64_t(kElems) * 8);
  sim_->SetCountCalls(true);
  sim_->ResetCallCounts();
  ASSERT_TRUE(s.FeedViews(1, {in.View()}, {}, 1000).ok());
  std::vector<TensorView> out;
  FlowInfo info;
  ASSERT_TRUE(s.FetchViews(1, &out, &info, 1000).ok());
  EXPECT_EQ(sim_->CallCount(rt::Op::kMemcpy), 0u);
  // Through an identity node on one device the output is the fed bytes.
  EXPECT_EQ(out[0].data, in.values.data());
  EXPECT_EQ(At(out[0], 3), 45);
  EXPECT_EQ(in.releases.load(), 0) << "the fetched view still uses it";
  st = UnregisterHostMemory(in.values.data());
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("live message"));
  out.clear();
  // The executor that delivered the output may hold the fed message a
  // moment longer than the fetcher (Note [The release is the signal]).
  EXPECT_TRUE(testing::WaitFor([&] { return in.releases.load() == 1; }));
  EXPECT_EQ(in.releases.load(), 1);
  st = UnregisterHostMemory(in.values.data());
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(sim_->RegisteredHostBytes(), 0u);
  EXPECT_EQ(UnregisterHostMemory(in.values.data()).code(),
            StatusCode::kNotFound);
}

// The release runs once hflow holds nothing of the memory: a release
// that unregisters at once succeeds (the registration lets go first).
TEST_P(ZeroCopyTest, ReleaseMayUnregisterAtOnce) {
  Session s;
  Build(s, 1, false);
  std::vector<int64_t> buf(kElems, 3);
  ASSERT_TRUE(RegisterHostMemory(buf.data(), buf.size() * 8).ok());
  Status in_release = Status::Internal("the release did not run");
  std::atomic<bool> released{false};  // publishes in_release
  TensorView v;
  v.dtype = DataType::kInt64;
  v.shape = {kElems};
  v.data = buf.data();
  v.bytes = buf.size() * 8;
  v.keep = std::shared_ptr<const void>(buf.data(), [&](const void* p) {
    in_release = UnregisterHostMemory(p);
    released.store(true, std::memory_order_release);
  });
  ASSERT_TRUE(s.FeedViews(1, {v}, {}, 1000).ok());
  v = TensorView{};
  std::vector<TensorView> out;
  FlowInfo info;
  ASSERT_TRUE(s.FetchViews(1, &out, &info, 1000).ok());
  EXPECT_EQ(out[0].data, buf.data());
  out.clear();
  ASSERT_TRUE(testing::WaitFor(
      [&] { return released.load(std::memory_order_acquire); }));
  EXPECT_TRUE(in_release.ok()) << in_release.ToString();
  EXPECT_EQ(sim_->HostRegistrations(), 0u);
}

TEST_P(ZeroCopyTest, RegisteredViewHopsWithOneCopyAndIsReleasedOnce) {
  Session s;
  Build(s, 1, true);
  Buffer in(9);
  ASSERT_TRUE(RegisterHostMemory(in.values.data(), in.values.size() * 8).ok());
  ASSERT_TRUE(s.FeedViews(1, {in.View()}, {}, 1000).ok());
  std::vector<TensorView> out;
  FlowInfo info;
  ASSERT_TRUE(s.FetchViews(1, &out, &info, 1000).ok());
  EXPECT_NE(out[0].data, in.values.data()) << "the hop copies to the device";
  EXPECT_EQ(At(out[0], kElems - 1), 9 + kElems - 1);
  // The first node let go of the fed message once its output was copied.
  EXPECT_TRUE(testing::WaitFor([&] { return in.releases.load() == 1; }));
  out.clear();
  EXPECT_EQ(in.releases.load(), 1);
  EXPECT_TRUE(UnregisterHostMemory(in.values.data()).ok());
}

TEST_P(ZeroCopyTest, UnregisteredViewIsCopiedAndReleasedByTheCall) {
  Session s;
  Build(s, 1, false);
  Buffer in(1);
  ASSERT_TRUE(s.FeedViews(1, {in.View()}, {}, 1000).ok());
  EXPECT_EQ(in.releases.load(), 1) << "hflow keeps no copy of its keep";
  std::vector<TensorView> out;
  FlowInfo info;
  ASSERT_TRUE(s.FetchViews(1, &out, &info, 1000).ok());
  EXPECT_NE(out[0].data, in.values.data());
  EXPECT_EQ(At(out[0], 2), 3);
}

TEST_P(ZeroCopyTest, ViewReleasedExactlyOnceOnTimeout) {
  (void)Finalize();
  Init(/*queue_depth=*/1);
  Session s;
  Build(s, 1, false);
  Buffer in(0);
  ASSERT_TRUE(RegisterHostMemory(in.values.data(), in.values.size() * 8).ok());
  // Nothing fetches: the queues fill, then a feed times out.
  int fed = 0;
  Status st;
  for (int i = 0; i < 16; ++i) {
    st = s.FeedViews(1, {in.View()}, {}, 50);
    if (!st.ok()) break;
    ++fed;
  }
  ASSERT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  ASSERT_GT(fed, 0);
  EXPECT_EQ(in.releases.load(), 1) << "only the feed that timed out";
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  EXPECT_EQ(in.releases.load(), fed + 1) << "each queued message once";
  EXPECT_TRUE(UnregisterHostMemory(in.values.data()).ok());
}

TEST_P(ZeroCopyTest, ViewReleasedExactlyOnceOnFailure) {
  Session s;
  Build(s, 1, false);
  Buffer in(0);
  ASSERT_TRUE(RegisterHostMemory(in.values.data(), in.values.size() * 8).ok());
  // A view whose bytes do not match its shape.
  TensorView bad = in.View();
  bad.shape = {kElems + 1};
  Status st = s.FeedViews(1, {bad}, {}, 1000);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("input 0 ('x')"));
  bad = TensorView{};
  EXPECT_EQ(in.releases.load(), 1);
  // The runtime refusing the message: nothing fed, released once.
  sim_->InjectFault(rt::Op::kMbufAlloc, 1, Status::Internal("injected"));
  st = s.FeedViews(1, {in.View()}, {}, 1000);
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
  EXPECT_EQ(in.releases.load(), 2);
  sim_->ClearFaults();
  std::vector<TensorView> out;
  FlowInfo info;
  EXPECT_EQ(s.FetchViews(1, &out, &info, 0).code(), StatusCode::kTimeout);
  // Wrong number of views.
  st = s.FeedViews(1, {in.View(), in.View()}, {}, 1000);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(in.releases.load(), 4);
  EXPECT_TRUE(UnregisterHostMemory(in.values.data()).ok());
}

TEST_P(ZeroCopyTest, FetchViewsRefusesATensorListAndLosesNothing) {
  Session s;
  Build(s, 1, false);
  Message list;
  list.msg_type = kMsgTypeTensorList;
  list.tensors = {testing::I64(1), testing::I64(2)};
  ASSERT_TRUE(s.FeedMessages(1, {}, {list}, 1000).ok());
  std::vector<TensorView> out;
  FlowInfo info;
  Status st = s.FetchViews(1, &out, &info, 1000);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("FetchMessages"));
  std::vector<Message> msgs;
  ASSERT_TRUE(s.FetchMessages(1, {}, &msgs, 1000).ok());
  ASSERT_EQ(msgs[0].tensors.size(), 2u);
  EXPECT_EQ(msgs[0].tensors[1].As<int64_t>()[0], 2);
}

TEST_P(ZeroCopyTest, RegistrationErrorsNameTheProblem) {
  Buffer in(0);
  EXPECT_EQ(RegisterHostMemory(nullptr, 8).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RegisterHostMemory(in.values.data(), 0).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(RegisterHostMemory(in.values.data(), 1024).ok());
  Status st = RegisterHostMemory(in.values.data() + 8, 1024);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("overlaps"));
  // A fault in the runtime's registration registers nothing.
  sim_->InjectFault(rt::Op::kHostRegister, 1, Status::Internal("injected"));
  EXPECT_EQ(RegisterHostMemory(in.values.data() + 512, 64).code(),
            StatusCode::kInternal);
  EXPECT_EQ(sim_->HostRegistrations(), 1u);
  ASSERT_TRUE(Finalize().ok());
  EXPECT_EQ(sim_->HostRegistrations(), 0u) << "Finalize ends registrations";
  EXPECT_EQ(RegisterHostMemory(in.values.data(), 8).code(),
            StatusCode::kFailedPrecondition);
}

TEST_P(ZeroCopyTest, EveryCallRestoresTheCallersContext) {
  Session s;
  Build(s, 1, false);
  Buffer in(0);
  rt::DeviceRuntime* r = rt::CurrentRuntime();
  testing::RunOnFreshThread([&] {
    rt::Context* mine = nullptr;
    ASSERT_TRUE(r->CreateContext(Dev(2), &mine).ok());
    ASSERT_TRUE(
        RegisterHostMemory(in.values.data(), in.values.size() * 8).ok());
    EXPECT_EQ(r->GetCurrentContext(), mine);
    ASSERT_TRUE(s.FeedViews(1, {in.View()}, {}, 1000).ok());
    EXPECT_EQ(r->GetCurrentContext(), mine);
    std::vector<TensorView> out;
    FlowInfo info;
    ASSERT_TRUE(s.FetchViews(1, &out, &info, 1000).ok());
    EXPECT_EQ(r->GetCurrentContext(), mine);
    out.clear();
    EXPECT_TRUE(testing::WaitFor([&] { return in.releases.load() == 1; }));
    EXPECT_TRUE(UnregisterHostMemory(in.values.data()).ok());
    EXPECT_EQ(r->GetCurrentContext(), mine);
    EXPECT_TRUE(r->DestroyContext(mine).ok());
  });
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, ZeroCopyTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1, 2}),
                         [](const auto& info) {
                           return DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
