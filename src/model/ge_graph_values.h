// The values of a GE graph file (docs/formats.md "GE graph file"): tensors
// (bytes in the data section, or inline "values") and op attributes, read
// into the model IR's types. The GE-graph front-end (ge_graph_import.cc)
// reads the file's structure and hands each value here.
//
// Thread-safety: a reader is immutable; reentrant.
#ifndef HFLOW_MODEL_GE_GRAPH_VALUES_H_
#define HFLOW_MODEL_GE_GRAPH_VALUES_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "hflow/status.h"
#include "model/ir.h"

namespace hflow {
namespace model {

class GeValueReader {
 public:
  using Json = nlohmann::json;
  // `bytes` is the whole file, its data section starting at `data_start`,
  // kept alive by `owner`: tensors view their data there (IrTensor::
  // mapping), never copy it. `source` names the file in messages and must
  // outlive the reader.
  GeValueReader(std::string_view bytes, std::shared_ptr<const void> owner,
                size_t data_start, const std::string& source)
      : bytes_(bytes),
        owner_(std::move(owner)),
        data_start_(data_start),
        source_(source) {}

  // A tensor: {"dtype", "dims", "offset", "size"} or {"dtype", "dims",
  // "values"}. Errors name the source and `where`.
  Status Tensor(const Json& t, const std::string& where, IrTensor* out) const;
  // An attribute: an object of one key (int, bool, float, string, ints,
  // floats, dtype, tensor).
  Status Attr(const Json& a, const std::string& where, IrAttr* out) const;

 private:
  Status Error(const std::string& what) const {
    return Status::InvalidArgument(source_ + ": " + what);
  }
  Status Number(const Json& x, DataType dt, const std::string& where, double* d,
                int64_t* i) const;
  Status Values(const Json& v, const std::string& where, int64_t n,
                IrTensor* out) const;

  const std::string_view bytes_;
  const std::shared_ptr<const void> owner_;
  const size_t data_start_;
  const std::string& source_;
};

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_GE_GRAPH_VALUES_H_
