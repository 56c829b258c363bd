// NumPy .npy reading and writing (see npy_file.h).
//
// Thread-safety: pure functions; no shared state.
#include "tools/npy_file.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <utility>

#include "tools/input_value.h"

namespace hflow::tools {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// The descr kinds hflow reads and writes, one per DataType.
constexpr std::pair<const char*, DataType> kKinds[] = {
    {"b1", DataType::kBool},   {"i1", DataType::kInt8},
    {"i2", DataType::kInt16},  {"i4", DataType::kInt32},
    {"i8", DataType::kInt64},  {"u1", DataType::kUint8},
    {"u2", DataType::kUint16}, {"u4", DataType::kUint32},
    {"u8", DataType::kUint64}, {"f2", DataType::kFloat16},
    {"f4", DataType::kFloat},  {"f8", DataType::kDouble}};

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

}  // namespace

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
  Status s =
      ParseNpyHeader(std::string(bytes.substr(8 + len_size, header_len)), out);
  if (!s.ok()) return bad(s.message());
  // Compared by division: elements * width can overflow size_t, and a
  // wrapped product once matched an empty file (shape (2**61,) of '<f8').
  const int64_t n = ShapeElements(out->shape);
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
        return bad("bool element " + std::to_string(i - data_at) + " is byte " +
                   std::to_string(static_cast<uint8_t>(bytes[i])) +
                   ", not 0 or 1");
      }
    }
  }
  out->data.assign(bytes.begin() + data_at, bytes.end());
  return Status::OK();
}

std::string NpyBytes(const Tensor& tensor) {
  // bfloat16 has no numpy dtype; its bits go out as uint16 (documented).
  DataType dt =
      tensor.dtype == DataType::kBf16 ? DataType::kUint16 : tensor.dtype;
  const char* kind = nullptr;
  for (const auto& [k, t] : kKinds) {
    if (t == dt) kind = k;
  }
  if (kind == nullptr) return "";
  std::string dims;  // "2, 3"; a 1-tuple is spelled "3,"
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    dims += (i ? ", " : "") + std::to_string(tensor.shape[i]);
  }
  if (tensor.shape.size() == 1) dims += ",";
  std::string header = std::string("{'descr': '") +
                       (DataTypeSize(dt) == 1 ? '|' : '<') + kind +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // numpy pads the header with spaces to a multiple of 64, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>((header.size() >> 8) & 0xFF);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(tensor.data.data()),
               tensor.data.size());
  return bytes;
}

Status WriteNpyFile(const std::string& path, const Tensor& tensor) {
  std::string bytes = NpyBytes(tensor);
  if (bytes.empty()) {
    return Status::InvalidArgument(
        path + ": dtype " + DataTypeName(tensor.dtype) + " has no .npy form");
  }
  std::ofstream file(path, std::ios::binary);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) {
    return Status::NotFound(
        path + ": cannot write the .npy file: " + std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace hflow::tools
