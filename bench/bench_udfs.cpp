// The benchmarks' UDF library (libhflow_bench_udfs.so): a pass-through
// that a compile config can name, so a stage can run in a worker process
// (heavy_load) or in the host, with the same code.
//
//   in ──[BenchPass]── out   (the input message itself)
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"

namespace {

class BenchPass : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg> >& in) override {
    return context_->SetOutput(0, in[0]);
  }
};

}  // namespace

REGISTER_FLOW_FUNC("BenchPass", BenchPass);
