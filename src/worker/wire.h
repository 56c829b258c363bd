// Conversions between hflow's in-memory types and the control protocol's
// messages (proto/worker.proto): mbuf heads and init-params values. Each
// pair round-trips exactly (wire_test.cc).
//
// Thread-safety: pure functions.
#ifndef HFLOW_WORKER_WIRE_H_
#define HFLOW_WORKER_WIRE_H_

#include "flow_func/init_params.h"
#include "hflow/status.h"
#include "services/mbuf.h"
#include "worker/proto/worker.pb.h"

namespace hflow {
namespace worker {

// The wire's protocol version (Hello): bumped on any change a peer of the
// previous version would misread. 2: workers beat (Beat) and report their
// runtime's counters; a version-1 worker would be killed as silent. 3: a
// worker serves several instances (HostMessage.slot, Unload); a version-2
// worker would run every slot's requests on one instance. 6: chained
// outputs (Links, ProcDone.output_slot), which a version-5 worker would
// refuse as unknown requests, and Proc replies in the segment's reply
// ring (Load.reply_ring_bytes), which it would send on the socket while
// the host's part of the segment overlaps the ring.
inline constexpr uint32_t kProtocolVersion = 6;

void HeadToWire(const services::MbufHead& h, v1::MsgHead* out);
// kInvalidArgument for user data over 64 bytes.
Status HeadFromWire(const v1::MsgHead& w, services::MbufHead* out);

Status AttrsToWire(const flow_func::AttrMap& attrs,
                   google::protobuf::Map<std::string, v1::AttrValue>* out);
Status AttrsFromWire(const google::protobuf::Map<std::string, v1::AttrValue>& w,
                     flow_func::AttrMap* out);

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_WIRE_H_
