// GE's torch plugin's message (type 1023, dataflow.plugin.torch): raw
// bytes holding a 1024-byte runtime tensor descriptor (GE's
// RuntimeTensorDesc: data address, dtype, shape) and then the tensor's
// data. A model node takes such messages as tensors and, fed them, answers
// in kind, so an exported torch module (npu_model at optimize_level 2)
// sits between torch nodes as GE's does.
//
// Thread-safety: reentrant.
#ifndef HFLOW_MODEL_TORCH_MSG_H_
#define HFLOW_MODEL_TORCH_MSG_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_msg.h"
#include "model/executor.h"

namespace hflow {
namespace model {

inline constexpr uint16_t kTorchTensorMsgType = 1023;

bool IsTorchMsg(const FlowFunc::FlowMsg& m);

// The tensor a torch message holds, viewing its bytes; "" or why not.
std::string ViewTorchMsg(const FlowFunc::FlowMsg& m, TensorView* out);

// Fills `raw` (a raw message of TorchMsgSize(bytes) bytes) with `t`'s
// descriptor and data, and marks it type 1023.
size_t TorchMsgSize(size_t data_bytes);
void WriteTorchMsg(const OutputTensor& t, FlowFunc::FlowMsg* raw);

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_TORCH_MSG_H_
