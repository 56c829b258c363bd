// What a Python UDF holds: the FlowFunc API's MetaParams, MetaRunContext,
// FlowMsg, Tensor and FlowMsgQueue as Python classes (thin handles on the
// runtime's objects), BalanceConfig, the UDF logger and the FLOW_FUNC_* /
// MSG_TYPE_* constants. A UDF tensor is a writable numpy view of its
// message's memory (no copy); the view keeps the message alive.
//
// Thread-safety: the objects are used by the UDF's own thread while it
// runs; a queue's dequeue releases the GIL while it waits (Note [The GIL
// and hflow's threads] in py_core.h).
#include "python/py_udf_types.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/meta_params.h"
#include "flow_func/meta_run_context.h"
#include "flow_func/out_options.h"

namespace hflow {
namespace python {
namespace {

namespace py = pybind11;
namespace ff = FlowFunc;

// A typed read of an init param: (code, value), value None on failure.
template <typename T>
py::tuple Attr(const UdfParams& p, const std::string& name) {
  T value{};
  const int32_t code = p.params->GetAttr(name.c_str(), value);
  if (code != ff::FLOW_FUNC_SUCCESS) return py::make_tuple(code, py::none());
  return py::make_tuple(code, py::cast(value));
}

py::tuple StrAttr(const UdfParams& p, const std::string& name) {
  ff::AscendString value;
  const int32_t code = p.params->GetAttr(name.c_str(), value);
  if (code != ff::FLOW_FUNC_SUCCESS) return py::make_tuple(code, py::none());
  return py::make_tuple(code, std::string(value.GetString()));
}

py::tuple StrListAttr(const UdfParams& p, const std::string& name) {
  std::vector<ff::AscendString> value;
  const int32_t code = p.params->GetAttr(name.c_str(), value);
  if (code != ff::FLOW_FUNC_SUCCESS) return py::make_tuple(code, py::none());
  py::list out;
  for (const auto& s : value) out.append(std::string(s.GetString()));
  return py::make_tuple(code, out);
}

py::tuple DtypeAttr(const UdfParams& p, const std::string& name) {
  ff::TensorDataType value{};
  const int32_t code = p.params->GetAttr(name.c_str(), value);
  if (code != ff::FLOW_FUNC_SUCCESS) return py::make_tuple(code, py::none());
  return py::make_tuple(code, static_cast<int32_t>(value));
}

py::tuple DtypeListAttr(const UdfParams& p, const std::string& name) {
  std::vector<ff::TensorDataType> value;
  const int32_t code = p.params->GetAttr(name.c_str(), value);
  if (code != ff::FLOW_FUNC_SUCCESS) return py::make_tuple(code, py::none());
  py::list out;
  for (auto d : value) out.append(static_cast<int32_t>(d));
  return py::make_tuple(code, out);
}

// Whatever type the param was given as: (code, value).
py::tuple AnyAttr(const UdfParams& p, const std::string& name) {
  using Reader = py::tuple (*)(const UdfParams&, const std::string&);
  // Order matters: an integer is also readable as a float, a DT_* name is
  // a data type before it is a string.
  const Reader readers[] = {&Attr<bool>,
                            &Attr<int64_t>,
                            &Attr<float>,
                            &DtypeAttr,
                            &StrAttr,
                            &Attr<std::vector<int64_t>>,
                            &Attr<std::vector<float>>,
                            &Attr<std::vector<bool>>,
                            &DtypeListAttr,
                            &StrListAttr,
                            &Attr<std::vector<std::vector<int64_t>>>};
  py::tuple last;
  for (Reader r : readers) {
    last = r(p, name);
    if (last[0].cast<int32_t>() == ff::FLOW_FUNC_SUCCESS) return last;
    if (last[0].cast<int32_t>() == ff::FLOW_FUNC_ERR_ATTR_NOT_EXITS) break;
  }
  return last;
}

py::object TensorOf(const UdfMsg& m) {
  if (m.msg == nullptr || m.msg->GetTensor() == nullptr) return py::none();
  return py::cast(UdfTensor{m.msg, m.msg->GetTensor()});
}

py::array NumpyOf(const UdfTensor& t) {
  const int32_t dtype = static_cast<int32_t>(t.tensor->GetDataType());
  if (NumpyFormat(dtype) == nullptr) {
    throw py::value_error("the tensor's data type code " +
                          std::to_string(dtype) + " has no numpy type");
  }
  // The capsule holds the message: the view outlives neither.
  auto* keep = new std::shared_ptr<ff::FlowMsg>(t.owner);
  py::capsule owner(keep, [](void* p) {
    delete static_cast<std::shared_ptr<ff::FlowMsg>*>(p);
  });
  return py::array(NumpyDtype(dtype), t.tensor->GetShape(), t.tensor->GetData(),
                   owner);
}

py::object RawOf(const UdfMsg& m) {
  void* data = nullptr;
  uint64_t size = 0;
  if (m.msg->GetRawData(data, size) != ff::FLOW_FUNC_SUCCESS) {
    return py::none();
  }
  auto* keep = new std::shared_ptr<ff::FlowMsg>(m.msg);
  py::capsule owner(keep, [](void* p) {
    delete static_cast<std::shared_ptr<ff::FlowMsg>*>(p);
  });
  // A uint8 array is a writable buffer that keeps the message alive; its
  // memoryview is what GE's get_raw_data returns.
  py::array bytes(py::dtype::of<uint8_t>(), {static_cast<py::ssize_t>(size)},
                  static_cast<uint8_t*>(data), owner);
  return py::memoryview(bytes);
}

py::object Wrap(std::shared_ptr<ff::FlowMsg> msg) {
  if (msg == nullptr) return py::none();
  return py::cast(UdfMsg{std::move(msg)});
}

ff::OutOptions OptionsOf(const UdfBalance& b) {
  ff::OutOptions options;
  ff::BalanceConfig* c = options.MutableBalanceConfig();
  ff::BalanceWeight w;
  w.rowNum = b.rows;
  w.colNum = b.cols;
  c->SetBalanceWeight(w);
  c->SetAffinityPolicy(static_cast<ff::AffinityPolicy>(b.affinity));
  c->SetDataPos(b.positions);
  return options;
}

std::vector<std::shared_ptr<ff::FlowMsg>> Msgs(const std::vector<UdfMsg>& in) {
  std::vector<std::shared_ptr<ff::FlowMsg>> out;
  for (const UdfMsg& m : in) out.push_back(m.msg);
  return out;
}

void BindParams(py::module_& m) {
  py::class_<UdfParams>(m, "MetaParams")
      .def("get_name",
           [](const UdfParams& p) { return std::string(p.params->GetName()); })
      .def("get_attr", &AnyAttr, py::arg("name"))
      .def("get_int", &Attr<int64_t>, py::arg("name"))
      .def("get_float", &Attr<float>, py::arg("name"))
      .def("get_bool", &Attr<bool>, py::arg("name"))
      .def("get_str", &StrAttr, py::arg("name"))
      .def("get_int_list", &Attr<std::vector<int64_t>>, py::arg("name"))
      .def("get_int_list_list", &Attr<std::vector<std::vector<int64_t>>>,
           py::arg("name"))
      .def("get_float_list", &Attr<std::vector<float>>, py::arg("name"))
      .def("get_bool_list", &Attr<std::vector<bool>>, py::arg("name"))
      .def("get_str_list", &StrListAttr, py::arg("name"))
      .def("get_dtype", &DtypeAttr, py::arg("name"))
      .def("get_dtype_list", &DtypeListAttr, py::arg("name"))
      .def("get_input_num",
           [](const UdfParams& p) { return p.params->GetInputNum(); })
      .def("get_output_num",
           [](const UdfParams& p) { return p.params->GetOutputNum(); })
      .def("get_work_path",
           [](const UdfParams& p) {
             return std::string(p.params->GetWorkPath());
           })
      .def("get_running_device_id",
           [](const UdfParams& p) { return p.params->GetRunningDeviceId(); })
      .def("get_running_instance_id",
           [](const UdfParams& p) { return p.params->GetRunningInstanceId(); })
      .def("get_running_instance_num", [](const UdfParams& p) {
        return p.params->GetRunningInstanceNum();
      });
}

void BindMessages(py::module_& m) {
  py::class_<UdfTensor>(m, "Tensor", py::buffer_protocol())
      .def("get_shape", [](const UdfTensor& t) { return t.tensor->GetShape(); })
      .def("get_dtype",
           [](const UdfTensor& t) {
             return static_cast<int32_t>(t.tensor->GetDataType());
           })
      .def("get_data_size",
           [](const UdfTensor& t) { return t.tensor->GetDataSize(); })
      .def("get_element_cnt",
           [](const UdfTensor& t) { return t.tensor->GetElementCnt(); })
      .def(
          "reshape",
          [](const UdfTensor& t, const std::vector<int64_t>& shape) {
            return t.tensor->Reshape(shape);
          },
          py::arg("shape"))
      .def("numpy", &NumpyOf)
      .def_buffer([](const UdfTensor& t) -> py::buffer_info {
        py::array a = NumpyOf(t);
        return a.request(true);
      });

  py::class_<UdfMsg>(m, "FlowMsg")
      .def("get_msg_type",
           [](const UdfMsg& x) {
             return static_cast<uint16_t>(x.msg->GetMsgType());
           })
      .def("set_msg_type",
           [](const UdfMsg& x, uint16_t t) {
             x.msg->SetMsgType(static_cast<ff::MsgType>(t));
           })
      .def("get_tensor", &TensorOf)
      .def("get_raw_data", &RawOf)
      .def("get_ret_code", [](const UdfMsg& x) { return x.msg->GetRetCode(); })
      .def("set_ret_code",
           [](const UdfMsg& x, int32_t c) { x.msg->SetRetCode(c); })
      .def("get_start_time",
           [](const UdfMsg& x) { return x.msg->GetStartTime(); })
      .def("set_start_time",
           [](const UdfMsg& x, uint64_t t) { x.msg->SetStartTime(t); })
      .def("get_end_time", [](const UdfMsg& x) { return x.msg->GetEndTime(); })
      .def("set_end_time",
           [](const UdfMsg& x, uint64_t t) { x.msg->SetEndTime(t); })
      .def("get_flow_flags",
           [](const UdfMsg& x) { return x.msg->GetFlowFlags(); })
      .def("set_flow_flags",
           [](const UdfMsg& x, uint32_t f) { x.msg->SetFlowFlags(f); })
      .def("get_transaction_id",
           [](const UdfMsg& x) { return x.msg->GetTransactionId(); })
      .def("set_transaction_id",
           [](const UdfMsg& x, uint64_t t) { x.msg->SetTransactionId(t); })
      .def("set_route_label",
           [](const UdfMsg& x, uint32_t l) { x.msg->SetRouteLabel(l); });

  py::class_<UdfQueue>(m, "FlowMsgQueue")
      .def(
          "dequeue",
          [](const UdfQueue& q, int32_t timeout) {
            std::shared_ptr<ff::FlowMsg> msg;
            int32_t code = 0;
            {
              py::gil_scoped_release release;
              code = q.queue->Dequeue(msg, timeout);
            }
            return py::make_tuple(code, Wrap(std::move(msg)));
          },
          py::arg("timeout"))
      .def("depth", [](const UdfQueue& q) { return q.queue->Depth(); })
      .def("size", [](const UdfQueue& q) { return q.queue->Size(); });
}

void BindContext(py::module_& m) {
  py::class_<UdfBalance>(m, "BalanceConfig")
      .def(py::init<>())
      .def("set_balance_weight",
           [](UdfBalance& b, int32_t rows, int32_t cols) {
             b.rows = rows;
             b.cols = cols;
           })
      .def("set_affinity_policy",
           [](UdfBalance& b, int32_t policy) { b.affinity = policy; })
      .def("set_data_pos",
           [](UdfBalance& b, std::vector<std::pair<int32_t, int32_t>> pos) {
             b.positions = std::move(pos);
           });

  py::class_<UdfContext>(m, "MetaRunContext")
      .def(
          "alloc_tensor_msg",
          [](const UdfContext& c, const std::vector<int64_t>& shape,
             int32_t dtype, uint32_t align) {
            return Wrap(c.ctx->AllocTensorMsgWithAlign(
                shape, static_cast<ff::TensorDataType>(dtype), align));
          },
          py::arg("shape"), py::arg("dtype"), py::arg("align") = 64)
      .def(
          "alloc_raw_data_msg",
          [](const UdfContext& c, int64_t size, uint32_t align) {
            return Wrap(c.ctx->AllocRawDataMsg(size, align));
          },
          py::arg("size"), py::arg("align") = 64)
      .def(
          "alloc_empty_msg",
          [](const UdfContext& c, uint16_t type) {
            return Wrap(
                c.ctx->AllocEmptyDataMsg(static_cast<ff::MsgType>(type)));
          },
          py::arg("msg_type") = 0)
      .def(
          "set_output",
          [](const UdfContext& c, uint32_t index, const UdfMsg& msg) {
            return c.ctx->SetOutput(index, msg.msg);
          },
          py::arg("index"), py::arg("msg"))
      .def(
          "set_output",
          [](const UdfContext& c, uint32_t index, const UdfMsg& msg,
             const UdfBalance& b) {
            return c.ctx->SetOutput(index, msg.msg, OptionsOf(b));
          },
          py::arg("index"), py::arg("msg"), py::arg("balance_config"))
      .def(
          "set_multi_outputs",
          [](const UdfContext& c, uint32_t index,
             const std::vector<UdfMsg>& msgs, const UdfBalance& b) {
            return c.ctx->SetMultiOutputs(index, Msgs(msgs), OptionsOf(b));
          },
          py::arg("index"), py::arg("msgs"), py::arg("balance_config"))
      .def(
          "run_flow_model",
          [](const UdfContext& c, const std::string& key,
             const std::vector<UdfMsg>& in, int32_t timeout) {
            std::vector<std::shared_ptr<ff::FlowMsg>> out;
            int32_t code = 0;
            {
              // The model runs on this thread; other Python UDFs go on.
              py::gil_scoped_release release;
              code = c.ctx->RunFlowModel(key.c_str(), Msgs(in), out, timeout);
            }
            py::list msgs;
            for (auto& m : out) msgs.append(Wrap(std::move(m)));
            return py::make_tuple(code, msgs);
          },
          py::arg("model_key"), py::arg("msgs"), py::arg("timeout"))
      .def(
          "get_user_data",
          [](const UdfContext& c, size_t size, size_t offset) {
            std::string buf(size, '\0');
            const int32_t code = c.ctx->GetUserData(buf.data(), size, offset);
            return py::make_tuple(code, py::bytes(buf));
          },
          py::arg("size"), py::arg("offset") = 0)
      .def(
          "raise_exception",
          [](const UdfContext& c, int32_t code, uint64_t id) {
            c.ctx->RaiseException(code, id);
          },
          py::arg("code"), py::arg("transaction_id"))
      .def("get_exception",
           [](const UdfContext& c) {
             int32_t code = 0;
             uint64_t id = 0;
             const bool has = c.ctx->GetException(code, id);
             return py::make_tuple(has, code, id);
           })
      .def("run_flow_model", [](const UdfContext&, py::args) {
        throw py::value_error(
            "run_flow_model: hflow does not run model graphs (GraphPp / "
            "FlowGraphPp) yet");
      });
}

void BindLogger(py::module_& m) {
  m.def(
      "log",
      [](int32_t type, int32_t level, const std::string& message) {
        auto& logger = ff::FlowFuncLogger::GetLogger(
            static_cast<ff::FlowFuncLogType>(type));
        const auto l = static_cast<ff::FlowFuncLogLevel>(level);
        if (!logger.IsLogEnable(l)) return;
        const char* header = ff::FlowFuncLogger::GetLogExtHeader();
        switch (l) {
          case ff::FlowFuncLogLevel::DEBUG:
            logger.Debug("%s%s", header, message.c_str());
            break;
          case ff::FlowFuncLogLevel::INFO:
            logger.Info("%s%s", header, message.c_str());
            break;
          case ff::FlowFuncLogLevel::WARN:
            logger.Warn("%s%s", header, message.c_str());
            break;
          default:
            logger.Error("%s%s", header, message.c_str());
        }
      },
      py::arg("log_type"), py::arg("level"), py::arg("message"),
      "Writes `message` to the UDF log (type 0 debug, 1 run; level 0 debug "
      ".. 3 error) after the running node's header.");
  m.def(
      "is_log_enable",
      [](int32_t type, int32_t level) {
        return ff::FlowFuncLogger::GetLogger(
                   static_cast<ff::FlowFuncLogType>(type))
            .IsLogEnable(static_cast<ff::FlowFuncLogLevel>(level));
      },
      py::arg("log_type"), py::arg("level"));
  m.def("get_log_header",
        [] { return std::string(ff::FlowFuncLogger::GetLogExtHeader()); });
}

void BindConstants(py::module_& m) {
  const std::pair<const char*, int32_t> codes[] = {
      {"FLOW_FUNC_SUCCESS", ff::FLOW_FUNC_SUCCESS},
      {"FLOW_FUNC_FAILED", ff::FLOW_FUNC_FAILED},
      {"FLOW_FUNC_ERR_PARAM_INVALID", ff::FLOW_FUNC_ERR_PARAM_INVALID},
      {"FLOW_FUNC_ERR_ATTR_NOT_EXITS", ff::FLOW_FUNC_ERR_ATTR_NOT_EXITS},
      {"FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH",
       ff::FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH},
      {"FLOW_FUNC_ERR_TIME_OUT_ERROR", ff::FLOW_FUNC_ERR_TIME_OUT_ERROR},
      {"FLOW_FUNC_ERR_NOT_SUPPORT", ff::FLOW_FUNC_ERR_NOT_SUPPORT},
      {"FLOW_FUNC_STATUS_REDEPLOYING", ff::FLOW_FUNC_STATUS_REDEPLOYING},
      {"FLOW_FUNC_STATUS_EXIT", ff::FLOW_FUNC_STATUS_EXIT},
      {"FLOW_FUNC_ERR_DRV_ERROR", ff::FLOW_FUNC_ERR_DRV_ERROR},
      {"FLOW_FUNC_ERR_QUEUE_ERROR", ff::FLOW_FUNC_ERR_QUEUE_ERROR},
      {"FLOW_FUNC_ERR_MEM_BUF_ERROR", ff::FLOW_FUNC_ERR_MEM_BUF_ERROR},
      {"FLOW_FUNC_ERR_EVENT_ERROR", ff::FLOW_FUNC_ERR_EVENT_ERROR},
      {"FLOW_FUNC_ERR_DATA_ALIGN_FAILED", ff::FLOW_FUNC_ERR_DATA_ALIGN_FAILED},
      {"FLOW_FUNC_ERR_USER_DEFINE_START", ff::FLOW_FUNC_ERR_USER_DEFINE_START},
      {"FLOW_FUNC_ERR_USER_DEFINE_END", ff::FLOW_FUNC_ERR_USER_DEFINE_END},
      {"MSG_TYPE_TENSOR_DATA", 0},
      {"MSG_TYPE_RAW_MSG", 1},
      {"MSG_TYPE_TENSOR_LIST", 2},
      {"MSG_TYPE_USER_DEFINE_START", 1024},
      {"MSG_TYPE_PICKLED_MSG", 65535},
      {"FLOW_FLAG_EOS", 1},
      {"FLOW_FLAG_SEG", 2}};
  for (const auto& [name, code] : codes) m.attr(name) = code;
}

}  // namespace

void BindUdfTypes(py::module_& m) {
  BindParams(m);
  BindMessages(m);
  BindContext(m);
  BindLogger(m);
  BindConstants(m);
}

}  // namespace python
}  // namespace hflow
