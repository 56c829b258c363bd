// Stream functions (func_list[].stream_input, procs taking FlowMsgQueue
// inputs) through the public Session API, on device sets with and without
// device 0: a proc looping on Dequeue(-1) forwards every message in order,
// on a thread of its own bound to its node's device; Dequeue's timeouts
// (0: poll, 50 ms: waits that long), Depth and Size; a message carrying a
// failure is dequeued with its code; RemoveGraph wakes a blocked Dequeue
// with FLOW_FUNC_STATUS_EXIT; a proc that never dequeues back-pressures the
// feeder and is not busy-called; one that never returns is abandoned within
// stop_timeout_ms, named; an error return fails the graph, named;
// ResetGraph restarts the stream thread.
//
// The compile config's library is hflow's own (already loaded), so the
// functions are this file's in-process registrations.
//
// Thread-safety: UDF state is atomics or guarded by a mutex; the gate lives
// on the heap, never freed (an abandoned thread may still wait on it).
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "test_graphs.h"
#include "test_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using FlowFunc::FlowMsg;
using FlowFunc::FlowMsgQueue;
using FlowFunc::MetaRunContext;
using std::chrono::milliseconds;
using Queues = std::vector<std::shared_ptr<FlowMsgQueue>>;

constexpr int32_t kIoMs = 10000;
constexpr int32_t kStopMs = 300;
constexpr milliseconds kSlack{2500};

enum class Mode {
  kForward,
  kProbe,
  kNeverDequeue,
  kNeverReturn,
  kError,
  kRenumber,  // outputs a new message per input, without a transaction id
  kMixed      // waits (bounded) for the instance's message proc first
};
std::atomic<Mode> g_mode{Mode::kForward};

// What the procs saw.
struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int32_t> rcs;  // non-success Dequeue codes, in order
  int32_t device = -1, ctx_device = -1;
  std::string thread;
  int calls = 0;
  int32_t poll_rc = 0, wait_rc = 0, depth = 0, size = 0;
  int64_t waited_ms = 0;
  bool msg_with_code = false;  // a ret-code Dequeue set its message
  bool gate_open = false;
  bool msg_proc_ran = false;  // StreamTest_Msg ran while the stream proc was in
};
Seen& S() {
  static Seen* s = new Seen();  // never freed: see the file comment
  return *s;
}

void Record(int32_t rc, bool msg) {
  std::lock_guard<std::mutex> l(S().mu);
  S().rcs.push_back(rc);
  if (rc != FlowFunc::FLOW_FUNC_STATUS_EXIT && msg) S().msg_with_code = true;
  S().cv.notify_all();
}

class StreamUdf : public FlowFunc::MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<FlowFunc::MetaParams>&) override {
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Proc(const std::shared_ptr<MetaRunContext>& ctx, const Queues& qs) {
    OnCall();
    switch (g_mode.load()) {
      case Mode::kNeverDequeue:
        return FlowFunc::FLOW_FUNC_SUCCESS;
      case Mode::kNeverReturn: {
        std::unique_lock<std::mutex> l(S().mu);
        S().cv.wait(l, [] { return S().gate_open; });
        return FlowFunc::FLOW_FUNC_SUCCESS;
      }
      case Mode::kProbe:
        Probe(*qs[0]);
        break;
      case Mode::kMixed: {
        // Only a message proc running alongside this call can let it on.
        std::unique_lock<std::mutex> l(S().mu);
        if (!S().cv.wait_for(l, milliseconds(kIoMs),
                             [] { return S().msg_proc_ran; })) {
          return FlowFunc::FLOW_FUNC_FAILED;
        }
        break;
      }
      default:
        break;
    }
    for (;;) {
      std::shared_ptr<FlowMsg> m;
      const int32_t rc = qs[0]->Dequeue(m, -1);
      if (rc == FlowFunc::FLOW_FUNC_SUCCESS && g_mode == Mode::kError) {
        return 4242;
      }
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) Record(rc, m != nullptr);
      if (rc == FlowFunc::FLOW_FUNC_STATUS_EXIT) return rc;
      if (!m) return rc;
      if (g_mode == Mode::kRenumber) m = Copy(*ctx, *m);
      if (!m || ctx->SetOutput(0, m) != FlowFunc::FLOW_FUNC_SUCCESS) return 0;
    }
  }

 private:
  static void OnCall() {
    std::lock_guard<std::mutex> l(S().mu);
    if (++S().calls == 1) {
      int32_t d = -1;
      if (rt::GetDevice(&d).ok()) S().device = d;
      if (rt::Context* c = rt::GetCurrentContext()) {
        (void)rt::GetContextDevice(c, &S().ctx_device);
      }
      S().thread = util::CurrentThreadName();
    }
    S().cv.notify_all();
  }
  // A new message with `m`'s value and no transaction id.
  static std::shared_ptr<FlowMsg> Copy(MetaRunContext& ctx, FlowMsg& m) {
    auto out = ctx.AllocTensorMsg({1}, FlowFunc::TensorDataType::DT_INT64);
    if (!out) return nullptr;
    *static_cast<int64_t*>(out->GetTensor()->GetData()) =
        *static_cast<const int64_t*>(m.GetTensor()->GetData());
    return out;
  }
  static void Probe(FlowMsgQueue& q) {
    std::shared_ptr<FlowMsg> m;
    const int32_t poll = q.Dequeue(m, 0);
    auto t0 = Clock::now();
    const int32_t wait = q.Dequeue(m, 50);
    const auto waited =
        std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
    std::lock_guard<std::mutex> l(S().mu);
    S().poll_rc = poll;
    S().wait_rc = wait;
    S().waited_ms = waited;
    S().depth = q.Depth();
    S().size = q.Size();
    S().cv.notify_all();
  }

 public:
  int32_t MsgProc(const std::shared_ptr<MetaRunContext>& ctx,
                  const std::vector<std::shared_ptr<FlowMsg>>& in) {
    {
      std::lock_guard<std::mutex> l(S().mu);
      S().msg_proc_ran = true;
      S().cv.notify_all();
    }
    return ctx->SetOutput(1, in[0]);
  }
};
FLOW_FUNC_REGISTRAR(StreamUdf)
    .RegProcFunc("StreamTest_Q", &StreamUdf::Proc)
    .RegProcFunc("StreamTest_Msg", &StreamUdf::MsgProc);

// A compile config file `tag`.json with `funcs` as its func_list and
// `io` inputs and outputs, whose library is the one hflow is (already
// loaded in this process).
std::string ConfigFile(const std::string& tag, const std::string& funcs,
                       int io) {
  Dl_info info{};
  EXPECT_NE(dladdr(reinterpret_cast<void*>(&Initialize), &info), 0);
  const fs::path lib = fs::canonical(info.dli_fname);
  const fs::path dir = fs::temp_directory_path() /
                       ("hflow_stream_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / (tag + ".json");
  std::ofstream(file) << R"({"func_list": )" << funcs << R"(, "input_num": )"
                      << io << R"(, "output_num": )" << io
                      << R"(, "workspace": ")" << lib.parent_path().string()
                      << R"(", "target_bin": ")" << lib.filename().string()
                      << R"("})";
  return file.string();
}

// A compile config naming StreamTest_Q with stream_input `stream`.
std::string Config(const std::string& stream) {
  return ConfigFile(
      "stream_" + stream,
      R"([{"func_name": "StreamTest_Q", "stream_input": )" + stream + "}]", 1);
}

// x ── fail7 (fails value 7, devices.front()) ── s (stream, back) ── out
FlowGraph StreamGraph(const std::vector<int32_t>& devices,
                      const std::string& stream = "true") {
  FlowData x("x", 0);
  FlowNode pre = testing::FuncNode("pre", "StreamTest_FailOn7");
  pre.SetInput(0, x);
  FunctionPp pp("s_pp");
  pp.SetCompileConfig(Config(stream));
  FlowNode s("s", 1, 1);
  s.AddPp(pp);
  s.SetInput(0, pre, 0);
  FlowGraph g("stream");
  g.SetInputs({x}).SetOutputs({s});
  return testing::Place(g,
                        {{"pre", {devices.front()}}, {"s", {devices.back()}}});
}

// Passes its input on, except the value 7: it fails with 777, which
// travels on as an error message.
class FailOn7 : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& in) override {
    const auto* v = static_cast<const int64_t*>(in[0]->GetTensor()->GetData());
    return *v == 7 ? 777 : context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("StreamTest_FailOn7", FailOn7);

using ::hflow::testing::I64;

class StreamInputTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    (void)Finalize();
    {
      std::lock_guard<std::mutex> l(S().mu);
      Seen& s = S();
      s.rcs.clear();
      s.device = s.ctx_device = -1;
      s.thread.clear();
      s.calls = 0;
      s.poll_rc = s.wait_rc = s.depth = s.size = 0;
      s.waited_ms = 0;
      s.msg_with_code = false;
      s.gate_open = false;
      s.msg_proc_ran = false;
    }
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.stop_timeout_ms = kStopMs;
    ASSERT_TRUE(Initialize(o).ok());
    session_ = std::make_unique<Session>();
  }
  void TearDown() override {
    {
      std::lock_guard<std::mutex> l(S().mu);
      S().gate_open = true;
      S().cv.notify_all();
    }
    session_.reset();
    (void)Finalize();
    g_mode = Mode::kForward;
  }
  void Build(Mode mode) {
    g_mode = mode;
    ASSERT_TRUE(session_->AddGraph(1, StreamGraph(GetParam())).ok());
    Status st = session_->BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  template <typename Pred>
  static bool WaitSeen(Pred p) {
    std::unique_lock<std::mutex> l(S().mu);
    return S().cv.wait_for(l, milliseconds(kIoMs), p);
  }
  Status Fetch(int64_t* v) {
    std::vector<Tensor> out;
    FlowInfo info;
    HFLOW_RETURN_IF_ERROR(session_->FetchData(1, &out, &info, kIoMs));
    if (info.ret_code != 0) {
      return Status::Internal("ret code " + std::to_string(info.ret_code) +
                              " from node '" + info.error_node + "'");
    }
    *v = out.at(0).As<int64_t>().at(0);
    return Status::OK();
  }

  std::unique_ptr<Session> session_;
};

TEST_P(StreamInputTest, ForwardsEveryMessageInOrderOnItsBoundThread) {
  testing::Watchdog dog(milliseconds(60000), "stream forwarding");
  Build(Mode::kProbe);
  // Dequeue(0) on the empty queue polls; Dequeue(50) waits that long.
  ASSERT_TRUE(WaitSeen([] { return S().waited_ms > 0; }));
  {
    std::lock_guard<std::mutex> l(S().mu);
    EXPECT_EQ(S().poll_rc, FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR);
    EXPECT_EQ(S().wait_rc, FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR);
    EXPECT_GE(S().waited_ms, 50);
    EXPECT_EQ(S().depth, static_cast<int32_t>(Options().queue_depth));
    EXPECT_EQ(S().size, 0);
    EXPECT_EQ(S().device, GetParam().back());
    EXPECT_EQ(S().ctx_device, GetParam().back());
    EXPECT_EQ(S().thread, "sf-StreamTest_Q#0");
  }
  constexpr int kN = 300;
  std::thread feeder([&] {
    for (int64_t v = 100; v < 100 + kN; ++v) {
      ASSERT_TRUE(session_->FeedData(1, {I64(v)}, FlowInfo{}, kIoMs).ok());
    }
  });
  for (int64_t want = 100; want < 100 + kN; ++want) {
    int64_t v = 0;
    Status st = Fetch(&v);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(v, want);
  }
  feeder.join();
  // A message carrying a failure is dequeued with its code, message set,
  // and passed on to the fetcher.
  ASSERT_TRUE(session_->FeedData(1, {I64(7)}, FlowInfo{}, kIoMs).ok());
  int64_t v = 0;
  EXPECT_FALSE(Fetch(&v).ok());
  ASSERT_TRUE(WaitSeen([] { return !S().rcs.empty(); }));
  {
    std::lock_guard<std::mutex> l(S().mu);
    EXPECT_EQ(S().rcs.front(), 777);
    EXPECT_TRUE(S().msg_with_code);
    EXPECT_EQ(S().calls, 1);  // the loop never left the proc
  }
  // RemoveGraph wakes the blocked Dequeue(-1) with EXIT, promptly.
  auto t0 = Clock::now();
  Status st = session_->RemoveGraph(1);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_LT(Clock::now() - t0, kSlack);
  std::lock_guard<std::mutex> l(S().mu);
  EXPECT_EQ(S().rcs.back(), FlowFunc::FLOW_FUNC_STATUS_EXIT);
}

// Outputs without a transaction id are numbered per output, 1, 2, 3 (as
// GE), whatever the inputs' ids.
TEST_P(StreamInputTest, NewOutputsAreNumberedPerOutput) {
  testing::Watchdog dog(milliseconds(60000), "numbering");
  Build(Mode::kRenumber);
  for (uint64_t t : {100, 200, 300}) {
    FlowInfo in;
    in.transaction_id = t;
    Status st =
        session_->FeedData(1, {I64(static_cast<int64_t>(t))}, in, kIoMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  for (uint64_t want = 1; want <= 3; ++want) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = session_->FetchData(1, &out, &info, kIoMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(info.transaction_id, want);
    EXPECT_EQ(out.at(0).As<int64_t>().at(0), static_cast<int64_t>(want * 100));
  }
  EXPECT_TRUE(session_->RemoveGraph(1).ok());
}

// ResetGraph stops the stream thread (its Dequeue returns EXIT, the call
// returns), resets the instance and starts a new thread: numbering starts
// at 1 again and messages flow as before.
TEST_P(StreamInputTest, ResetGraphRestartsTheStreamThread) {
  testing::Watchdog dog(milliseconds(60000), "reset");
  Build(Mode::kRenumber);
  auto feed_and_expect = [&](uint64_t want) {
    FlowInfo in;
    in.transaction_id = 50;
    Status st = session_->FeedData(1, {I64(7)}, in, kIoMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<Tensor> out;
    FlowInfo info;
    st = session_->FetchData(1, &out, &info, kIoMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(info.transaction_id, want);
  };
  feed_and_expect(1);
  feed_and_expect(2);
  Status st = session_->ResetGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  {
    std::lock_guard<std::mutex> l(S().mu);
    ASSERT_FALSE(S().rcs.empty());
    EXPECT_EQ(S().rcs.back(), FlowFunc::FLOW_FUNC_STATUS_EXIT);
  }
  feed_and_expect(1);
  EXPECT_TRUE(session_->RemoveGraph(1).ok());
}

TEST_P(StreamInputTest, ProcThatNeverDequeuesBackPressuresAndIsNotBusyCalled) {
  testing::Watchdog dog(milliseconds(60000), "never dequeues");
  Build(Mode::kNeverDequeue);
  // The feeds fill the queues up to their depths, then time out.
  Status st;
  for (int64_t v = 0; v < 10000 && st.ok(); ++v) {
    st = session_->FeedData(1, {I64(v)}, FlowInfo{}, 100);
  }
  EXPECT_TRUE(st.IsTimeout()) << st.ToString();
  // With no new input, calls are paused (not a busy loop).
  int before = 0;
  {
    std::lock_guard<std::mutex> l(S().mu);
    before = S().calls;
  }
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(milliseconds(500));  // a window, not a sync
  const auto ms =
      std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count();
  {
    std::lock_guard<std::mutex> l(S().mu);
    EXPECT_LE(S().calls - before, ms / 100 + 2);
    EXPECT_GE(S().calls, 1);
  }
  auto t1 = Clock::now();
  st = session_->RemoveGraph(1);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_LT(Clock::now() - t1, kSlack);
}

TEST_P(StreamInputTest, ProcThatNeverReturnsIsAbandonedNamed) {
  testing::Watchdog dog(milliseconds(60000), "never returns");
  Build(Mode::kNeverReturn);
  ASSERT_TRUE(WaitSeen([] { return S().calls == 1; }));
  auto t0 = Clock::now();
  Status st = session_->RemoveGraph(1);
  EXPECT_LT(Clock::now() - t0, milliseconds(kStopMs) + kSlack);
  EXPECT_TRUE(st.IsTimeout()) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("node 's' function 'StreamTest_Q'"));
  EXPECT_THAT(st.message(), HasSubstr("in its stream Proc"));
}

TEST_P(StreamInputTest, ErrorReturnFailsTheGraphNamingTheFunction) {
  testing::Watchdog dog(milliseconds(60000), "error return");
  Build(Mode::kError);
  ASSERT_TRUE(session_->FeedData(1, {I64(1)}, FlowInfo{}, kIoMs).ok());
  int64_t v = 0;
  Status st = Fetch(&v);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("node 's' replica 0"));
  EXPECT_THAT(st.message(), HasSubstr("stream function 'StreamTest_Q'"));
  EXPECT_THAT(st.message(), HasSubstr("returned 4242"));
  EXPECT_TRUE(session_->RemoveGraph(1).ok());
}

TEST_P(StreamInputTest, StreamInputMismatchFailsBuildNamingTheFunction) {
  ASSERT_TRUE(session_->AddGraph(1, StreamGraph(GetParam(), "false")).ok());
  Status st = session_->BuildGraph(1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("node 's' function 'StreamTest_Q'"));
  EXPECT_THAT(st.message(), HasSubstr("stream_input"));
}

// A stream function and a message proc of one instance run concurrently:
// the stream proc's first call waits until the message proc has run.
TEST_P(StreamInputTest, StreamAndMessageProcsOfOneInstanceRunConcurrently) {
  testing::Watchdog dog(milliseconds(60000), "mixed instance");
  g_mode = Mode::kMixed;
  FlowData x("x", 0), y("y", 1);
  FunctionPp pp("m_pp");
  pp.SetCompileConfig(
      ConfigFile("mixed",
                 R"([{"func_name": "StreamTest_Q", "inputs_index": [0],
           "outputs_index": [0], "stream_input": true},
          {"func_name": "StreamTest_Msg", "inputs_index": [1],
           "outputs_index": [1]}])",
                 2));
  FlowNode m("m", 2, 2);
  m.AddPp(pp);
  m.SetInput(0, x).SetInput(1, y);
  FlowGraph g("mixed");
  g.SetInputs({x, y}).SetOutputs({m});
  ASSERT_TRUE(
      session_->AddGraph(1, testing::Place(g, {{"m", {GetParam()[1]}}})).ok());
  Status st = session_->BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(WaitSeen([] { return S().calls == 1; }));  // it is waiting
  ASSERT_TRUE(session_->FeedData(1, {I64(1), I64(2)}, FlowInfo{}, kIoMs).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  st = session_->FetchData(1, &out, &info, kIoMs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].As<int64_t>().at(0), 1);
  EXPECT_EQ(out[1].As<int64_t>().at(0), 2);
  EXPECT_TRUE(session_->RemoveGraph(1).ok());
}

INSTANTIATE_TEST_SUITE_P(Devices, StreamInputTest,
                         ::testing::Values(std::vector<int32_t>{0, 1},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}));

}  // namespace
}  // namespace hflow
