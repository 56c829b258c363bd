// UCX data links (net/data_link.h). Active messages carry everything:
// kHello / kWelcome / kRefuse admit a link, kData a message (the header in
// the AM header, the payload as AM data, received straight into the
// sink's buffer when UCX uses rendezvous), kCredit gives credits back.
// Every send asks for the reply endpoint, so a receiver knows the link.
//
// Thread-safety: the UCX worker is touched only by the endpoint's thread
// (UCS_THREAD_MODE_SINGLE); other threads Post closures to it and wake it
// with ucp_worker_signal. A Link's credits and status are under its mu_.
#include "net/data_link.h"

#include <arpa/inet.h>
#include <ucp/api/ucp.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "net/credentials.h"
#include "util/thread_name.h"

namespace hflow::net {
namespace {

using Clock = std::chrono::steady_clock;

// Empty polls before the thread sleeps in ucp_worker_wait. Few: on two
// cores the sender, both endpoint threads and UCX's async threads share
// them, and spinning takes the CPU the peer needs (1 MiB stream, two
// processes: 2.3-2.4 GB/s at 4-16 polls, 2.0 at 64, 1.3-1.5 at 256+).
constexpr int kSpinPolls = 8;

enum AmId : unsigned {
  kData = 1,
  kCredit = 2,
  kHello = 3,
  kWelcome = 4,
  kRefuse = 5
};

std::string Ucs(ucs_status_t s) { return ucs_status_string(s); }

// One UCX context per process: it is what discovers the transports.
Status Context(ucp_context_h* out) {
  static ucp_context_h ctx = nullptr;
  static ucs_status_t status = UCS_OK;
  static std::once_flag once;
  std::call_once(once, [] {
    ucp_config_t* cfg = nullptr;
    status = ucp_config_read(nullptr, nullptr, &cfg);
    if (status != UCS_OK) return;
    ucp_params_t p{};
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    status = ucp_init(&p, cfg, &ctx);
    ucp_config_release(cfg);
  });
  if (status != UCS_OK) {
    return Status::NotSupported("UCX cannot start (" + Ucs(status) +
                                "); check the UCX_* environment variables");
  }
  *out = ctx;
  return Status::OK();
}

Status ToSockaddr(const HostAddress& a, sockaddr_storage* ss, socklen_t* len) {
  std::memset(ss, 0, sizeof(*ss));
  auto* v4 = reinterpret_cast<sockaddr_in*>(ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(ss);
  if (inet_pton(AF_INET, a.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(a.port);
    *len = sizeof(sockaddr_in);
    return Status::OK();
  }
  if (inet_pton(AF_INET6, a.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(a.port);
    *len = sizeof(sockaddr_in6);
    return Status::OK();
  }
  return Status::InvalidArgument("data link address " + a.ToString() +
                                 ": write an IP address (UCX takes no "
                                 "host names)");
}

std::string FromSockaddr(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof(buf));
    return std::string(buf) + ":" + std::to_string(ntohs(v4->sin_port));
  }
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&ss);
  inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof(buf));
  return "[" + std::string(buf) + "]:" + std::to_string(ntohs(v6->sin6_port));
}

class Endpoint;

class Link final : public DataLink {
 public:
  Link(Endpoint* e, std::string name, DataSink* sink)
      : endpoint_(e), name_(std::move(name)), sink_(sink) {}

  Status Send(std::string header, const void* data, size_t size,
              int32_t timeout_ms,
              std::function<void(const Status&)> done) override;
  void Grant(uint32_t n) override;
  Status status() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  const std::string& name() const override { return name_; }

  // ---- the endpoint's thread ----
  void Fail(const Status& s) {
    std::unique_lock<std::mutex> lock(mu_);
    if (status_.ok()) status_ = s;
    cv_.notify_all();
    if (notified_ || !admitted_ || sink_ == nullptr) return;
    notified_ = true;
    const Status why = status_;
    lock.unlock();
    sink_->Closed(this, why);
  }
  void AddCredits(uint32_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    credits_ += n;
    cv_.notify_all();
  }
  void Admit(uint32_t credits) {
    std::lock_guard<std::mutex> lock(mu_);
    admitted_ = true;
    credits_ = credits;
    cv_.notify_all();
  }
  // Waits (caller's thread) until admitted or failed.
  Status AwaitAdmission(int32_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    const bool done = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                   [&] { return admitted_ || !status_.ok(); });
    if (!status_.ok()) return status_;
    if (!done) {
      status_ =
          Status::Timeout(name_ + ": the peer did not admit the link in " +
                          std::to_string(timeout_ms) + " ms");
      return status_;
    }
    return Status::OK();
  }
  bool admitted() const {
    std::lock_guard<std::mutex> lock(mu_);
    return admitted_;
  }

  Endpoint* const endpoint_;
  const std::string name_;
  DataSink* sink_;         // set before admission
  ucp_ep_h ep_ = nullptr;  // endpoint thread only

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint32_t credits_ = 0;
  bool admitted_ = false;
  bool notified_ = false;
  Status status_;
};

struct SendCtx {
  Link* link;
  std::string header;
  uint32_t credits = 0;  // kCredit/kHello payload of the header
  std::function<void(const Status&)> done;
};

struct RecvCtx {
  Link* link;
  std::string header;
  void* data;
  size_t size;
};

class Endpoint final : public DataEndpoint {
 public:
  explicit Endpoint(const DataLinkOptions& o) : opts_(o) {}
  ~Endpoint() override;

  Status Start();
  Status Listen(const HostAddress& address,
                std::function<DataSink*(DataLink*)> accept,
                HostAddress* bound) override;
  Status Connect(const HostAddress& address, DataSink* sink,
                 DataLink** out) override;

  void Post(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      commands_.push_back(std::move(fn));
    }
    ucp_worker_signal(worker_);
  }
  // Runs fn on the endpoint's thread and waits for it.
  template <typename F>
  auto Call(F fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    Post([&task] { task(); });
    return result.get();
  }

  // ---- the endpoint's thread ----
  void SendAm(Link* link, unsigned id, SendCtx* ctx, const void* data,
              size_t size);
  // `force` after an error (nothing to flush); else the peer is told.
  void Close(Link* link, bool force = true);
  const DataLinkOptions opts_;

 private:
  void Loop();
  bool HasCommands() {
    std::lock_guard<std::mutex> lock(mu_);
    return !commands_.empty();
  }
  Link* AddLink(std::unique_ptr<Link> link) {
    std::lock_guard<std::mutex> lock(links_mu_);
    links_.push_back(std::move(link));
    return links_.back().get();
  }
  static ucs_status_t OnAm(void* arg, const void* header, size_t header_len,
                           void* data, size_t len,
                           const ucp_am_recv_param_t* param);
  static void OnConnRequest(ucp_conn_request_h req, void* arg);
  static void OnEpError(void* arg, ucp_ep_h ep, ucs_status_t status);
  ucs_status_t HandleAm(unsigned id, const void* header, size_t header_len,
                        void* data, size_t len,
                        const ucp_am_recv_param_t* param);
  void HandleHello(Link* link, const void* header, size_t len);
  void Receive(Link* link, const void* header, size_t header_len, void* data,
               size_t len, const ucp_am_recv_param_t* param);
  Status CreateEp(ucp_ep_params_t* p, Link* link);

  void ReapClosing();

  ucp_worker_h worker_ = nullptr;
  ucp_listener_h listener_ = nullptr;
  std::vector<void*> closing_;  // ep close requests in flight
  std::function<DataSink*(DataLink*)> accept_;
  std::unordered_map<ucp_ep_h, Link*> by_ep_;  // endpoint thread only
  std::thread thread_;
  std::mutex mu_;
  std::deque<std::function<void()>> commands_;
  bool stop_ = false;
  std::mutex links_mu_;
  std::vector<std::unique_ptr<Link>> links_;
};

// ---- Link --------------------------------------------------------------

Status Link::Send(std::string header, const void* data, size_t size,
                  int32_t timeout_ms, std::function<void(const Status&)> done) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] { return credits_ > 0 || !status_.ok(); };
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
  auto* ctx = new SendCtx{this, std::move(header), 0, std::move(done)};
  endpoint_->Post([this, ctx, data, size] {
    endpoint_->SendAm(this, kData, ctx, data, size);
  });
  return Status::OK();
}

void Link::Grant(uint32_t n) {
  if (n == 0) return;
  auto* ctx = new SendCtx{this, std::string(), n, nullptr};
  endpoint_->Post(
      [this, ctx] { endpoint_->SendAm(this, kCredit, ctx, nullptr, 0); });
}

// ---- Endpoint ------------------------------------------------------------

Status Endpoint::Start() {
  ucp_context_h ctx = nullptr;
  HFLOW_RETURN_IF_ERROR(Context(&ctx));
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucs_status_t s = ucp_worker_create(ctx, &wp, &worker_);
  if (s != UCS_OK) {
    return Status::NotSupported("UCX worker: " + Ucs(s));
  }
  for (unsigned id : {kData, kCredit, kHello, kWelcome, kRefuse}) {
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                    UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = id;
    hp.cb = &Endpoint::OnAm;
    // The id rides in the low bits of the argument: one handler for all.
    hp.arg = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(this) | id);
    s = ucp_worker_set_am_recv_handler(worker_, &hp);
    if (s != UCS_OK) return Status::Internal("UCX AM handler: " + Ucs(s));
  }
  thread_ = std::thread([this] { Loop(); });
  return Status::OK();
}

Endpoint::~Endpoint() {
  if (thread_.joinable()) {
    Call([this] {
      std::vector<Link*> all;
      {
        std::lock_guard<std::mutex> lock(links_mu_);
        for (auto& l : links_) all.push_back(l.get());
      }
      for (Link* l : all) {
        Close(l, /*force=*/false);
        l->Fail(Status::Cancelled(l->name_ + ": closed by this side"));
      }
      if (listener_ != nullptr) ucp_listener_destroy(listener_);
      listener_ = nullptr;
      // Flushing closes tell the peers; bounded (a dead peer never answers).
      const auto until = Clock::now() + std::chrono::seconds(2);
      while (!closing_.empty() && Clock::now() < until) {
        ucp_worker_progress(worker_);
        ReapClosing();
      }
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      return 0;
    });
    thread_.join();
  }
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
}

void Endpoint::Loop() {
  util::SetCurrentThreadName("hflow-data");
  for (;;) {
    std::deque<std::function<void()>> cmds;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) break;
      cmds.swap(commands_);
    }
    for (auto& c : cmds) c();
    // Spin a little before sleeping: a stream's next message is usually
    // moments away.
    for (int idle = 0; idle < kSpinPolls;) {
      idle = ucp_worker_progress(worker_) != 0 ? 0 : idle + 1;
      if (HasCommands()) break;
    }
    if (!closing_.empty()) ReapClosing();
    if (HasCommands()) continue;
    if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) continue;
    if (HasCommands()) continue;
    ucp_worker_wait(worker_);  // ucp_worker_signal (Post) ends it too
  }
}

Status Endpoint::CreateEp(ucp_ep_params_t* p, Link* link) {
  p->field_mask |=
      UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  p->err_mode = UCP_ERR_HANDLING_MODE_PEER;
  p->err_handler.cb = &Endpoint::OnEpError;
  p->err_handler.arg = link;
  ucs_status_t s = ucp_ep_create(worker_, p, &link->ep_);
  if (s != UCS_OK) {
    link->ep_ = nullptr;
    return Status::NotFound(link->name_ + ": " + Ucs(s));
  }
  by_ep_[link->ep_] = link;
  return Status::OK();
}

void Endpoint::Close(Link* link, bool force) {
  if (link->ep_ == nullptr) return;
  by_ep_.erase(link->ep_);
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* req = ucp_ep_close_nbx(link->ep_, &p);
  link->ep_ = nullptr;
  // Reaped by Loop: Close may run inside UCX's callbacks, where progress
  // must not be called again.
  if (UCS_PTR_IS_PTR(req)) closing_.push_back(req);
}

void Endpoint::ReapClosing() {
  for (size_t i = 0; i < closing_.size();) {
    if (ucp_request_check_status(closing_[i]) == UCS_INPROGRESS) {
      ++i;
      continue;
    }
    ucp_request_free(closing_[i]);
    closing_[i] = closing_.back();
    closing_.pop_back();
  }
}

void Endpoint::SendAm(Link* link, unsigned id, SendCtx* ctx, const void* data,
                      size_t size) {
  auto finish = [](SendCtx* c, const Status& s) {
    if (c->done) c->done(s);
    delete c;
  };
  Status st = link->status();
  if (st.ok() && link->ep_ == nullptr)
    st = Status::DeviceLost(link->name_ + ": closed");
  if (!st.ok()) {
    finish(ctx, st);
    return;
  }
  const void* header = ctx->header.data();
  size_t header_len = ctx->header.size();
  if (id == kCredit || id == kHello || id == kWelcome) {
    // Credits first; a hello's key follows them.
    ctx->header.insert(0, reinterpret_cast<const char*>(&ctx->credits),
                       sizeof(ctx->credits));
    header = ctx->header.data();
    header_len = ctx->header.size();
  }
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                   UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  p.flags = UCP_AM_SEND_FLAG_REPLY;
  p.user_data = ctx;
  p.cb.send = [](void* req, ucs_status_t s, void* user) {
    auto* c = static_cast<SendCtx*>(user);
    Status st =
        s == UCS_OK
            ? Status::OK()
            : Status::DeviceLost(c->link->name_ + ": send failed: " + Ucs(s));
    if (c->done) c->done(st);
    delete c;
    ucp_request_free(req);
  };
  void* req =
      ucp_am_send_nbx(link->ep_, id, header, header_len, data, size, &p);
  if (UCS_PTR_IS_ERR(req)) {
    Status s = Status::DeviceLost(link->name_ +
                                  ": send failed: " + Ucs(UCS_PTR_STATUS(req)));
    finish(ctx, s);
    link->Fail(s);
  }
}

Status Endpoint::Listen(const HostAddress& address,
                        std::function<DataSink*(DataLink*)> accept,
                        HostAddress* bound) {
  sockaddr_storage ss;
  socklen_t len = 0;
  HFLOW_RETURN_IF_ERROR(ToSockaddr(address, &ss, &len));
  return Call([&]() -> Status {
    accept_ = std::move(accept);
    ucp_listener_params_t lp{};
    lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR |
                    UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
    lp.sockaddr.addr = reinterpret_cast<const sockaddr*>(&ss);
    lp.sockaddr.addrlen = len;
    lp.conn_handler.cb = &Endpoint::OnConnRequest;
    lp.conn_handler.arg = this;
    ucs_status_t s = ucp_listener_create(worker_, &lp, &listener_);
    if (s != UCS_OK) {
      listener_ = nullptr;
      return Status::FailedPrecondition(
          "cannot listen for data links on " + address.ToString() + " (" +
          Ucs(s) +
          "): the port is in use or no interface has exactly that "
          "address");
    }
    ucp_listener_attr_t attr{};
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    ucp_listener_query(listener_, &attr);
    *bound = address;
    const std::string b = FromSockaddr(attr.sockaddr);
    bound->port = static_cast<uint16_t>(std::stoi(b.substr(b.rfind(':') + 1)));
    return Status::OK();
  });
}

Status Endpoint::Connect(const HostAddress& address, DataSink* sink,
                         DataLink** out) {
  sockaddr_storage ss;
  socklen_t len = 0;
  HFLOW_RETURN_IF_ERROR(ToSockaddr(address, &ss, &len));
  Link* link = AddLink(
      std::make_unique<Link>(this, "data link to " + address.ToString(), sink));
  Status s = Call([&]() -> Status {
    ucp_ep_params_t p{};
    p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
    p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&ss);
    p.sockaddr.addrlen = len;
    HFLOW_RETURN_IF_ERROR(CreateEp(&p, link));
    SendAm(link, kHello, new SendCtx{link, opts_.key, opts_.credits, nullptr},
           nullptr, 0);
    return Status::OK();
  });
  if (s.ok()) s = link->AwaitAdmission(opts_.connect_timeout_ms);
  if (!s.ok()) {
    Call([&] {
      Close(link);
      return 0;
    });
    if (s.code() == StatusCode::kDeviceLost) {
      s = Status::NotFound(link->name_ + ": nothing accepts there (" +
                           s.message() + "); check the peer's data address");
    }
    return s;
  }
  *out = link;
  return Status::OK();
}

void Endpoint::OnConnRequest(ucp_conn_request_h req, void* arg) {
  auto* self = static_cast<Endpoint*>(arg);
  ucp_conn_request_attr_t attr{};
  attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  std::string peer = "?";
  if (ucp_conn_request_query(req, &attr) == UCS_OK) {
    peer = FromSockaddr(attr.client_address);
  }
  Link* link = self->AddLink(
      std::make_unique<Link>(self, "data link from " + peer, nullptr));
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
  p.conn_request = req;
  if (!self->CreateEp(&p, link).ok()) {
    link->Fail(Status::DeviceLost(link->name_ + ": cannot accept"));
  }
}

void Endpoint::OnEpError(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* link = static_cast<Link*>(arg);
  link->Fail(Status::DeviceLost(link->name_ + " failed: " + Ucs(status)));
  link->endpoint_->Close(link);
}

ucs_status_t Endpoint::OnAm(void* arg, const void* header, size_t header_len,
                            void* data, size_t len,
                            const ucp_am_recv_param_t* param) {
  const uintptr_t raw = reinterpret_cast<uintptr_t>(arg);
  auto* self = reinterpret_cast<Endpoint*>(raw & ~uintptr_t{7});
  return self->HandleAm(static_cast<unsigned>(raw & 7), header, header_len,
                        data, len, param);
}

ucs_status_t Endpoint::HandleAm(unsigned id, const void* header,
                                size_t header_len, void* data, size_t len,
                                const ucp_am_recv_param_t* param) {
  auto it = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
                ? by_ep_.find(param->reply_ep)
                : by_ep_.end();
  if (it == by_ep_.end()) return UCS_OK;  // a closed or unknown link
  Link* link = it->second;
  uint32_t credits = 0;
  if (id != kData && header_len >= sizeof(credits)) {
    std::memcpy(&credits, header, sizeof(credits));
  }
  switch (id) {
    case kHello:
      HandleHello(link, header, header_len);
      break;
    case kWelcome:
      link->Admit(credits);
      break;
    case kRefuse:
      link->Fail(Status::PermissionDenied(
          link->name_ + ": the peer refused the link (another session key)"));
      Close(link);
      break;
    case kCredit:
      if (link->admitted()) link->AddCredits(credits);
      break;
    case kData:
      if (link->admitted()) Receive(link, header, header_len, data, len, param);
      break;
  }
  return UCS_OK;
}

void Endpoint::HandleHello(Link* link, const void* header, size_t len) {
  if (link->admitted() || len < sizeof(uint32_t)) return;
  uint32_t credits = 0;
  std::memcpy(&credits, header, sizeof(credits));
  const std::string_view key(static_cast<const char*>(header) + sizeof(credits),
                             len - sizeof(credits));
  DataSink* sink = nullptr;
  if (TokensEqual(key, opts_.key) && accept_) sink = accept_(link);
  if (sink == nullptr) {
    SendAm(link, kRefuse, new SendCtx{link, std::string(), 0, nullptr}, nullptr,
           0);
    link->Fail(Status::PermissionDenied(link->name_ + ": refused"));
    return;  // the peer closes it on the refusal
  }
  link->sink_ = sink;
  link->Admit(credits);
  SendAm(link, kWelcome,
         new SendCtx{link, std::string(), opts_.credits, nullptr}, nullptr, 0);
}

void Endpoint::Receive(Link* link, const void* header, size_t header_len,
                       void* data, size_t len,
                       const ucp_am_recv_param_t* param) {
  std::string h(static_cast<const char*>(header), header_len);
  if (len == 0) {
    link->sink_->Deliver(link, std::move(h), nullptr, 0);
    return;
  }
  void* buf = link->sink_->Allocate(link, len);
  if (buf == nullptr) {
    link->Fail(Status::OutOfMemory(link->name_ +
                                   ": the receiver has no room "
                                   "for a message of " +
                                   std::to_string(len) + " bytes"));
    Close(link);
    return;
  }
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    std::memcpy(buf, data, len);
    link->sink_->Deliver(link, std::move(h), buf, len);
    return;
  }
  auto* ctx = new RecvCtx{link, std::move(h), buf, len};
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                   UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  p.user_data = ctx;
  p.cb.recv_am = [](void* req, ucs_status_t s, size_t, void* user) {
    auto* c = static_cast<RecvCtx*>(user);
    if (s == UCS_OK) {
      c->link->sink_->Deliver(c->link, std::move(c->header), c->data, c->size);
    } else {
      c->link->Fail(
          Status::DeviceLost(c->link->name_ + ": receive failed: " + Ucs(s)));
    }
    delete c;
    ucp_request_free(req);
  };
  void* req = ucp_am_recv_data_nbx(worker_, data, buf, len, &p);
  if (UCS_PTR_IS_ERR(req)) {
    link->Fail(Status::DeviceLost(
        link->name_ + ": receive failed: " + Ucs(UCS_PTR_STATUS(req))));
    delete ctx;
  }
}

}  // namespace

Status DataLink::SendAndWait(std::string header, const void* data, size_t size,
                             int32_t timeout_ms) {
  std::promise<Status> sent;
  auto result = sent.get_future();
  HFLOW_RETURN_IF_ERROR(Send(std::move(header), data, size, timeout_ms,
                             [&sent](const Status& s) { sent.set_value(s); }));
  return result.get();
}

Status DataEndpoint::Create(const DataLinkOptions& options,
                            std::unique_ptr<DataEndpoint>* out) {
  if (options.credits == 0) {
    return Status::InvalidArgument("data link credits must be at least 1");
  }
  auto e = std::make_unique<Endpoint>(options);
  HFLOW_RETURN_IF_ERROR(e->Start());
  *out = std::move(e);
  return Status::OK();
}

}  // namespace hflow::net
