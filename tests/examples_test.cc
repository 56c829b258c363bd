// End to end through the public Session API, one test per example under
// examples/ (each graph loaded from its graph file, UDF projects built by
// hflow on BuildGraph with the build-tree SDK), values checked exactly; and
// each example's run.sh, through the built `hflow`, against the output its
// header promises (exit status 0 and exactly those lines; never skipped).
// Throughout, the calling thread's context is untouched.
//
//   add_pipeline     a, b ─[add, dev 0]─[twice, dev 1]─ out
//   multi_function   x, y ─[ops: Scale | Sum, input_map/output_map]─ out0, out1
//   replicas         x ─[CountBatch 4]─[stack x4]─[double x4]─ out
//   (devices 2..5) exception_catch  x ─[check: RaiseException on negatives]─
//   out
//   host_api         a, b ─[sum, 1st device]─[twice, 2nd device]─ sum, twice
//                    (a program: the graph API and a Session, run as built)
//
// Thread-safety: single-threaded tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "test_util.h"

#ifndef HFLOW_SOURCE_DIR
#error "HFLOW_SOURCE_DIR must name the source tree"
#endif
#ifndef HFLOW_CLI_PATH
#error "HFLOW_CLI_PATH must name the built hflow binary"
#endif
#ifndef HFLOW_HOST_API_EXAMPLE
#error "HFLOW_HOST_API_EXAMPLE must name the built examples/host_api program"
#endif

namespace hflow {
namespace {

namespace fs = std::filesystem;

constexpr int32_t kNegativeInput = 9900001;  // examples/exception_catch/udf

std::string Example(const std::string& rel) {
  return std::string(HFLOW_SOURCE_DIR) + "/examples/" + rel;
}

class ExamplesTest : public ::testing::Test {
 protected:
  void Start(const std::vector<int32_t>& devices) {
    testing::UseBuildTreeForUdfs();
    Options o;
    o.cluster = MakeLocalCluster(devices);
    Status s = Initialize(o);
    ASSERT_TRUE(s.ok()) << s.ToString();
    started_ = true;
  }
  void TearDown() override {
    if (started_) {
      session_.reset();
      (void)Finalize();
    }
    // No call of the test left a binding on this thread.
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  }
  Session& S() {
    if (!session_) session_ = std::make_unique<Session>();
    return *session_;
  }
  void Load(const std::string& graph_file) {
    Status s = S().AddGraphFile(1, Example(graph_file));
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = S().BuildGraph(1);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Feed(const std::vector<Tensor>& inputs, uint64_t trans = 0) {
    FlowInfo info;
    info.transaction_id = trans;
    Status s = S().FeedData(1, inputs, info, 5000);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Fetch(std::vector<Tensor>* out, FlowInfo* info) {
    Status s = S().FetchData(1, out, info, 10000);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void ExpectNoImplicitBindings() {
    std::vector<DeviceReport> reports;
    ASSERT_TRUE(S().DeviceReports(1, &reports).ok());
    for (const auto& r : reports) EXPECT_EQ(r.implicit_bindings, 0u) << r.id;
  }

  bool started_ = false;
  std::unique_ptr<Session> session_;
};

Tensor I32(std::vector<int32_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::From<int32_t>(DataType::kInt32, {n}, v);
}

// ---- add_pipeline: built-ins on devices 0 and 1 of the default cluster ----

TEST_F(ExamplesTest, AddPipelineAcrossTwoDevices) {
  Start({0, 1, 2, 3});
  Load("add_pipeline/graph.json");
  // The caller's own binding (a user context on device 1) survives every call.
  rt::Context* mine = nullptr;
  ASSERT_TRUE(rt::CreateContext(1, &mine).ok());
  Feed({I32({1, 2, 3}), I32({10, 20, 30})});
  Feed({I32({-5, 0, 7}), I32({5, 1, -7})});
  std::vector<Tensor> out;
  FlowInfo info;
  Fetch(&out, &info);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(info.ret_code, 0);
  EXPECT_EQ(info.transaction_id, 1u);
  EXPECT_EQ(out[0].dtype, DataType::kInt32);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{22, 44, 66}));
  Fetch(&out, &info);
  EXPECT_EQ(info.transaction_id, 2u);
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{0, 2, 0}));
  EXPECT_EQ(rt::GetCurrentContext(), mine);

  std::vector<DeviceReport> reports;
  ASSERT_TRUE(S().DeviceReports(1, &reports).ok());
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0].submodels, 1u);         // add
  EXPECT_EQ(reports[1].submodels, 1u);         // twice
  EXPECT_EQ(reports[2].contexts_created, 0u);  // devices 2, 3 untouched
  EXPECT_EQ(reports[3].contexts_created, 0u);
  for (const auto& r : reports) EXPECT_EQ(r.implicit_bindings, 0u) << r.id;
  ASSERT_TRUE(rt::SetCurrentContext(nullptr).ok());
}

// ---- multi_function: Scale and Sum procs, node inputs/outputs swapped ----

TEST_F(ExamplesTest, MultiFunctionProcsWithInputAndOutputMaps) {
  Start({0, 1, 2, 3});
  Load("multi_function/graph.json");
  // Graph inputs (x, y); outputs (ops:0 = sum of y, ops:1 = x * factor 10).
  Feed({I32({1, 2, 3}), I32({4, 5, 6})});
  Feed({I32({-1, 0, 7, 9}), I32({100})});
  std::vector<Tensor> out;
  FlowInfo info;
  Fetch(&out, &info);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(info.ret_code, 0);
  EXPECT_EQ(info.transaction_id, 1u);
  EXPECT_EQ(out[0].dtype, DataType::kInt32);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{15}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{10, 20, 30}));
  Fetch(&out, &info);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(info.transaction_id, 2u);
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{100}));
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{-10, 0, 70, 90}));
  ExpectNoImplicitBindings();
  EXPECT_EQ(rt::GetCurrentContext(), nullptr);
}

TEST_F(ExamplesTest, MultiFunctionProcFailureComesBackAsRetCode) {
  Start({0, 1, 2, 3});
  Load("multi_function/graph.json");
  // Sum takes int32 only: a float y fails it with FLOW_FUNC_ERR_PARAM_INVALID.
  Feed({I32({1}), Tensor::From<float>(DataType::kFloat, {1}, {1.5f})});
  std::vector<Tensor> out;
  FlowInfo info;
  Fetch(&out, &info);
  EXPECT_EQ(info.ret_code, 164000);
  EXPECT_EQ(info.transaction_id, 1u);
}

// ---- replicas: CountBatch 4 in front of two nodes replicated on 2..5 ----

TEST_F(ExamplesTest, ReplicasWithCountBatching) {
  Start({2, 3, 4, 5});
  Load("replicas/graph.json");
  // Eight transactions; x of transaction i is [i, 10i, 100i].
  for (int32_t i = 1; i <= 8; ++i) Feed({I32({i, 10 * i, 100 * i})});
  std::map<uint64_t, std::vector<int32_t>> batches;
  for (int b = 0; b < 2; ++b) {
    std::vector<Tensor> out;
    FlowInfo info;
    Fetch(&out, &info);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(info.ret_code, 0);
    EXPECT_EQ(out[0].dtype, DataType::kInt32);
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{4, 3}));
    batches[info.transaction_id] = out[0].As<int32_t>();
  }
  // A batch carries the transaction id of its last message.
  std::map<uint64_t, std::vector<int32_t>> want;
  for (int32_t first : {1, 5}) {
    std::vector<int32_t>& v = want[static_cast<uint64_t>(first + 3)];
    for (int32_t i = first; i < first + 4; ++i) {
      v.insert(v.end(), {2 * i, 20 * i, 200 * i});
    }
  }
  EXPECT_EQ(batches, want);
  std::vector<Tensor> out;
  FlowInfo info;
  EXPECT_EQ(S().FetchData(1, &out, &info, 100).code(), StatusCode::kTimeout);

  std::vector<DeviceReport> reports;
  ASSERT_TRUE(S().DeviceReports(1, &reports).ok());
  ASSERT_EQ(reports.size(), 4u);
  // stack and double on every device; the batch node with stack's first.
  EXPECT_EQ(reports[0].submodels, 3u);
  for (size_t d = 1; d < 4; ++d) EXPECT_EQ(reports[d].submodels, 2u) << d;
  for (const auto& r : reports) EXPECT_EQ(r.implicit_bindings, 0u) << r.id;
  EXPECT_EQ(rt::GetCurrentContext(), nullptr);
}

// ---- exception_catch: RaiseException reaches the fetcher ----

struct Result {
  int32_t ret_code = 0;
  std::vector<int32_t> data;
  bool operator==(const Result& o) const {
    return ret_code == o.ret_code && data == o.data;
  }
};

// Fetches `n` results by transaction id. An exception produces no output
// message, and a fetch already waiting on the output queue is not woken by
// one (it is delivered on the next FetchData), so poll with short timeouts.
std::map<uint64_t, Result> FetchByTransaction(Session& s, size_t n) {
  std::map<uint64_t, Result> got;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, 50);
    if (st.code() == StatusCode::kTimeout) continue;
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) break;
    EXPECT_EQ(out.size(), 1u);
    EXPECT_EQ(got.count(info.transaction_id), 0u) << info.transaction_id;
    got[info.transaction_id] = {info.ret_code, out.empty()
                                                   ? std::vector<int32_t>{}
                                                   : out[0].As<int32_t>()};
  }
  return got;
}

TEST_F(ExamplesTest, ExceptionCatchDeliversCodeAndTransaction) {
  Start({0, 1, 2, 3});
  Load("exception_catch/graph.json");
  Feed({I32({1, 2, 3})});
  Feed({I32({1, -2, 3})});
  Feed({I32({4, 5, 6})});
  Feed({I32({-7})}, /*trans=*/42);  // the caller's own transaction id
  std::map<uint64_t, Result> got = FetchByTransaction(S(), 4);
  std::map<uint64_t, Result> want = {{1, {0, {1, 2, 3}}},
                                     {2, {kNegativeInput, {}}},
                                     {3, {0, {4, 5, 6}}},
                                     {42, {kNegativeInput, {}}}};
  EXPECT_EQ(got, want);
  std::vector<Tensor> out;
  FlowInfo info;
  EXPECT_EQ(S().FetchData(1, &out, &info, 100).code(), StatusCode::kTimeout);
  ExpectNoImplicitBindings();
  EXPECT_EQ(rt::GetCurrentContext(), nullptr);
}

// The same UDF through the C++ graph API without exception catch: the
// exception is not delivered, so the fetcher sees only the good transaction.
TEST_F(ExamplesTest, ExceptionNotDeliveredWithoutExceptionCatch) {
  Start({0, 1, 2, 3});
  FlowData x("x", 0);
  FunctionPp pp("check_pp");
  pp.SetCompileConfig(Example("exception_catch/check_func.json"))
      .SetFunction("CheckNonNegative");
  FlowNode check("check", 1, 1);
  check.SetInput(0, x).AddPp(pp);
  FlowGraph g("exception_not_caught");
  g.SetInputs({x}).SetOutputs({check}).SetExceptionCatch(false);
  Status s = S().AddGraph(1, g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = S().BuildGraph(1);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Feed({I32({-1})});
  Feed({I32({8})});
  std::vector<Tensor> out;
  FlowInfo info;
  Fetch(&out, &info);
  EXPECT_EQ(info.ret_code, 0);
  EXPECT_EQ(info.transaction_id, 2u);
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{8}));
  EXPECT_EQ(S().FetchData(1, &out, &info, 100).code(), StatusCode::kTimeout);
}

// ---- run.sh of each example, through the built CLI ----
//
// These never skip: a CLI that is missing, crashes, exits non-zero, prints
// nothing or prints anything but the promised lines fails them (the
// FakeCliFailsTheCheck test proves the check catches each of those).

struct CliRun {
  int code = -1;  // exit status; -1 when killed by a signal
  std::vector<nlohmann::json> lines;
  std::string out;
  std::string err;
};

// Runs examples/<script> with HFLOW set to `cli` (the built CLI by
// default); `args` go to `hflow run` after the script's own.
CliRun RunScript(const std::string& script, const std::string& args = "",
                 const std::string& cli = HFLOW_CLI_PATH) {
  testing::UseBuildTreeForUdfs();
  CliRun r;
  const std::string err_file = ::testing::TempDir() + "hflow_examples_stderr_" +
                               std::to_string(::getpid()) + ".txt";
  std::string cmd = "HFLOW='" + cli + "' bash '" + Example(script) + "' " +
                    args + " 2>'" + err_file + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    r.err = "popen failed";
    return r;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  r.err.assign(std::istreambuf_iterator<char>(err), {});
  std::remove(err_file.c_str());
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty())
      r.lines.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return r;
}

nlohmann::json Line(const char* text) { return nlohmann::json::parse(text); }

// A correct run: exit status 0 and stdout exactly `want`, one JSON line
// each (in trans_id order when `by_trans_id`: replicas finish in any order).
::testing::AssertionResult RunPrints(CliRun r,
                                     const std::vector<nlohmann::json>& want,
                                     bool by_trans_id = false) {
  auto fail = [&r]() {
    return ::testing::AssertionFailure() << "\n--- stdout ---\n"
                                         << r.out << "--- stderr ---\n"
                                         << r.err;
  };
  if (r.code != 0) return fail() << "exit status " << r.code;
  for (const auto& line : r.lines) {
    if (line.is_discarded()) return fail() << "a stdout line is not JSON";
  }
  if (by_trans_id) {
    std::sort(r.lines.begin(), r.lines.end(),
              [](const nlohmann::json& a, const nlohmann::json& b) {
                return a.value("trans_id", 0) < b.value("trans_id", 0);
              });
  }
  if (r.lines != want) {
    return fail() << "expected " << nlohmann::json(want).dump();
  }
  return ::testing::AssertionSuccess();
}

const std::vector<nlohmann::json>& AddPipelineLines() {
  static const std::vector<nlohmann::json> kLines = {
      Line(R"({"output":0,"trans_id":1,"ret_code":0,
          "dtype":"int32","shape":[3],"data":[22,44,66]})")};
  return kLines;
}

TEST(ExamplesCliTest, CliHasTheRunCommand) {
  std::string cmd = "'" + std::string(HFLOW_CLI_PATH) + "' --help 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string help;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) help.append(buf, n);
  int status = pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << help;
  EXPECT_THAT(help, ::testing::ContainsRegex("\n +run +")) << help;
}

// The check is not vacuous: each way a CLI can misbehave fails it.
TEST(ExamplesCliTest, FakeCliFailsTheCheck) {
  const std::string good_line =
      R"({"output":0,"trans_id":1,"ret_code":0,"dtype":"int32","shape":[3],"data":[22,44,66]})";
  const std::vector<std::pair<std::string, std::string>> fakes = {
      {"missing", ""},
      {"silent", "exit 0"},
      {"crashes", "kill -SEGV $$"},
      {"fails", "echo '" + good_line + "'; exit 1"},
      {"garbage", "echo 'not json'; exit 0"},
      {"extra", "echo '" + good_line + "'; echo '" + good_line + "'"},
  };
  for (const auto& [name, body] : fakes) {
    const std::string path =
        ::testing::TempDir() + "hflow_fake_cli_" + name + ".sh";
    if (!body.empty()) {
      std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
      fs::permissions(path, fs::perms::owner_all);
    }
    EXPECT_FALSE(RunPrints(RunScript("add_pipeline/run.sh", "", path),
                           AddPipelineLines()))
        << "a CLI that " << name << " passed the check";
    std::remove(path.c_str());
  }
  // And the real CLI passes it.
  EXPECT_TRUE(RunPrints(RunScript("add_pipeline/run.sh"), AddPipelineLines()));
}

TEST(ExamplesCliTest, AddPipelineRunScript) {
  EXPECT_TRUE(RunPrints(RunScript("add_pipeline/run.sh"), AddPipelineLines()));
}

TEST(ExamplesCliTest, MultiFunctionRunScript) {
  EXPECT_TRUE(RunPrints(RunScript("multi_function/run.sh"),
                        {Line(R"({"output":0,"trans_id":1,"ret_code":0,
          "dtype":"int32","shape":[1],"data":[15]})"),
                         Line(R"({"output":1,"trans_id":1,"ret_code":0,
          "dtype":"int32","shape":[3],"data":[10,20,30]})")}));
}

TEST(ExamplesCliTest, ReplicasRunScript) {
  // 8 feeds, 2 batches back: `hflow run` must not wait for 8 results.
  std::vector<nlohmann::json> want;
  for (int k = 0; k < 2; ++k) {
    nlohmann::json line = Line(R"({"output":0,"trans_id":0,"ret_code":0,
        "dtype":"int32","shape":[4,3],"data":[2,4,6,2,4,6,2,4,6,2,4,6]})");
    line["trans_id"] = 4 * (k + 1);
    want.push_back(line);
  }
  EXPECT_TRUE(RunPrints(RunScript("replicas/run.sh", "--timeout 3000"), want,
                        /*by_trans_id=*/true));
}

TEST(ExamplesCliTest, ExceptionCatchRunScript) {
  // run.sh exits 0 when the good run succeeds and the negative run fails;
  // the second line is the negative run's error result.
  CliRun r = RunScript("exception_catch/run.sh");
  ASSERT_EQ(r.lines.size(), 2u) << r.out << r.err;
  nlohmann::json failed = r.lines[1];
  EXPECT_EQ(failed.value("trans_id", 0), 1) << r.out;
  EXPECT_EQ(failed.value("ret_code", 0), kNegativeInput) << r.out;
  EXPECT_TRUE(RunPrints(r, {Line(R"({"output":0,"trans_id":1,"ret_code":0,
      "dtype":"int32","shape":[3],"data":[1,2,3]})"),
                            failed}));
}

// ---- host_api: the C++ program, run as built, on two device sets ----

// Runs the built examples/host_api with `args`; stdout and the exit status.
CliRun RunHostApi(const std::string& args) {
  CliRun r;
  const std::string cmd =
      "'" + std::string(HFLOW_HOST_API_EXAMPLE) + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

constexpr char kHostApiLines[] =
    "trans 1: sum [11,22,33] twice [22,44,66]\n"
    "trans 2: sum [0,5,10] twice [0,10,20]\n"
    "trans 3: sum [0] twice [0]\n";

TEST(ExamplesProgramTest, HostApiOnTheDefaultDevices) {
  CliRun r = RunHostApi("");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, std::string(kHostApiLines) + "ok on devices 0 and 1\n");
}

// A device set without device 0: nothing can work by the default-context
// luck of device 0.
TEST(ExamplesProgramTest, HostApiOnDevicesWithoutZero) {
  CliRun r = RunHostApi("--devices 3,6,7");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, std::string(kHostApiLines) + "ok on devices 3 and 6\n");
}

TEST(ExamplesProgramTest, HostApiRejectsBadArguments) {
  EXPECT_EQ(RunHostApi("--devices 5").code, 2);  // one device is too few
  EXPECT_EQ(RunHostApi("--devices x").code, 2);
  EXPECT_EQ(RunHostApi("--frobnicate").code, 2);
}

}  // namespace
}  // namespace hflow
