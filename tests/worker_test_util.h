// Shared builders of the worker-process tests: compile configs and graph
// files of the Fragile UDF library (tests/worker_udfs/fragile.cpp).
//
// Thread-safety: plain functions writing the files they are given.
#ifndef HFLOW_TESTS_WORKER_TEST_UTIL_H_
#define HFLOW_TESTS_WORKER_TEST_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#ifndef HFLOW_TEST_FRAGILE_UDF
#error "HFLOW_TEST_FRAGILE_UDF must name the built Fragile UDF library"
#endif

namespace hflow {
namespace testing {

// Writes a compile config of the Fragile library into `dir` (heavy_load
// as given) and returns its path.
inline std::string FragileConfig(const std::filesystem::path& dir, bool heavy) {
  const std::filesystem::path lib = HFLOW_TEST_FRAGILE_UDF;
  const std::filesystem::path file =
      dir / (heavy ? "heavy.json" : "light.json");
  std::ofstream(file) << R"({"func_list": [{"func_name": "Fragile"}],)"
                      << R"( "input_num": 1, "output_num": 1,)"
                      << R"( "workspace": ")" << lib.parent_path().string()
                      << R"(", "target_bin": ")" << lib.filename().string()
                      << R"(", "heavy_load": )" << (heavy ? "true" : "false")
                      << "}";
  return file.string();
}

// A graph file: x ── frag (Fragile, `mode` on input `at`, placed on
// `device`) ── out; `params` adds init params (`"k": v, ...`).
inline std::string FragileGraphJson(const std::string& config,
                                    const std::string& mode, int64_t at,
                                    int32_t device,
                                    const std::string& params = "") {
  return R"({"name":"fragile","inputs":["x"],"nodes":[{"name":"frag",)"
         R"("inputs":["x"],"outputs":1,"function":"Fragile",)"
         R"("compile_config":")" +
         config + R"(","init_params":{"mode":")" + mode + R"(","at":)" +
         std::to_string(at) + (params.empty() ? "" : "," + params) +
         R"(}}],"outputs":["frag:0"],"deploy":{"deploy_info":[)"
         R"({"flow_node_name":"frag","logic_device_id":"0:0:)" +
         std::to_string(device) + R"("}]}})";
}

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_WORKER_TEST_UTIL_H_
