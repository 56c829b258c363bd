// Host messages and mbufs: what a feed writes into an input's mbuf (a
// tensor of FeedData, or a Message of FeedMessages / FeedRawData / an
// end-of-stream-only feed) and what a fetch reads back, in the layouts the
// UDF side reads (flow_func/mbuf_msg.h): a tensor's shape and dtype in the
// head; a tensor list's tensors at 64-byte aligned offsets described by
// head.tensor_list; raw data (and user-defined types) as a 1-D shape of its
// size; an empty message with head.null_data and no payload.
//
// Thread-safety: free functions on the caller's objects; an mbuf is written
// before it is enqueued and read after it is dequeued (mbuf.h).
#ifndef HFLOW_SESSION_HOST_MESSAGE_H_
#define HFLOW_SESSION_HOST_MESSAGE_H_

#include <cstdint>
#include <string>

#include "hflow/session.h"
#include "services/exchange_service.h"

namespace hflow {
namespace session {

// What one feed puts into one graph input: a tensor with the call's flow
// info (FeedData), or a message with its own.
struct FeedPart {
  uint32_t input = 0;
  const Tensor* tensor = nullptr;
  const Message* message = nullptr;
  // The call's flow info (FeedData, FeedViews); a message carries its own.
  const FlowInfo* info = nullptr;
  // FeedViews: the view; with `zero_copy` set (the view lies in registered
  // host memory), the mbuf wraps the view's bytes and holds *zero_copy.
  const TensorView* view = nullptr;
  const std::shared_ptr<const void>* zero_copy = nullptr;

  const FlowInfo& Info() const { return message ? message->info : *info; }
};

// Whether a tensor's bytes match its dtype and shape and fit
// `max_bytes`. Errors say what is wrong; the caller names the input
// (Status::WithContext), so a feed that passes builds no strings.
Status CheckTensor(const Tensor& t, uint64_t max_bytes);
// Whether a message's payload matches its type (Session::FeedMessages'
// rules), its tensors are well formed and it fits `max_bytes`.
Status CheckMessage(const Message& m, uint64_t max_bytes,
                    const std::string& where);

// Whether a view's bytes match its dtype and shape (and a pointer backs
// them) and fit `max_bytes`; the caller names the input.
Status CheckView(const TensorView& v, uint64_t max_bytes);

// Bytes of the mbuf data part that `part` needs.
uint64_t PayloadBytes(const FeedPart& part);

// Writes `part` into `m` (allocated with at least PayloadBytes): the
// payload, and in the head the type, dtype/shape or tensor list, flags,
// times, ret code, user data and `trans`.
Status WritePart(services::ExchangeService* svc, const FeedPart& part,
                 uint64_t trans, const services::MbufPtr& m);

// The message `m` holds, into `out` (its buffers reused). A failed message
// (ret code set) and an empty one come back without payload.
Status ReadMessage(services::ExchangeService* svc, const services::MbufPtr& m,
                   Message* out);
// The tensor `m` holds (FetchData): a tensor message as it is, raw data
// (and user-defined types) as 1-D uint8 bytes, an empty message as an
// empty tensor. A tensor list is refused (kInvalidArgument naming
// FetchMessages, which reads it): the caller puts the message back.
Status ReadTensor(services::ExchangeService* svc, const services::MbufPtr& m,
                  Tensor* out);

// As ReadTensor, without a copy where the host can read `m`'s device
// memory in place (the view keeps `m`), else with one into memory the view
// owns.
Status ReadView(services::ExchangeService* svc, const services::MbufPtr& m,
                TensorView* out);

// The flow info of a head (transaction, flags, times, user data, ret code;
// not error_node, which the graph resolves).
void ReadFlowInfo(const services::MbufHead& h, FlowInfo* info);

}  // namespace session
}  // namespace hflow

#endif  // HFLOW_SESSION_HOST_MESSAGE_H_
