// Data links between hosts on UCX: the data channel of a multi-host
// cluster (the control channel is gRPC, net/host_client.h). A DataEndpoint
// is one UCX worker and the thread that drives it ("hflow-data"); it
// listens for and makes DataLinks, bidirectional connections carrying
// messages of a small header and a payload.
//
// - Credits: a sender has at most DataLinkOptions::credits messages a link
//   has not given back; the receiver gives them back with Grant once its
//   consumer has taken the messages, so a slow host back-pressures its
//   senders instead of running out of memory.
// - Zero copy on receipt: the sink says where each payload goes
//   (DataSink::Allocate, e.g. a message buffer of the destination device)
//   and UCX writes it there; large payloads are not staged.
// - Order: a link delivers messages in the order they were sent, small
//   and large alike.
// - Admission: both sides prove they hold the session key
//   (DataLinkOptions::key, handed out over the authenticated control
//   channel) without sending it (net/data_link_auth.h); a link that has
//   not proved it within connect_timeout_ms, or sends anything else first,
//   is closed, and nothing it sent reaches a sink.
// - Addresses: UCX accepts a listen address only if an interface has it
//   exactly (127.0.0.1, not 127.0.0.2), and the endpoint listens only
//   there.
//
// Thread-safety: Send, Grant, Listen and Connect may be called from any
// thread but the endpoint's own: sink callbacks and Send's `done` run on
// it and must not block, and a blocking call made there (Connect, Listen,
// a Send that has to wait for a credit) fails with kFailedPrecondition
// instead of deadlocking. Destroy an endpoint before the sinks it uses,
// and never from one of its callbacks.
#ifndef HFLOW_NET_DATA_LINK_H_
#define HFLOW_NET_DATA_LINK_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "hflow/status.h"
#include "net/address.h"

namespace hflow::net {

struct DataLinkOptions {
  std::string key;        // the session's secret; both sides the same
  uint32_t credits = 16;  // messages in flight per link and direction
  int32_t connect_timeout_ms = 5000;
};

class DataLink;

// The receiving side of a link. Called on the endpoint's thread.
class DataSink {
 public:
  virtual ~DataSink() = default;
  // Where a payload of `size` bytes goes; it must stay valid until
  // Deliver. nullptr refuses the message: the link fails (kOutOfMemory).
  virtual void* Allocate(DataLink* link, size_t size) = 0;
  // The whole message is in place. Grant the credit when it is consumed.
  virtual void Deliver(DataLink* link, std::string header, void* data,
                       size_t size) = 0;
  // A buffer Allocate gave that will not be delivered (the link failed
  // while it was being filled, or before earlier messages completed).
  virtual void Discard(DataLink* link, void* data) {}
  // The link failed or its peer closed it: no more calls for it.
  virtual void Closed(DataLink* link, const Status& why) = 0;
};

class DataLink {
 public:
  virtual ~DataLink() = default;
  // Waits for a credit (timeout_ms; -1 forever), then sends. `done` is
  // called once UCX no longer reads `data` (on the endpoint's thread, or
  // here on an error before sending); the caller keeps `data` alive until
  // then. Errors: kTimeout with no credit in time, naming the link;
  // kDeviceLost once the link has failed; kInvalidArgument for a header
  // larger than UCX carries (a few KiB).
  virtual Status Send(std::string header, const void* data, size_t size,
                      int32_t timeout_ms,
                      std::function<void(const Status&)> done) = 0;
  // Sends and waits until `data` may be reused.
  Status SendAndWait(std::string header, const void* data, size_t size,
                     int32_t timeout_ms);
  // Gives `n` credits back to the peer (messages this side consumed).
  virtual void Grant(uint32_t n) = 0;
  virtual Status status() const = 0;
  // "data link to 127.0.0.1:40123" / "from ...".
  virtual const std::string& name() const = 0;
};

class DataEndpoint {
 public:
  // kInvalidArgument for a key shorter than 16 bytes or no credits;
  // kNotSupported when UCX cannot start.
  static Status Create(const DataLinkOptions& options,
                       std::unique_ptr<DataEndpoint>* out);
  virtual ~DataEndpoint() = default;  // closes every link, joins the thread

  // Accepts links at `address` (port 0: the system picks); `accept` gives
  // each admitted link its sink (nullptr refuses it). *bound gets the
  // address with its port.
  virtual Status Listen(const HostAddress& address,
                        std::function<DataSink*(DataLink*)> accept,
                        HostAddress* bound) = 0;
  // Connects and waits until the peer admitted the link. Errors:
  // kNotFound when nothing accepts there, kPermissionDenied for another
  // key, kTimeout.
  virtual Status Connect(const HostAddress& address, DataSink* sink,
                         DataLink** out) = 0;
};

}  // namespace hflow::net

#endif  // HFLOW_NET_DATA_LINK_H_
