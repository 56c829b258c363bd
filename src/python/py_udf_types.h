// The handles a Python UDF gets (py_udf_types.cc binds them): each holds
// the runtime's object by shared pointer, so a Python reference kept past
// the Proc that got it stays valid memory (a message and the numpy views
// of it live as long as either is referenced).
//
// Thread-safety: plain holders; the objects they hold are used from the
// UDF's thread.
#ifndef HFLOW_PYTHON_PY_UDF_TYPES_H_
#define HFLOW_PYTHON_PY_UDF_TYPES_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "flow_func/flow_msg.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/meta_params.h"
#include "flow_func/meta_run_context.h"
#include "python/py_core.h"

namespace hflow {
namespace python {

struct UdfParams {
  std::shared_ptr<FlowFunc::MetaParams> params;
};

struct UdfContext {
  std::shared_ptr<FlowFunc::MetaRunContext> ctx;
};

struct UdfMsg {
  std::shared_ptr<FlowFunc::FlowMsg> msg;
};

// The tensor of `owner` (GetTensor's pointer lives as long as it).
struct UdfTensor {
  std::shared_ptr<FlowFunc::FlowMsg> owner;
  FlowFunc::Tensor* tensor = nullptr;
};

struct UdfQueue {
  std::shared_ptr<FlowFunc::FlowMsgQueue> queue;
};

// GE's BalanceConfig, turned into OutOptions at set_output (every weight 1).
struct UdfBalance {
  int32_t rows = 0;
  int32_t cols = 0;
  int32_t affinity = 0;  // FlowFunc::AffinityPolicy
  std::vector<std::pair<int32_t, int32_t>> positions;
};

}  // namespace python
}  // namespace hflow

#endif  // HFLOW_PYTHON_PY_UDF_TYPES_H_
