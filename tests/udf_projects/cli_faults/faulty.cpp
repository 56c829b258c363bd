// A UDF that misbehaves on request, for the CLI tests (C++11, old ABI):
//
//   in0 ──[Faulty]── out0   (passes its input on)
//
// The string attr "mode" picks the fault; the int attr "after" lets the
// first N transactions through untouched:
//   init_fail  Init returns FLOW_FUNC_FAILED
//   init_hang  Init never returns
//   fail       Proc returns FLOW_FUNC_FAILED
//   hang       Proc never returns
//   crash      Proc aborts the process, once the file named by the string
//              attr "gate" exists (the test creates it when it has read
//              the results before; waits at most 60 s)
//   printf     Proc prints a line on stdout, then passes its input on
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

namespace {

void SleepForever() {
  for (;;) {
    struct timespec ts = {1, 0};
    nanosleep(&ts, nullptr);
  }
}

class Faulty : public MetaFlowFunc {
 public:
  int32_t Init() override {
    AscendString mode;
    if (context_->GetAttr("mode", mode) == FLOW_FUNC_SUCCESS) {
      mode_ = mode.GetString();
    }
    int64_t after = 0;
    if (context_->GetAttr("after", after) == FLOW_FUNC_SUCCESS) after_ = after;
    AscendString gate;
    if (context_->GetAttr("gate", gate) == FLOW_FUNC_SUCCESS) {
      gate_ = gate.GetString();
    }
    if (mode_ == "init_fail") return FLOW_FUNC_FAILED;
    if (mode_ == "init_hang") SleepForever();
    return FLOW_FUNC_SUCCESS;
  }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 1 || !in[0]) return FLOW_FUNC_ERR_PARAM_INVALID;
    if (static_cast<int64_t>(in[0]->GetTransactionId()) <= after_) {
      return context_->SetOutput(0, in[0]);
    }
    if (mode_ == "fail") return FLOW_FUNC_FAILED;
    if (mode_ == "hang") SleepForever();
    if (mode_ == "crash") {
      WaitForFile(gate_);
      std::abort();
    }
    if (mode_ == "printf") {
      std::printf("not a result line\n");
      std::fflush(stdout);
    }
    return context_->SetOutput(0, in[0]);
  }

 private:
  static void WaitForFile(const std::string& path) {
    for (int i = 0; i < 6000 && !path.empty(); ++i) {
      if (FILE* f = std::fopen(path.c_str(), "r")) {
        std::fclose(f);
        return;
      }
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, nullptr);
    }
  }

  std::string mode_;
  std::string gate_;
  int64_t after_ = 0;
};

}  // namespace

REGISTER_FLOW_FUNC("Faulty", Faulty);
