// The transparency matrix's machinery, shared by session_transparency_test.cc
// (Initialize .. DeviceReports) and session_transparency_batch_test.cc
// (FeedDataBatch, FetchDataBatch): the caller states a public call must
// preserve, the two device sets without device 0 (each with an unused
// device), the test graph, RunMatrix (one call per caller state on a fresh
// thread, checking the binding, stray contexts and implicit bindings) and
// the fixture with graph 1 (busy) and graph 2 (idle) built.
//
// Thread-safety: test-thread helpers; RunMatrix's call runs on a fresh
// thread it joins.
#ifndef HFLOW_TESTS_TRANSPARENCY_MATRIX_H_
#define HFLOW_TESTS_TRANSPARENCY_MATRIX_H_

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
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace transparency {

enum class CallerState { kNone, kUsedDefault, kUnusedDefault, kUserContext };

inline const char* StateName(CallerState s) {
  switch (s) {
    case CallerState::kNone:
      return "none";
    case CallerState::kUsedDefault:
      return "used-device default context";
    case CallerState::kUnusedDefault:
      return "unused-device default context";
    case CallerState::kUserContext:
      return "user-created context";
  }
  return "?";
}

constexpr CallerState kAllStates[] = {
    CallerState::kNone, CallerState::kUsedDefault, CallerState::kUnusedDefault,
    CallerState::kUserContext};

// A cluster, the devices the test graph is placed on, and an unused device.
struct ClusterSpec {
  std::string name;
  std::vector<int32_t> devices;
  std::vector<int32_t> used;
  int32_t unused;
  std::vector<int32_t> id_devices;  // the replicated node's devices
  int32_t add_device;               // the add node's device
};

inline void PrintTo(const ClusterSpec& c, std::ostream* os) { *os << c.name; }

inline ClusterSpec TwoToFive() {
  return {
      "devices_2_3_4_5_7", {2, 3, 4, 5, 7}, {2, 3, 4, 5}, 7, {2, 3, 4, 5}, 2};
}
inline ClusterSpec ThreeSixSeven() {
  return {"devices_3_6_7", {3, 6, 7}, {3, 6}, 7, {3, 6}, 6};
}

// Where the test graph's nodes run on cluster `c`.
inline testing::Placement GraphPlacement(const ClusterSpec& c) {
  return {{"id", c.id_devices}, {"add", {c.add_device}}};
}

//   x ── id (replicas) ── add(id, id) ── out
inline FlowGraph TestGraph(const ClusterSpec& c) {
  return testing::ReplicatedDoubler("transparency", c.id_devices,
                                    {c.add_device});
}

// The same graph as a graph file (docs/formats.md).
inline std::string WriteGraphFile(const ClusterSpec& c) {
  std::string path =
      ::testing::TempDir() + "hflow_transparency_" + c.name + ".json";
  std::ofstream f(path);
  f << R"({"name": "transparency_file", "inputs": ["x"], "nodes": [
      {"name": "id", "inputs": ["x"], "outputs": 1, "function": "_BuiltIn_Identity"},
      {"name": "add", "inputs": ["id:0", "id:0"], "outputs": 1, "function": "_BuiltIn_Add"}],
    "outputs": ["add:0"],
    "deploy": )"
    << testing::DeployInfoJson(GraphPlacement(c)) << "}";
  return path;
}

inline Tensor Input(int32_t v) {
  return Tensor::From<int32_t>(DataType::kInt32, {2}, {v, v + 1});
}

inline rt::SimRuntime* Sim() {
  return static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
}

// Binds the calling thread as `state` says, through `r` (the runtime the
// state lives under). Returns the handle bound (nullptr for kNone).
inline rt::Context* EnterState(rt::DeviceRuntime* r, CallerState state,
                               const ClusterSpec& c) {
  rt::Context* ctx = nullptr;
  switch (state) {
    case CallerState::kNone:
      break;
    case CallerState::kUsedDefault:
      EXPECT_TRUE(r->SetDevice(c.used[0]).ok());
      break;
    case CallerState::kUnusedDefault:
      EXPECT_TRUE(r->SetDevice(c.unused).ok());
      break;
    case CallerState::kUserContext:
      EXPECT_TRUE(r->CreateContext(c.used.back(), &ctx).ok());
      break;
  }
  rt::Context* bound = r->GetCurrentContext();
  if (state == CallerState::kNone) {
    EXPECT_EQ(bound, nullptr);
  } else {
    EXPECT_NE(bound, nullptr);
  }
  if (state == CallerState::kUserContext) {
    EXPECT_EQ(bound, ctx);
  }
  return bound;
}

// Undoes EnterState (so device contexts can return to zero).
inline void LeaveState(rt::DeviceRuntime* r, CallerState state,
                       const ClusterSpec& c, rt::Context* bound) {
  switch (state) {
    case CallerState::kNone:
      break;
    case CallerState::kUsedDefault:
      EXPECT_TRUE(r->ResetDevice(c.used[0]).ok());
      break;
    case CallerState::kUnusedDefault:
      EXPECT_TRUE(r->ResetDevice(c.unused).ok());
      break;
    case CallerState::kUserContext:
      EXPECT_TRUE(r->DestroyContext(bound).ok());
      break;
  }
  (void)r->SetCurrentContext(nullptr);
}

inline uint64_t ContextsOn(rt::SimRuntime* sim, int32_t d) {
  rt::DeviceStats st;
  EXPECT_TRUE(sim->GetDeviceStats(d, &st).ok());
  return st.contexts_created;
}

inline void ExpectNoImplicitBindings(rt::SimRuntime* sim,
                                     const ClusterSpec& c) {
  for (int32_t d : c.devices) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.implicit_bindings, 0u) << "device " << d;
  }
}

// One call of the matrix: `setup` runs on the test thread first, `call` on
// a fresh thread in each caller state; `expect` is the code the call must
// return (nullopt: any error).
struct Case {
  std::string name;
  std::function<void(int k)> setup;  // k: a per-run counter for fresh ids
  std::function<Status(int k)> call;
  std::optional<StatusCode> expect;  // kOk for success rows
  bool any_error = false;
  std::function<void(int k)> after;  // on the test thread, after the call
};

inline Case MakeCase(std::string name, std::function<void(int)> setup,
                     std::function<Status(int)> call,
                     std::optional<StatusCode> expect, bool any_error = false,
                     std::function<void(int)> after = nullptr) {
  Case c;
  c.name = std::move(name);
  c.setup = std::move(setup);
  c.call = std::move(call);
  c.expect = expect;
  c.any_error = any_error;
  c.after = std::move(after);
  return c;
}

inline void ExpectCode(const Status& s, const Case& c) {
  if (c.any_error) {
    EXPECT_FALSE(s.ok()) << c.name;
  } else {
    EXPECT_EQ(s.code(), *c.expect) << c.name << ": " << s.ToString();
  }
}

// Runs `c` once per caller state, each on a fresh thread, under the current
// (hflow-initialized) runtime; checks the binding, stray contexts on the
// unused device and implicit bindings.
inline void RunMatrix(const ClusterSpec& spec, const Case& c, int* counter) {
  for (CallerState state : kAllStates) {
    SCOPED_TRACE(std::string(c.name) + " / caller state: " + StateName(state) +
                 " / " + spec.name);
    int k = ++*counter;
    if (c.setup) c.setup(k);
    rt::SimRuntime* sim = Sim();
    std::thread t([&] {
      rt::Context* before = EnterState(sim, state, spec);
      uint64_t unused_before = ContextsOn(sim, spec.unused);
      Status s = c.call(k);
      EXPECT_EQ(rt::GetCurrentContext(), before)
          << c.name
          << " changed the "
             "caller's context ("
          << StateName(state) << "); status " << s.ToString();
      ExpectCode(s, c);
      EXPECT_EQ(ContextsOn(sim, spec.unused), unused_before)
          << c.name << " created a context on unused device " << spec.unused;
      LeaveState(sim, state, spec, before);
    });
    t.join();
    if (c.after) c.after(k);
    ExpectNoImplicitBindings(sim, spec);
  }
}

class SessionTransparencyTest : public ::testing::TestWithParam<ClusterSpec> {
 protected:
  void SetUp() override {
    spec_ = GetParam();
    Options o;
    o.cluster = MakeLocalCluster(spec_.devices);
    // Make the default-device quirk live on a used device, so that a
    // forgotten binding there would pass silently and be counted.
    o.default_device = spec_.used[0];
    ASSERT_TRUE(Initialize(o).ok());
    session_ = std::make_unique<Session>();
    Status st = session_->AddGraph(1, TestGraph(spec_));
    ASSERT_TRUE(st.ok()) << st.ToString();
    st = session_->BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    // Graph 2 stays idle: fetches on it time out.
    ASSERT_TRUE(session_->AddGraph(2, TestGraph(spec_)).ok());
    ASSERT_TRUE(session_->BuildGraph(2).ok());
    graph_file_ = WriteGraphFile(spec_);
  }
  void TearDown() override {
    session_.reset();
    (void)Finalize();
    std::remove(graph_file_.c_str());
  }

  // Drains graph 1 (after feeds of the matrix).
  void Drain(int n) {
    for (int i = 0; i < n; ++i) {
      std::vector<Tensor> out;
      FlowInfo info;
      Status st = session_->FetchData(1, &out, &info, 5000);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
  }

  ClusterSpec spec_;
  std::unique_ptr<Session> session_;
  std::string graph_file_;
  int counter_ = 0;
};

}  // namespace transparency
}  // namespace hflow

#endif  // HFLOW_TESTS_TRANSPARENCY_MATRIX_H_
