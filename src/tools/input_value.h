// Values on the `hflow run` command line and results printed by it
// (FORMATS.md "Command line"):
//
//   --input NAME=VALUE, VALUE one of
//     DTYPE:v1,v2,...           a 1-D tensor
//     DTYPE[d0,d1,...]:v1,...   that shape ([] is a scalar)
//     @file.npy                 a NumPy file (format 1.0 to 3.0)
//
// and one JSON line per fetched output message:
//   {"output":0,"trans_id":1,"ret_code":0,"dtype":"int32","shape":[3],
//    "data":[2,3,4]}   (on one line)
//
// Parsing is strict (every value must parse completely and fit its dtype)
// because a silently truncated or wrapped input would make a run look
// successful with the wrong data. Errors are kInvalidArgument and name the
// input text (or .npy path) and what is wrong.
//
// Thread-safety: pure functions over their arguments; reentrant.
#ifndef HFLOW_TOOLS_INPUT_VALUE_H_
#define HFLOW_TOOLS_INPUT_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow::tools {

// A numpy-style dtype name: whatever hflow::ParseDataTypeName accepts, plus
// the aliases "bf16", "fp16", "fp32", "fp64" and "bool_".
bool ParseInputDataType(const std::string& name, DataType* out);

// Parses VALUE (`DTYPE:...`, `DTYPE[...]:...` or `@file.npy`) into `out`.
Status ParseInputValue(const std::string& text, Tensor* out);

// Parses `NAME=VALUE` (split at the first '='; NAME must be non-empty).
Status ParseInputArg(const std::string& arg, std::string* name, Tensor* out);

// Reads a NumPy .npy file (format versions 1.0, 2.0 and 3.0; little-endian
// or byte-order-free descr; C order only).
Status LoadNpyFile(const std::string& path, Tensor* out);

// The bytes of a .npy file already in memory (what LoadNpyFile reads);
// `source` names them in messages ("NumPy file '<source>': ..."). The
// fuzz target and tests use it to reach the .npy parser without files.
Status ParseNpyBytes(std::string_view bytes, const std::string& source,
                     Tensor* out);

// The JSON line (without newline) for output `output` of one fetched
// message. Floats are printed with the fewest digits that read back to the
// same value of their own dtype (float16/bfloat16 through float); NaN and
// infinities, which JSON cannot spell, are printed as null. When `ret_code`
// is not 0 and the tensor holds no data (a failed message), dtype, shape
// and data are left out.
std::string OutputJsonLine(size_t output, uint64_t trans_id, int32_t ret_code,
                           const Tensor& tensor);

// IEEE half and bfloat16 conversions (round to nearest even), exposed for
// tests.
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t b);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_INPUT_VALUE_H_
