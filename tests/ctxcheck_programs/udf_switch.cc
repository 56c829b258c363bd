// A small hflow program for `hflow ctxcheck`'s tests: a UDF whose Proc
// switches its thread to another device (a library calling aclrtSetDevice)
// and never switches back.
//
//   x ──[switcher @ first device]── out
//
//   udf_switch leak      the UDF leaves its thread on the last device
//   udf_switch restore   the UDF puts the caller's context back
//
// The cluster is the one $RESOURCE_CONFIG_PATH names (as GE programs
// read it). Exit status 0 when all three values came back, 1 otherwise.
#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/ge_options.h"
#include "hflow/hflow.h"

namespace {

std::atomic<int32_t> g_other{-1};
std::atomic<bool> g_restore{false};

class Switcher : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    aclrtContext caller = nullptr;
    (void)aclrtGetCurrentContext(&caller);
    if (aclrtSetDevice(g_other.load()) != ACL_SUCCESS) {  // CTXCHECK: switch
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    if (g_restore.load()) (void)aclrtSetCurrentContext(caller);
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("Switcher", Switcher);

int Fail(const hflow::Status& s) {
  std::fprintf(stderr, "udf_switch: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  g_restore = argc > 1 && std::string(argv[1]) == "restore";
  hflow::Options o;
  hflow::Status s = hflow::ClusterConfigFromEnvironment(&o.cluster, nullptr);
  if (!s.ok()) return Fail(s);
  const std::vector<hflow::DeviceDesc>& devices = o.cluster.nodes[0].devices;
  const int32_t device = devices.front().device_id;
  g_other = devices.back().device_id;
  if (!(s = hflow::Initialize(o)).ok()) return Fail(s);
  hflow::FlowData x("x", 0);
  hflow::FunctionPp pp("switcher_pp");
  pp.SetFunction("Switcher");
  hflow::FlowNode n("switcher", 1, 1);
  n.AddPp(pp);
  n.SetInput(0, x);
  hflow::FlowGraph g("switch");
  g.SetInputs({x}).SetOutputs({n});
  g.SetDeployInfo(R"({"deploy_info": [{"flow_node_name": "switcher", )"
                  R"("logic_device_id": "0:0:)" +
                  std::to_string(device) + "\"}]}");
  hflow::Session session;
  if (!(s = session.AddGraph(1, g)).ok() || !(s = session.BuildGraph(1)).ok()) {
    return Fail(s);
  }
  int rc = 0;
  for (int64_t v = 1; v <= 3; ++v) {
    hflow::Tensor t =
        hflow::Tensor::From<int64_t>(hflow::DataType::kInt64, {1}, {v});
    std::vector<hflow::Tensor> out;
    hflow::FlowInfo info;
    if (!(s = session.FeedData(1, {t}, info, 10000)).ok() ||
        !(s = session.FetchData(1, &out, &info, 10000)).ok()) {
      return Fail(s);
    }
    if (out.size() != 1 || out[0].As<int64_t>().at(0) != v) rc = 1;
  }
  (void)hflow::Finalize();
  return rc;
}
