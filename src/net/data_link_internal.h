// The UCX implementation of net/data_link.h, shared by data_link.cc (the
// endpoint's life, its thread, sends) and data_link_receive.cc (what
// arrives: the handshake and the ordered inbox). Not for other files.
//
// Thread-safety: a Link's credits, admission and status are under its mu_;
// everything marked "endpoint thread" is touched only by the thread that
// drives the UCX worker (UCS_THREAD_MODE_SINGLE).
#ifndef HFLOW_NET_DATA_LINK_INTERNAL_H_
#define HFLOW_NET_DATA_LINK_INTERNAL_H_

#include <ucp/api/ucp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "net/data_link.h"
#include "net/data_link_auth.h"

namespace hflow::net::internal {

using Clock = std::chrono::steady_clock;

// Active message ids (three bits: they ride in the handler's argument).
enum AmId : unsigned {
  kData = 1,
  kCredit = 2,
  kHello = 3,
  kChallenge = 4,
  kProof = 5,
  kWelcome = 6,
  kRefuse = 7,
};

inline std::string Ucs(ucs_status_t s) { return ucs_status_string(s); }

class Endpoint;

class Link final : public DataLink {
 public:
  enum class Phase {
    kHelloSent,   // client: hello sent, awaiting the challenge
    kProofSent,   // client: proof sent, awaiting the welcome
    kAwaitHello,  // server: a new connection
    kChallenged,  // server: challenge sent, awaiting the proof
    kOpen,
    kDone,  // refused, failed or closed
  };

  Link(Endpoint* e, std::string name, DataSink* sink, bool outgoing)
      : endpoint_(e),
        name_(std::move(name)),
        outgoing_(outgoing),
        sink_(sink),
        phase_(outgoing ? Phase::kHelloSent : Phase::kAwaitHello) {}

  Status Send(std::string header, const void* data, size_t size,
              int32_t timeout_ms,
              std::function<void(const Status&)> done) override;
  void Grant(uint32_t n) override;
  Status status() const override;
  const std::string& name() const override { return name_; }

  // Sets the status (first error wins), wakes waiters, tells an admitted
  // link's sink once. Any thread.
  void Fail(const Status& s);
  void AddCredits(uint32_t n);
  void Admit(uint32_t credits);
  Status AwaitAdmission(int32_t timeout_ms);
  bool admitted() const;

  Endpoint* const endpoint_;
  const std::string name_;
  const bool outgoing_;

  // ---- endpoint thread ----
  DataSink* sink_;  // outgoing: from Connect; incoming: from accept
  ucp_ep_h ep_ = nullptr;
  Phase phase_;
  Nonce nonce_c_{}, nonce_s_{};
  uint32_t peer_credits_ = 0;  // server: what the hello asked for
  const Clock::time_point created_ = Clock::now();
  // Messages in arrival order; a rendezvous one is delivered when it and
  // every message before it are complete.
  struct Pending {
    std::string header;
    void* data = nullptr;
    size_t size = 0;
    bool ready = false;
  };
  std::deque<Pending> inbox_;
  uint64_t inbox_first_ = 0;  // sequence number of inbox_.front()

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
  std::function<void(const Status&)> done;
};

struct RecvCtx {
  Link* link;
  uint64_t seq;
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

  bool OnEndpointThread() const {
    return std::this_thread::get_id() == thread_id_;
  }
  void Post(std::function<void()> fn);
  // Runs fn on the endpoint's thread and waits for it.
  template <typename F>
  auto Call(F fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    Post([&task] { task(); });
    return result.get();
  }

  const DataLinkOptions opts_;
  size_t max_header_ = 0;  // UCX's largest AM header (worker attribute)

  // ---- endpoint thread ----
  void SendAm(Link* link, unsigned id, SendCtx* ctx, const void* data,
              size_t size);
  void SendControl(Link* link, unsigned id, std::string body);
  // `force` after an error (nothing to flush); else the peer is told.
  void Close(Link* link, bool force);
  // Fails the link, closes it and gives back the buffers it still holds.
  void Drop(Link* link, const Status& why, bool force);

 private:
  void Loop();
  void RunCommands(std::deque<std::function<void()>>* cmds);
  bool HasCommands();
  void ReapClosing();
  void Sweep();
  Link* AddLink(std::unique_ptr<Link> link);
  Status CreateEp(ucp_ep_params_t* p, Link* link);
  void Shutdown();
  static ucs_status_t OnAm(void* arg, const void* header, size_t header_len,
                           void* data, size_t len,
                           const ucp_am_recv_param_t* param);
  static void OnConnRequest(ucp_conn_request_h req, void* arg);
  static void OnEpError(void* arg, ucp_ep_h ep, ucs_status_t status);

  // data_link_receive.cc
  ucs_status_t HandleAm(unsigned id, const void* header, size_t header_len,
                        void* data, size_t len,
                        const ucp_am_recv_param_t* param);
  void OnHello(Link* link, const char* body, size_t len);
  void OnChallenge(Link* link, const char* body, size_t len);
  void OnProof(Link* link, const char* body, size_t len);
  ucs_status_t OnData(Link* link, const void* header, size_t header_len,
                      void* data, size_t len, const ucp_am_recv_param_t* param);
  void DeliverReady(Link* link);
  static void OnRecvDone(void* req, ucs_status_t s, size_t len, void* user);

  ucp_worker_h worker_ = nullptr;
  int efd_ = -1;
  ucp_listener_h listener_ = nullptr;
  std::function<DataSink*(DataLink*)> accept_;
  std::unordered_map<ucp_ep_h, Link*> by_ep_;
  std::vector<void*> closing_;  // ep close requests in flight
  std::thread thread_;
  std::thread::id thread_id_;
  std::mutex mu_;
  std::deque<std::function<void()>> commands_;
  bool stop_ = false;
  std::mutex links_mu_;
  std::vector<std::unique_ptr<Link>> links_;
};

}  // namespace hflow::net::internal

#endif  // HFLOW_NET_DATA_LINK_INTERNAL_H_
