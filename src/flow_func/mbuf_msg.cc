// Mbuf-backed FlowMsg/Tensor and their allocator (see mbuf_msg.h).
// Thread-safety: as documented there.
#include "flow_func/mbuf_msg.h"

#include <algorithm>
#include <cstring>

#include "flow_func/flow_func_defines.h"
#include "flow_func/lib/flow_func_internal.h"
#include "util/recycling_allocator.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::MsgType;
using FlowFunc::TensorDataType;

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// The mbuf data part is 64-byte aligned; larger alignments shift the payload
// (recorded in the head, so receivers find it).
uint64_t PayloadOffset(const void* data, uint32_t align) {
  if (align <= 1) return 0;
  auto p = reinterpret_cast<uintptr_t>(data);
  return AlignUp(p, align) - p;
}

uint64_t Slack(uint32_t align) { return align > 64 ? align - 64 : 0; }

Status TooLarge(const char* what) {
  return Status::InvalidArgument(std::string(what) +
                                 ": the shape's size overflows; check the "
                                 "dimensions");
}

}  // namespace

int64_t ElementCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

uint64_t TensorBytes(TensorDataType dtype, int64_t count) {
  if (count <= 0) return 0;
  int64_t bytes = FlowFunc::internal::DataSizeBytes(dtype, count);
  return bytes < 0 ? kTooLarge : static_cast<uint64_t>(bytes);
}

MbufTensor::MbufTensor(services::MbufPtr mbuf, void* data, uint64_t capacity,
                       TensorDataType dtype, std::vector<int64_t> shape)
    : mbuf_(std::move(mbuf)),
      data_(data),
      capacity_(capacity),
      dtype_(dtype),
      shape_(std::move(shape)) {}

int64_t MbufTensor::GetElementCnt() const { return ElementCount(shape_); }

uint64_t MbufTensor::GetDataSize() const {
  return TensorBytes(dtype_, GetElementCnt());
}

int32_t MbufTensor::Reshape(const std::vector<int64_t>& shape) {
  if (ElementCount(shape) != GetElementCnt()) {
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  shape_ = shape;
  // A single-tensor message keeps its shape in the head for transport.
  if (mbuf_->head().msg_type ==
      static_cast<uint16_t>(MsgType::MSG_TYPE_TENSOR_DATA)) {
    mbuf_->head().shape.assign(shape.begin(), shape.end());
  }
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

MbufFlowMsg::MbufFlowMsg(Key, services::MbufPtr mbuf)
    : mbuf_(std::move(mbuf)) {}

std::shared_ptr<MbufFlowMsg> MbufFlowMsg::FromMbuf(services::MbufPtr mbuf) {
  // One block for the message and its count, recycled per thread: every
  // stage of every message makes one (Note [Recycled blocks and their
  // threads] in util/recycling_allocator.h).
  return std::allocate_shared<MbufFlowMsg>(
      util::RecyclingAllocator<MbufFlowMsg>(), Key{}, std::move(mbuf));
}

void MbufFlowMsg::BuildViews() const {
  util::MutexLock lock(views_mu_);
  if (views_built_.load(std::memory_order_relaxed)) return;
  const services::MbufHead& h = mbuf_->head();
  char* base = static_cast<char*>(mbuf_->data()) + h.data_offset;
  uint64_t avail =
      mbuf_->size() > h.data_offset ? mbuf_->size() - h.data_offset : 0;
  tensor_.reset();
  list_.clear();
  switch (static_cast<MsgType>(h.msg_type)) {
    case MsgType::MSG_TYPE_TENSOR_DATA:
      // An empty message (null data) has no tensor, as in GE: GetTensor()
      // is null, so a UDF tells it from a zero-size tensor.
      if (h.null_data) break;
      tensor_ = std::make_unique<MbufTensor>(
          mbuf_, base, avail, static_cast<TensorDataType>(h.dtype),
          services::ToVector(h.shape));
      break;
    case MsgType::MSG_TYPE_TENSOR_LIST:
      for (const auto& d : h.tensor_list) {
        list_.push_back(std::make_unique<MbufTensor>(
            mbuf_, base + d.offset, d.bytes,
            static_cast<TensorDataType>(d.dtype), d.shape));
      }
      break;
    default:
      break;
  }
  views_built_.store(true, std::memory_order_release);
}

FlowFunc::MsgType MbufFlowMsg::GetMsgType() const {
  return static_cast<MsgType>(head().msg_type);
}

void MbufFlowMsg::SetMsgType(MsgType t) {
  head().msg_type = static_cast<uint16_t>(t);
}

const std::vector<FlowFunc::Tensor*> MbufFlowMsg::GetTensorList() const {
  EnsureViews();
  std::vector<FlowFunc::Tensor*> v;
  if (tensor_) v.push_back(tensor_.get());
  for (const auto& t : list_) v.push_back(t.get());
  return v;
}

int32_t MbufFlowMsg::GetRawData(void*& data, uint64_t& size) const {
  // Raw bytes: raw messages, the user's types, and GE's torch plugin's
  // message (type 1023: a runtime tensor descriptor, then the data).
  constexpr uint16_t kTorchTensorMsgType = 1023;
  if (GetMsgType() != MsgType::MSG_TYPE_RAW_MSG &&
      static_cast<uint16_t>(GetMsgType()) != kTorchTensorMsgType &&
      GetMsgType() < MsgType::MSG_TYPE_USER_DEFINE_START) {
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  data = static_cast<char*>(mbuf_->data()) + head().data_offset;
  size = head().shape.empty() ? 0 : static_cast<uint64_t>(head().shape[0]);
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

Status CheckHeadFits(const services::MbufHead& h, uint64_t size) {
  auto claims = [&](const std::string& what, uint64_t bytes) {
    return Status::InvalidArgument(
        "a message whose head says " + what + " of " + std::to_string(bytes) +
        " bytes lies at offset " + std::to_string(h.data_offset) +
        ", but its data part has " + std::to_string(size) +
        " (truncated or corrupt)");
  };
  if (h.data_offset > size) return claims("data", 0);
  const uint64_t avail = size - h.data_offset;
  switch (static_cast<MsgType>(h.msg_type)) {
    case MsgType::MSG_TYPE_TENSOR_DATA: {
      if (h.null_data) return Status::OK();
      const int64_t n = ElementCount(services::ToVector(h.shape));
      const uint64_t bytes =
          n < 0 ? kTooLarge
                : TensorBytes(static_cast<TensorDataType>(h.dtype), n);
      if (bytes > avail) return claims("a tensor", bytes);
      return Status::OK();
    }
    case MsgType::MSG_TYPE_TENSOR_LIST:
      for (const auto& d : h.tensor_list) {
        const int64_t n = ElementCount(d.shape);
        const uint64_t need =
            n < 0 ? kTooLarge
                  : TensorBytes(static_cast<TensorDataType>(d.dtype), n);
        if (need > d.bytes || d.offset > avail || d.bytes > avail - d.offset) {
          return claims("a listed tensor", need);
        }
      }
      return Status::OK();
    default:
      // Raw bytes (GetRawData): the 1-D shape is their count.
      if (!h.shape.empty() &&
          (h.shape[0] < 0 || static_cast<uint64_t>(h.shape[0]) > avail)) {
        return claims("raw data", static_cast<uint64_t>(h.shape[0]));
      }
      return Status::OK();
  }
}

MsgAllocator::MsgAllocator(services::ExchangeService* svc, int32_t device,
                           std::string group, std::string member,
                           MsgLimits limits)
    : svc_(svc),
      device_(device),
      group_(std::move(group)),
      member_(std::move(member)),
      limits_(std::move(limits)) {}

MsgAllocator::MsgAllocator(MbufSource source, int32_t device, MsgLimits limits)
    : svc_(nullptr),
      source_(std::move(source)),
      device_(device),
      limits_(std::move(limits)) {}

// Over the limit is an error at once; a full pool waits (bounded: this
// runs on an executor thread, Note [Waiting for memory] in
// services/memory_group.cc).
Status MsgAllocator::AllocMbuf(uint64_t bytes, services::MbufPtr* out) {
  const std::string where =
      (limits_.node.empty() ? "" : "node '" + limits_.node + "' ") +
      "on device " + std::to_string(device_) + ": a message of " +
      std::to_string(bytes) + " bytes";
  if (bytes > limits_.max_bytes) {
    return Status::InvalidArgument(
        where + " exceeds the max message size of " +
        std::to_string(limits_.max_bytes) +
        " bytes; raise Options::max_message_bytes (hflow run "
        "--max-message-bytes)");
  }
  Status s = svc_ == nullptr
                 ? source_(bytes, limits_.wait_ms, out)
                 : svc_->AllocMbuf(device_, group_, member_, bytes, out,
                                   services::AllocWait{limits_.wait_ms, 0});
  if (s.ok()) return s;
  return s.WithContext(where + ": ");
}

Status MsgAllocator::Copy(const MbufFlowMsg& msg,
                          std::shared_ptr<MbufFlowMsg>* out) {
  services::MbufPtr m;
  if (svc_ == nullptr) {  // a plain copy within the source's memory
    const services::MbufPtr& from = msg.mbuf();
    HFLOW_RETURN_IF_ERROR(AllocMbuf(from->size(), &m));
    m->head() = from->head();
    if (from->size() > 0) std::memcpy(m->data(), from->data(), from->size());
    *out = MbufFlowMsg::FromMbuf(std::move(m));
    return Status::OK();
  }
  HFLOW_RETURN_IF_ERROR(
      svc_->CopyMbuf(msg.mbuf(), device_, group_, member_, &m));
  *out = MbufFlowMsg::FromMbuf(std::move(m));
  return Status::OK();
}

// As ExchangeService::CopyInto: the payload moves to the new block's
// alignment offset; the slack allocated for alignment covers both.
Status MsgAllocator::FromHost(const services::MbufHead& head, const void* data,
                              uint64_t size,
                              std::shared_ptr<MbufFlowMsg>* out) {
  // The head is its sender's word: an alignment hflow never makes (not a
  // power of two, or above 4096) would place the payload off its block.
  if (head.align > 1 &&
      (head.align > 4096 || (head.align & (head.align - 1)) != 0)) {
    return Status::InvalidArgument("a message aligned to " +
                                   std::to_string(head.align) +
                                   " bytes (a power of two up to 4096)");
  }
  const uint64_t from = std::min<uint64_t>(head.data_offset, size);
  const uint64_t n = size - from;
  services::MbufPtr m;
  HFLOW_RETURN_IF_ERROR(AllocMbuf(n + Slack(head.align), &m));
  uint64_t to = 0;
  if (head.align > 1) {
    const auto p = reinterpret_cast<uintptr_t>(m->data());
    to = (head.align - p % head.align) % head.align;
  }
  if (to + n > m->size()) {
    return Status::Internal(
        "FromHost: a block of " + std::to_string(m->size()) + " bytes for " +
        std::to_string(n) + " aligned to " + std::to_string(head.align));
  }
  if (n > 0) {
    const char* src = static_cast<const char*>(data) + from;
    if (svc_ != nullptr) {
      HFLOW_RETURN_IF_ERROR(svc_->WriteMbuf(m, src, n, to));
    } else {
      std::memcpy(static_cast<char*>(m->data()) + to, src, n);
    }
  }
  m->head() = head;
  m->head().data_offset = to;
  *out = MbufFlowMsg::FromMbuf(std::move(m));
  return Status::OK();
}

Status MsgAllocator::AllocTensorMsg(const std::vector<int64_t>& shape,
                                    TensorDataType dtype, uint32_t align,
                                    std::shared_ptr<MbufFlowMsg>* out) {
  int64_t count = ElementCount(shape);
  if (count < 0 || FlowFunc::internal::DataTypeSize(dtype) <= 0) {
    return Status::InvalidArgument("AllocTensorMsg on device " +
                                   std::to_string(device_) +
                                   ": invalid shape or data type");
  }
  uint64_t bytes = TensorBytes(dtype, count);
  if (bytes == kTooLarge) return TooLarge("AllocTensorMsg");
  services::MbufPtr m;
  HFLOW_RETURN_IF_ERROR(AllocMbuf(bytes + Slack(align), &m));
  services::MbufHead& h = m->head();
  h.align = align;
  h.msg_type = static_cast<uint16_t>(MsgType::MSG_TYPE_TENSOR_DATA);
  h.dtype = static_cast<int32_t>(dtype);
  h.shape.assign(shape.begin(), shape.end());
  h.data_offset = PayloadOffset(m->data(), align);
  *out = MbufFlowMsg::FromMbuf(std::move(m));
  return Status::OK();
}

Status MsgAllocator::AllocTensorListMsg(
    const std::vector<std::vector<int64_t>>& shapes,
    const std::vector<TensorDataType>& dtypes, uint32_t align,
    std::shared_ptr<MbufFlowMsg>* out) {
  if (shapes.size() != dtypes.size() || shapes.empty()) {
    return Status::InvalidArgument(
        "AllocTensorListMsg: shapes and data types must be non-empty and of "
        "equal length");
  }
  std::vector<services::TensorDesc> descs;
  uint64_t total = 0;
  uint32_t a = align < 1 ? 1 : align;
  for (size_t i = 0; i < shapes.size(); ++i) {
    int64_t count = ElementCount(shapes[i]);
    if (count < 0 || FlowFunc::internal::DataTypeSize(dtypes[i]) <= 0) {
      return Status::InvalidArgument("AllocTensorListMsg: tensor " +
                                     std::to_string(i) +
                                     " has an invalid shape or data type");
    }
    services::TensorDesc d;
    d.dtype = static_cast<int32_t>(dtypes[i]);
    d.shape = shapes[i];
    d.offset = AlignUp(total, a);
    d.bytes = TensorBytes(dtypes[i], count);
    if (d.bytes == kTooLarge) return TooLarge("AllocTensorListMsg");
    total = d.offset + d.bytes;
    descs.push_back(std::move(d));
  }
  services::MbufPtr m;
  HFLOW_RETURN_IF_ERROR(AllocMbuf(total + Slack(align), &m));
  m->head().msg_type = static_cast<uint16_t>(MsgType::MSG_TYPE_TENSOR_LIST);
  m->head().tensor_list = std::move(descs);
  m->head().data_offset = PayloadOffset(m->data(), align);
  m->head().align = align;
  *out = MbufFlowMsg::FromMbuf(std::move(m));
  return Status::OK();
}

Status MsgAllocator::AllocRawMsg(int64_t size, uint32_t align,
                                 std::shared_ptr<MbufFlowMsg>* out) {
  if (size < 0) {
    return Status::InvalidArgument("AllocRawDataMsg: negative size");
  }
  services::MbufPtr m;
  HFLOW_RETURN_IF_ERROR(
      AllocMbuf(static_cast<uint64_t>(size) + Slack(align), &m));
  m->head().msg_type = static_cast<uint16_t>(MsgType::MSG_TYPE_RAW_MSG);
  m->head().shape = {size};  // the raw size travels as a 1-D shape
  m->head().data_offset = PayloadOffset(m->data(), align);
  m->head().align = align;
  *out = MbufFlowMsg::FromMbuf(std::move(m));
  return Status::OK();
}

Status MsgAllocator::AllocEmptyMsg(MsgType type,
                                   std::shared_ptr<MbufFlowMsg>* out) {
  services::MbufPtr m;
  HFLOW_RETURN_IF_ERROR(AllocMbuf(0, &m));
  m->head().msg_type = static_cast<uint16_t>(type);
  m->head().null_data = true;
  m->head().shape = type == MsgType::MSG_TYPE_TENSOR_DATA ? services::Dims{0}
                                                          : services::Dims{};
  *out = MbufFlowMsg::FromMbuf(std::move(m));
  return Status::OK();
}

}  // namespace flow_func
}  // namespace hflow
