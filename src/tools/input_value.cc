// `hflow run` input values and output lines (see input_value.h).
//
// The host is assumed little-endian (x86-64, aarch64): tensors hold native
// bytes, so '<' .npy data is copied as is and '>' data is refused rather
// than byte-swapped silently.
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

namespace hflow::tools {
namespace {

constexpr char kForms[] =
    "expected DTYPE:v1,v2,..., DTYPE[d0,d1,...]:v1,... or @file.npy";
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

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
std::string IntText(const uint8_t* p) {
  return std::to_string(Load<T>(p));
}

// Parser and printer of each integer dtype, so one table serves both ways.
struct IntCodec {
  DataType dt;
  bool (*parse)(const std::string&, std::vector<uint8_t>*);
  std::string (*print)(const uint8_t*);
};
constexpr IntCodec kIntCodecs[] = {
    {DataType::kInt8, ParseInt<int8_t>, IntText<int8_t>},
    {DataType::kInt16, ParseInt<int16_t>, IntText<int16_t>},
    {DataType::kInt32, ParseInt<int32_t>, IntText<int32_t>},
    {DataType::kInt64, ParseInt<int64_t>, IntText<int64_t>},
    {DataType::kUint8, ParseInt<uint8_t>, IntText<uint8_t>},
    {DataType::kUint16, ParseInt<uint16_t>, IntText<uint16_t>},
    {DataType::kUint32, ParseInt<uint32_t>, IntText<uint32_t>},
    {DataType::kUint64, ParseInt<uint64_t>, IntText<uint64_t>}};

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

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? "," : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

// "[d0,d1,...]" (the brackets included) into `shape`.
Status ParseShape(const std::string& text, std::vector<int64_t>* shape) {
  std::string inner = Trim(text.substr(1, text.size() - 2));
  shape->clear();
  if (inner.empty()) return Status::OK();  // [] is a scalar
  for (const std::string& d : Split(inner, ',')) {
    char* end = nullptr;
    errno = 0;
    long long v = d.empty() ? -1 : std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || errno || *end || v < 0) {
      return Status::InvalidArgument("shape dimension '" + d + "' in " + text +
                                     " is not a non-negative integer");
    }
    shape->push_back(v);
  }
  return Status::OK();
}

// Elements of `shape`, or -1 when the product overflows.
int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

// DTYPE[...]:values with a bare error message (callers add the input text).
Status ParseLiteral(const std::string& text, Tensor* out) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return Status::InvalidArgument(kForms);
  std::string spec = Trim(text.substr(0, colon));
  std::string name = spec;
  bool has_shape = false;
  size_t bracket = spec.find('[');
  if (bracket != std::string::npos) {
    if (spec.back() != ']') {
      return Status::InvalidArgument("shape '" + spec.substr(bracket) +
                                     "' must be written [d0,d1,...]");
    }
    HFLOW_RETURN_IF_ERROR(ParseShape(spec.substr(bracket), &out->shape));
    name = Trim(spec.substr(0, bracket));
    has_shape = true;
  }
  if (!ParseInputDataType(name, &out->dtype)) {
    return Status::InvalidArgument("unknown dtype '" + name + "'; use one of " +
                                   kDtypes);
  }
  std::string body = Trim(text.substr(colon + 1));
  std::vector<std::string> values;
  if (!body.empty()) values = Split(body, ',');
  out->data.clear();
  for (size_t i = 0; i < values.size(); ++i) {
    if (!ParseElement(values[i], out->dtype, &out->data)) {
      return Status::InvalidArgument(
          "bad " + std::string(DataTypeName(out->dtype)) + " value '" +
          values[i] + "' at position " + std::to_string(i + 1) +
          " (not a number, or out of range)");
    }
  }
  if (!has_shape) {
    out->shape = {static_cast<int64_t>(values.size())};
  } else if (Elements(out->shape) < 0) {
    return Status::InvalidArgument("shape " + ShapeText(out->shape) +
                                   " has more elements than fit in memory");
  } else if (Elements(out->shape) != static_cast<int64_t>(values.size())) {
    return Status::InvalidArgument(
        "shape " + ShapeText(out->shape) + " needs " +
        std::to_string(Elements(out->shape)) + " values, got " +
        std::to_string(values.size()));
  }
  return Status::OK();
}

Status ParseValueBare(const std::string& text, Tensor* out) {
  if (!text.empty() && text[0] == '@') {
    if (text.size() == 1) {
      return Status::InvalidArgument("'@' must be followed by a .npy path");
    }
    return LoadNpyFile(text.substr(1), out);
  }
  return ParseLiteral(text, out);
}

// --- .npy -------------------------------------------------------------------

// Positions `*pos` just after "'key':" in the header dict.
bool FindKey(const std::string& header, const std::string& key, size_t* pos) {
  for (char q : {'\'', '"'}) {
    size_t at = header.find(q + key + q);
    if (at == std::string::npos) continue;
    at = header.find(':', at + key.size() + 2);
    if (at == std::string::npos) return false;
    *pos = header.find_first_not_of(" \t", at + 1);
    return *pos != std::string::npos;
  }
  return false;
}

Status NpyDescr(const std::string& descr, DataType* dt) {
  static const std::pair<const char*, DataType> kKinds[] = {
      {"b1", DataType::kBool},   {"i1", DataType::kInt8},
      {"i2", DataType::kInt16},  {"i4", DataType::kInt32},
      {"i8", DataType::kInt64},  {"u1", DataType::kUint8},
      {"u2", DataType::kUint16}, {"u4", DataType::kUint32},
      {"u8", DataType::kUint64}, {"f2", DataType::kFloat16},
      {"f4", DataType::kFloat},  {"f8", DataType::kDouble}};
  std::string kind = descr.size() == 3 ? descr.substr(1) : "";
  for (const auto& [k, t] : kKinds) {
    if (kind != k) continue;
    char order = descr[0];
    if (order == '>' && DataTypeSize(t) > 1) {
      return Status::InvalidArgument("big-endian dtype '" + descr +
                                     "' is not supported; save it as '<" +
                                     kind + "' (arr.astype('<" + kind + "'))");
    }
    if (order != '<' && order != '|' && order != '=' && order != '>') break;
    *dt = t;
    return Status::OK();
  }
  return Status::InvalidArgument(
      "dtype '" + descr +
      "' is not supported (bool, int8-64, uint8-64, float16/32/64)");
}

Status ParseNpyHeader(const std::string& header, Tensor* out) {
  auto bad = [](const char* what) { return Status::InvalidArgument(what); };
  size_t p = 0;
  if (!FindKey(header, "descr", &p) ||
      (header[p] != '\'' && header[p] != '"')) {
    return bad("header has no 'descr' string");
  }
  size_t close = header.find(header[p], p + 1);
  if (close == std::string::npos) return bad("header has a broken 'descr'");
  HFLOW_RETURN_IF_ERROR(
      NpyDescr(header.substr(p + 1, close - p - 1), &out->dtype));
  if (!FindKey(header, "fortran_order", &p)) {
    return bad("header has no 'fortran_order'");
  }
  if (header.compare(p, 5, "False") != 0) {
    return bad(
        "Fortran-order arrays are not supported; save "
        "np.ascontiguousarray(arr)");
  }
  if (!FindKey(header, "shape", &p) || header[p] != '(' ||
      (close = header.find(')', p)) == std::string::npos) {
    return bad("header has no 'shape' tuple");
  }
  std::string dims = Trim(header.substr(p + 1, close - p - 1));
  if (!dims.empty() && dims.back() == ',') dims.pop_back();  // "(3,)"
  return ParseShape("[" + dims + "]", &out->shape);
}

// --- printing ---------------------------------------------------------------

// The fewest significant digits (at least enough to show an integer part
// without an exponent) whose text reads back as `v` under `same`.
template <typename Same>
std::string Shortest(double v, int max_digits, Same same) {
  if (!std::isfinite(v)) return "null";
  char buf[40];
  int digits = 1;
  for (; digits < max_digits; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
    if (same(std::strtod(buf, nullptr))) break;
  }
  double a = std::fabs(v);
  if (a >= 1 && a < 1e16) {
    digits = std::max(digits, static_cast<int>(std::floor(std::log10(a))) + 1);
  }
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  return buf;
}

std::string ElementText(DataType dt, const uint8_t* p) {
  if (const IntCodec* c = FindIntCodec(dt)) return c->print(p);
  switch (dt) {
    case DataType::kBool:
      return *p ? "true" : "false";
    case DataType::kDouble: {
      double v = Load<double>(p);
      return Shortest(v, 17, [v](double r) { return r == v; });
    }
    case DataType::kFloat: {
      float v = Load<float>(p);
      return Shortest(v, 9, [v](double r) { return float(r) == v; });
    }
    case DataType::kFloat16: {
      uint16_t b = Load<uint16_t>(p);
      return Shortest(HalfToFloat(b), 9, [b](double r) {
        return RoundToSmallFloat(r, 10, 15) == b;
      });
    }
    case DataType::kBf16: {
      uint16_t b = Load<uint16_t>(p);
      return Shortest(Bf16ToFloat(b), 9, [b](double r) {
        return RoundToSmallFloat(r, 7, 127) == b;
      });
    }
    default:
      return "null";
  }
}

}  // namespace

uint16_t FloatToHalf(float f) { return RoundToSmallFloat(f, 10, 15); }
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
  Status s = ParseValueBare(text, out);
  return s.ok() ? s : s.WithContext("input value '" + text + "': ");
}

Status ParseInputArg(const std::string& arg, std::string* name, Tensor* out) {
  size_t eq = arg.find('=');
  Status s;
  if (eq == std::string::npos || Trim(arg.substr(0, eq)).empty()) {
    s = Status::InvalidArgument(
        "expected NAME=VALUE, e.g. a=int32:1,2,3 or a=@a.npy");
  } else {
    *name = Trim(arg.substr(0, eq));
    s = ParseValueBare(arg.substr(eq + 1), out);
  }
  return s.ok() ? s : s.WithContext("--input '" + arg + "': ");
}

Status LoadNpyFile(const std::string& path, Tensor* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::InvalidArgument("cannot open NumPy file '" + path +
                                   "': " + std::strerror(errno));
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  return ParseNpyBytes(bytes, path, out);
}

Status ParseNpyBytes(std::string_view bytes, const std::string& source,
                     Tensor* out) {
  auto bad = [&source](const std::string& what) {
    return Status::InvalidArgument("NumPy file '" + source + "': " + what);
  };
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    return bad("not a .npy file (no \\x93NUMPY magic)");
  }
  int major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3) {
    return bad("unsupported format version " + std::to_string(major) + "." +
               std::to_string(static_cast<uint8_t>(bytes[7])));
  }
  size_t len_size = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_size) return bad("truncated header");
  uint32_t header_len = 0;
  for (size_t i = 0; i < len_size; ++i) {
    header_len |= uint32_t(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  }
  size_t data_at = 8 + len_size + header_len;
  if (bytes.size() < data_at) return bad("truncated header");
  Status s = ParseNpyHeader(std::string(bytes.substr(8 + len_size, header_len)),
                            out);
  if (!s.ok()) return bad(s.message());
  // Compared by division: elements * width can overflow size_t, and a
  // wrapped product once matched an empty file (shape (2**61,) of '<f8').
  const int64_t n = Elements(out->shape);
  const size_t width = DataTypeSize(out->dtype);
  const size_t have = bytes.size() - data_at;
  const bool representable =
      n >= 0 && static_cast<uint64_t>(n) <= SIZE_MAX / width;
  if (!representable || have % width != 0 ||
      have / width != static_cast<uint64_t>(n)) {
    return bad("holds " + std::to_string(have) + " data bytes; shape " +
               ShapeText(out->shape) + " of " + DataTypeName(out->dtype) +
               " needs " +
               (representable ? std::to_string(size_t(n) * width)
                              : std::string("more than fit in memory")));
  }
  if (out->dtype == DataType::kBool) {
    // numpy writes bools as 0 or 1; any other byte is a corrupt file, and
    // the UDF would see a bool that is neither true nor false.
    for (size_t i = data_at; i < bytes.size(); ++i) {
      if (bytes[i] != 0 && bytes[i] != 1) {
        return bad("bool element " + std::to_string(i - data_at) +
                   " is byte " +
                   std::to_string(static_cast<uint8_t>(bytes[i])) +
                   ", not 0 or 1");
      }
    }
  }
  out->data.assign(bytes.begin() + data_at, bytes.end());
  return Status::OK();
}

std::string OutputJsonLine(size_t output, uint64_t trans_id, int32_t ret_code,
                           const Tensor& tensor) {
  std::string line = "{\"output\":" + std::to_string(output) +
                     ",\"trans_id\":" + std::to_string(trans_id) +
                     ",\"ret_code\":" + std::to_string(ret_code);
  if (ret_code != 0 && tensor.data.empty()) return line + "}";
  line += ",\"dtype\":\"" + std::string(DataTypeName(tensor.dtype)) +
          "\",\"shape\":" + ShapeText(tensor.shape) + ",\"data\":[";
  size_t size = DataTypeSize(tensor.dtype);
  for (size_t at = 0; size != 0 && at + size <= tensor.data.size();
       at += size) {
    if (at) line += ',';
    line += ElementText(tensor.dtype, tensor.data.data() + at);
  }
  return line + "]}";
}

}  // namespace hflow::tools
