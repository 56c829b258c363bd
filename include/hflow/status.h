// Status: the result of every hflow operation that can fail.
//
// In the manner of LevelDB's Status: an OK status is a null pointer (cheap to
// create, copy and test); an error carries a domain code and a message that
// names the device, object and operation involved, so callers can print it as
// is. No exception crosses hflow's public API; functions return a Status.
//
// Errors: Status's own methods never fail (an allocation failure aside).
//
// Thread-safety: a Status is a value; distinct objects may be used from
// distinct threads without synchronisation.
#ifndef HFLOW_STATUS_H_
#define HFLOW_STATUS_H_

#include <memory>
#include <string>
#include <string_view>

namespace hflow {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,
  kNotFound = 2,
  kTimeout = 3,
  kNoContext = 4,        // no valid context bound to the thread (GE EE1018)
  kContextMismatch = 5,  // bound to a context of another device
  kDeviceLost = 6,
  kOutOfMemory = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kInternal = 10,
  kAlreadyExists = 11,
  kPermissionDenied = 12,
  kCancelled = 13,
  kNotSupported = 14,
  // A fetch with input alignment (FlowGraph::SetInputsAlignAttrs) returns
  // a transaction that did not arrive on every output in time or within
  // the cache limit: the outputs it has, the others empty (GE's
  // ACL_ERROR_GE_DATA_NOT_ALIGNED).
  kNotAligned = 15,
};

// Stable lower-case name of a code ("no context", "timeout", ...).
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;
  Status(StatusCode code, std::string_view msg);

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string_view m) {
    return Status(StatusCode::kInvalidArgument, m);
  }
  static Status NotFound(std::string_view m) {
    return Status(StatusCode::kNotFound, m);
  }
  static Status Timeout(std::string_view m) {
    return Status(StatusCode::kTimeout, m);
  }
  static Status NoContext(std::string_view m) {
    return Status(StatusCode::kNoContext, m);
  }
  static Status ContextMismatch(std::string_view m) {
    return Status(StatusCode::kContextMismatch, m);
  }
  static Status DeviceLost(std::string_view m) {
    return Status(StatusCode::kDeviceLost, m);
  }
  static Status OutOfMemory(std::string_view m) {
    return Status(StatusCode::kOutOfMemory, m);
  }
  static Status ResourceExhausted(std::string_view m) {
    return Status(StatusCode::kResourceExhausted, m);
  }
  static Status FailedPrecondition(std::string_view m) {
    return Status(StatusCode::kFailedPrecondition, m);
  }
  static Status Internal(std::string_view m) {
    return Status(StatusCode::kInternal, m);
  }
  static Status AlreadyExists(std::string_view m) {
    return Status(StatusCode::kAlreadyExists, m);
  }
  static Status PermissionDenied(std::string_view m) {
    return Status(StatusCode::kPermissionDenied, m);
  }
  static Status Cancelled(std::string_view m) {
    return Status(StatusCode::kCancelled, m);
  }
  static Status NotSupported(std::string_view m) {
    return Status(StatusCode::kNotSupported, m);
  }
  static Status NotAligned(std::string_view m) {
    return Status(StatusCode::kNotAligned, m);
  }

  bool ok() const noexcept { return rep_ == nullptr; }
  StatusCode code() const noexcept {
    return rep_ ? rep_->code : StatusCode::kOk;
  }
  // The message alone (empty for OK).
  const std::string& message() const;
  // "<code name>: <message>", or "OK".
  std::string ToString() const;

  // A copy whose message is prefixed with `context` ("deploy node 'add': ").
  Status WithContext(std::string_view context) const;

  bool IsTimeout() const noexcept { return code() == StatusCode::kTimeout; }
  bool IsNoContext() const noexcept { return code() == StatusCode::kNoContext; }
  bool IsDeviceLost() const noexcept {
    return code() == StatusCode::kDeviceLost;
  }

 private:
  struct Rep {
    StatusCode code;
    std::string msg;
  };
  // Shared and immutable: copying a Status never allocates.
  std::shared_ptr<const Rep> rep_;
};

inline bool operator==(const Status& a, const Status& b) {
  return a.code() == b.code() && a.message() == b.message();
}

}  // namespace hflow

// Returns from the enclosing function when `expr` is not OK.
#define HFLOW_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::hflow::Status hflow_status_ = (expr);        \
    if (!hflow_status_.ok()) return hflow_status_; \
  } while (0)

#endif  // HFLOW_STATUS_H_
