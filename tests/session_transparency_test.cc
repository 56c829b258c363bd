// The transparency matrix (docs/architecture.md, context rule 2) and the
// stray-context rule (rule 3) through the public host API.
//
// Every public entry point (Initialize, Finalize, Session::AddGraph,
// AddGraphFile, BuildGraph, FeedData, FetchData, RemoveGraph, DeviceReports;
// FeedDataBatch and FetchDataBatch in session_transparency_batch_test.cc,
// sharing the machinery of transparency_matrix.h) is called, on success and on
// error paths, from a fresh thread whose binding is exactly one of:
//   none            the thread never bound anything;
//   used default    rt::SetDevice(d) for a device the graph uses;
//   unused default  rt::SetDevice(7): a cluster device the graph never uses;
//   user context    rt::CreateContext on a device the graph uses;
// and must leave rt::GetCurrentContext() exactly as it found it. Each call
// must also create no context on a device outside the graph's set, and the
// default-device quirk must never fire (implicit_bindings stay 0). Both
// device sets without device 0 are covered: {2,3,4,5} (+7 unused) and {3,6,7}
// (graph on 3 and 6, 7 unused).
//
// Initialize rows: Initialize installs a new runtime, so a caller context
// "before" Initialize can only exist under an older runtime. Those rows
// install a runtime first with rt::InitializeRuntime, bind under it, and
// check the binding *under that runtime* (and that the thread has no binding
// at all under the new one).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hflow/hflow.h"
#include "rt/sim/sim_runtime.h"
#include "test_util.h"
#include "transparency_matrix.h"

namespace hflow {
namespace {

using transparency::CallerState;
using transparency::Case;
using transparency::ClusterSpec;
using transparency::ContextsOn;
using transparency::EnterState;
using transparency::ExpectCode;
using transparency::ExpectNoImplicitBindings;
using transparency::Input;
using transparency::kAllStates;
using transparency::LeaveState;
using transparency::MakeCase;
using transparency::RunMatrix;
using transparency::SessionTransparencyTest;
using transparency::Sim;
using transparency::StateName;
using transparency::TestGraph;
using transparency::ThreeSixSeven;
using transparency::TwoToFive;
using transparency::WriteGraphFile;

TEST_P(SessionTransparencyTest, AddGraph) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "AddGraph ok", nullptr,
                [&](int k) { return s.AddGraph(100 + k, TestGraph(spec_)); },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "AddGraph duplicate id", nullptr,
                [&](int) { return s.AddGraph(1, TestGraph(spec_)); },
                StatusCode::kAlreadyExists),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "AddGraph invalid graph", nullptr,
                [&](int k) { return s.AddGraph(100 + k, FlowGraph("empty")); },
                std::nullopt, /*any_error=*/true),
            &counter_);
}

TEST_P(SessionTransparencyTest, AddGraphFile) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "AddGraphFile ok", nullptr,
                [&](int k) { return s.AddGraphFile(100 + k, graph_file_); },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "AddGraphFile missing file", nullptr,
                [&](int k) {
                  return s.AddGraphFile(100 + k, "/nonexistent/graph.json");
                },
                std::nullopt, true),
            &counter_);
}

TEST_P(SessionTransparencyTest, BuildGraph) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "BuildGraph ok",
                [&](int k) {
                  ASSERT_TRUE(s.AddGraphFile(100 + k, graph_file_).ok());
                },
                [&](int k) { return s.BuildGraph(100 + k); }, StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "BuildGraph unknown id", nullptr,
                [&](int) { return s.BuildGraph(999); }, StatusCode::kNotFound),
            &counter_);
  // A deployment that fails half way (a model load fails) rolls back; the
  // error path restores the caller's binding too.
  RunMatrix(spec_,
            MakeCase(
                "BuildGraph failing model load",
                [&](int k) {
                  ASSERT_TRUE(s.AddGraph(100 + k, TestGraph(spec_)).ok());
                  Sim()->InjectFault(rt::Op::kModelLoad, 2,
                                     Status::Internal("injected load failure"));
                },
                [&](int k) { return s.BuildGraph(100 + k); }, std::nullopt,
                true, [&](int) { Sim()->ClearFaults(); }),
            &counter_);
}

TEST_P(SessionTransparencyTest, FeedData) {
  Session& s = *session_;
  RunMatrix(
      spec_,
      MakeCase(
          "FeedData ok", nullptr,
          [&](int k) { return s.FeedData(1, {Input(k)}, FlowInfo{}, 5000); },
          StatusCode::kOk, false, [&](int) { Drain(1); }),
      &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FeedData wrong input count", nullptr,
                [&](int k) {
                  return s.FeedData(1, {Input(k), Input(k)}, FlowInfo{}, 0);
                },
                StatusCode::kInvalidArgument),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FeedData bad tensor size", nullptr,
                [&](int) {
                  Tensor bad = Input(0);
                  bad.shape = {3};
                  return s.FeedData(1, {bad}, FlowInfo{}, 0);
                },
                StatusCode::kInvalidArgument),
            &counter_);
  RunMatrix(
      spec_,
      MakeCase(
          "FeedData unknown id", nullptr,
          [&](int k) { return s.FeedData(999, {Input(k)}, FlowInfo{}, 0); },
          StatusCode::kNotFound),
      &counter_);
}

TEST_P(SessionTransparencyTest, FetchData) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "FetchData ok",
                [&](int k) {
                  ASSERT_TRUE(s.FeedData(1, {Input(k)}, FlowInfo{}, 5000).ok());
                },
                [&](int k) {
                  std::vector<Tensor> out;
                  FlowInfo info;
                  Status st = s.FetchData(1, &out, &info, 5000);
                  if (st.ok()) {
                    EXPECT_EQ(out.at(0).As<int32_t>(),
                              (std::vector<int32_t>{2 * k, 2 * (k + 1)}));
                  }
                  return st;
                },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchData timeout 0", nullptr,
                [&](int) {
                  std::vector<Tensor> out;
                  FlowInfo info;
                  return s.FetchData(2, &out, &info, 0);
                },
                StatusCode::kTimeout),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchData timeout 20 ms", nullptr,
                [&](int) {
                  std::vector<Tensor> out;
                  FlowInfo info;
                  return s.FetchData(2, &out, &info, 20);
                },
                StatusCode::kTimeout),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchData unknown id", nullptr,
                [&](int) {
                  std::vector<Tensor> out;
                  FlowInfo info;
                  return s.FetchData(999, &out, &info, 0);
                },
                StatusCode::kNotFound),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchData null outputs", nullptr,
                [&](int) {
                  FlowInfo info;
                  return s.FetchData(1, nullptr, &info, 0);
                },
                StatusCode::kInvalidArgument),
            &counter_);
}

TEST_P(SessionTransparencyTest, RemoveGraph) {
  Session& s = *session_;
  RunMatrix(
      spec_,
      MakeCase(
          "RemoveGraph ok with a message in flight",
          [&](int k) {
            ASSERT_TRUE(s.AddGraph(100 + k, TestGraph(spec_)).ok());
            ASSERT_TRUE(s.BuildGraph(100 + k).ok());
            ASSERT_TRUE(s.FeedData(100 + k, {Input(k)}, FlowInfo{}, 5000).ok());
          },
          [&](int k) { return s.RemoveGraph(100 + k); }, StatusCode::kOk),
      &counter_);
  RunMatrix(spec_,
            MakeCase(
                "RemoveGraph unknown id", nullptr,
                [&](int) { return s.RemoveGraph(999); }, StatusCode::kNotFound),
            &counter_);
}

TEST_P(SessionTransparencyTest, DeviceReports) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "DeviceReports ok", nullptr,
                [&](int) {
                  std::vector<DeviceReport> r;
                  Status st = s.DeviceReports(1, &r);
                  if (st.ok()) {
                    EXPECT_EQ(r.size(), spec_.devices.size());
                    for (const auto& d : r) {
                      EXPECT_EQ(d.implicit_bindings, 0u) << d.id;
                      if (d.id == spec_.unused) {
                        EXPECT_EQ(d.submodels, 0u);
                      }
                    }
                  }
                  return st;
                },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "DeviceReports unknown id", nullptr,
                [&](int) {
                  std::vector<DeviceReport> r;
                  return s.DeviceReports(999, &r);
                },
                StatusCode::kNotFound),
            &counter_);
}

// A whole lifecycle from an unbound thread: nothing ever touches the unused
// device (no context, no call at all in the call log), no implicit binding,
// and afterwards every device is back to zero.
TEST_P(SessionTransparencyTest, LifecycleLeavesUnusedDeviceUntouched) {
  session_.reset();
  ASSERT_TRUE(Finalize().ok());
  Options o;
  o.cluster = MakeLocalCluster(spec_.devices);
  o.default_device = spec_.used[0];
  ASSERT_TRUE(Initialize(o).ok());
  rt::SimRuntime* sim = Sim();
  // Options::record_calls does not reach the runtime (see
  // SessionLifecycleApiTest.DISABLED_RecordCallsOptionReachesTheRuntime).
  sim->SetRecordCalls(true);
  std::thread t([&] {
    Session s;
    ASSERT_TRUE(s.AddGraph(1, TestGraph(spec_)).ok());
    ASSERT_TRUE(s.BuildGraph(1).ok());
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(s.FeedData(1, {Input(i)}, FlowInfo{}, 5000).ok());
    }
    for (int i = 0; i < 20; ++i) {
      std::vector<Tensor> out;
      FlowInfo info;
      ASSERT_TRUE(s.FetchData(1, &out, &info, 5000).ok());
    }
    ASSERT_TRUE(s.RemoveGraph(1).ok());
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  });
  t.join();
  std::vector<rt::CallRecord> log = sim->CallLog();
  EXPECT_FALSE(log.empty());
  for (const auto& r : log) {
    EXPECT_NE(r.device, spec_.unused)
        << rt::OpName(r.op) << " on unused device from thread " << r.thread;
    EXPECT_FALSE(r.implicit_binding) << rt::OpName(r.op) << " on " << r.device;
  }
  ASSERT_TRUE(Finalize().ok());
  for (int32_t d : spec_.devices) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.implicit_bindings, 0u) << d;
    EXPECT_EQ(st.contexts_alive, 0u) << d;
    EXPECT_EQ(st.mem_used_bytes, 0u) << d;
    if (d == spec_.unused) {
      EXPECT_EQ(st.contexts_created, 0u) << d;
    }
  }
  // TearDown's Finalize then fails harmlessly; re-initialize so it has
  // something to finalize.
  Options again;
  again.cluster = MakeLocalCluster(spec_.devices);
  ASSERT_TRUE(Initialize(again).ok());
}

INSTANTIATE_TEST_SUITE_P(SessionTransparency, SessionTransparencyTest,
                         ::testing::Values(TwoToFive(), ThreeSixSeven()),
                         [](const ::testing::TestParamInfo<ClusterSpec>& i) {
                           return i.param.name;
                         });

// --- Initialize and Finalize ---------------------------------------------

class SessionTransparencyInitTest
    : public ::testing::TestWithParam<ClusterSpec> {
 protected:
  void SetUp() override {
    spec_ = GetParam();
    (void)Finalize();  // whatever an earlier test left
  }
  void TearDown() override { (void)Finalize(); }

  Options MakeOptions() const {
    Options o;
    o.cluster = MakeLocalCluster(spec_.devices);
    o.default_device = spec_.used[0];
    return o;
  }
  // A runtime that is not hflow's, installed the way a client would.
  rt::DeviceRuntime* InstallClientRuntime() {
    rt::RuntimeOptions ro;
    ro.cluster = MakeLocalCluster(spec_.devices);
    ro.default_device = spec_.used[0];
    std::shared_ptr<rt::DeviceRuntime> r;
    EXPECT_TRUE(rt::InitializeRuntime(ro, &r).ok());
    return r.get();
  }

  ClusterSpec spec_;
};

TEST_P(SessionTransparencyInitTest, InitializeSucceeds) {
  for (CallerState state : kAllStates) {
    SCOPED_TRACE(StateName(state));
    rt::DeviceRuntime* client = InstallClientRuntime();
    ASSERT_NE(client, nullptr);
    std::thread t([&] {
      rt::Context* before = EnterState(client, state, spec_);
      Status s = Initialize(MakeOptions());
      EXPECT_TRUE(s.ok()) << s.ToString();
      // The binding under the caller's runtime is untouched ...
      EXPECT_EQ(client->GetCurrentContext(), before);
      // ... and under hflow's new runtime the thread has none: Initialize
      // bound nothing.
      EXPECT_NE(rt::CurrentRuntime(), client);
      EXPECT_EQ(rt::GetCurrentContext(), nullptr);
      LeaveState(client, state, spec_, before);
    });
    t.join();
    // Initialize itself creates no context on any device.
    for (int32_t d : spec_.devices) {
      EXPECT_EQ(ContextsOn(Sim(), d), 0u) << d;
    }
    ASSERT_TRUE(Finalize().ok());
  }
}

TEST_P(SessionTransparencyInitTest, InitializeErrors) {
  // Twice: the caller's binding lives under hflow's (current) runtime.
  ASSERT_TRUE(Initialize(MakeOptions()).ok());
  for (CallerState state : kAllStates) {
    SCOPED_TRACE(std::string("twice / ") + StateName(state));
    rt::SimRuntime* sim = Sim();
    std::thread t([&] {
      rt::Context* before = EnterState(sim, state, spec_);
      Status s = Initialize(MakeOptions());
      EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
      EXPECT_EQ(rt::CurrentRuntime(), sim);
      EXPECT_EQ(rt::GetCurrentContext(), before);
      LeaveState(sim, state, spec_, before);
    });
    t.join();
  }
  ASSERT_TRUE(Finalize().ok());
  // Bad options: unknown backend, default device outside the cluster. The
  // caller's binding lives under a client runtime that must stay current.
  for (int variant = 0; variant < 2; ++variant) {
    for (CallerState state : kAllStates) {
      SCOPED_TRACE(std::string(variant == 0 ? "unknown backend / "
                                            : "bad default device / ") +
                   StateName(state));
      rt::DeviceRuntime* client = InstallClientRuntime();
      std::thread t([&] {
        rt::Context* before = EnterState(client, state, spec_);
        Options o = MakeOptions();
        if (variant == 0)
          o.backend = "no_such_backend";
        else
          o.default_device = 42;
        Status s = Initialize(o);
        EXPECT_FALSE(s.ok());
        EXPECT_EQ(rt::CurrentRuntime(), client) << "a failed Initialize "
                                                   "replaced the runtime";
        EXPECT_EQ(client->GetCurrentContext(), before);
        EXPECT_EQ(rt::GetCurrentContext(), before);
        LeaveState(client, state, spec_, before);
      });
      t.join();
      EXPECT_EQ(Finalize().code(), StatusCode::kFailedPrecondition);
    }
  }
}

TEST_P(SessionTransparencyInitTest, FinalizeSucceedsWithGraphsInFlight) {
  for (CallerState state : kAllStates) {
    SCOPED_TRACE(StateName(state));
    ASSERT_TRUE(Initialize(MakeOptions()).ok());
    rt::SimRuntime* sim = Sim();
    Session s;
    ASSERT_TRUE(s.AddGraph(1, TestGraph(spec_)).ok());
    ASSERT_TRUE(s.BuildGraph(1).ok());
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(s.FeedData(1, {Input(i)}, FlowInfo{}, 5000).ok());
    }
    std::thread t([&] {
      rt::Context* before = EnterState(sim, state, spec_);
      uint64_t unused_before = ContextsOn(sim, spec_.unused);
      Status st = Finalize();
      EXPECT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(rt::GetCurrentContext(), before);
      EXPECT_EQ(ContextsOn(sim, spec_.unused), unused_before);
      LeaveState(sim, state, spec_, before);
    });
    t.join();
    for (int32_t d : spec_.devices) {
      rt::DeviceStats st;
      ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
      EXPECT_EQ(st.implicit_bindings, 0u) << d;
      EXPECT_EQ(st.contexts_alive, 0u) << d;
      EXPECT_EQ(st.mem_used_bytes, 0u) << d;
    }
  }
}

TEST_P(SessionTransparencyInitTest, FinalizeWithoutInitialize) {
  // The caller's binding lives under a client runtime (or hflow's old one).
  for (CallerState state : kAllStates) {
    SCOPED_TRACE(StateName(state));
    rt::DeviceRuntime* client = InstallClientRuntime();
    std::thread t([&] {
      rt::Context* before = EnterState(client, state, spec_);
      Status s = Finalize();
      EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
      EXPECT_EQ(rt::GetCurrentContext(), before);
      LeaveState(client, state, spec_, before);
    });
    t.join();
  }
  // And with no runtime at all.
  rt::InstallRuntime(nullptr);
  std::thread t([&] {
    EXPECT_EQ(Finalize().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  });
  t.join();
}

INSTANTIATE_TEST_SUITE_P(SessionTransparency, SessionTransparencyInitTest,
                         ::testing::Values(TwoToFive(), ThreeSixSeven()),
                         [](const ::testing::TestParamInfo<ClusterSpec>& i) {
                           return i.param.name;
                         });

}  // namespace
}  // namespace hflow
