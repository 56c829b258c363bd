// ModelRunner: one model loaded for one device with its executor, run on
// FlowFunc messages with GE's semantics. What a model node's instance
// (model_udf.cc) and a model a UDF invokes (invoked_model.cc) each hold.
//   - the model's inputs are the messages in order, each output one
//     message;
//   - an input with a non-zero ret_code or no data does not run the model:
//     each output is an empty message carrying that ret_code;
//   - an input of another dtype or shape than the model's (after the
//     compile config) fails the run naming the input, expected and got
//     (FLOW_FUNC_ERR_PARAM_INVALID); a kernel error fails it naming node
//     and operator (FLOW_FUNC_FAILED). Both are logged.
//
// Thread-safety: Load on the thread bound to `device` (Note [Loading on
// the bound thread] in loaded_model.h); Run by one thread at a time;
// destroy on a thread bound to the same device.
#ifndef HFLOW_MODEL_MODEL_RUNNER_H_
#define HFLOW_MODEL_MODEL_RUNNER_H_

#include <memory>
#include <vector>

#include "flow_func/invoked_model.h"
#include "hflow/status.h"
#include "model/executor.h"
#include "model/loaded_model.h"

namespace hflow {
namespace model {

// Intra-op threads when the node does not say: one per instance, so that
// replicas and pipeline stages (the dataflow's own parallelism) never
// oversubscribe the cores; a lone large model asks for more.
inline constexpr int64_t kDefaultIntraOpThreads = 1;

class ModelRunner {
 public:
  // `threads` <= 0: kDefaultIntraOpThreads.
  static Status Load(const ModelSpec& spec, int32_t device, int64_t threads,
                     std::unique_ptr<ModelRunner>* out);

  const ModelIr& ir() const { return model_->ir(); }

  // Returns a FlowFunc code; on success `out` holds one message per model
  // output.
  int32_t Run(const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in,
              const flow_func::MsgMakers& make,
              std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* out);

 private:
  ModelRunner() = default;
  int32_t Empty(int32_t rc, const flow_func::MsgMakers& make,
                std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* out) const;

  std::shared_ptr<const LoadedModel> model_;
  std::unique_ptr<Executor> exec_;
};

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_MODEL_RUNNER_H_
