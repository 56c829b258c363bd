// Channel: datagrams of serialized protobufs over a SOCK_SEQPACKET pair.
//
// Thread-safety: see channel.h.
#include "worker/channel.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace hflow {
namespace worker {

namespace {

Status Errno(const std::string& what) {
  return Status::Internal(what + ": " + std::strerror(errno));
}

}  // namespace

Channel::~Channel() {
  if (fd_ >= 0) close(fd_);
}

Status Channel::Pair(Channel* host, int* child_fd) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return Errno("worker channel: socketpair");
  }
  // Both ends stay close-on-exec: the spawn's dup2 onto the child's
  // descriptor clears the flag there only, so no other child (another
  // worker spawned meanwhile, a program the host runs) inherits an end and
  // keeps a dead worker's socket open. Room for the largest message
  // (best effort: an unprivileged process is capped by wmem_max).
  for (int fd : fds) {
    int bytes = static_cast<int>(2 * kMaxDatagram);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  }
  if (host->fd_ >= 0) close(host->fd_);
  host->fd_ = fds[0];
  *child_fd = fds[1];
  return Status::OK();
}

Status Channel::Send(const google::protobuf::MessageLite& msg, int pass_fd) {
  std::string bytes;
  if (!msg.SerializeToString(&bytes) || bytes.size() > kMaxDatagram) {
    return Status::InvalidArgument(
        "worker channel: a control message of " + std::to_string(bytes.size()) +
        " bytes cannot be sent (at most " + std::to_string(kMaxDatagram) + ")");
  }
  return SendBytes(bytes, pass_fd, 0);
}

Status Channel::TrySend(const google::protobuf::MessageLite& msg) {
  std::string bytes;
  if (!msg.SerializeToString(&bytes) || bytes.size() > kMaxDatagram) {
    return Status::InvalidArgument("worker channel: a control message of " +
                                   std::to_string(bytes.size()) +
                                   " bytes cannot be sent");
  }
  return SendBytes(bytes, -1, MSG_DONTWAIT);
}

Status Channel::SendBytes(const std::string& bytes, int pass_fd, int flags) {
  iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (pass_fd >= 0) {
    mh.msg_control = control;
    mh.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  for (;;) {
    // MSG_NOSIGNAL: a dead peer is an error here, not a SIGPIPE.
    if (sendmsg(fd_, &mh, MSG_NOSIGNAL | flags) >= 0) return Status::OK();
    if ((flags & MSG_DONTWAIT) != 0 &&
        (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Status::ResourceExhausted(
          "worker channel: the socket's buffer is full");
    }
    if (errno == EMSGSIZE) {
      return Status::InvalidArgument("worker channel: a control message of " +
                                     std::to_string(bytes.size()) +
                                     " bytes is larger than the socket takes");
    }
    if (errno != EINTR) return Errno("worker channel: send");
  }
}

// Note [A reset before the last messages]
// A peer that exits with messages of ours still unread in its socket sets
// ECONNRESET on our end (Linux, AF_UNIX stream and seqpacket sockets), and
// the next receive reports that error *before* the messages the peer sent
// us and that are still queued: a worker that answers calls 18 and 19 and
// dies in 20 while the host's next batch waits unread would lose both
// replies, and the outputs they carry, to one failed read. Reporting the
// error clears it (the kernel hands it out once), so Recv reads on: the
// queued messages come, then the end of the stream (0 bytes: Cancelled).
Status Channel::Recv(google::protobuf::MessageLite* msg, int timeout_ms,
                     int* got_fd) {
  if (got_fd != nullptr) *got_fd = -1;
  if (timeout_ms >= 0) {
    pollfd p{fd_, POLLIN, 0};
    int r;
    do {
      r = poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r < 0) return Errno("worker channel: poll");
    if (r == 0) {
      return Status::Timeout("worker channel: no message within " +
                             std::to_string(timeout_ms) + " ms");
    }
  }
  buf_.resize(kMaxDatagram);
  iovec iov{buf_.data(), buf_.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  ssize_t n;
  bool reset = false;
  for (;;) {
    n = recvmsg(fd_, &mh, MSG_CMSG_CLOEXEC);
    if (n >= 0 || errno == EINTR) {
      if (n >= 0) break;
      continue;
    }
    // Note [A reset before the last messages]
    if (errno == ECONNRESET && !reset) {
      reset = true;
      continue;
    }
    return Errno("worker channel: receive");
  }
  if (n == 0) return Status::Cancelled("worker channel: the peer is gone");
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
      if (got_fd != nullptr) {
        *got_fd = fd;
      } else {
        close(fd);
      }
    }
  }
  if ((mh.msg_flags & MSG_TRUNC) != 0 ||
      !msg->ParseFromArray(buf_.data(), static_cast<int>(n))) {
    return Status::Internal("worker channel: a malformed control message (" +
                            std::to_string(n) + " bytes)");
  }
  return Status::OK();
}

void Channel::Shutdown() {
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
}

}  // namespace worker
}  // namespace hflow
