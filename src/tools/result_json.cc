// Result lines of `hflow run` (see result_json.h, Note [Fast JSON]).
//
// Thread-safety: pure functions; no shared state.
#include "tools/result_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tools/input_value.h"
#include "tools/ret_codes.h"

namespace hflow::tools {
namespace {

// Longest text of one element of any dtype: "-2.2250738585072014e-308"
// (24 chars) and "\"-Infinity\"" (11) both fit.
constexpr size_t kMaxElementChars = 26;

// Longest text of one element of `dt`, so a large tensor's buffer is not
// sized (and zeroed) for doubles: "-1.17549435e-38" is the longest float.
size_t MaxChars(DataType dt) {
  switch (dt) {
    case DataType::kBool:
      return 5;
    case DataType::kInt8:
    case DataType::kUint8:
      return 4;
    case DataType::kInt16:
    case DataType::kUint16:
      return 6;
    case DataType::kInt32:
    case DataType::kUint32:
      return 11;
    case DataType::kFloat:
      return 15;
    default:
      return kMaxElementChars;
  }
}

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

char* Literal(char* p, const char* text) {
  size_t n = std::strlen(text);
  std::memcpy(p, text, n);
  return p + n;
}

// NaN and the infinities as JSON strings; nullptr for finite values.
const char* NonFiniteText(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  return nullptr;
}

template <typename T>
char* IntChars(char* p, const uint8_t* src) {
  return std::to_chars(p, p + kMaxElementChars, Load<T>(src)).ptr;
}

// float and double: to_chars without a precision is the shortest text that
// reads back to the same value.
template <typename T>
char* FloatChars(char* p, const uint8_t* src) {
  T v = Load<T>(src);
  if (const char* text = NonFiniteText(v)) return Literal(p, text);
  return std::to_chars(p, p + kMaxElementChars, v).ptr;
}

// float16 and bfloat16: the fewest significant digits that round back to
// the same bits, at least enough to show the integer part without an
// exponent (65504, not 6.55e+04). Half needs at most 5 digits, bf16 4.
template <float (*kToFloat)(uint16_t), uint16_t (*kFromDouble)(double)>
char* SmallFloatChars(char* p, const uint8_t* src) {
  uint16_t bits = Load<uint16_t>(src);
  double v = kToFloat(bits);
  if (const char* text = NonFiniteText(v)) return Literal(p, text);
  char* end = p + kMaxElementChars;
  int digits = 1;
  for (; digits < 9; ++digits) {
    char* q = std::to_chars(p, end, v, std::chars_format::general, digits).ptr;
    double back = 0;
    std::from_chars(p, q, back);
    if (kFromDouble(back) == bits) break;
  }
  double a = std::fabs(v);
  if (a >= 1 && a < 1e16) {
    digits = std::max(digits, static_cast<int>(std::floor(std::log10(a))) + 1);
  }
  return std::to_chars(p, end, v, std::chars_format::general, digits).ptr;
}

char* BoolChars(char* p, const uint8_t* src) {
  return Literal(p, *src ? "true" : "false");
}

using ElementFn = char* (*)(char*, const uint8_t*);

ElementFn ElementFnFor(DataType dt) {
  switch (dt) {
    case DataType::kInt8:
      return IntChars<int8_t>;
    case DataType::kInt16:
      return IntChars<int16_t>;
    case DataType::kInt32:
      return IntChars<int32_t>;
    case DataType::kInt64:
      return IntChars<int64_t>;
    case DataType::kUint8:
      return IntChars<uint8_t>;
    case DataType::kUint16:
      return IntChars<uint16_t>;
    case DataType::kUint32:
      return IntChars<uint32_t>;
    case DataType::kUint64:
      return IntChars<uint64_t>;
    case DataType::kFloat:
      return FloatChars<float>;
    case DataType::kDouble:
      return FloatChars<double>;
    case DataType::kFloat16:
      return SmallFloatChars<HalfToFloat, DoubleToHalf>;
    case DataType::kBf16:
      return SmallFloatChars<Bf16ToFloat, DoubleToBf16>;
    case DataType::kBool:
      return BoolChars;
    default:
      return nullptr;
  }
}

// Appends "v0,v1,..." for every whole element of `tensor`.
void AppendData(const Tensor& tensor, std::string* line) {
  const size_t width = DataTypeSize(tensor.dtype);
  ElementFn fn = ElementFnFor(tensor.dtype);
  if (width == 0 || fn == nullptr) return;
  const size_t n = tensor.data.size() / width;
  const size_t start = line->size();
  // Sized for n elements, the last one may use the whole bound (to_chars
  // below is given kMaxElementChars of room).
  line->resize(start + n * (MaxChars(tensor.dtype) + 1) + kMaxElementChars);
  char* p = line->data() + start;
  const uint8_t* src = tensor.data.data();
  for (size_t i = 0; i < n; ++i, src += width) {
    if (i) *p++ = ',';
    p = fn(p, src);
  }
  line->resize(p - line->data());
}

// A JSON string literal of `s` (quotes, backslashes and control bytes
// escaped).
void AppendJsonString(const std::string& s, std::string* line) {
  *line += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      *line += '\\';
      *line += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      *line += buf;
    } else {
      *line += c;
    }
  }
  *line += '"';
}

}  // namespace

void AppendOutputJson(size_t output, const FlowInfo& info, const Tensor& tensor,
                      std::string* line, const std::string& npy_path) {
  *line += "{\"output\":" + std::to_string(output) +
           ",\"trans_id\":" + std::to_string(info.transaction_id) +
           ",\"ret_code\":" + std::to_string(info.ret_code);
  if (info.ret_code != 0) {
    *line += ",\"ret_name\":";
    AppendJsonString(RetCodeName(info.ret_code), line);
    if (!info.error_node.empty()) {
      *line += ",\"error_node\":";
      AppendJsonString(info.error_node, line);
    }
    if (tensor.data.empty()) {
      *line += '}';
      return;
    }
  }
  *line += ",\"dtype\":\"" + std::string(DataTypeName(tensor.dtype)) +
           "\",\"shape\":" + ShapeText(tensor.shape);
  if (!npy_path.empty()) {
    *line += ",\"npy\":";
    AppendJsonString(npy_path, line);
    *line += '}';
    return;
  }
  *line += ",\"data\":[";
  AppendData(tensor, line);
  *line += "]}";
}

std::string OutputJsonLine(size_t output, uint64_t trans_id, int32_t ret_code,
                           const Tensor& tensor) {
  FlowInfo info;
  info.transaction_id = trans_id;
  info.ret_code = ret_code;
  std::string line;
  AppendOutputJson(output, info, tensor, &line);
  return line;
}

}  // namespace hflow::tools
