// Conversions between gRPC's status and hflow's, for net/*.cc only (the
// one header besides the generated code that names gRPC types).
//
// Thread-safety: reentrant.
#ifndef HFLOW_NET_GRPC_STATUS_H_
#define HFLOW_NET_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <string>

#include "hflow/status.h"

namespace hflow::net {

// A call's failure as hflow's Status; `where` names the daemon and call
// ("hflowd at 127.0.0.2:7000 (node 1), Hello").
Status FromGrpc(const grpc::Status& s, const std::string& where);

}  // namespace hflow::net

#endif  // HFLOW_NET_GRPC_STATUS_H_
