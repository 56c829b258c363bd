// Status implementation. Thread-safety: immutable values.
#include "hflow/status.h"

namespace hflow {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kTimeout:
      return "timeout";
    case StatusCode::kNoContext:
      return "no context";
    case StatusCode::kContextMismatch:
      return "context mismatch";
    case StatusCode::kDeviceLost:
      return "device lost";
    case StatusCode::kOutOfMemory:
      return "out of memory";
    case StatusCode::kResourceExhausted:
      return "resource exhausted";
    case StatusCode::kFailedPrecondition:
      return "failed precondition";
    case StatusCode::kInternal:
      return "internal";
    case StatusCode::kAlreadyExists:
      return "already exists";
    case StatusCode::kPermissionDenied:
      return "permission denied";
    case StatusCode::kCancelled:
      return "cancelled";
    case StatusCode::kNotSupported:
      return "not supported";
    case StatusCode::kNotAligned:
      return "not aligned";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string_view msg) {
  if (code != StatusCode::kOk) {
    rep_ = std::make_shared<const Rep>(Rep{code, std::string(msg)});
  }
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->msg : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s = StatusCodeName(rep_->code);
  s += ": ";
  s += rep_->msg;
  return s;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  m += rep_->msg;
  return Status(rep_->code, m);
}

}  // namespace hflow
