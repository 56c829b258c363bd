// Helpers shared by the UdfInstance tests (udf_instance_*_test.cc): the
// per-test hooks the test UDFs delegate to (one global, reset by the
// fixture), the fixture that creates and Inits instances, and Contains. The
// test UDFs themselves are registered once, in udf_instance_create_test.cc.
//
// Thread-safety: the hooks are a process-wide global; tests use them from one
// test at a time.
#ifndef HFLOW_FLOW_FUNC_UDF_INSTANCE_TEST_UTIL_H_
#define HFLOW_FLOW_FUNC_UDF_INSTANCE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/udf_instance.h"
#include "udf_test_util.h"

namespace hflow {
namespace flow_func {
namespace udf_instance_test {

using FlowFunc::FlowMsg;
using FlowFunc::FlowMsgQueue;
using FlowFunc::MetaContext;
using FlowFunc::MetaParams;
using FlowFunc::MetaRunContext;
using testing::UdfHarness;
using Msgs = std::vector<std::shared_ptr<FlowMsg>>;
using Queues = std::vector<std::shared_ptr<FlowMsgQueue>>;

inline constexpr int32_t kOk = FlowFunc::FLOW_FUNC_SUCCESS;
inline constexpr int32_t kParamInvalid = FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;

// ---- Hooks the test UDFs call ----

struct Hooks {
  std::function<int32_t(MetaContext*)> single_init;
  std::function<int32_t(MetaContext*, const Msgs&)> single_proc;
  std::function<int32_t(const std::shared_ptr<MetaParams>&)> multi_init;
  std::function<int32_t(const std::shared_ptr<MetaRunContext>&, const Msgs&)>
      proc_a;
  std::function<int32_t(const std::shared_ptr<MetaRunContext>&, const Msgs&)>
      proc_b;
  std::function<int32_t(const std::shared_ptr<MetaRunContext>&, const Queues&)>
      proc_q;
  std::vector<const void*> objects;  // the HookMulti each multi proc ran on
};
inline Hooks g_hooks;

// ---- Fixture ----

class UdfInstanceTest : public ::testing::Test {
 protected:
  void SetUp() override { g_hooks = Hooks(); }
  void TearDown() override { g_hooks = Hooks(); }

  // The queue proc (UdfInstanceTest_MultiQ) is marked stream_input, as its
  // compile config must.
  static std::vector<FuncDesc> Funcs(std::initializer_list<const char*> names) {
    std::vector<FuncDesc> v;
    for (const char* n : names) {
      v.emplace_back();
      v.back().name = n;
      v.back().stream_input = std::string(n) == "UdfInstanceTest_MultiQ";
    }
    return v;
  }

  // Creates and Inits; fails the test on error.
  static std::unique_ptr<UdfInstance> Make(
      UdfHarness& h, std::initializer_list<const char*> names,
      InstanceEnv env) {
    std::unique_ptr<UdfInstance> inst;
    Status s = UdfInstance::Create(Funcs(names), std::move(env), &inst);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!inst) return nullptr;
    auto bound = h.Bind();
    s = inst->Init(*bound);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return inst;
  }
  static std::unique_ptr<UdfInstance> Make(UdfHarness& h, const char* name,
                                           size_t in = 1, size_t out = 1) {
    return Make(h, {name}, h.Env("node_" + std::string(name), in, out));
  }
};

inline bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace udf_instance_test
}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_UDF_INSTANCE_TEST_UTIL_H_
