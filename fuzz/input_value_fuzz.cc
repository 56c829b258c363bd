// Fuzz target: the `hflow run --input NAME=VALUE` parser
// (src/tools/input_value.cc). Bytes starting with the .npy magic are the
// contents of an `@file.npy` (ParseNpyBytes, what LoadNpyFile reads); any
// other bytes are one --input argument (ParseInputArg). Arguments naming a
// file (`@path`) are skipped: the fuzzer must not read the machine's files.
//
// Invariants of a successful parse (docs/user_guide.md, "The command line"):
// the data holds exactly shape-many elements of the dtype; and the output line
// hflow prints for the tensor (OutputJsonLine), read back as a DTYPE[shape]:...
// literal, gives the same bytes (skipped when NaN or infinity printed as
// null, which JSON cannot spell).
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <string>

#include "fuzz_check.h"
#include "tools/input_value.h"
#include "tools/npy_file.h"
#include "tools/result_json.h"

namespace {

using hflow::Tensor;

// The text between `open` and the next `close` in `line`.
std::string Between(const std::string& line, const std::string& open,
                    char close) {
  size_t at = line.find(open);
  FUZZ_CHECK(at != std::string::npos);
  at += open.size();
  size_t end = line.find(close, at);
  FUZZ_CHECK(end != std::string::npos);
  return line.substr(at, end - at);
}

void CheckTensor(const Tensor& t) {
  size_t elements = 1;
  for (int64_t d : t.shape) {
    FUZZ_CHECK(d >= 0);
    // The data is in memory, so a valid shape's product cannot overflow.
    FUZZ_CHECK(d == 0 || elements <= SIZE_MAX / static_cast<uint64_t>(d));
    elements *= static_cast<size_t>(d);
  }
  size_t width = hflow::DataTypeSize(t.dtype);
  FUZZ_CHECK(width > 0);
  FUZZ_CHECK(elements <= SIZE_MAX / width);
  FUZZ_CHECK(t.data.size() == elements * width);

  const std::string line = hflow::tools::OutputJsonLine(0, 1, 0, t);
  const std::string values = Between(line, "\"data\":[", ']');
  // NaN and the infinities print as strings, not as DTYPE:... values.
  if (values.find('"') != std::string::npos) return;
  const std::string literal = Between(line, "\"dtype\":\"", '"') + "[" +
                              Between(line, "\"shape\":[", ']') + "]:" + values;
  Tensor again;
  hflow::Status s = hflow::tools::ParseInputValue(literal, &again);
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
  FUZZ_CHECK(s.ok());
  FUZZ_CHECK(again.dtype == t.dtype);
  FUZZ_CHECK(again.shape == t.shape);
  FUZZ_CHECK(again.data == t.data);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = hflow_fuzz::AsText(data, size);
  Tensor t;
  if (text.substr(0, 6) == "\x93NUMPY") {
    if (hflow::tools::ParseNpyBytes(text, "fuzz.npy", &t).ok()) CheckTensor(t);
    return 0;
  }
  const std::string arg(text);
  // The value starts right after the first '=' (ParseInputArg).
  size_t eq = arg.find('=');
  if (eq != std::string::npos && eq + 1 < arg.size() && arg[eq + 1] == '@') {
    return 0;
  }
  std::string name;
  if (hflow::tools::ParseInputArg(arg, &name, &t).ok()) {
    FUZZ_CHECK(!name.empty());
    CheckTensor(t);
  }
  return 0;
}
