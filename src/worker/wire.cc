// Wire conversions: see wire.h.
//
// Thread-safety: pure functions.
#include "worker/wire.h"

#include <type_traits>

namespace hflow {
namespace worker {

void HeadToWire(const services::MbufHead& h, v1::MsgHead* out) {
  out->set_trans_id(h.trans_id);
  out->set_flags(h.flags);
  out->set_ret_code(h.ret_code);
  out->set_start_time(h.start_time);
  out->set_end_time(h.end_time);
  out->set_msg_type(h.msg_type);
  out->set_dtype(h.dtype);
  for (int64_t d : h.shape) out->add_shape(d);
  out->set_route_label(h.route_label);
  out->set_data_label(h.data_label);
  for (const services::TensorDesc& t : h.tensor_list) {
    v1::TensorDesc* w = out->add_tensor_list();
    w->set_dtype(t.dtype);
    for (int64_t d : t.shape) w->add_shape(d);
    w->set_offset(t.offset);
    w->set_bytes(t.bytes);
  }
  out->set_data_offset(h.data_offset);
  out->set_align(h.align);
  out->set_error_node(h.error_node);
  out->set_null_data(h.null_data);
  if (h.user_data_len > 0) {
    out->set_user_data(h.user_data, h.user_data_len);
  }
}

Status HeadFromWire(const v1::MsgHead& w, services::MbufHead* out) {
  out->trans_id = w.trans_id();
  out->flags = w.flags();
  out->ret_code = w.ret_code();
  out->start_time = w.start_time();
  out->end_time = w.end_time();
  out->msg_type = static_cast<uint16_t>(w.msg_type());
  out->dtype = w.dtype();
  out->shape.assign(w.shape().begin(), w.shape().end());
  out->route_label = w.route_label();
  out->data_label = w.data_label();
  out->tensor_list.clear();
  for (const v1::TensorDesc& t : w.tensor_list()) {
    services::TensorDesc d;
    d.dtype = t.dtype();
    d.shape.assign(t.shape().begin(), t.shape().end());
    d.offset = t.offset();
    d.bytes = t.bytes();
    out->tensor_list.push_back(std::move(d));
  }
  out->data_offset = w.data_offset();
  out->align = w.align();
  out->error_node = w.error_node();
  out->null_data = w.null_data();
  out->user_data_len = 0;
  if (!w.user_data().empty()) {
    return out->SetUserData(w.user_data().data(), w.user_data().size());
  }
  return Status::OK();
}

namespace {

template <typename List, typename Vec>
void Fill(List* list, const Vec& v) {
  for (const auto& x : v) list->add_values(x);
}

}  // namespace

Status AttrsToWire(const flow_func::AttrMap& attrs,
                   google::protobuf::Map<std::string, v1::AttrValue>* out) {
  using Impl = flow_func::AttrValueImpl;
  for (const auto& [name, value] : attrs) {
    const auto* impl = dynamic_cast<const Impl*>(value.get());
    if (impl == nullptr) {
      return Status::NotSupported("init param '" + name +
                                  "' is not a value hflow made; it cannot be "
                                  "sent to a worker process");
    }
    v1::AttrValue& w = (*out)[name];
    std::visit(
        [&w](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            w.set_s(v);
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            Fill(w.mutable_s_list(), v);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            w.set_i(v);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            Fill(w.mutable_i_list(), v);
          } else if constexpr (std::is_same_v<
                                   T, std::vector<std::vector<int64_t>>>) {
            auto* ll = w.mutable_i_list_list();
            for (const auto& l : v) Fill(ll->add_lists(), l);
          } else if constexpr (std::is_same_v<T, float>) {
            w.set_f(v);
          } else if constexpr (std::is_same_v<T, std::vector<float>>) {
            Fill(w.mutable_f_list(), v);
          } else if constexpr (std::is_same_v<T, bool>) {
            w.set_b(v);
          } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
            for (bool b : v) w.mutable_b_list()->add_values(b);
          } else if constexpr (std::is_same_v<T, FlowFunc::TensorDataType>) {
            w.set_dtype(static_cast<int32_t>(v));
          } else {
            for (auto d : v) {
              w.mutable_dtype_list()->add_values(static_cast<int64_t>(d));
            }
          }
        },
        impl->value());
  }
  return Status::OK();
}

Status AttrsFromWire(const google::protobuf::Map<std::string, v1::AttrValue>& w,
                     flow_func::AttrMap* out) {
  using Impl = flow_func::AttrValueImpl;
  using DT = FlowFunc::TensorDataType;
  for (const auto& [name, a] : w) {
    Impl::Value v;
    switch (a.value_case()) {
      case v1::AttrValue::kS:
        v = a.s();
        break;
      case v1::AttrValue::kSList:
        v = std::vector<std::string>(a.s_list().values().begin(),
                                     a.s_list().values().end());
        break;
      case v1::AttrValue::kI:
        v = a.i();
        break;
      case v1::AttrValue::kIList:
        v = std::vector<int64_t>(a.i_list().values().begin(),
                                 a.i_list().values().end());
        break;
      case v1::AttrValue::kIListList: {
        std::vector<std::vector<int64_t>> ll;
        for (const auto& l : a.i_list_list().lists()) {
          ll.emplace_back(l.values().begin(), l.values().end());
        }
        v = std::move(ll);
        break;
      }
      case v1::AttrValue::kF:
        v = a.f();
        break;
      case v1::AttrValue::kFList:
        v = std::vector<float>(a.f_list().values().begin(),
                               a.f_list().values().end());
        break;
      case v1::AttrValue::kB:
        v = a.b();
        break;
      case v1::AttrValue::kBList:
        v = std::vector<bool>(a.b_list().values().begin(),
                              a.b_list().values().end());
        break;
      case v1::AttrValue::kDtype:
        v = static_cast<DT>(a.dtype());
        break;
      case v1::AttrValue::kDtypeList: {
        std::vector<DT> dl;
        for (int64_t d : a.dtype_list().values()) {
          dl.push_back(static_cast<DT>(d));
        }
        v = std::move(dl);
        break;
      }
      default:
        return Status::InvalidArgument("worker protocol: init param '" + name +
                                       "' has no value");
    }
    (*out)[name] = std::make_shared<const Impl>(std::move(v));
  }
  return Status::OK();
}

}  // namespace worker
}  // namespace hflow
