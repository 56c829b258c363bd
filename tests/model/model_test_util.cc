// Model-node test builders (model_test_util.h).
//
// Thread-safety: see the header.
#include "model/model_test_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tools/npy_file.h"

namespace hflow {
namespace testing {
namespace {

namespace fs = std::filesystem;

const char* Generator() {
  return HFLOW_SOURCE_DIR "/tests/models/make_onnx_models.py";
}

bool Fresh(const fs::path& manifest) {
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return false;
  const auto made = fs::last_write_time(manifest, ec);
  for (const auto& f :
       fs::directory_iterator(fs::path(Generator()).parent_path(), ec)) {
    if (f.path().extension() == ".py" && f.last_write_time(ec) > made) {
      return false;
    }
  }
  return true;
}

template <typename T>
bool Close(const Tensor& got, const Tensor& want, double tol,
           std::string* why) {
  const std::vector<T> g = got.As<T>(), w = want.As<T>();
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::fabs(double(g[i]) - double(w[i]));
    if (std::isnan(d) || d > worst) {
      worst = std::isnan(d) ? INFINITY : d;
      at = i;
    }
  }
  if (worst <= tol) return true;
  *why = "max abs difference " + std::to_string(worst) + " at element " +
         std::to_string(at) + " (got " + std::to_string(double(g[at])) +
         ", want " + std::to_string(double(w[at])) + "), tolerance " +
         std::to_string(tol);
  return false;
}

}  // namespace

std::string ModelDir() {
  static const std::string dir = [] {
    const fs::path d = fs::path(HFLOW_TEST_MODEL_DIR);
    fs::create_directories(d);
    const fs::path manifest = d / "manifest.json";
    const int lock = open((d / ".lock").c_str(), O_CREAT | O_RDWR, 0644);
    if (lock >= 0) flock(lock, LOCK_EX);
    bool ok = Fresh(manifest);
    if (!ok) {
      const std::string cmd = std::string(HFLOW_MODEL_PYTHON) + " " +
                              Generator() + " " + d.string() + " > " +
                              (d / "generate.log").string() + " 2>&1";
      ok = std::system(cmd.c_str()) == 0;
      if (!ok) {
        ADD_FAILURE() << "the test models could not be made: " << cmd
                      << " failed; see " << (d / "generate.log").string();
      }
    }
    if (lock >= 0) close(lock);  // releases the flock
    return ok ? d.string() : std::string();
  }();
  return dir;
}

std::vector<ModelCase> ModelCases() {
  std::vector<ModelCase> cases;
  const std::string dir = ModelDir();
  if (dir.empty()) return cases;
  std::ifstream in(dir + "/manifest.json");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_array()) {
    ADD_FAILURE() << dir << "/manifest.json is not a JSON array";
    return cases;
  }
  for (const auto& e : j) {
    ModelCase c;
    c.name = e.at("name").get<std::string>();
    c.file = e.at("file").get<std::string>();
    c.framework = e.value("framework", std::string("onnx"));
    c.opset = e.at("opset").get<int>();
    c.inputs = e.at("inputs").get<std::vector<std::string>>();
    c.outputs = e.at("outputs").get<std::vector<std::string>>();
    cases.push_back(std::move(c));
  }
  return cases;
}

const ModelCase* FindModelCase(const std::string& name) {
  static const std::vector<ModelCase> cases = ModelCases();
  for (const ModelCase& c : cases) {
    if (c.name == name) return &c;
  }
  ADD_FAILURE() << "no model case '" << name << "' in the manifest";
  return nullptr;
}

std::string ModelGraphJson(const std::string& model_file, size_t inputs,
                           size_t outputs, const std::vector<int32_t>& devices,
                           const std::string& extra,
                           const std::string& framework) {
  nlohmann::json g;
  g["name"] = "model_graph";
  std::vector<std::string> in, out;
  for (size_t i = 0; i < inputs; ++i) in.push_back("x" + std::to_string(i));
  for (size_t i = 0; i < outputs; ++i) out.push_back("m:" + std::to_string(i));
  g["inputs"] = in;
  nlohmann::json pp = nlohmann::json::parse(
      R"({"name":"net","type":"GraphPp","framework":)" +
      nlohmann::json(framework).dump() + R"(,"graph_file":)" +
      nlohmann::json(model_file).dump() + extra + "}");
  g["nodes"] = {
      {{"name", "m"}, {"inputs", in}, {"outputs", outputs}, {"model_pp", pp}}};
  g["outputs"] = out;
  // Several devices: one replica on each.
  std::string ids;
  for (int32_t d : devices) {
    ids += (ids.empty() ? "" : ",") + std::string("0:0:") + std::to_string(d);
  }
  g["deploy"] = {{"batch_deploy_info",
                  {{{"flow_node_list", {"m"}}, {"logic_device_list", ids}}}}};
  return g.dump();
}

bool TensorsMatch(const Tensor& got, const Tensor& want, double tol,
                  std::string* why) {
  if (got.dtype != want.dtype) {
    *why = std::string("dtype ") + DataTypeName(got.dtype) + ", want " +
           DataTypeName(want.dtype);
    return false;
  }
  if (got.shape != want.shape) {
    auto text = [](const std::vector<int64_t>& s) {
      std::string t = "[";
      for (size_t i = 0; i < s.size(); ++i) {
        t += (i ? "," : "") + std::to_string(s[i]);
      }
      return t + "]";
    };
    *why = "shape " + text(got.shape) + ", want " + text(want.shape);
    return false;
  }
  switch (got.dtype) {
    case DataType::kFloat:
      return Close<float>(got, want, tol, why);
    case DataType::kDouble:
      return Close<double>(got, want, tol, why);
    case DataType::kInt64:
      return Close<int64_t>(got, want, 0, why);
    case DataType::kInt32:
      return Close<int32_t>(got, want, 0, why);
    case DataType::kInt8:
      return Close<int8_t>(got, want, 0, why);
    case DataType::kUint8:
    case DataType::kBool:
      return Close<uint8_t>(got, want, 0, why);
    default:
      if (got.data == want.data) return true;
      *why = "the bytes differ";
      return false;
  }
}

Tensor LoadNpy(const std::string& path) {
  Tensor t;
  Status s = tools::LoadNpyFile(path, &t);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return t;
}

std::string WriteModelTempFile(const std::string& name,
                               const std::string& bytes) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / name).lexically_normal();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

void ModelDeviceTest::SetUp() {
  ASSERT_FALSE(ModelDir().empty());
  Options o;
  o.cluster = MakeLocalCluster(GetParam());
  ASSERT_TRUE(Initialize(o).ok());
}

void ModelDeviceTest::TearDown() { (void)Finalize(); }

Status ModelDeviceTest::Build(const std::string& json) {
  HFLOW_RETURN_IF_ERROR(s_.AddGraphJson(1, json, "model graph", ""));
  return s_.BuildGraph(1);
}

}  // namespace testing
}  // namespace hflow
