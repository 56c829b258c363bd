// hflowd's gRPC server: listens on exactly the address it is given, checks
// every call's credentials and protocol version, and hands the calls it
// accepts to a DaemonHandler (the daemon layer), which never sees gRPC.
//
// A refused call is logged (through ServerOptions::log) naming the peer and
// the reason, and answered UNAUTHENTICATED or FAILED_PRECONDITION with a
// message saying what to do.
//
// Thread-safety: the handler is called from gRPC's threads, concurrently;
// Shutdown may be called from any thread (a signal watcher), once or more.
#ifndef HFLOW_NET_DAEMON_SERVER_H_
#define HFLOW_NET_DAEMON_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hflow/session.h"
#include "hflow/status.h"
#include "net/address.h"
#include "net/credentials.h"
#include "net/protocol.h"

namespace hflow::net {

class DaemonHandler {
 public:
  virtual ~DaemonHandler() = default;
  virtual HelloInfo Hello(const HelloQuery& query, const std::string& peer) = 0;
  virtual Status DeviceReports(std::vector<DeviceReport>* out) = 0;
  // A call of an instance hosted for a driver's session (rpc Call); its
  // error goes back to the driver as the status (its code kept). May
  // move from `call`.
  virtual Status Call(InstanceCall* call, InstanceReply* reply) {
    (void)call;
    (void)reply;
    return Status::NotSupported("this daemon hosts no instances");
  }
  // The Watch stream that kept `session` ended: unload what it loaded.
  virtual void SessionEnded(const std::string& session) { (void)session; }
};

struct ServerOptions {
  HostAddress listen;       // port 0: the system picks one (BoundAddress)
  Credentials credentials;  // must not be Empty()
  std::function<void(const std::string&)> log;   // refusals, one line each
  uint32_t protocol_version = kProtocolVersion;  // tests only
};

// kInvalidArgument, saying what to give, when `credentials` are empty: a
// daemon serves only clients with the cluster's credentials.
Status RequireCredentials(const Credentials& credentials);

class DaemonServer {
 public:
  // Starts serving. Errors: kInvalidArgument without credentials;
  // kFailedPrecondition when the address cannot be bound (in use, not an
  // address of this host), naming it.
  static Status Start(const ServerOptions& options, DaemonHandler* handler,
                      std::unique_ptr<DaemonServer>* out);
  ~DaemonServer();

  // The address it listens on, with the port the system picked.
  const HostAddress& BoundAddress() const;
  // Ends the open Watch streams, stops taking calls and waits for the
  // running ones (gRPC's Shutdown).
  void Shutdown();
  // Blocks until Shutdown.
  void Wait();

  struct Impl;

 private:
  explicit DaemonServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hflow::net

#endif  // HFLOW_NET_DAEMON_SERVER_H_
