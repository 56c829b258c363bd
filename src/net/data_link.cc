// UCX data links (net/data_link.h): the endpoint's life, its thread, and
// how links are made (Listen, Connect, a connection request) and closed.
// Sends and credits are in data_link_send.cc, what arrives (the handshake,
// the ordered inbox) in data_link_receive.cc; the shared declarations in
// data_link_internal.h.
//
// Thread-safety: the UCX worker is touched only by the endpoint's thread
// (UCS_THREAD_MODE_SINGLE), and by the destructor after that thread ended;
// other threads Post closures to it and wake it with ucp_worker_signal.
#include "net/data_link.h"

#include <arpa/inet.h>
#include <poll.h>

#include <cstring>

#include "net/data_link_internal.h"
#include "util/thread_name.h"

namespace hflow::net {
namespace internal {
namespace {

// Empty polls before the thread sleeps. Few: on two cores the sender, both
// endpoint threads and UCX's async threads share them, and spinning takes
// the CPU the peer needs (1 MiB stream between two processes, measured
// with a third process busy on one of the two cores: 2.3-2.4 GB/s at 4-16
// polls, 2.0 at 64, 1.3-1.5 at 256 and more; at 8 on a quiet machine,
// 4.8 GB/s).
constexpr int kSpinPolls = 8;
// The longest sleep: UCX's keepalive and the admission sweep run from the
// loop, so a peer that vanished without a word is still noticed.
constexpr int kSleepMs = 250;

// One UCX context per process, shared by every endpoint's worker (each on
// its own thread: mt_workers_shared).
Status Context(ucp_context_h* out) {
  static ucp_context_h ctx = nullptr;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    ucp_config_t* cfg = nullptr;
    ucs_status_t s = ucp_config_read(nullptr, nullptr, &cfg);
    if (s == UCS_OK) {
      ucp_params_t p{};
      p.field_mask =
          UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
      p.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
      p.mt_workers_shared = 1;
      s = ucp_init(&p, cfg, &ctx);
      ucp_config_release(cfg);
    }
    if (s != UCS_OK) {
      error = Ucs(s);
      return;
    }
    ucp_context_attr_t attr{};
    attr.field_mask = UCP_ATTR_FIELD_THREAD_MODE;
    if (ucp_context_query(ctx, &attr) == UCS_OK &&
        attr.thread_mode == UCS_THREAD_MODE_SINGLE) {
      error = "this UCX build cannot share a context between threads";
      ucp_cleanup(ctx);
      ctx = nullptr;
    }
  });
  if (ctx == nullptr) {
    return Status::NotSupported("UCX cannot start (" + error +
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

uint16_t PortOf(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
}

}  // namespace

std::string FromSockaddr(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof(buf));
    return std::string(buf) + ":" + std::to_string(PortOf(ss));
  }
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&ss);
  inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof(buf));
  return "[" + std::string(buf) + "]:" + std::to_string(PortOf(ss));
}

// ---- Endpoint ------------------------------------------------------------

Status Endpoint::Start() {
  ucp_context_h ctx = nullptr;
  HFLOW_RETURN_IF_ERROR(Context(&ctx));
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucs_status_t s = ucp_worker_create(ctx, &wp, &worker_);
  if (s != UCS_OK) return Status::NotSupported("UCX worker: " + Ucs(s));
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
  if (ucp_worker_query(worker_, &attr) == UCS_OK) {
    max_header_ = attr.max_am_header;
  }
  s = ucp_worker_get_efd(worker_, &efd_);
  if (s != UCS_OK) return Status::NotSupported("UCX worker wake-up: " + Ucs(s));
  for (unsigned id = kData; id <= kRefuse; ++id) {
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
  thread_id_ = thread_.get_id();
  return Status::OK();
}

void Endpoint::Post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    commands_.push_back(std::move(fn));
  }
  ucp_worker_signal(worker_);
}

bool Endpoint::HasCommands() {
  std::lock_guard<std::mutex> lock(mu_);
  return !commands_.empty();
}

void Endpoint::RunCommands(std::deque<std::function<void()>>* cmds) {
  for (auto& c : *cmds) c();
  cmds->clear();
}

void Endpoint::Loop() {
  util::SetCurrentThreadName("hflow-data");
  auto last_sweep = Clock::now();
  for (;;) {
    std::deque<std::function<void()>> cmds;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cmds.swap(commands_);
    }
    RunCommands(&cmds);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) break;  // commands posted later run in the destructor
    }
    for (int idle = 0; idle < kSpinPolls;) {
      idle = ucp_worker_progress(worker_) != 0 ? 0 : idle + 1;
      if (HasCommands()) break;
    }
    if (!closing_.empty()) ReapClosing();
    if (Clock::now() - last_sweep > std::chrono::milliseconds(kSleepMs)) {
      Sweep();
      last_sweep = Clock::now();
    }
    if (HasCommands()) continue;
    // BUSY: events (or a signal) are pending; the next round takes them.
    if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) continue;
    if (HasCommands()) continue;
    pollfd pfd{efd_, POLLIN, 0};
    (void)poll(&pfd, 1, kSleepMs);
  }
}

void Endpoint::Shutdown() {
  std::vector<Link*> all;
  {
    std::lock_guard<std::mutex> lock(links_mu_);
    for (auto& l : links_) all.push_back(l.get());
  }
  for (Link* l : all) {
    Drop(l, Status::Cancelled(l->name_ + ": closed by this side"),
         /*force=*/false);
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
}

Endpoint::~Endpoint() {
  if (thread_.joinable()) {
    Post([this] { Shutdown(); });
    thread_.join();
    // The thread is gone: this one may drive the worker now. Sends posted
    // after the shutdown find their links closed and report it.
    std::deque<std::function<void()>> cmds;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cmds.swap(commands_);
    }
    RunCommands(&cmds);
    const auto until = Clock::now() + std::chrono::seconds(2);
    while (!closing_.empty() && Clock::now() < until) {
      ucp_worker_progress(worker_);
      ReapClosing();
    }
  }
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
}

Link* Endpoint::AddLink(std::unique_ptr<Link> link) {
  std::lock_guard<std::mutex> lock(links_mu_);
  links_.push_back(std::move(link));
  return links_.back().get();
}

// Links that never got in are closed when they have not proved the key in
// time, and forgotten once closed (nobody outside ever saw them).
void Endpoint::Sweep() {
  const auto limit = std::chrono::milliseconds(opts_.connect_timeout_ms);
  std::lock_guard<std::mutex> lock(links_mu_);
  for (auto& l : links_) {
    if (!l->outgoing_ && l->phase_ != Link::Phase::kOpen &&
        l->phase_ != Link::Phase::kDone && Clock::now() - l->created_ > limit) {
      Drop(l.get(),
           Status::PermissionDenied(l->name_ +
                                    ": did not prove the session key in time"),
           /*force=*/true);
    }
  }
  links_.erase(std::remove_if(links_.begin(), links_.end(),
                              [](const std::unique_ptr<Link>& l) {
                                return !l->outgoing_ && l->ep_ == nullptr &&
                                       l->phase_ == Link::Phase::kDone &&
                                       !l->admitted();
                              }),
               links_.end());
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

void Endpoint::Drop(Link* link, const Status& why, bool force) {
  link->phase_ = Link::Phase::kDone;
  link->Fail(why);
  Close(link, force);
  DeliverReady(link);  // gives back the buffers of complete messages
}

Status Endpoint::Listen(const HostAddress& address,
                        std::function<DataSink*(DataLink*)> accept,
                        HostAddress* bound) {
  if (OnEndpointThread()) {
    return Status::FailedPrecondition("Listen from a data link callback");
  }
  sockaddr_storage ss;
  socklen_t len = 0;
  HFLOW_RETURN_IF_ERROR(ToSockaddr(address, &ss, &len));
  return Call([&]() -> Status {
    if (listener_ != nullptr) {
      return Status::AlreadyExists("this endpoint listens already");
    }
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
          "): the port is in use or no interface has exactly that address");
    }
    ucp_listener_attr_t attr{};
    attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
    ucp_listener_query(listener_, &attr);
    *bound = address;
    bound->port = PortOf(attr.sockaddr);
    return Status::OK();
  });
}

Status Endpoint::Connect(const HostAddress& address, DataSink* sink,
                         DataLink** out) {
  if (OnEndpointThread()) {
    return Status::FailedPrecondition("Connect from a data link callback");
  }
  sockaddr_storage ss;
  socklen_t len = 0;
  HFLOW_RETURN_IF_ERROR(ToSockaddr(address, &ss, &len));
  Link* link = AddLink(std::make_unique<Link>(
      this, "data link to " + address.ToString(), sink, /*outgoing=*/true));
  Status s = Call([&]() -> Status {
    ucp_ep_params_t p{};
    p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
    p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    p.sockaddr.addr = reinterpret_cast<const sockaddr*>(&ss);
    p.sockaddr.addrlen = len;
    HFLOW_RETURN_IF_ERROR(MakeNonce(&link->nonce_c_));
    HFLOW_RETURN_IF_ERROR(CreateEp(&p, link));
    std::string hello(reinterpret_cast<const char*>(&opts_.credits),
                      sizeof(opts_.credits));
    hello.append(reinterpret_cast<const char*>(link->nonce_c_.data()),
                 link->nonce_c_.size());
    SendControl(link, kHello, std::move(hello));
    return Status::OK();
  });
  if (s.ok()) s = link->AwaitAdmission(opts_.connect_timeout_ms);
  if (!s.ok()) {
    // The caller never gets this link: its sink must hear nothing more.
    Call([&] {
      link->sink_ = nullptr;
      Drop(link, s, /*force=*/true);
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
  std::string peer = "an unknown peer";
  if (ucp_conn_request_query(req, &attr) == UCS_OK) {
    peer = FromSockaddr(attr.client_address);
  }
  Link* link = self->AddLink(std::make_unique<Link>(
      self, "data link from " + peer, nullptr, /*outgoing=*/false));
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
  p.conn_request = req;
  if (!self->CreateEp(&p, link).ok()) {
    link->phase_ = Link::Phase::kDone;
    link->Fail(Status::DeviceLost(link->name_ + ": cannot accept"));
  }
}

void Endpoint::OnEpError(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* link = static_cast<Link*>(arg);
  link->endpoint_->Drop(
      link, Status::DeviceLost(link->name_ + " failed: " + Ucs(status)),
      /*force=*/true);
}

ucs_status_t Endpoint::OnAm(void* arg, const void* header, size_t header_len,
                            void* data, size_t len,
                            const ucp_am_recv_param_t* param) {
  const uintptr_t raw = reinterpret_cast<uintptr_t>(arg);
  auto* self = reinterpret_cast<Endpoint*>(raw & ~uintptr_t{7});
  return self->HandleAm(static_cast<unsigned>(raw & 7), header, header_len,
                        data, len, param);
}

}  // namespace internal

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
  if (options.key.size() < kMinKeyBytes) {
    return Status::InvalidArgument("a data link session key needs at least " +
                                   std::to_string(kMinKeyBytes) +
                                   " bytes, got " +
                                   std::to_string(options.key.size()));
  }
  auto e = std::make_unique<internal::Endpoint>(options);
  HFLOW_RETURN_IF_ERROR(e->Start());
  *out = std::move(e);
  return Status::OK();
}

}  // namespace hflow::net
