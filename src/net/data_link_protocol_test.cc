// A data link's admission against a peer that does not follow the
// protocol: a raw UCX client (this file speaks UCX directly) that skips the
// handshake, sends data first or says nothing at all. None of what it
// sends reaches a sink, and the endpoint keeps serving honest clients.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "net/data_link.h"

namespace hflow::net {
namespace {

constexpr char kKey[] = "session-key-0123456789abcdef";

class CountingSink : public DataSink {
 public:
  void* Allocate(DataLink*, size_t size) override {
    std::lock_guard<std::mutex> lock(mu_);
    buffers_.emplace_back(size);
    return buffers_.back().data();
  }
  void Deliver(DataLink* link, std::string, void*, size_t) override {
    ++delivered;
    link->Grant(1);
  }
  void Closed(DataLink*, const Status&) override {}
  std::atomic<int> delivered{0};

 private:
  std::mutex mu_;
  std::deque<std::vector<char>> buffers_;
};

// A UCX client with no manners: connects and sends whatever it is told.
class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    ucp_config_t* cfg = nullptr;
    ucp_config_read(nullptr, nullptr, &cfg);
    ucp_params_t p{};
    p.field_mask = UCP_PARAM_FIELD_FEATURES;
    p.features = UCP_FEATURE_AM;
    ok_ = ucp_init(&p, cfg, &ctx_) == UCS_OK;
    ucp_config_release(cfg);
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    ok_ = ok_ && ucp_worker_create(ctx_, &wp, &worker_) == UCS_OK;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                    UCP_EP_PARAM_FIELD_ERR_HANDLER |
                    UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    ep.sockaddr.addr = reinterpret_cast<const sockaddr*>(&a);
    ep.sockaddr.addrlen = sizeof(a);
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = [](void* arg, ucp_ep_h, ucs_status_t) {
      static_cast<RawClient*>(arg)->closed_ = true;
    };
    ep.err_handler.arg = this;
    ok_ = ok_ && ucp_ep_create(worker_, &ep, &ep_) == UCS_OK;
  }
  ~RawClient() {
    if (ep_ != nullptr && !closed_) {
      ucp_request_param_t p{};
      p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      p.flags = UCP_EP_CLOSE_FLAG_FORCE;
      void* r = ucp_ep_close_nbx(ep_, &p);
      if (UCS_PTR_IS_PTR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) {
          ucp_worker_progress(worker_);
        }
        ucp_request_free(r);
      }
    }
    if (worker_ != nullptr) ucp_worker_destroy(worker_);
    if (ctx_ != nullptr) ucp_cleanup(ctx_);
  }
  bool ok() const { return ok_; }
  bool closed() const { return closed_; }

  // Sends one active message and drives it for up to a second.
  void Send(unsigned id, const std::string& header, size_t payload) {
    std::vector<char> data(payload, 'x');
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_REPLY;
    void* r = ucp_am_send_nbx(ep_, id, header.data(), header.size(),
                              data.data(), data.size(), &p);
    if (!UCS_PTR_IS_PTR(r)) return;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (ucp_request_check_status(r) == UCS_INPROGRESS &&
           std::chrono::steady_clock::now() < until) {
      ucp_worker_progress(worker_);
    }
    if (ucp_request_check_status(r) == UCS_INPROGRESS)
      ucp_request_cancel(worker_, r);
    ucp_request_free(r);
  }
  void Progress(int ms) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until && !closed_) {
      ucp_worker_progress(worker_);
    }
  }

 private:
  bool ok_ = false;
  bool closed_ = false;
  ucp_context_h ctx_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  ucp_ep_h ep_ = nullptr;
};

struct Server {
  explicit Server(int32_t admission_ms = 5000) {
    DataLinkOptions o;
    o.key = kKey;
    o.connect_timeout_ms = admission_ms;
    EXPECT_TRUE(DataEndpoint::Create(o, &endpoint).ok());
    EXPECT_TRUE(endpoint
                    ->Listen(
                        {"127.0.0.1", 0},
                        [this](DataLink*) {
                          ++accepted;
                          return &sink;
                        },
                        &bound)
                    .ok());
  }
  // An honest client still gets in and through.
  void ExpectServesHonestClients() {
    DataLinkOptions o;
    o.key = kKey;
    CountingSink client_sink;  // outlives the endpoint that calls it
    std::unique_ptr<DataEndpoint> client;
    ASSERT_TRUE(DataEndpoint::Create(o, &client).ok());
    DataLink* link = nullptr;
    ASSERT_TRUE(client->Connect(bound, &client_sink, &link).ok());
    const int before = sink.delivered;
    ASSERT_TRUE(link->SendAndWait("ok", "abc", 3, 5000).ok());
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (sink.delivered == before &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(sink.delivered, before + 1);
  }
  CountingSink sink;  // outlives the endpoint
  std::atomic<int> accepted{0};
  HostAddress bound;
  std::unique_ptr<DataEndpoint> endpoint;
};

// Message ids of the protocol (net/data_link_internal.h).
constexpr unsigned kData = 1, kWelcome = 6;

TEST(DataLinkProtocolTest, AWelcomeThenDataWithoutAHandshakeReachesNoSink) {
  Server server;
  RawClient raw(server.bound.port);
  ASSERT_TRUE(raw.ok());
  const uint32_t credits = 100;
  raw.Send(kWelcome, std::string(reinterpret_cast<const char*>(&credits), 4),
           0);
  raw.Send(kData, "eager", 100);
  raw.Send(kData, "rendezvous", 2 << 20);
  raw.Progress(500);
  EXPECT_TRUE(raw.closed());  // the endpoint hung up on it
  EXPECT_EQ(server.sink.delivered, 0);
  EXPECT_EQ(server.accepted, 0);
  server.ExpectServesHonestClients();
}

TEST(DataLinkProtocolTest, DataBeforeTheHelloReachesNoSink) {
  Server server;
  RawClient raw(server.bound.port);
  ASSERT_TRUE(raw.ok());
  raw.Send(kData, "first", 64);
  raw.Progress(500);
  EXPECT_TRUE(raw.closed());
  EXPECT_EQ(server.sink.delivered, 0);
  EXPECT_EQ(server.accepted, 0);
  server.ExpectServesHonestClients();
}

TEST(DataLinkProtocolTest, ASilentConnectionIsClosedAfterTheAdmissionTime) {
  Server server(/*admission_ms=*/300);
  RawClient raw(server.bound.port);
  ASSERT_TRUE(raw.ok());
  raw.Progress(5000);  // returns early once the endpoint closed it
  EXPECT_TRUE(raw.closed());
  EXPECT_EQ(server.accepted, 0);
  server.ExpectServesHonestClients();
}

}  // namespace
}  // namespace hflow::net
