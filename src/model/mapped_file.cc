// MappedFile (mapped_file.h).
//
// Thread-safety: see the header.
#include "model/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace hflow {
namespace model {

Status MappedFile::Open(const std::string& path,
                        std::shared_ptr<const MappedFile>* out) {
  out->reset();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Status::NotFound(path + ": cannot open the model file (" +
                            std::strerror(errno) + ")");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
      st.st_size >= INT_MAX) {
    close(fd);
    return Status::OK();
  }
  const size_t size = static_cast<size_t>(st.st_size);
  // MAP_POPULATE: the whole file is read (a model's weights are most of
  // it), and mapping its pages in one call costs less than faulting them in
  // one by one during the parse and the upload.
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return Status::OK();
  out->reset(new MappedFile(static_cast<const char*>(map), size));
  return Status::OK();
}

MappedFile::~MappedFile() { munmap(const_cast<char*>(data_), size_); }

}  // namespace model
}  // namespace hflow
