// Values on the `hflow run` command line:
//
//   --input NAME=VALUE, VALUE one of
//     DTYPE:v1,v2,...           a 1-D tensor
//     DTYPE[d0,d1,...]:v1,...   that shape ([] is a scalar)
//     @file.npy                 a NumPy file (npy_file.h)
//
// Parsing is strict (every value must parse completely and fit its dtype)
// because a silently truncated or wrapped input would make a run look
// successful with the wrong data. Errors are kInvalidArgument and name the
// input text (or .npy path) and what is wrong. The printed results are
// result_json.h's.
//
// Thread-safety: pure functions over their arguments; reentrant.
#ifndef HFLOW_TOOLS_INPUT_VALUE_H_
#define HFLOW_TOOLS_INPUT_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// "[d0,d1,...]" (the brackets included) into `shape`.
Status ParseShape(const std::string& text, std::vector<int64_t>* shape);
// "[2,3]", and the element count of `shape` (-1 when the product overflows).
std::string ShapeText(const std::vector<int64_t>& shape);
int64_t ShapeElements(const std::vector<int64_t>& shape);

// IEEE half and bfloat16 conversions (round to nearest even), exposed for
// tests.
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBf16(float f);
uint16_t DoubleToHalf(double d);  // straight from double: no double rounding
uint16_t DoubleToBf16(double d);
float Bf16ToFloat(uint16_t b);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_INPUT_VALUE_H_
