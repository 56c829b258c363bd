// What arrives on a data link (net/data_link_internal.h): the handshake's
// state machine (net/data_link_auth.h) and the ordered inbox. Anything a
// link sends out of turn (data before admission, a welcome on a link that
// did not ask, a second hello) closes it; nothing it sent reaches a sink.
//
// Thread-safety: the endpoint's thread only (UCX calls these from
// ucp_worker_progress, where progress must not be called again).
#include <cstring>

#include "net/credentials.h"
#include "net/data_link_internal.h"

namespace hflow::net::internal {
namespace {

template <typename T>
bool Take(const char** p, size_t* len, T* out) {
  if (*len < sizeof(T)) return false;
  std::memcpy(out, *p, sizeof(T));
  *p += sizeof(T);
  *len -= sizeof(T);
  return true;
}

bool SameProof(const Proof& a, const char* b) {
  return TokensEqual(
      std::string_view(reinterpret_cast<const char*>(a.data()), a.size()),
      std::string_view(b, kProofBytes));
}

}  // namespace

ucs_status_t Endpoint::HandleAm(unsigned id, const void* header,
                                size_t header_len, void* data, size_t len,
                                const ucp_am_recv_param_t* param) {
  auto it = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
                ? by_ep_.find(param->reply_ep)
                : by_ep_.end();
  // A rendezvous message nobody takes fails its sender instead of
  // completing as if delivered.
  const ucs_status_t dropped = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)
                                   ? UCS_ERR_REJECTED
                                   : UCS_OK;
  if (it == by_ep_.end()) return dropped;  // a closed or unknown link
  Link* link = it->second;
  const char* body = static_cast<const char*>(header);
  using P = Link::Phase;
  const P phase = link->phase_;
  const bool expected =
      (id == kHello && phase == P::kAwaitHello) ||
      (id == kChallenge && phase == P::kHelloSent) ||
      (id == kProof && phase == P::kChallenged) ||
      ((id == kWelcome || id == kRefuse) && phase == P::kProofSent) ||
      ((id == kData || id == kCredit) && phase == P::kOpen);
  if (!expected) {
    Drop(link,
         Status::PermissionDenied(link->name_ +
                                  ": the peer broke the link's protocol "
                                  "(message " +
                                  std::to_string(id) + " out of turn)"),
         /*force=*/true);
    return dropped;
  }
  uint32_t credits = 0;
  switch (id) {
    case kHello:
      OnHello(link, body, header_len);
      return UCS_OK;
    case kChallenge:
      OnChallenge(link, body, header_len);
      return UCS_OK;
    case kProof:
      OnProof(link, body, header_len);
      return UCS_OK;
    case kWelcome:
      if (!Take(&body, &header_len, &credits)) break;
      link->phase_ = P::kOpen;
      link->Admit(credits);
      return UCS_OK;
    case kRefuse:
      Drop(link,
           Status::PermissionDenied(link->name_ +
                                    ": the peer refused the link (another "
                                    "session key)"),
           /*force=*/true);
      return UCS_OK;
    case kCredit:
      if (!Take(&body, &header_len, &credits)) break;
      link->AddCredits(credits);
      return UCS_OK;
    case kData:
      return OnData(link, header, header_len, data, len, param);
  }
  Drop(link, Status::PermissionDenied(link->name_ + ": a malformed message"),
       /*force=*/true);
  return dropped;
}

// Server: a hello (credits, the client's nonce) is answered with a
// challenge that proves this side's key.
void Endpoint::OnHello(Link* link, const char* body, size_t len) {
  uint32_t credits = 0;
  if (!Take(&body, &len, &credits) || len != kNonceBytes || credits == 0) {
    Drop(link, Status::PermissionDenied(link->name_ + ": a malformed hello"),
         /*force=*/true);
    return;
  }
  std::memcpy(link->nonce_c_.data(), body, kNonceBytes);
  link->peer_credits_ = credits;
  Proof proof;
  if (!MakeNonce(&link->nonce_s_).ok() ||
      !MakeProof(opts_.key, kServerRole, link->nonce_c_, link->nonce_s_,
                 &proof)) {
    Drop(link, Status::Internal(link->name_ + ": cannot make a challenge"),
         /*force=*/true);
    return;
  }
  std::string challenge(reinterpret_cast<const char*>(link->nonce_s_.data()),
                        kNonceBytes);
  challenge.append(reinterpret_cast<const char*>(proof.data()), kProofBytes);
  link->phase_ = Link::Phase::kChallenged;
  SendControl(link, kChallenge, std::move(challenge));
}

// Client: the server proves the key first; only then does this side.
void Endpoint::OnChallenge(Link* link, const char* body, size_t len) {
  Proof expected, proof;
  if (len != kNonceBytes + kProofBytes) {
    Drop(link,
         Status::PermissionDenied(link->name_ + ": a malformed challenge"),
         /*force=*/true);
    return;
  }
  std::memcpy(link->nonce_s_.data(), body, kNonceBytes);
  if (!MakeProof(opts_.key, kServerRole, link->nonce_c_, link->nonce_s_,
                 &expected) ||
      !SameProof(expected, body + kNonceBytes)) {
    Drop(link,
         Status::PermissionDenied(link->name_ +
                                  ": the peer could not prove the session "
                                  "key; it is not the endpoint this session "
                                  "was given"),
         /*force=*/true);
    return;
  }
  if (!MakeProof(opts_.key, kClientRole, link->nonce_s_, link->nonce_c_,
                 &proof)) {
    Drop(link, Status::Internal(link->name_ + ": cannot make a proof"),
         /*force=*/true);
    return;
  }
  link->phase_ = Link::Phase::kProofSent;
  SendControl(
      link, kProof,
      std::string(reinterpret_cast<const char*>(proof.data()), kProofBytes));
}

// Server: the client's proof admits the link, if the owner takes it.
void Endpoint::OnProof(Link* link, const char* body, size_t len) {
  Proof expected;
  DataSink* sink = nullptr;
  if (len == kProofBytes &&
      MakeProof(opts_.key, kClientRole, link->nonce_s_, link->nonce_c_,
                &expected) &&
      SameProof(expected, body) && accept_) {
    sink = accept_(link);
  }
  if (sink == nullptr) {
    SendControl(link, kRefuse, std::string());
    Drop(link, Status::PermissionDenied(link->name_ + ": refused"),
         /*force=*/false);  // flushed: the refusal goes out first
    return;
  }
  link->sink_ = sink;
  link->phase_ = Link::Phase::kOpen;
  link->Admit(link->peer_credits_);
  SendControl(link, kWelcome,
              std::string(reinterpret_cast<const char*>(&opts_.credits),
                          sizeof(opts_.credits)));
}

ucs_status_t Endpoint::OnData(Link* link, const void* header, size_t header_len,
                              void* data, size_t len,
                              const ucp_am_recv_param_t* param) {
  Link::Pending p;
  p.header.assign(static_cast<const char*>(header), header_len);
  p.size = len;
  const bool rndv = param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
  if (len > 0) {
    p.data = link->sink_->Allocate(link, len);
    if (p.data == nullptr) {
      Drop(link,
           Status::OutOfMemory(link->name_ +
                               ": the receiver has no room for a message of " +
                               std::to_string(len) + " bytes"),
           /*force=*/true);
      return rndv ? UCS_ERR_NO_MEMORY : UCS_OK;
    }
  }
  if (!rndv) {
    if (len > 0) std::memcpy(p.data, data, len);
    p.ready = true;
    link->inbox_.push_back(std::move(p));
    DeliverReady(link);
    return UCS_OK;
  }
  void* buf = p.data;
  link->inbox_.push_back(std::move(p));
  auto* ctx = new RecvCtx{link, link->inbox_first_ + link->inbox_.size() - 1};
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                    UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  rp.user_data = ctx;
  rp.cb.recv_am = &Endpoint::OnRecvDone;
  void* req = ucp_am_recv_data_nbx(worker_, data, buf, len, &rp);
  if (UCS_PTR_IS_ERR(req)) {
    delete ctx;
    link->inbox_.back().ready = true;  // given back by Drop, not delivered
    Drop(link,
         Status::DeviceLost(link->name_ +
                            ": receive failed: " + Ucs(UCS_PTR_STATUS(req))),
         /*force=*/true);
  }
  return UCS_OK;
}

void Endpoint::OnRecvDone(void* req, ucs_status_t s, size_t, void* user) {
  auto* ctx = static_cast<RecvCtx*>(user);
  Link* link = ctx->link;
  link->inbox_[ctx->seq - link->inbox_first_].ready = true;
  delete ctx;
  ucp_request_free(req);
  if (s != UCS_OK && link->phase_ != Link::Phase::kDone) {
    link->endpoint_->Drop(
        link, Status::DeviceLost(link->name_ + ": receive failed: " + Ucs(s)),
        /*force=*/true);
    return;
  }
  link->endpoint_->DeliverReady(link);
}

// Delivers complete messages in order; on a closed link gives their
// buffers back instead.
void Endpoint::DeliverReady(Link* link) {
  while (!link->inbox_.empty() && link->inbox_.front().ready) {
    Link::Pending p = std::move(link->inbox_.front());
    link->inbox_.pop_front();
    ++link->inbox_first_;
    if (link->phase_ == Link::Phase::kOpen) {
      link->sink_->Deliver(link, std::move(p.header), p.data, p.size);
    } else if (p.data != nullptr && link->sink_ != nullptr) {
      link->sink_->Discard(link, p.data);
    }
  }
}

}  // namespace hflow::net::internal
