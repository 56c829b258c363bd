// Sending on UCX data links (net/data_link_internal.h): a link's credits,
// admission and status, Send and Grant from any thread, and the endpoint
// thread's side of every send (SendAm). The endpoint's life and thread are
// in data_link.cc, what arrives in data_link_receive.cc.
//
// Thread-safety: a Link's credits, admission and status are under its
// mu_; SendAm and SendControl run on the endpoint's thread.
#include "net/data_link_internal.h"

namespace hflow::net::internal {

// ---- Link ----------------------------------------------------------------

Status Link::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

bool Link::admitted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admitted_;
}

void Link::Fail(const Status& s) {
  std::unique_lock<std::mutex> lock(mu_);
  if (status_.ok()) status_ = s;
  cv_.notify_all();
  if (notified_ || !admitted_ || sink_ == nullptr) return;
  notified_ = true;
  const Status why = status_;
  DataSink* sink = sink_;
  lock.unlock();
  sink->Closed(this, why);
}

void Link::AddCredits(uint32_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  credits_ += n;
  cv_.notify_all();
}

void Link::Admit(uint32_t credits) {
  std::lock_guard<std::mutex> lock(mu_);
  admitted_ = true;
  credits_ = credits;
  cv_.notify_all();
}

Status Link::AwaitAdmission(int32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  const bool done = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                 [&] { return admitted_ || !status_.ok(); });
  if (!status_.ok()) return status_;
  if (!done) {
    status_ = Status::Timeout(name_ + ": the peer did not admit the link in " +
                              std::to_string(timeout_ms) + " ms");
    return status_;
  }
  return Status::OK();
}

Status Link::Send(std::string header, const void* data, size_t size,
                  int32_t timeout_ms, std::function<void(const Status&)> done) {
  if (header.size() > endpoint_->max_header_) {
    return Status::InvalidArgument(
        name_ + ": a header of " + std::to_string(header.size()) +
        " bytes is larger than UCX carries (" +
        std::to_string(endpoint_->max_header_) + "); put it in the payload");
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] { return credits_ > 0 || !status_.ok(); };
    if (!ready() && endpoint_->OnEndpointThread()) {
      return Status::FailedPrecondition(
          name_ +
          ": a send waiting for a credit on the link's own thread "
          "(a sink or send callback) would never get one");
    }
    if (timeout_ms < 0) {
      cv_.wait(lock, ready);
    } else if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                             ready)) {
      return Status::Timeout(name_ + ": no credit in " +
                             std::to_string(timeout_ms) +
                             " ms (the receiver has not consumed its "
                             "messages)");
    }
    if (!status_.ok()) return status_;
    --credits_;
  }
  auto* ctx = new SendCtx{this, std::move(header), std::move(done)};
  endpoint_->Post([this, ctx, data, size] {
    endpoint_->SendAm(this, kData, ctx, data, size);
  });
  return Status::OK();
}

void Link::Grant(uint32_t n) {
  if (n == 0) return;
  endpoint_->Post([this, n] {
    endpoint_->SendControl(
        this, kCredit,
        std::string(reinterpret_cast<const char*>(&n), sizeof(n)));
  });
}

void Endpoint::SendControl(Link* link, unsigned id, std::string body) {
  SendAm(link, id, new SendCtx{link, std::move(body), nullptr}, nullptr, 0);
}

void Endpoint::SendAm(Link* link, unsigned id, SendCtx* ctx, const void* data,
                      size_t size) {
  Status st = link->status();
  if (st.ok() && link->ep_ == nullptr) {
    st = Status::DeviceLost(link->name_ + ": closed");
  }
  if (!st.ok() && id == kData) {
    if (ctx->done) ctx->done(st);
    delete ctx;
    return;
  }
  if (link->ep_ == nullptr) {  // a control message for a closed link
    delete ctx;
    return;
  }
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                   UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  p.flags = UCP_AM_SEND_FLAG_REPLY;
  p.user_data = ctx;
  // Control messages have no `done` and never touch their link here: a
  // refused link may be forgotten before its refusal completes.
  p.cb.send = [](void* req, ucs_status_t s, void* user) {
    auto* c = static_cast<SendCtx*>(user);
    if (c->done) {
      c->done(s == UCS_OK ? Status::OK()
                          : Status::DeviceLost(c->link->name_ +
                                               ": send failed: " + Ucs(s)));
    }
    delete c;
    ucp_request_free(req);
  };
  void* req = ucp_am_send_nbx(link->ep_, id, ctx->header.data(),
                              ctx->header.size(), data, size, &p);
  if (UCS_PTR_IS_ERR(req)) {
    Status s = Status::DeviceLost(link->name_ +
                                  ": send failed: " + Ucs(UCS_PTR_STATUS(req)));
    if (ctx->done) ctx->done(s);
    delete ctx;
    Drop(link, s, /*force=*/true);
  }
}

}  // namespace hflow::net::internal
