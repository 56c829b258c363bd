// Shared builders of the model-node tests: the ONNX models made at test
// time by tests/models/make_onnx_models.py (Debian's python3-torch), a
// one-model-node graph around a model file, and the comparison of fetched
// tensors with PyTorch eager's.
//
// Thread-safety: ModelDir may be called from several test processes at
// once (an flock serialises the generation); the rest is plain.
#ifndef HFLOW_TESTS_MODEL_MODEL_TEST_UTIL_H_
#define HFLOW_TESTS_MODEL_MODEL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hflow/hflow.h"

namespace hflow {
namespace testing {

// The folder holding manifest.json and the models, made on first use (or
// when a generator in tests/models is newer than the manifest). Fails the test
// (and returns "") when the generator fails.
std::string ModelDir();

struct ModelCase {
  std::string name, file, framework;
  int opset = 0;
  std::vector<std::string> inputs, outputs;  // .npy files
};
// The numerics cases of the manifest.
std::vector<ModelCase> ModelCases();
const ModelCase* FindModelCase(const std::string& name);

// A graph file's JSON: graph inputs x0..x<inputs-1> feed model node `m`
// (a GraphPp running `model_file`), whose outputs are the graph's outputs;
// placed on `devices` (several: a replica on each). `extra` is added to
// model_pp verbatim (",\"compile_config\":\"...\"").
std::string ModelGraphJson(const std::string& model_file, size_t inputs,
                           size_t outputs, const std::vector<int32_t>& devices,
                           const std::string& extra = "",
                           const std::string& framework = "onnx");

// Whether `got` matches `want`: same dtype and shape, floats within `tol`
// (max abs difference), integers and bools exact. `why` says how not.
bool TensorsMatch(const Tensor& got, const Tensor& want, double tol,
                  std::string* why);

Tensor LoadNpy(const std::string& path);

// Writes `bytes` to `name` in the test's temporary folder; its path.
// (Not WriteTempFile: acl_test_util.h's, per process, is linked into the
// same binary, and one name for both made the acl tests write here.)
std::string WriteModelTempFile(const std::string& name,
                               const std::string& bytes);

// A test on a local cluster of the parameter's devices, with a session.
class ModelDeviceTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override;
  void TearDown() override;
  // The set's last device: never the first, so not device 0 by luck.
  int32_t Device() const { return GetParam().back(); }
  // AddGraphJson(1, json) and BuildGraph(1).
  Status Build(const std::string& json);

  Session s_;
};

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_MODEL_MODEL_TEST_UTIL_H_
