// Models a UDF invokes (GE's FunctionPp::AddInvokedClosure and the UDF's
// RunFlowModel). The model library (libhflow_model.so, a layer above this
// one) registers the loader when it is loaded; a UDF instance loads its
// invoked models with it in Init, on the deploy thread that bound the
// instance's device (the seed's path: weights go to that device's memory
// on that thread's binding), and RunFlowModel runs them on the caller's
// thread.
//
// Thread-safety: SetInvokedModelLoader and LoadInvokedModel may be called
// from any thread. An InvokedModel's Run is called by one thread at a time
// (the context serialises calls of one model).
#ifndef HFLOW_FLOW_FUNC_INVOKED_MODEL_H_
#define HFLOW_FLOW_FUNC_INVOKED_MODEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_msg.h"
#include "hflow/status.h"

namespace hflow {
namespace flow_func {

// What a closure's model is: the graph file's model fields.
struct InvokedModelSpec {
  std::string key;  // the name RunFlowModel invokes it by
  std::string framework, graph_file, compile_config;
  std::map<std::string, std::string> load_params;
  int64_t intra_op_threads = 0;  // 0: the model library's default
};

// Make a model's output messages (the instance's allocator): a tensor of
// `shape` and `dt`; an empty message (no data); a raw message of `size`
// bytes (a torch tensor message's, model/torch_msg.h).
struct MsgMakers {
  std::function<std::shared_ptr<FlowFunc::FlowMsg>(
      const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt)>
      tensor;
  std::function<std::shared_ptr<FlowFunc::FlowMsg>()> empty;
  std::function<std::shared_ptr<FlowFunc::FlowMsg>(uint64_t size)> raw;
};

class InvokedModel {
 public:
  virtual ~InvokedModel() = default;
  // Runs the model on `in` (one tensor message per model input) into `out`
  // (one per output, made by `make`), with GE's semantics for inputs
  // carrying an error (empty outputs with its ret_code). Returns a FlowFunc
  // code; a failure is logged naming the model and why.
  virtual int32_t Run(const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in,
                      const MsgMakers& make,
                      std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* out) = 0;
};

using InvokedModelLoader =
    std::function<Status(const InvokedModelSpec& spec, int32_t device,
                         std::unique_ptr<InvokedModel>* out)>;

// Set by the model library when it is loaded (it stays loaded).
void SetInvokedModelLoader(InvokedModelLoader loader);

// Loads `spec` for `device` on the calling thread's binding; NotSupported
// when no model library has registered a loader.
Status LoadInvokedModel(const InvokedModelSpec& spec, int32_t device,
                        std::unique_ptr<InvokedModel>* out);

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_INVOKED_MODEL_H_
