// NumPy .npy files: reading them for `hflow run --input NAME=@file.npy`
// and writing fetched tensors for `--output-npy DIR`.
//
// Reading takes format versions 1.0, 2.0 and 3.0, little-endian or
// byte-order-free descr, C order only; everything else is refused with
// kInvalidArgument naming the file and what to do. The host is assumed
// little-endian (x86-64, aarch64): tensors hold native bytes, so '<' data is
// copied as is and '>' data is refused rather than byte-swapped silently.
// Writing produces format 1.0 with a '<' (or '|') descr, the layout numpy
// itself writes, so np.load reads the files back.
//
// Thread-safety: pure functions; no shared state.
#ifndef HFLOW_TOOLS_NPY_FILE_H_
#define HFLOW_TOOLS_NPY_FILE_H_

#include <string>
#include <string_view>

#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow::tools {

// Reads a NumPy .npy file.
Status LoadNpyFile(const std::string& path, Tensor* out);

// The bytes of a .npy file already in memory (what LoadNpyFile reads);
// `source` names them in messages ("NumPy file '<source>': ..."). The
// fuzz target and tests use it to reach the .npy parser without files.
Status ParseNpyBytes(std::string_view bytes, const std::string& source,
                     Tensor* out);

// The .npy file (format 1.0) holding `tensor`; empty for a dtype numpy
// cannot spell (bfloat16 has no numpy dtype: it is written as '<u2' bits).
std::string NpyBytes(const Tensor& tensor);

// Writes NpyBytes(tensor) to `path`; errors name the path.
Status WriteNpyFile(const std::string& path, const Tensor& tensor);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_NPY_FILE_H_
