// Channel: one end of the SOCK_SEQPACKET socket pair between the host and
// an hflow-worker. Each Send is one datagram holding one serialized
// protobuf (proto/worker.proto), optionally with one file descriptor
// (SCM_RIGHTS); Recv returns one whole datagram. The kernel keeps the
// boundaries and wakes the reader; nothing polls. A peer that died reads
// as end of stream (kCancelled), so a process's death is seen at once.
//
// Thread-safety: Send may be called from any number of threads at once (a
// datagram is written whole); Recv from one thread at a time.
#ifndef HFLOW_WORKER_CHANNEL_H_
#define HFLOW_WORKER_CHANNEL_H_

#include <google/protobuf/message_lite.h>

#include <string>

#include "hflow/status.h"

namespace hflow {
namespace worker {

// The largest datagram either side sends (heads and offsets only: a few
// KiB in practice); a larger message is refused by Send (kInvalidArgument),
// as is one the socket's buffer cannot take. Below the default AF_UNIX
// send buffer (about 208 KiB), which an unprivileged process cannot raise
// past wmem_max.
inline constexpr size_t kMaxDatagram = 192 << 10;

class Channel {
 public:
  Channel() = default;
  explicit Channel(int fd) : fd_(fd) {}
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // A connected pair: `host` for this process, `*child_fd` for the worker,
  // both close-on-exec (the spawn dup2s the child's onto its descriptor).
  static Status Pair(Channel* host, int* child_fd);

  Status Send(const google::protobuf::MessageLite& msg, int pass_fd = -1);
  // Send without waiting: kUnavailable when the socket's buffer is full
  // (a heartbeat that cannot go now is not worth blocking for).
  Status TrySend(const google::protobuf::MessageLite& msg);
  // Waits for a datagram (-1: forever); kTimeout, or kCancelled when the
  // peer closed its end (or died). `*got_fd` (may be null) receives a
  // passed descriptor or -1.
  Status Recv(google::protobuf::MessageLite* msg, int timeout_ms = -1,
              int* got_fd = nullptr);
  // Ends both directions: the peer reads end of stream and a Recv here
  // returns (the descriptor stays open until destruction).
  void Shutdown();

  int fd() const { return fd_; }

 private:
  Status SendBytes(const std::string& bytes, int pass_fd, int flags);

  int fd_ = -1;
  std::string buf_;  // Recv's buffer (one reader)
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_CHANNEL_H_
