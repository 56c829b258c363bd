// A model file mapped read-only into memory, shared by everything that
// views it: a parse's constants point into the mapping instead of holding
// copies of a model's weights (Note [Weights from the mapped file] in
// onnx_wire.h).
//
// A file truncated by someone else while it is mapped makes reads past its
// new end fault (SIGBUS), as with every loader that maps model files
// (onnxruntime's, safetensors'): a model file must not be rewritten in
// place while a graph that uses it is being built.
//
// Thread-safety: immutable once made; share it through shared_ptr.
#ifndef HFLOW_MODEL_MAPPED_FILE_H_
#define HFLOW_MODEL_MAPPED_FILE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "hflow/status.h"

namespace hflow {
namespace model {

class MappedFile {
 public:
  // NotFound naming `path` when it cannot be opened. OK with *out null when
  // the file cannot be mapped as one array protobuf takes (not a regular
  // file, empty, 2 GiB or more): read it as a stream instead.
  static Status Open(const std::string& path,
                     std::shared_ptr<const MappedFile>* out);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  const char* data_;
  size_t size_;
};

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_MAPPED_FILE_H_
