// Torch messages (torch_msg.h).
//
// Thread-safety: reentrant.
#include "model/torch_msg.h"

#include <cstdint>
#include <cstring>

#include "model/ir.h"

namespace hflow {
namespace model {
namespace {

constexpr int kMaxDims = 32;

// GE's RuntimeTensorDesc, little-endian as the plugin packs it.
struct RuntimeTensorDesc {
  uint64_t data_addr;
  int64_t data_offset_size;
  int64_t dtype;
  int64_t shape[kMaxDims + 1];  // shape[0]: the rank
  int64_t original_shape[kMaxDims + 1];
  int64_t format;
  int64_t sub_format;
  uint64_t data_size;
  uint8_t reserved[448];
};
static_assert(sizeof(RuntimeTensorDesc) == 1024,
              "GE's descriptor is 1024 bytes");

constexpr int64_t kFormatNd = 2;

}  // namespace

bool IsTorchMsg(const FlowFunc::FlowMsg& m) {
  return static_cast<uint16_t>(m.GetMsgType()) == kTorchTensorMsgType;
}

std::string ViewTorchMsg(const FlowFunc::FlowMsg& m, TensorView* out) {
  void* data = nullptr;
  uint64_t size = 0;
  if (m.GetRawData(data, size) != 0 || data == nullptr) {
    return "a torch tensor message without bytes";
  }
  if (size < sizeof(RuntimeTensorDesc)) {
    return "a torch tensor message of " + std::to_string(size) +
           " bytes, less than its 1024-byte descriptor";
  }
  RuntimeTensorDesc d;
  std::memcpy(&d, data, sizeof d);
  const int64_t rank = d.shape[0];
  if (rank < 0 || rank > kMaxDims) {
    return "a torch tensor message of rank " + std::to_string(rank);
  }
  out->dtype = static_cast<DataType>(d.dtype);
  out->dims.assign(d.shape + 1, d.shape + 1 + rank);
  const size_t es = ElementSize(out->dtype);
  int64_t n = 1;
  for (int64_t x : out->dims) {
    if (x < 0 || (x > 0 && n > INT64_MAX / x))
      return "a torch tensor message with bad dims";
    n *= x;
  }
  if (es == 0) return "a torch tensor message of an unsupported dtype";
  const uint64_t want = static_cast<uint64_t>(n) * es;
  if (d.data_size != want || size - sizeof d < want) {
    return "a torch tensor message whose " + std::to_string(size - sizeof d) +
           " data bytes do not hold " + DataTypeName(out->dtype) +
           ShapeText(out->dims);
  }
  out->data = static_cast<char*>(data) + sizeof d;
  return "";
}

size_t TorchMsgSize(size_t data_bytes) {
  return sizeof(RuntimeTensorDesc) + data_bytes;
}

void WriteTorchMsg(const OutputTensor& t, FlowFunc::FlowMsg* raw) {
  void* data = nullptr;
  uint64_t size = 0;
  (void)raw->GetRawData(data, size);
  RuntimeTensorDesc d;
  std::memset(&d, 0, sizeof d);
  char* payload = static_cast<char*>(data) + sizeof d;
  d.data_addr = reinterpret_cast<uint64_t>(payload);
  d.dtype = static_cast<int64_t>(t.dtype);
  d.shape[0] = static_cast<int64_t>(t.dims.size());
  for (size_t i = 0; i < t.dims.size() && i < kMaxDims; ++i) {
    d.shape[i + 1] = t.dims[i];
  }
  std::memcpy(d.original_shape, d.shape, sizeof d.shape);
  d.format = kFormatNd;
  d.data_size = t.bytes;
  std::memcpy(data, &d, sizeof d);
  if (t.bytes > 0) std::memcpy(payload, t.data, t.bytes);
  raw->SetMsgType(static_cast<FlowFunc::MsgType>(kTorchTensorMsgType));
}

}  // namespace model
}  // namespace hflow
