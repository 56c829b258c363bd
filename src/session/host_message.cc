// Host messages and mbufs (see host_message.h).
// Thread-safety: as documented there.
#include "session/host_message.h"

#include <cstring>

#include "flow_func/mbuf_msg.h"

namespace hflow {
namespace session {
namespace {

// Tensors of a list start 64-byte aligned, as the data part does, so each
// tensor's elements are aligned for any dtype.
constexpr uint64_t kListAlign = 64;

uint64_t AlignUp(uint64_t v) {
  return (v + kListAlign - 1) / kListAlign * kListAlign;
}

bool IsRawType(uint16_t type) {
  return type == kMsgTypeRawData || type == kMsgTypeTorchTensor ||
         type >= kMsgTypeUserDefineStart;
}

std::string TypeName(uint16_t type) {
  switch (type) {
    case kMsgTypeTensor:
      return "tensor";
    case kMsgTypeRawData:
      return "raw data";
    case kMsgTypeTensorList:
      return "tensor list";
    default:
      return "type " + std::to_string(type);
  }
}

Status TooLarge(const std::string& where, uint64_t bytes, uint64_t max) {
  return Status::InvalidArgument(
      where + std::to_string(bytes) + " bytes exceed the max message size of " +
      std::to_string(max) +
      " bytes; raise Options::max_message_bytes (hflow run "
      "--max-message-bytes)");
}

Status CheckTensorShape(const Tensor& t, const std::string& where) {
  const size_t es = DataTypeSize(t.dtype);
  const int64_t n = flow_func::ElementCount(t.shape);
  if (es == 0 || n < 0 || uint64_t(n) * es != t.data.size()) {
    return Status::InvalidArgument(
        where + std::to_string(t.data.size()) +
        " data bytes do not match its shape and dtype " +
        DataTypeName(t.dtype));
  }
  return Status::OK();
}

// Bytes of a tensor list's payload: each tensor after the first starts at
// the next kListAlign boundary.
uint64_t ListBytes(const std::vector<Tensor>& tensors) {
  uint64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    total = (i == 0 ? 0 : AlignUp(total)) + tensors[i].data.size();
  }
  return total;
}

}  // namespace

Status CheckTensor(const Tensor& t, uint64_t max_bytes) {
  HFLOW_RETURN_IF_ERROR(CheckTensorShape(t, ""));
  if (t.data.size() > max_bytes) return TooLarge("", t.data.size(), max_bytes);
  return Status::OK();
}

Status CheckView(const TensorView& v, uint64_t max_bytes) {
  const size_t es = DataTypeSize(v.dtype);
  const int64_t n = flow_func::ElementCount(v.shape);
  if (es == 0 || n < 0 || uint64_t(n) * es != v.bytes) {
    return Status::InvalidArgument(std::to_string(v.bytes) +
                                   " view bytes do not match its shape and "
                                   "dtype " +
                                   DataTypeName(v.dtype));
  }
  if (v.data == nullptr && v.bytes > 0) {
    return Status::InvalidArgument("the view has " + std::to_string(v.bytes) +
                                   " bytes at a null address");
  }
  if (v.bytes > max_bytes) return TooLarge("", v.bytes, max_bytes);
  return Status::OK();
}

Status CheckMessage(const Message& m, uint64_t max_bytes,
                    const std::string& where) {
  const std::string type = TypeName(m.msg_type);
  if (m.msg_type > kMsgTypeTensorList && m.msg_type < kMsgTypeUserDefineStart &&
      m.msg_type != kMsgTypeTorchTensor) {
    return Status::InvalidArgument(
        where + "message type " + std::to_string(m.msg_type) +
        " is not a message type: use kMsgTypeTensor (0), kMsgTypeRawData "
        "(1), kMsgTypeTensorList (2), kMsgTypeTorchTensor (1023) or a "
        "user-defined type from " +
        std::to_string(kMsgTypeUserDefineStart));
  }
  if (m.info.user_data.size() > services::kMaxUserData) {
    return Status::InvalidArgument(where + "user data of " +
                                   std::to_string(m.info.user_data.size()) +
                                   " bytes; at most 64");
  }
  if (m.empty) {
    if (!m.tensors.empty() || !m.raw.empty()) {
      return Status::InvalidArgument(
          where + "an empty message carries no tensors or bytes");
    }
    return Status::OK();
  }
  if (IsRawType(m.msg_type)) {
    if (!m.tensors.empty()) {
      return Status::InvalidArgument(where + "a " + type +
                                     " message carries bytes (raw), not "
                                     "tensors");
    }
    if (m.raw.size() > max_bytes)
      return TooLarge(where, m.raw.size(), max_bytes);
    return Status::OK();
  }
  if (!m.raw.empty()) {
    return Status::InvalidArgument(where + "a " + type +
                                   " message carries tensors, not raw bytes");
  }
  if (m.msg_type == kMsgTypeTensor && m.tensors.size() != 1) {
    return Status::InvalidArgument(
        where + "a tensor message carries exactly one tensor (it has " +
        std::to_string(m.tensors.size()) +
        "); use kMsgTypeTensorList for several, or `empty` for none");
  }
  if (m.msg_type == kMsgTypeTensorList && m.tensors.empty()) {
    return Status::InvalidArgument(
        where +
        "a tensor list message carries at least one tensor; use "
        "`empty` for none");
  }
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    Status s = CheckTensorShape(m.tensors[i], "");
    if (!s.ok()) {
      return s.WithContext(m.tensors.size() > 1
                               ? where + "tensor " + std::to_string(i) + ": "
                               : where);
    }
  }
  const uint64_t total = ListBytes(m.tensors);
  if (total > max_bytes) return TooLarge(where, total, max_bytes);
  return Status::OK();
}

uint64_t PayloadBytes(const FeedPart& part) {
  if (part.tensor != nullptr) return part.tensor->data.size();
  if (part.view != nullptr) return part.view->bytes;
  const Message& m = *part.message;
  if (m.empty) return 0;
  if (IsRawType(m.msg_type)) return m.raw.size();
  return ListBytes(m.tensors);
}

namespace {

Status WriteBytes(services::ExchangeService* svc, const services::MbufPtr& m,
                  const std::vector<uint8_t>& bytes, uint64_t offset) {
  if (bytes.empty()) return Status::OK();
  return svc->WriteMbuf(m, bytes.data(), bytes.size(), offset);
}

Status WriteMessagePayload(services::ExchangeService* svc, const Message& msg,
                           const services::MbufPtr& m) {
  services::MbufHead& h = m->head();
  h.msg_type = msg.msg_type;
  if (msg.empty) {
    h.null_data = true;
    // As the UDF side's empty messages: a tensor of no elements.
    if (msg.msg_type == kMsgTypeTensor) h.shape = {0};
    return Status::OK();
  }
  if (IsRawType(msg.msg_type)) {
    h.shape = {static_cast<int64_t>(msg.raw.size())};
    return WriteBytes(svc, m, msg.raw, 0);
  }
  if (msg.msg_type == kMsgTypeTensor) {
    const Tensor& t = msg.tensors[0];
    h.dtype = static_cast<int32_t>(t.dtype);
    h.shape.assign(t.shape.begin(), t.shape.end());
    return WriteBytes(svc, m, t.data, 0);
  }
  h.tensor_list.clear();
  uint64_t offset = 0;
  for (size_t i = 0; i < msg.tensors.size(); ++i) {
    const Tensor& t = msg.tensors[i];
    services::TensorDesc d;
    d.dtype = static_cast<int32_t>(t.dtype);
    d.shape = t.shape;
    d.offset = i == 0 ? 0 : AlignUp(offset);
    d.bytes = t.data.size();
    HFLOW_RETURN_IF_ERROR(WriteBytes(svc, m, t.data, d.offset));
    offset = d.offset + d.bytes;
    h.tensor_list.push_back(std::move(d));
  }
  return Status::OK();
}

}  // namespace

Status WritePart(services::ExchangeService* svc, const FeedPart& part,
                 uint64_t trans, const services::MbufPtr& m) {
  services::MbufHead& h = m->head();
  if (part.tensor != nullptr) {
    const Tensor& t = *part.tensor;
    HFLOW_RETURN_IF_ERROR(WriteBytes(svc, m, t.data, 0));
    h.msg_type = kMsgTypeTensor;
    h.dtype = static_cast<int32_t>(t.dtype);
    h.shape.assign(t.shape.begin(), t.shape.end());
  } else if (part.view != nullptr) {
    const TensorView& v = *part.view;
    // A zero-copy mbuf holds the view's bytes already.
    if (v.bytes > 0 && m->data() != v.data) {
      HFLOW_RETURN_IF_ERROR(svc->WriteMbuf(m, v.data, v.bytes, 0));
    }
    h.msg_type = kMsgTypeTensor;
    h.dtype = static_cast<int32_t>(v.dtype);
    h.shape.assign(v.shape.begin(), v.shape.end());
  } else {
    HFLOW_RETURN_IF_ERROR(WriteMessagePayload(svc, *part.message, m));
  }
  const FlowInfo& info = part.Info();
  h.trans_id = trans;
  h.flags = info.flags;
  h.start_time = info.start_time;
  h.end_time = info.end_time;
  // A message fed with a ret code reaches its UDF as a failed input would.
  h.ret_code = part.message != nullptr ? info.ret_code : 0;
  return h.SetUserData(info.user_data.data(), info.user_data.size());
}

void ReadFlowInfo(const services::MbufHead& h, FlowInfo* info) {
  info->transaction_id = h.trans_id;
  info->start_time = h.start_time;
  info->end_time = h.end_time;
  info->flags = h.flags;
  info->ret_code = h.ret_code;
  info->user_data.assign(h.user_data, h.user_data + h.user_data_len);
}

namespace {

Status ReadBytes(services::ExchangeService* svc, const services::MbufPtr& m,
                 uint64_t offset, uint64_t bytes, std::vector<uint8_t>* out) {
  out->resize(bytes);  // overwritten below
  if (bytes == 0) return Status::OK();
  // Bounds-checked: a head claiming more than the mbuf holds is an error.
  return svc->ReadMbuf(m, out->data(), bytes, m->head().data_offset + offset);
}

// `shape`: the head's dims or a tensor list entry's.
template <typename Shape>
Status ReadOneTensor(services::ExchangeService* svc, const services::MbufPtr& m,
                     int32_t dtype, const Shape& shape, uint64_t offset,
                     Tensor* out) {
  out->dtype = static_cast<DataType>(dtype);
  out->shape.assign(shape.begin(), shape.end());
  const int64_t n = flow_func::ElementCount(out->shape);
  const uint64_t bytes = n < 0 ? 0 : uint64_t(n) * DataTypeSize(out->dtype);
  return ReadBytes(svc, m, offset, bytes, &out->data);
}

}  // namespace

Status ReadTensor(services::ExchangeService* svc, const services::MbufPtr& m,
                  Tensor* out) {
  const services::MbufHead& h = m->head();
  if (h.null_data || h.ret_code != 0) {
    *out = Tensor{};
    out->shape = {0};
    out->data.clear();
    return Status::OK();
  }
  if (IsRawType(h.msg_type)) {
    out->dtype = DataType::kUint8;
    const int64_t size = h.shape.empty() ? 0 : h.shape[0];
    out->shape = {size};
    return ReadBytes(svc, m, 0, uint64_t(size), &out->data);
  }
  if (h.msg_type == kMsgTypeTensorList) {
    return Status::InvalidArgument(
        "the output is a tensor list message (" +
        std::to_string(h.tensor_list.size()) +
        " tensors), which FetchData cannot return as one tensor; fetch it "
        "with Session::FetchMessages");
  }
  return ReadOneTensor(svc, m, h.dtype, h.shape, 0, out);
}

Status ReadView(services::ExchangeService* svc, const services::MbufPtr& m,
                TensorView* out) {
  const services::MbufHead& h = m->head();
  *out = TensorView{};
  if (h.null_data || h.ret_code != 0) {
    out->shape = {0};
    return Status::OK();
  }
  if (h.msg_type == kMsgTypeTensorList) {
    Tensor unused;
    return ReadTensor(svc, m, &unused);  // its error
  }
  if (IsRawType(h.msg_type)) {
    out->dtype = DataType::kUint8;
    out->shape = {h.shape.empty() ? 0 : h.shape[0]};
  } else {
    out->dtype = static_cast<DataType>(h.dtype);
    out->shape.assign(h.shape.begin(), h.shape.end());
  }
  const int64_t n = flow_func::ElementCount(out->shape);
  out->bytes = n < 0 ? 0 : uint64_t(n) * DataTypeSize(out->dtype);
  if (out->bytes == 0) return Status::OK();
  if (h.data_offset > m->size() || out->bytes > m->size() - h.data_offset) {
    return Status::InvalidArgument(
        "the message's head claims " + std::to_string(out->bytes) +
        " bytes at offset " + std::to_string(h.data_offset) + " of a " +
        std::to_string(m->size()) + "-byte data part");
  }
  if (svc->runtime()->HostAccessible(m->device())) {
    const void* p = static_cast<const char*>(m->data()) + h.data_offset;
    out->data = p;
    out->keep = std::shared_ptr<const void>(m, p);  // keeps the message
    return Status::OK();
  }
  auto copy = std::make_shared<std::vector<uint8_t>>();
  HFLOW_RETURN_IF_ERROR(ReadBytes(svc, m, 0, out->bytes, copy.get()));
  out->data = copy->data();
  out->keep = std::move(copy);
  return Status::OK();
}

Status ReadMessage(services::ExchangeService* svc, const services::MbufPtr& m,
                   Message* out) {
  const services::MbufHead& h = m->head();
  out->msg_type = h.msg_type;
  out->empty = h.null_data;
  ReadFlowInfo(h, &out->info);
  out->info.error_node.clear();
  out->raw.clear();
  if (h.null_data || h.ret_code != 0) {
    out->tensors.clear();
    return Status::OK();
  }
  if (IsRawType(h.msg_type)) {
    out->tensors.clear();
    const int64_t size = h.shape.empty() ? 0 : h.shape[0];
    return ReadBytes(svc, m, 0, uint64_t(size), &out->raw);
  }
  if (h.msg_type == kMsgTypeTensorList) {
    out->tensors.resize(h.tensor_list.size());
    for (size_t i = 0; i < h.tensor_list.size(); ++i) {
      const services::TensorDesc& d = h.tensor_list[i];
      HFLOW_RETURN_IF_ERROR(
          ReadOneTensor(svc, m, d.dtype, d.shape, d.offset, &out->tensors[i]));
    }
    return Status::OK();
  }
  out->tensors.resize(1);
  return ReadOneTensor(svc, m, h.dtype, h.shape, 0, &out->tensors[0]);
}

}  // namespace session

Status FlowInfo::SetUserData(const void* data, size_t size, size_t offset) {
  if (offset > services::kMaxUserData ||
      size > services::kMaxUserData - offset) {
    return Status::InvalidArgument(
        "FlowInfo::SetUserData: " + std::to_string(size) + " bytes at offset " +
        std::to_string(offset) + " exceed the 64 bytes of user data");
  }
  if (data == nullptr && size > 0) {
    return Status::InvalidArgument("FlowInfo::SetUserData: null data");
  }
  if (user_data.size() < offset + size) user_data.resize(offset + size);
  if (size > 0) std::memcpy(user_data.data() + offset, data, size);
  return Status::OK();
}

Status FlowInfo::GetUserData(void* data, size_t size, size_t offset) const {
  if (offset > services::kMaxUserData ||
      size > services::kMaxUserData - offset) {
    return Status::InvalidArgument(
        "FlowInfo::GetUserData: " + std::to_string(size) + " bytes at offset " +
        std::to_string(offset) + " exceed the 64 bytes of user data");
  }
  if (data == nullptr && size > 0) {
    return Status::InvalidArgument("FlowInfo::GetUserData: null data");
  }
  if (offset + size > user_data.size()) {
    return Status::InvalidArgument(
        "FlowInfo::GetUserData: " + std::to_string(size) + " bytes at offset " +
        std::to_string(offset) + " go beyond the " +
        std::to_string(user_data.size()) + " bytes of user data set");
  }
  if (size > 0) std::memcpy(data, user_data.data() + offset, size);
  return Status::OK();
}

}  // namespace hflow
