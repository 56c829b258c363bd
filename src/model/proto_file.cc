// ParseProtoFile (proto_file.h).
//
// Thread-safety: reentrant.
#include "model/proto_file.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
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
  google::protobuf::io::FileInputStream in(fd, 1 << 20);
  in.SetCloseOnDelete(true);
  *parsed = message->ParseFromZeroCopyStream(&in) && in.ByteCount() > 0;
  return Status::OK();
}

}  // namespace model
}  // namespace hflow
