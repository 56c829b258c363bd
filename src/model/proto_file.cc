// ParseProtoFile (proto_file.h).
//
// Note [Parsing a mapped file]: the file is mapped and parsed as one array.
// Parsed from a stream, protobuf grows each large bytes field (an ONNX
// initializer's raw_data, megabytes) chunk by chunk, copying it again at
// each doubling; from an array it knows each field's length up front and
// copies it once. In a standalone loop over resnet18 (46 MB): 135 ms per
// parse from the stream, 22 ms from the array once malloc reuses its
// memory (the first parses of a process pay page faults either way; see
// docs/performance.md, model_load_resnet18). Files protobuf cannot take as
// one array (2 GiB and up; ONNX's own limit) go through the stream.
//
// Thread-safety: reentrant.
#include "model/proto_file.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace hflow {
namespace model {

Status ParseProtoFile(const std::string& path,
                      google::protobuf::MessageLite* message, bool* parsed) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::NotFound(path + ": cannot open the model file (" +
                            std::strerror(errno) + ")");
  }
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      st.st_size < INT_MAX) {
    const size_t size = static_cast<size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      close(fd);
      *parsed = message->ParseFromArray(map, static_cast<int>(size));
      munmap(map, size);
      return Status::OK();
    }
  }
  // Note [Parsing a mapped file]: the fallback.
  google::protobuf::io::FileInputStream in(fd, 1 << 20);
  in.SetCloseOnDelete(true);
  *parsed = message->ParseFromZeroCopyStream(&in) && in.ByteCount() > 0;
  return Status::OK();
}

}  // namespace model
}  // namespace hflow
