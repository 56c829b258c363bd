// `hflow run` input values (see input_value.h). Errors use the wording of
// hflow's config parsers (util/json_fields.h): "<source>: <part>: <what is
// wrong>; <what to do>", the source being the input as typed ("--input
// 'a=int32:1'") and the part "dtype", "shape" or "values".
//
// Thread-safety: pure functions; no shared state.
#include "tools/input_value.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "tools/npy_file.h"
#include "util/json_fields.h"

namespace hflow::tools {
namespace {

constexpr char kForms[] =
    "write DTYPE:v1,v2,..., DTYPE[d0,d1,...]:v1,... or @file.npy";
constexpr char kDtypes[] =
    "int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, "
    "bfloat16, float32 (float), float64 (double), bool";

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return parts;
}

// Rounds `v` to a 16-bit float with `mant` mantissa bits and exponent bias
// `bias` (half: 10/15, bfloat16: 7/127), nearest-even. Working from double
// avoids the double rounding of going through float first.
uint16_t RoundToSmallFloat(double v, int mant, int bias) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  uint16_t inf = static_cast<uint16_t>((2 * bias + 1) << mant);
  if (std::isnan(v)) return sign | inf | static_cast<uint16_t>(1 << (mant - 1));
  double a = std::fabs(v);
  if (std::isinf(a)) return sign | inf;
  int e = 0;
  std::frexp(a, &e);
  int lead = std::max(e - 1, 1 - bias);  // subnormals share the min exponent
  double one = std::ldexp(1.0, mant);
  double q = std::nearbyint(std::ldexp(a, mant - lead));  // exact scaling
  if (q >= 2 * one) {  // rounded up into the next binade
    ++lead;
    q = one;
  }
  if (q < one) return sign | static_cast<uint16_t>(q);  // subnormal or zero
  if (lead > bias) return sign | inf;
  return sign | static_cast<uint16_t>(((lead + bias) << mant) |
                                      (static_cast<uint32_t>(q - one)));
}

double SmallFloatToDouble(uint16_t b, int mant, int bias) {
  int ebits = 15 - mant;
  int exp = (b >> mant) & ((1 << ebits) - 1);
  uint32_t m = b & ((1u << mant) - 1);
  double sign = (b & 0x8000) ? -1.0 : 1.0;
  if (exp == (1 << ebits) - 1) {
    return m ? std::numeric_limits<double>::quiet_NaN()
             : sign * std::numeric_limits<double>::infinity();
  }
  if (exp == 0) return sign * std::ldexp(m, 1 - bias - mant);
  return sign * std::ldexp(m + (1u << mant), exp - bias - mant);
}

template <typename T>
void Append(std::vector<uint8_t>* data, T v) {
  size_t at = data->size();
  data->resize(at + sizeof(T));
  std::memcpy(data->data() + at, &v, sizeof(T));
}

// Parses one integer that must fit T exactly.
template <typename T>
bool ParseInt(const std::string& s, std::vector<uint8_t>* data) {
  // strtoull accepts "-1" and wraps it; a negative is never unsigned.
  if (s.empty() || (std::is_unsigned_v<T> && s[0] == '-')) return false;
  using Wide =
      std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
  errno = 0;
  char* end = nullptr;
  Wide v;
  if constexpr (std::is_signed_v<T>) {
    v = std::strtoll(s.c_str(), &end, 10);
  } else {
    v = std::strtoull(s.c_str(), &end, 10);
  }
  // In range for T exactly when the value survives the narrowing.
  if (errno || *end || static_cast<Wide>(static_cast<T>(v)) != v) return false;
  Append<T>(data, static_cast<T>(v));
  return true;
}

// Parses one decimal (or inf/nan) into `dt`'s float format; finite values
// that overflow the format are refused instead of becoming infinity.
bool ParseFloat(const std::string& s, DataType dt, std::vector<uint8_t>* data) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  if (dt == DataType::kFloat) {
    float v = std::strtof(s.c_str(), &end);
    if (*end || (errno == ERANGE && std::isinf(v))) return false;
    Append<float>(data, v);
    return true;
  }
  double v = std::strtod(s.c_str(), &end);
  if (*end || (errno == ERANGE && std::isinf(v))) return false;
  if (dt == DataType::kDouble) {
    Append<double>(data, v);
    return true;
  }
  bool half = dt == DataType::kFloat16;
  uint16_t bits =
      half ? RoundToSmallFloat(v, 10, 15) : RoundToSmallFloat(v, 7, 127);
  double back = half ? HalfToFloat(bits) : Bf16ToFloat(bits);
  if (std::isinf(back) && !std::isinf(v)) return false;
  Append<uint16_t>(data, bits);
  return true;
}

bool ParseBool(const std::string& s, std::vector<uint8_t>* data) {
  bool value = s == "true" || s == "True" || s == "1";
  if (!value && s != "false" && s != "False" && s != "0") return false;
  data->push_back(value ? 1 : 0);
  return true;
}

// Parser of each integer dtype.
struct IntCodec {
  DataType dt;
  bool (*parse)(const std::string&, std::vector<uint8_t>*);
};
constexpr IntCodec kIntCodecs[] = {{DataType::kInt8, ParseInt<int8_t>},
                                   {DataType::kInt16, ParseInt<int16_t>},
                                   {DataType::kInt32, ParseInt<int32_t>},
                                   {DataType::kInt64, ParseInt<int64_t>},
                                   {DataType::kUint8, ParseInt<uint8_t>},
                                   {DataType::kUint16, ParseInt<uint16_t>},
                                   {DataType::kUint32, ParseInt<uint32_t>},
                                   {DataType::kUint64, ParseInt<uint64_t>}};

const IntCodec* FindIntCodec(DataType dt) {
  for (const IntCodec& c : kIntCodecs) {
    if (c.dt == dt) return &c;
  }
  return nullptr;
}

bool ParseElement(const std::string& s, DataType dt,
                  std::vector<uint8_t>* data) {
  if (const IntCodec* c = FindIntCodec(dt)) return c->parse(s, data);
  if (dt == DataType::kBool) return ParseBool(s, data);
  return ParseFloat(s, dt, data);
}

}  // namespace

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? "," : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

Status ParseShape(const std::string& text, std::vector<int64_t>* shape) {
  std::string inner = Trim(text.substr(1, text.size() - 2));
  shape->clear();
  if (inner.empty()) return Status::OK();  // [] is a scalar
  for (const std::string& d : Split(inner, ',')) {
    char* end = nullptr;
    errno = 0;
    long long v = d.empty() ? -1 : std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || errno || *end || v < 0) {
      return Status::InvalidArgument("dimension '" + d + "' in " + text +
                                     " is not a non-negative integer; write "
                                     "sizes such as [2,3]");
    }
    shape->push_back(v);
  }
  return Status::OK();
}

int64_t ShapeElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

namespace {

// DTYPE[...]:values; `f` names the input in errors.
Status ParseLiteral(const util::JsonFields& f, const std::string& text,
                    Tensor* out) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) {
    return f.Error("", "no ':' between the dtype and the values", kForms);
  }
  std::string spec = Trim(text.substr(0, colon));
  std::string name = spec;
  bool has_shape = false;
  size_t bracket = spec.find('[');
  if (bracket != std::string::npos) {
    if (spec.back() != ']') {
      return f.Error("shape", "'" + spec.substr(bracket) + "' is not closed",
                     "write the shape as [d0,d1,...]");
    }
    Status s = ParseShape(spec.substr(bracket), &out->shape);
    if (!s.ok()) return f.Error("shape", s.message(), "");
    name = Trim(spec.substr(0, bracket));
    has_shape = true;
  }
  if (!ParseInputDataType(name, &out->dtype)) {
    return f.Error("dtype", "unknown dtype '" + name + "'",
                   std::string("use one of ") + kDtypes);
  }
  std::string body = Trim(text.substr(colon + 1));
  std::vector<std::string> values;
  if (!body.empty()) values = Split(body, ',');
  out->data.clear();
  const std::string dtype = DataTypeName(out->dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!ParseElement(values[i], out->dtype, &out->data)) {
      return f.Error("values",
                     "bad " + dtype + " value '" + values[i] +
                         "' at position " + std::to_string(i + 1) +
                         " (not a number, or out of range)",
                     "write " + dtype + " values separated by commas");
    }
  }
  if (!has_shape) {
    out->shape = {static_cast<int64_t>(values.size())};
  } else if (ShapeElements(out->shape) < 0) {
    return f.Error(
        "shape",
        ShapeText(out->shape) + " has more elements than fit in memory",
        "check the dimensions");
  } else if (ShapeElements(out->shape) != static_cast<int64_t>(values.size())) {
    return f.Error("values",
                   "shape " + ShapeText(out->shape) + " needs " +
                       std::to_string(ShapeElements(out->shape)) +
                       " values, got " + std::to_string(values.size()),
                   "give one value per element");
  }
  return Status::OK();
}

Status ParseValue(const util::JsonFields& f, const std::string& text,
                  Tensor* out) {
  if (!text.empty() && text[0] == '@') {
    if (text.size() == 1) {
      return f.Error("", "'@' names no file", "write @path/to/file.npy");
    }
    // npy_file.h's messages name the file and what is wrong with it.
    Status s = LoadNpyFile(text.substr(1), out);
    return s.ok() ? s : f.Error("", s.message(), "");
  }
  return ParseLiteral(f, text, out);
}

}  // namespace

uint16_t FloatToHalf(float f) { return RoundToSmallFloat(f, 10, 15); }
uint16_t DoubleToHalf(double d) { return RoundToSmallFloat(d, 10, 15); }
uint16_t DoubleToBf16(double d) { return RoundToSmallFloat(d, 7, 127); }
float HalfToFloat(uint16_t h) {
  return static_cast<float>(SmallFloatToDouble(h, 10, 15));
}
uint16_t FloatToBf16(float f) { return RoundToSmallFloat(f, 7, 127); }
float Bf16ToFloat(uint16_t b) {
  return static_cast<float>(SmallFloatToDouble(b, 7, 127));
}

bool ParseInputDataType(const std::string& name, DataType* out) {
  if (ParseDataTypeName(name, out)) return true;
  static const std::pair<const char*, DataType> kAliases[] = {
      {"bf16", DataType::kBf16},
      {"fp16", DataType::kFloat16},
      {"fp32", DataType::kFloat},
      {"fp64", DataType::kDouble},
      {"bool_", DataType::kBool}};
  for (const auto& [alias, dt] : kAliases) {
    if (name == alias) {
      *out = dt;
      return true;
    }
  }
  return false;
}

Status ParseInputValue(const std::string& text, Tensor* out) {
  return ParseValue(util::JsonFields("input value '" + text + "'"), text, out);
}

Status ParseInputArg(const std::string& arg, std::string* name, Tensor* out) {
  // The whole argument names the input: it is what the user typed.
  const util::JsonFields f("--input '" + arg + "'");
  size_t eq = arg.find('=');
  if (eq == std::string::npos || Trim(arg.substr(0, eq)).empty()) {
    return f.Error("", "expected NAME=VALUE",
                   "write e.g. a=int32:1,2,3 or a=@a.npy");
  }
  *name = Trim(arg.substr(0, eq));
  return ParseValue(f, arg.substr(eq + 1), out);
}

}  // namespace hflow::tools
