// The driver's gRPC client for hflowd (net/host_client.h).
//
// Thread-safety: the stub is shared; HostWatch owns two threads, a reader
// (hflow-hostbeat) blocked on the stream and a monitor (hflow-hostwatch)
// that reports a loss once and cancels the stream when beats are overdue.
#include "net/host_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "net/grpc_status.h"
#include "net/proto/hflowd.grpc.pb.h"
#include "util/thread_name.h"

namespace hflow::net {
namespace {

using Clock = std::chrono::steady_clock;

std::shared_ptr<grpc::ChannelCredentials> ChannelCreds(const Credentials& c) {
  if (!c.HasTls()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions o;
  o.pem_root_certs = c.ca_pem;
  o.pem_private_key = c.key_pem;
  o.pem_cert_chain = c.cert_pem;
  return grpc::SslCredentials(o);
}

DeviceReport FromWire(const v1::DeviceReport& w) {
  DeviceReport r;
  r.id = w.id();
  r.contexts_created = w.contexts_created();
  r.implicit_bindings = w.implicit_bindings();
  r.submodels = w.submodels();
  r.queues = w.queues();
  r.peak_mem_bytes = w.peak_mem_bytes();
  r.dropped_msgs = w.dropped_msgs();
  return r;
}

}  // namespace

struct HostClient::Impl {
  ClientOptions opts;
  std::string where;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Hflowd::Stub> stub;

  // One unary call with the driver's protocol version, a deadline and the
  // token; the daemon's failure named by `where`.
  template <typename Req, typename Rep>
  Status Unary(grpc::Status (v1::Hflowd::Stub::*method)(grpc::ClientContext*,
                                                        const Req&, Rep*),
               Req* req, Rep* rep) {
    req->set_protocol_version(opts.protocol_version);
    grpc::ClientContext ctx;
    Prepare(&ctx);
    return FromGrpc((stub.get()->*method)(&ctx, *req, rep), where);
  }

  // A call's context: deadline (`timeout_ms` < 0: none) and token.
  void Prepare(grpc::ClientContext* ctx, int32_t timeout_ms = 0) const {
    if (timeout_ms == 0) timeout_ms = opts.call_timeout_ms;
    // gRPC takes system_clock deadlines only.
    if (timeout_ms > 0) {
      ctx->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::milliseconds(timeout_ms));
    }
    if (opts.credentials.HasToken()) {
      ctx->AddMetadata(kTokenMetadataKey, opts.credentials.token);
    }
  }
};

HostClient::HostClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HostClient::~HostClient() = default;

const std::string& HostClient::Where() const { return impl_->where; }

bool HostClient::Ready() const {
  return impl_->channel->GetState(false) == GRPC_CHANNEL_READY;
}

Status HostClient::Connect(const HostAddress& address, const ClientOptions& o,
                           std::unique_ptr<HostClient>* out) {
  auto impl = std::make_unique<Impl>();
  impl->opts = o;
  impl->where = "hflowd at " + address.ToString() +
                (o.name.empty() ? "" : " (" + o.name + ")");
  grpc::ChannelArguments args;
  // Pings on an idle connection find a stopped daemon (HostWatch); one
  // daemon per driver connection, never shared with another channel.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 500);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 1000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // Instance calls carry messages as large as the graph's largest, and
  // a 1 MiB message should not wait out HTTP/2's default 64 KiB window
  // growing round trip by round trip.
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 << 20);
  args.SetInt(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, 4 << 20);
  impl->channel = grpc::CreateCustomChannel(address.ToString(),
                                            ChannelCreds(o.credentials), args);
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::milliseconds(o.connect_timeout_ms);
  // The first failed attempt ends the wait: a refused connection or a
  // failed TLS handshake says more now than a timeout would later.
  grpc_connectivity_state st = impl->channel->GetState(true);
  bool timed_out = false;
  while (st != GRPC_CHANNEL_READY && st != GRPC_CHANNEL_TRANSIENT_FAILURE &&
         st != GRPC_CHANNEL_SHUTDOWN) {
    if (!impl->channel->WaitForStateChange(st, deadline)) {
      timed_out = true;
      break;
    }
    st = impl->channel->GetState(true);
  }
  if (st != GRPC_CHANNEL_READY) {
    return Status::NotFound(
        impl->where +
        (timed_out ? ": no answer within " +
                         std::to_string(o.connect_timeout_ms) + " ms"
                   : ": the connection failed") +
        "; start hflowd there (hflowd --listen " + address.ToString() +
        " --devices ...), or correct the node's ipaddr and port" +
        (o.credentials.HasTls()
             ? ", or check the TLS files (the same CA on both sides, the "
               "daemon's certificate naming " +
                   address.host + ")"
             : ""));
  }
  impl->stub = v1::Hflowd::NewStub(impl->channel);
  out->reset(new HostClient(std::move(impl)));
  return Status::OK();
}

Status HostClient::Hello(const HelloQuery& query, HelloInfo* out) {
  v1::HelloRequest req;
  req.set_node_id(query.node_id);
  for (int32_t d : query.devices) req.add_devices(d);
  req.set_driver(query.driver);
  v1::HelloReply rep;
  HFLOW_RETURN_IF_ERROR(impl_->Unary(&v1::Hflowd::Stub::Hello, &req, &rep));
  if (rep.protocol_version() != impl_->opts.protocol_version) {
    return Status::FailedPrecondition(
        impl_->where + ": protocol mismatch: hflowd speaks protocol " +
        std::to_string(rep.protocol_version()) + ", the driver " +
        std::to_string(impl_->opts.protocol_version) +
        "; run the same hflow release on every host");
  }
  HelloInfo info;
  info.protocol_version = rep.protocol_version();
  info.hostname = rep.hostname();
  info.pid = rep.pid();
  info.backend = rep.backend();
  info.devices.assign(rep.devices().begin(), rep.devices().end());
  info.labels.assign(rep.labels().begin(), rep.labels().end());
  info.node_id = rep.node_id();
  info.release = rep.release();
  info.started_unix_ms = rep.started_unix_ms();
  *out = std::move(info);
  return Status::OK();
}

Status HostClient::Heartbeat(uint64_t* sequence) {
  v1::HeartbeatRequest req;
  v1::HeartbeatReply rep;
  HFLOW_RETURN_IF_ERROR(impl_->Unary(&v1::Hflowd::Stub::Heartbeat, &req, &rep));
  *sequence = rep.sequence();
  return Status::OK();
}

Status HostClient::DeviceReports(std::vector<DeviceReport>* out) {
  v1::DeviceReportsRequest req;
  v1::DeviceReportsReply rep;
  HFLOW_RETURN_IF_ERROR(
      impl_->Unary(&v1::Hflowd::Stub::DeviceReports, &req, &rep));
  out->clear();
  for (const auto& d : rep.devices()) out->push_back(FromWire(d));
  return Status::OK();
}

Status HostClient::Call(InstanceCall* call, InstanceReply* reply,
                        int32_t timeout_ms) {
  v1::CallRequest req;
  req.set_protocol_version(impl_->opts.protocol_version);
  req.set_session(call->session);
  req.set_instance(call->instance);
  req.set_request(std::move(call->request));
  for (std::string& p : call->payloads) req.add_payloads(std::move(p));
  call->payloads.clear();
  v1::CallReply rep;
  grpc::ClientContext ctx;
  impl_->Prepare(&ctx, timeout_ms);
  HFLOW_RETURN_IF_ERROR(
      FromGrpc(impl_->stub->Call(&ctx, req, &rep), impl_->where));
  if (rep.error_code() != 0) {
    return Status(static_cast<StatusCode>(rep.error_code()),
                  impl_->where + ": " + rep.error());
  }
  reply->reply = std::move(*rep.mutable_reply());
  reply->replies.clear();
  for (std::string& r : *rep.mutable_replies()) {
    reply->replies.push_back(std::move(r));
  }
  reply->payloads.clear();
  for (std::string& p : *rep.mutable_payloads()) {
    reply->payloads.push_back(std::move(p));
  }
  return Status::OK();
}

// ---- HostWatch --------------------------------------------------------

struct HostWatch::Impl {
  std::shared_ptr<HostClient::Impl> client;
  std::function<void(const Status&)> on_lost;
  std::chrono::milliseconds lost_after{2000};
  grpc::ClientContext ctx;
  std::mutex mu;
  std::condition_variable cv;
  Clock::time_point last_beat = Clock::now();
  uint64_t beats = 0;
  bool ended = false;     // the stream ended (reader)
  bool stopping = false;  // the owner is destroying the watch
  grpc::Status end_status;
  std::thread reader, monitor;

  void Read(uint32_t interval_ms, const std::string& session) {
    util::SetCurrentThreadName("hflow-hostbeat");
    v1::WatchRequest req;
    req.set_protocol_version(client->opts.protocol_version);
    req.set_interval_ms(interval_ms);
    req.set_session(session);
    auto stream = client->stub->Watch(&ctx, req);
    v1::HeartbeatReply beat;
    while (stream->Read(&beat)) {
      std::lock_guard<std::mutex> lock(mu);
      last_beat = Clock::now();
      ++beats;
    }
    grpc::Status s = stream->Finish();
    std::lock_guard<std::mutex> lock(mu);
    end_status = s;
    ended = true;
    cv.notify_all();
  }

  void Monitor() {
    util::SetCurrentThreadName("hflow-hostwatch");
    std::unique_lock<std::mutex> lock(mu);
    std::string why;
    while (!stopping) {
      const auto due = last_beat + lost_after;
      if (ended) {
        why = end_status.ok() ? "the daemon ended its heartbeat stream"
                              : "its heartbeat stream broke (" +
                                    end_status.error_message() + ")";
        break;
      }
      if (Clock::now() >= due) {
        why = "no heartbeat for " + std::to_string(lost_after.count()) +
              " ms (stopped or overloaded)";
        break;
      }
      cv.wait_until(lock, due);
    }
    if (stopping) return;
    lock.unlock();
    ctx.TryCancel();
    // A copy runs: on_lost may destroy the watch (its destructor then
    // leaves this thread detached), and nothing of *this is touched after.
    const auto report = on_lost;
    const std::string where = client->where;
    report(Status::DeviceLost(where + " was lost: " + why));
  }
};

std::unique_ptr<HostWatch> HostClient::Watch(
    uint32_t interval_ms, uint32_t lost_after_ms,
    std::function<void(const Status&)> on_lost, const std::string& session) {
  // Beats come at least every 10 ms and at most every 10 s (the daemon
  // clamps); a loss needs more than one interval without them.
  interval_ms = std::clamp<uint32_t>(interval_ms, 10, 10000);
  lost_after_ms = std::max(lost_after_ms, 2 * interval_ms);
  auto impl = std::make_unique<HostWatch::Impl>();
  impl->client = impl_;
  impl->on_lost = std::move(on_lost);
  impl->lost_after = std::chrono::milliseconds(lost_after_ms);
  if (impl_->opts.credentials.HasToken()) {
    impl->ctx.AddMetadata(kTokenMetadataKey, impl_->opts.credentials.token);
  }
  HostWatch::Impl* raw = impl.get();
  raw->reader = std::thread(
      [raw, interval_ms, session] { raw->Read(interval_ms, session); });
  raw->monitor = std::thread([raw] { raw->Monitor(); });
  return std::make_unique<HostWatch>(std::move(impl));
}

HostWatch::HostWatch(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HostWatch::~HostWatch() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
    impl_->cv.notify_all();
  }
  impl_->ctx.TryCancel();
  impl_->reader.join();
  // Destroyed from its own on_lost: the monitor thread returns right after
  // the callback without touching the watch, so it is left to finish.
  if (std::this_thread::get_id() == impl_->monitor.get_id()) {
    impl_->monitor.detach();
  } else {
    impl_->monitor.join();
  }
}

uint64_t HostWatch::beats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->beats;
}

}  // namespace hflow::net
