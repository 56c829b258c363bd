// ModelRunner (model_runner.h).
//
// Thread-safety: as documented there.
#include "model/model_runner.h"

#include <cstring>
#include <string>
#include <utility>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "model/torch_msg.h"

namespace hflow {
namespace model {
namespace {

using FlowFunc::FlowMsg;

// "expected float32[1,3,?,?], got int32[3]", or "" when the tensor fits.
std::string Mismatch(const IrValue& want, DataType dtype,
                     const std::vector<int64_t>& got) {
  bool ok = dtype == want.dtype;
  if (ok && want.has_shape) {
    ok = got.size() == want.dims.size();
    for (size_t d = 0; ok && d < got.size(); ++d) {
      ok = want.dims[d] < 0 || want.dims[d] == got[d];
    }
  }
  if (ok) return "";
  return "expected " + DataTypeName(want.dtype) +
         (want.has_shape ? ShapeText(want.dims) : "[any]") + ", got " +
         DataTypeName(dtype) + ShapeText(got);
}

}  // namespace

Status ModelRunner::Load(const ModelSpec& spec, int32_t device, int64_t threads,
                         std::unique_ptr<ModelRunner>* out) {
  std::unique_ptr<ModelRunner> r(new ModelRunner());
  HFLOW_RETURN_IF_ERROR(LoadedModel::Acquire(spec, device, &r->model_));
  if (threads <= 0) threads = kDefaultIntraOpThreads;
  HFLOW_RETURN_IF_ERROR(Executor::Create(r->model_->ir(),
                                         r->model_->constants(),
                                         static_cast<int>(threads), &r->exec_));
  *out = std::move(r);
  return Status::OK();
}

int32_t ModelRunner::Empty(int32_t rc, const flow_func::MsgMakers& make,
                           std::vector<std::shared_ptr<FlowMsg>>* out) const {
  for (size_t i = 0; i < ir().outputs.size(); ++i) {
    std::shared_ptr<FlowMsg> m = make.empty ? make.empty() : nullptr;
    if (m == nullptr) return FlowFunc::FLOW_FUNC_ERR_MEM_BUF_ERROR;
    m->SetRetCode(rc);
    out->push_back(std::move(m));
  }
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

int32_t ModelRunner::Run(const std::vector<std::shared_ptr<FlowMsg>>& in,
                         const flow_func::MsgMakers& make,
                         std::vector<std::shared_ptr<FlowMsg>>* out) {
  out->clear();
  const ModelIr& model = ir();
  if (in.size() != model.inputs.size()) {
    FLOW_FUNC_LOG_ERROR("%s takes %zu inputs, got %zu", model.source.c_str(),
                        model.inputs.size(), in.size());
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  // Note [Torch messages in and out]: fed GE's torch tensor messages
  // (model/torch_msg.h), the model answers with them.
  bool torch_io = false;
  for (size_t i = 0; i < in.size(); ++i) {
    const auto& m = in[i];
    if (m == nullptr) return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
    if (m->GetRetCode() != 0) return Empty(m->GetRetCode(), make, out);
    if (IsTorchMsg(*m)) {
      torch_io = true;
    } else if (m->GetTensor() == nullptr) {
      if (m->GetMsgType() == FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA) {
        return Empty(0, make, out);  // no data: the model does not run
      }
      FLOW_FUNC_LOG_ERROR(
          "input %zu ('%s'): a message of type %u, not a tensor", i,
          model.inputs[i].name.c_str(), static_cast<unsigned>(m->GetMsgType()));
      return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
    }
  }
  std::vector<TensorView> views;
  for (size_t i = 0; i < in.size(); ++i) {
    TensorView v;
    std::string why;
    if (IsTorchMsg(*in[i])) {
      why = ViewTorchMsg(*in[i], &v);
    } else {
      FlowFunc::Tensor* t = in[i]->GetTensor();
      v = TensorView{t->GetDataType(), t->GetShape(), t->GetData()};
    }
    if (why.empty()) why = Mismatch(model.inputs[i], v.dtype, v.dims);
    if (!why.empty()) {
      FLOW_FUNC_LOG_ERROR("input %zu ('%s'): %s", i,
                          model.inputs[i].name.c_str(), why.c_str());
      return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
    }
    views.push_back(std::move(v));
  }
  std::vector<OutputTensor> outs;
  const Status s = exec_->Run(views, &outs);
  if (!s.ok()) {
    FLOW_FUNC_LOG_ERROR("%s: %s", model.source.c_str(), s.message().c_str());
    return FlowFunc::FLOW_FUNC_FAILED;
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    const OutputTensor& o = outs[i];
    if (ElementSize(o.dtype) == 0) {
      FLOW_FUNC_LOG_ERROR("output %zu has an element type no message holds", i);
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    if (torch_io && make.raw) {
      std::shared_ptr<FlowMsg> m = make.raw(TorchMsgSize(o.bytes));
      if (m == nullptr) {
        FLOW_FUNC_LOG_ERROR("output %zu: no memory for %zu bytes", i, o.bytes);
        return FlowFunc::FLOW_FUNC_ERR_MEM_BUF_ERROR;
      }
      WriteTorchMsg(o, m.get());
      out->push_back(std::move(m));
      continue;
    }
    std::shared_ptr<FlowMsg> m = make.tensor(o.dims, o.dtype);
    if (m == nullptr || m->GetTensor() == nullptr) {
      FLOW_FUNC_LOG_ERROR("output %zu: no memory for %zu bytes", i, o.bytes);
      return FlowFunc::FLOW_FUNC_ERR_MEM_BUF_ERROR;
    }
    if (o.bytes > 0) std::memcpy(m->GetTensor()->GetData(), o.data, o.bytes);
    out->push_back(std::move(m));
  }
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

}  // namespace model
}  // namespace hflow
