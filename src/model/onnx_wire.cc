// SplitInitializerData (onnx_wire.h).
//
// Thread-safety: reentrant.
#include "model/onnx_wire.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <cstdint>

namespace hflow {
namespace model {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

constexpr uint32_t kGraph = onnx::ModelProto::kGraphFieldNumber;
constexpr uint32_t kInitializer = onnx::GraphProto::kInitializerFieldNumber;
constexpr uint32_t kRawData = onnx::TensorProto::kRawDataFieldNumber;

// One field of a message: offsets into the message's bytes.
struct Field {
  uint32_t number = 0;
  bool length_delimited = false;
  size_t begin = 0;    // its tag's first byte
  size_t payload = 0;  // a length-delimited field's payload
  size_t end = 0;      // one past it
};

// The fields of one serialized message, in order.
class Fields {
 public:
  Fields(const char* data, size_t size)
      : size_(size),
        in_(reinterpret_cast<const uint8_t*>(data), static_cast<int>(size)) {}

  // The next field; false at the end of the message and on bytes the walk
  // does not expect (then bad()).
  bool Next(Field* f) {
    const size_t at = static_cast<size_t>(in_.CurrentPosition());
    if (at == size_) return false;
    const uint32_t tag = in_.ReadTag();
    f->number = WireFormatLite::GetTagFieldNumber(tag);
    if (tag == 0 || f->number == 0) return Fail();
    f->begin = at;
    f->length_delimited = false;
    switch (WireFormatLite::GetTagWireType(tag)) {
      case WireFormatLite::WIRETYPE_VARINT: {
        uint64_t v = 0;
        if (!in_.ReadVarint64(&v)) return Fail();
        break;
      }
      case WireFormatLite::WIRETYPE_FIXED64:
        if (!in_.Skip(8)) return Fail();
        break;
      case WireFormatLite::WIRETYPE_FIXED32:
        if (!in_.Skip(4)) return Fail();
        break;
      case WireFormatLite::WIRETYPE_LENGTH_DELIMITED: {
        uint32_t len = 0;
        if (!in_.ReadVarint32(&len)) return Fail();
        f->payload = static_cast<size_t>(in_.CurrentPosition());
        if (len > size_ - f->payload || !in_.Skip(static_cast<int>(len))) {
          return Fail();
        }
        f->length_delimited = true;
        break;
      }
      default:  // groups: no ONNX message has them
        return Fail();
    }
    f->end = static_cast<size_t>(in_.CurrentPosition());
    return true;
  }

  bool bad() const { return bad_; }

 private:
  bool Fail() {
    bad_ = true;
    return false;
  }

  size_t size_;
  CodedInputStream in_;
  bool bad_ = false;
};

void AppendVarint(uint64_t v, std::string* out) {
  uint8_t buf[10];
  const uint8_t* end = CodedOutputStream::WriteVarint64ToArray(v, buf);
  out->append(reinterpret_cast<const char*>(buf), end - buf);
}

void AppendLengthDelimited(uint32_t number, const std::string& payload,
                           std::string* out) {
  AppendVarint(WireFormatLite::MakeTag(
                   number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED),
               out);
  AppendVarint(payload.size(), out);
  out->append(payload);
}

// The TensorProto at [data + begin, data + end) into *out, its raw_data
// payload replaced by one byte; where the payload lies into *span (the last
// one: protobuf keeps the last of a repeated singular field). One byte, not
// none: ONNX's checker tells a tensor's value field by its being non-empty,
// and the stand-in must pass or fail it as the payload would.
bool SplitTensor(const char* data, size_t begin, size_t end, std::string* out,
                 WireSpan* span) {
  Fields fields(data + begin, end - begin);
  Field f;
  while (fields.Next(&f)) {
    if (f.number == kRawData && f.length_delimited) {
      span->present = true;
      span->offset = begin + f.payload;
      span->size = f.end - f.payload;
      continue;
    }
    out->append(data + begin + f.begin, f.end - f.begin);
  }
  if (span->present) {
    AppendLengthDelimited(kRawData, std::string(span->size > 0 ? 1 : 0, '\0'),
                          out);
  }
  return !fields.bad();
}

// The GraphProto at [data + begin, data + end), its initializers split.
bool SplitGraph(const char* data, size_t begin, size_t end, std::string* out,
                std::vector<WireSpan>* spans) {
  Fields fields(data + begin, end - begin);
  Field f;
  std::string tensor;
  while (fields.Next(&f)) {
    if (f.number == kInitializer && f.length_delimited) {
      tensor.clear();
      WireSpan span;
      if (!SplitTensor(data, begin + f.payload, begin + f.end, &tensor,
                       &span)) {
        return false;
      }
      AppendLengthDelimited(kInitializer, tensor, out);
      spans->push_back(span);
      continue;
    }
    out->append(data + begin + f.begin, f.end - f.begin);
  }
  return !fields.bad();
}

}  // namespace

bool SplitInitializerData(const char* data, size_t size, std::string* skeleton,
                          std::vector<WireSpan>* spans) {
  skeleton->clear();
  spans->clear();
  if (size == 0 || size >= INT_MAX) return false;
  Fields fields(data, size);
  Field f;
  std::string graph;
  while (fields.Next(&f)) {
    // A model may hold its graph in several fields: protobuf merges them,
    // the initializers in the order met, as the spans are.
    if (f.number == kGraph && f.length_delimited) {
      graph.clear();
      if (!SplitGraph(data, f.payload, f.end, &graph, spans)) return false;
      AppendLengthDelimited(kGraph, graph, skeleton);
      continue;
    }
    skeleton->append(data + f.begin, f.end - f.begin);
  }
  return !fields.bad();
}

}  // namespace model
}  // namespace hflow
