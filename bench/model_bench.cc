// Model nodes against libtorch itself (issue: model nodes). The models are
// made at start by tests/models/make_onnx_models.py (Debian's python3 with
// torch): resnet18 as ONNX for hflow and as TorchScript (torch.jit.trace of
// the same module) for the baseline, and a 16-float Identity model.
//
//   BM_ModelResnet18      feed -> m (resnet18.onnx) -> fetch, one image
//   BM_TorchJitResnet18   torch::jit::load'ed module's forward in a loop,
//                         same thread count (1, the model node's default)
//   BM_ModelIdentity64B   feed -> m (Identity model) -> fetch, 64 B
//   BM_UdfIdentity64B     feed -> _BuiltIn_Identity UDF -> fetch, 64 B
//   BM_ModelLoadResnet18  AddGraph + BuildGraph (parse, upload) + Remove
//   BM_TorchJitLoadResnet18  torch::jit::load of the same network
//   BM_PreModelPost       feed -> pre (UDF) -> m (resnet18) -> post (UDF)
//                         -> fetch, one image at a time
//   BM_PreModelPostPipelined2  the same graph with a replica of each node
//                         on two devices, 4 images in flight
//   BM_PreModelPostInline the same three computations back to back on one
//                         thread (pre, the jit module's forward, post)
//
// Thread-safety: each benchmark drives its session from its own thread.
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/script.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"

namespace hflow {
namespace {

constexpr int32_t kTimeoutMs = 60000;
constexpr int32_t kDevice = 2;

// The models' folder, made once per process and removed at its exit.
struct ModelsFolder {
  std::string path;
  ~ModelsFolder() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
};

const std::string& Models() {
  static const ModelsFolder folder{[] {
    const std::string d = std::filesystem::temp_directory_path() /
                          ("hflow_model_bench_" + std::to_string(getpid()));
    const std::string cmd = std::string(HFLOW_MODEL_PYTHON) + " " +
                            HFLOW_SOURCE_DIR
                            "/tests/models/make_onnx_models.py " +
                            d + " resnet18 extras > /dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return d;
    std::error_code ignored;
    std::filesystem::remove_all(d, ignored);
    return std::string();
  }()};
  return folder.path;
}

std::string ModelGraph(const std::string& file, const std::string& extra = "") {
  return R"({"name":"m","inputs":["x"],"nodes":[{"name":"m","inputs":["x"],)"
         R"("outputs":1,"model_pp":{"name":"net","type":"GraphPp","graph_file":")" +
         file + "\"" + extra +
         R"(}}],"outputs":["m:0"],)"
         R"("deploy":{"deploy_info":[{"flow_node_name":"m","logic_device_id":"0:0:)" +
         std::to_string(kDevice) + R"("}]}})";
}

std::string UdfGraph() {
  return R"({"name":"u","inputs":["x"],"nodes":[{"name":"m","inputs":["x"],)"
         R"("outputs":1,"function":"_BuiltIn_Identity"}],"outputs":["m:0"],)"
         R"("deploy":{"deploy_info":[{"flow_node_name":"m","logic_device_id":"0:0:)" +
         std::to_string(kDevice) + R"("}]}})";
}

// hflow initialized on devices 0..3 for the benchmark's life.
struct Env {
  Env() {
    Options o;
    o.cluster = MakeLocalCluster({0, 1, 2, 3});
    ok = Initialize(o).ok();
  }
  ~Env() { (void)Finalize(); }
  bool ok = false;
};

Tensor Floats(std::vector<int64_t> shape, float v) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Tensor::From(DataType::kFloat, std::move(shape),
                      std::vector<float>(size_t(n), v));
}

// Feed -> graph -> fetch of `in`, once per iteration.
void RoundTrips(benchmark::State& state, const std::string& json,
                const Tensor& in) {
  if (Models().empty()) return state.SkipWithError("the models were not made");
  Env env;
  Session s;
  Status st = s.AddGraphJson(1, json, "bench", "");
  if (st.ok()) st = s.BuildGraph(1);
  if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
  std::vector<Tensor> out;
  for (auto _ : state) {
    FlowInfo info, got;
    st = s.FeedData(1, {in}, info, kTimeoutMs);
    if (st.ok()) st = s.FetchData(1, &out, &got, kTimeoutMs);
    if (!st.ok() || got.ret_code != 0) {
      state.SkipWithError(st.ok() ? "the model failed" : st.ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  (void)s.RemoveGraph(1);
}

void BM_ModelResnet18(benchmark::State& state) {
  RoundTrips(state, ModelGraph(Models() + "/resnet18.onnx"),
             Floats({1, 3, 224, 224}, 0.5f));
}
BENCHMARK(BM_ModelResnet18)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TorchJitResnet18(benchmark::State& state) {
  if (Models().empty()) return state.SkipWithError("the models were not made");
  at::set_num_threads(1);
  torch::jit::Module m = torch::jit::load(Models() + "/resnet18.pt");
  m.eval();
  torch::NoGradGuard no_grad;
  const at::Tensor x = at::full({1, 3, 224, 224}, 0.5f);
  for (auto _ : state) {
    at::Tensor y = m.forward({x}).toTensor();
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TorchJitResnet18)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_ModelIdentity64B(benchmark::State& state) {
  RoundTrips(state, ModelGraph(Models() + "/identity.onnx"), Floats({16}, 1));
}
BENCHMARK(BM_ModelIdentity64B)->UseRealTime();

void BM_UdfIdentity64B(benchmark::State& state) {
  RoundTrips(state, UdfGraph(), Floats({16}, 1));
}
BENCHMARK(BM_UdfIdentity64B)->UseRealTime();

void BM_ModelLoadResnet18(benchmark::State& state) {
  if (Models().empty()) return state.SkipWithError("the models were not made");
  Env env;
  const std::string json = ModelGraph(Models() + "/resnet18.onnx");
  for (auto _ : state) {
    Session s;
    Status st = s.AddGraphJson(1, json, "bench", "");
    if (st.ok()) st = s.BuildGraph(1);
    if (st.ok()) st = s.RemoveGraph(1);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
  }
}
BENCHMARK(BM_ModelLoadResnet18)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_TorchJitLoadResnet18(benchmark::State& state) {
  if (Models().empty()) return state.SkipWithError("the models were not made");
  for (auto _ : state) {
    torch::jit::Module m = torch::jit::load(Models() + "/resnet18.pt");
    benchmark::DoNotOptimize(&m);
  }
}
BENCHMARK(BM_TorchJitLoadResnet18)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// ---- pre -> model -> post ----

// pre: an image normalized as torchvision's transforms do (one channel
// mean and std, for brevity).
void Normalize(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = (x[i] - 0.45f) / 0.225f;
}

// post: softmax over the logits, then the top class and its probability.
std::pair<int64_t, float> TopClass(const float* logits, size_t n) {
  float top = logits[0];
  for (size_t i = 1; i < n; ++i) top = std::max(top, logits[i]);
  float sum = 0;
  int64_t best = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += std::exp(logits[i] - top);
    if (logits[i] > logits[best]) best = static_cast<int64_t>(i);
  }
  return {best, 1.0f / sum};
}

using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;

class PreUdf : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    FlowFunc::Tensor* x = in[0]->GetTensor();
    auto out = context_->AllocTensorMsg(x->GetShape(), x->GetDataType());
    if (!out) return FlowFunc::FLOW_FUNC_FAILED;
    Normalize(static_cast<const float*>(x->GetData()),
              static_cast<float*>(out->GetTensor()->GetData()),
              static_cast<size_t>(x->GetElementCnt()));
    return context_->SetOutput(0, out);
  }
};
REGISTER_FLOW_FUNC("BenchPre", PreUdf);

class PostUdf : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    FlowFunc::Tensor* x = in[0]->GetTensor();
    auto [cls, p] = TopClass(static_cast<const float*>(x->GetData()),
                             static_cast<size_t>(x->GetElementCnt()));
    auto out =
        context_->AllocTensorMsg({2}, FlowFunc::TensorDataType::DT_FLOAT);
    if (!out) return FlowFunc::FLOW_FUNC_FAILED;
    auto* o = static_cast<float*>(out->GetTensor()->GetData());
    o[0] = static_cast<float>(cls);
    o[1] = p;
    return context_->SetOutput(0, out);
  }
};
REGISTER_FLOW_FUNC("BenchPost", PostUdf);

// x -> pre -> m (resnet18) -> post -> y; every node on `devices` (one
// replica on each).
std::string PipelineGraph(const std::string& devices) {
  return R"({"name":"p","inputs":["x"],"nodes":[)"
         R"({"name":"pre","inputs":["x"],"outputs":1,"function":"BenchPre"},)"
         R"({"name":"m","inputs":["pre:0"],"outputs":1,"model_pp":)"
         R"({"name":"net","type":"GraphPp","graph_file":")" +
         Models() +
         R"(/resnet18.onnx"}},)"
         R"({"name":"post","inputs":["m:0"],"outputs":1,"function":"BenchPost"}],)"
         R"("outputs":["post:0"],"deploy":{"batch_deploy_info":[)"
         R"({"flow_node_list":["pre","m","post"],"logic_device_list":")" +
         devices + R"("}]}})";
}

// Keeps `depth` images in flight: each iteration feeds one and fetches one.
void Pipelined(benchmark::State& state, const std::string& devices, int depth) {
  if (Models().empty()) return state.SkipWithError("the models were not made");
  Env env;
  Session s;
  Status st = s.AddGraphJson(1, PipelineGraph(devices), "bench", "");
  if (st.ok()) st = s.BuildGraph(1);
  if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
  const Tensor img = Floats({1, 3, 224, 224}, 0.5f);
  FlowInfo info, got;
  std::vector<Tensor> out;
  for (int i = 0; i < depth - 1 && st.ok(); ++i) {
    st = s.FeedData(1, {img}, info, kTimeoutMs);
  }
  for (auto _ : state) {
    if (st.ok()) st = s.FeedData(1, {img}, info, kTimeoutMs);
    if (st.ok()) st = s.FetchData(1, &out, &got, kTimeoutMs);
    if (!st.ok() || got.ret_code != 0) {
      state.SkipWithError(st.ok() ? "the graph failed" : st.ToString().c_str());
      break;
    }
  }
  for (int i = 0; i < depth - 1 && st.ok(); ++i) {
    st = s.FetchData(1, &out, &got, kTimeoutMs);
  }
  state.SetItemsProcessed(state.iterations());
  (void)s.RemoveGraph(1);
}

void BM_PreModelPost(benchmark::State& state) {
  Pipelined(state, "0:0:" + std::to_string(kDevice), 1);
}
BENCHMARK(BM_PreModelPost)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_PreModelPostPipelined2(benchmark::State& state) {
  Pipelined(state, "0:0:2,0:0:3", 4);
}
BENCHMARK(BM_PreModelPostPipelined2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_PreModelPostInline(benchmark::State& state) {
  if (Models().empty()) return state.SkipWithError("the models were not made");
  at::set_num_threads(1);
  torch::jit::Module m = torch::jit::load(Models() + "/resnet18.pt");
  m.eval();
  torch::NoGradGuard no_grad;
  const at::Tensor img = at::full({1, 3, 224, 224}, 0.5f);
  for (auto _ : state) {
    at::Tensor x = at::empty_like(img);
    Normalize(img.data_ptr<float>(), x.data_ptr<float>(),
              static_cast<size_t>(img.numel()));
    at::Tensor y = m.forward({x}).toTensor().contiguous();
    auto top = TopClass(y.data_ptr<float>(), static_cast<size_t>(y.numel()));
    benchmark::DoNotOptimize(top);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PreModelPostInline)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hflow

BENCHMARK_MAIN();
