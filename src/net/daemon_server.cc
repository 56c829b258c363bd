// hflowd's gRPC service (net/daemon_server.h): admission (credentials and
// protocol version) in one place, Admit, called first by every method; the
// methods translate between the wire and the handler's plain structs.
//
// Thread-safety: methods run on gRPC's threads; Watch streams wait on
// mu_/cv_ and end when Stop is called or their client goes away.
#include "net/daemon_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "net/proto/hflowd.grpc.pb.h"

namespace hflow::net {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t)
      .count();
}

void ToWire(const DeviceReport& r, v1::DeviceReport* w) {
  w->set_id(r.id);
  w->set_contexts_created(r.contexts_created);
  w->set_implicit_bindings(r.implicit_bindings);
  w->set_submodels(r.submodels);
  w->set_queues(r.queues);
  w->set_peak_mem_bytes(r.peak_mem_bytes);
  w->set_dropped_msgs(r.dropped_msgs);
}

class Service final : public v1::Hflowd::Service {
 public:
  Service(const ServerOptions& o, DaemonHandler* h) : opts_(o), handler_(h) {}

  grpc::Status Hello(grpc::ServerContext* ctx, const v1::HelloRequest* req,
                     v1::HelloReply* rep) override {
    grpc::Status admitted = Admit(ctx, req->protocol_version(), "Hello");
    if (!admitted.ok()) return admitted;
    HelloQuery q;
    q.node_id = req->node_id();
    q.devices.assign(req->devices().begin(), req->devices().end());
    q.driver = req->driver();
    const HelloInfo info = handler_->Hello(q, ctx->peer());
    rep->set_protocol_version(opts_.protocol_version);
    rep->set_hostname(info.hostname);
    rep->set_pid(info.pid);
    rep->set_backend(info.backend);
    for (int32_t d : info.devices) rep->add_devices(d);
    for (const std::string& l : info.labels) rep->add_labels(l);
    rep->set_node_id(info.node_id);
    rep->set_release(info.release);
    rep->set_started_unix_ms(info.started_unix_ms);
    return grpc::Status::OK;
  }

  grpc::Status Heartbeat(grpc::ServerContext* ctx,
                         const v1::HeartbeatRequest* req,
                         v1::HeartbeatReply* rep) override {
    grpc::Status admitted = Admit(ctx, req->protocol_version(), "Heartbeat");
    if (!admitted.ok()) return admitted;
    Beat(rep);
    return grpc::Status::OK;
  }

  grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRequest* req,
                     grpc::ServerWriter<v1::HeartbeatReply>* w) override {
    grpc::Status admitted = Admit(ctx, req->protocol_version(), "Watch");
    if (!admitted.ok()) return admitted;
    const auto interval = std::chrono::milliseconds(
        std::clamp<uint32_t>(req->interval_ms(), 10, 10000));
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_ && !ctx->IsCancelled()) {
      v1::HeartbeatReply beat;
      Beat(&beat);
      lock.unlock();
      const bool sent = w->Write(beat);
      lock.lock();
      if (!sent) break;
      cv_.wait_for(lock, interval, [&] { return stopping_; });
    }
    lock.unlock();
    // The stream kept the session's instances: whoever ended it (the
    // driver, its death, a lost connection, this daemon's stop), they go.
    if (!req->session().empty()) {
      Log("session " + req->session() + " of " + ctx->peer() + " ended");
      handler_->SessionEnded(req->session());
    }
    return grpc::Status::OK;
  }

  grpc::Status Call(grpc::ServerContext* ctx, const v1::CallRequest* req,
                    v1::CallReply* rep) override {
    grpc::Status admitted = Admit(ctx, req->protocol_version(), "Call");
    if (!admitted.ok()) return admitted;
    InstanceCall call;
    call.session = req->session();
    call.instance = req->instance();
    call.request = req->request();
    call.payloads.assign(req->payloads().begin(), req->payloads().end());
    InstanceReply reply;
    Status s = handler_->Call(&call, &reply);
    if (!s.ok()) {
      // hflow's code travels whole (gRPC's codes would lose kNoContext).
      rep->set_error_code(static_cast<int32_t>(s.code()));
      rep->set_error(s.message());
      return grpc::Status::OK;
    }
    rep->set_reply(std::move(reply.reply));
    for (std::string& r : reply.replies) rep->add_replies(std::move(r));
    for (std::string& p : reply.payloads) rep->add_payloads(std::move(p));
    return grpc::Status::OK;
  }

  grpc::Status DeviceReports(grpc::ServerContext* ctx,
                             const v1::DeviceReportsRequest* req,
                             v1::DeviceReportsReply* rep) override {
    grpc::Status admitted =
        Admit(ctx, req->protocol_version(), "DeviceReports");
    if (!admitted.ok()) return admitted;
    std::vector<DeviceReport> reports;
    Status s = handler_->DeviceReports(&reports);
    if (!s.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, s.ToString());
    for (const DeviceReport& r : reports) ToWire(r, rep->add_devices());
    return grpc::Status::OK;
  }

  // Ends the Watch streams (Shutdown waits for running methods).
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }

 private:
  // Every method's first step: the token (when the daemon has one; TLS
  // client certificates were checked by the handshake) and the version.
  grpc::Status Admit(grpc::ServerContext* ctx, uint32_t version,
                     const char* method) {
    if (opts_.credentials.HasToken()) {
      const auto& md = ctx->client_metadata();
      auto it = md.find(kTokenMetadataKey);
      const char* why = nullptr;
      if (it == md.end()) {
        why = "presented no token";
      } else if (!TokensEqual(
                     std::string_view(it->second.data(), it->second.size()),
                     opts_.credentials.token)) {
        why = "presented a wrong token";
      }
      if (why != nullptr) {
        Log(std::string("refused ") + method + " from " + ctx->peer() + ": " +
            why);
        return grpc::Status(
            grpc::StatusCode::UNAUTHENTICATED,
            std::string("the daemon refused the call: the driver ") + why +
                "; give the driver the token file hflowd was started with "
                "(the cluster config's \"credentials\": {\"token_file\": "
                "...})");
      }
    }
    if (version != opts_.protocol_version) {
      Log(std::string("refused ") + method + " from " + ctx->peer() +
          ": protocol " + std::to_string(version));
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "protocol mismatch: hflowd speaks protocol " +
                              std::to_string(opts_.protocol_version) +
                              ", the driver " + std::to_string(version) +
                              "; run the same hflow release on every host");
    }
    return grpc::Status::OK;
  }

  void Beat(v1::HeartbeatReply* rep) {
    rep->set_sequence(++sequence_);
    rep->set_uptime_ms(MsSince(started_));
  }

  void Log(const std::string& line) {
    if (opts_.log) opts_.log(line);
  }

  const ServerOptions opts_;
  DaemonHandler* const handler_;
  const Clock::time_point started_ = Clock::now();
  std::atomic<uint64_t> sequence_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

std::shared_ptr<grpc::ServerCredentials> ServerCreds(const Credentials& c) {
  if (!c.HasTls()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions o(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  o.pem_root_certs = c.ca_pem;
  o.pem_key_cert_pairs.push_back({c.key_pem, c.cert_pem});
  return grpc::SslServerCredentials(o);
}

}  // namespace

Status RequireCredentials(const Credentials& credentials) {
  if (!credentials.Empty()) return Status::OK();
  return Status::InvalidArgument(
      "hflowd serves only clients with the cluster's credentials: give "
      "--token-file FILE, or --tls-ca, --tls-cert and --tls-key");
}

struct DaemonServer::Impl {
  HostAddress bound;
  std::unique_ptr<Service> service;
  std::unique_ptr<grpc::Server> server;
  std::once_flag shutdown_once;
};

DaemonServer::DaemonServer(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

DaemonServer::~DaemonServer() { Shutdown(); }

Status DaemonServer::Start(const ServerOptions& options, DaemonHandler* handler,
                           std::unique_ptr<DaemonServer>* out) {
  HFLOW_RETURN_IF_ERROR(RequireCredentials(options.credentials));
  auto impl = std::make_unique<Impl>();
  impl->service = std::make_unique<Service>(options, handler);
  grpc::ServerBuilder b;
  int port = 0;
  b.AddListeningPort(options.listen.ToString(),
                     ServerCreds(options.credentials), &port);
  b.RegisterService(impl->service.get());
  // Another process on the same port must be an error, not a silent share.
  b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Drivers ping idle connections every 500 ms to notice a stopped daemon
  // (HostWatch); pings faster than every 100 ms count as strikes, and a
  // peer that keeps at it is cut off. The daemon pings too, so a driver
  // that vanished without a word frees its Watch stream.
  b.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                       100);
  b.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 3);
  b.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  b.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
  b.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 2000);
  // A Call carries its messages' data: as large as the driver's largest
  // message (Options::max_message_bytes), not gRPC's 4 MiB default.
  b.SetMaxReceiveMessageSize(-1);
  b.SetMaxSendMessageSize(-1);
  b.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 << 20);
  b.AddChannelArgument(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, 4 << 20);
  impl->server = b.BuildAndStart();
  if (impl->server == nullptr || port == 0) {
    return Status::FailedPrecondition(
        "hflowd cannot listen on " + options.listen.ToString() +
        ": the port is in use or the address is not one of this host's; "
        "choose another --listen");
  }
  impl->bound = options.listen;
  impl->bound.port = static_cast<uint16_t>(port);
  out->reset(new DaemonServer(std::move(impl)));
  return Status::OK();
}

const HostAddress& DaemonServer::BoundAddress() const { return impl_->bound; }

void DaemonServer::Shutdown() {
  std::call_once(impl_->shutdown_once, [this] {
    impl_->service->Stop();
    impl_->server->Shutdown(std::chrono::system_clock::now() +
                            std::chrono::seconds(2));
  });
}

void DaemonServer::Wait() { impl_->server->Wait(); }

}  // namespace hflow::net
