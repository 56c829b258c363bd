// gRPC status -> hflow Status (net/grpc_status.h).
//
// Thread-safety: reentrant.
#include "net/grpc_status.h"

namespace hflow::net {

Status FromGrpc(const grpc::Status& s, const std::string& where) {
  const std::string msg = where + ": " + s.error_message();
  switch (s.error_code()) {
    case grpc::StatusCode::OK:
      return Status::OK();
    case grpc::StatusCode::UNAVAILABLE:
      return Status::NotFound(
          where + ": no answer (" + s.error_message() +
          "); check that hflowd runs there and that the address, port and "
          "TLS credentials are the cluster's");
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      return Status::PermissionDenied(msg);
    case grpc::StatusCode::FAILED_PRECONDITION:
      return Status::FailedPrecondition(msg);
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return Status::Timeout(where + ": no reply in time (" +
                             s.error_message() +
                             "); the host may be overloaded or stopped");
    case grpc::StatusCode::CANCELLED:
      return Status::Cancelled(msg);
    case grpc::StatusCode::INVALID_ARGUMENT:
      return Status::InvalidArgument(msg);
    default:
      return Status::Internal(msg);
  }
}

}  // namespace hflow::net
