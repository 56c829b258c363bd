// Data links on UCX between two endpoints of this process on 127.0.0.1:
// payloads of every size arrive whole and in order with their headers,
// credits bound what a sender has in flight, a link without the session
// key is refused before anything it sent is read, and a closed peer fails
// its links instead of hanging their senders.
#include "net/data_link.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace hflow::net {
namespace {

constexpr char kKey[] = "session-key-0123456789abcdef";

// Keeps every message; grants each credit back at once unless told not to.
class RecordingSink : public DataSink {
 public:
  explicit RecordingSink(bool auto_grant = true) : auto_grant_(auto_grant) {}
  void* Allocate(DataLink*, size_t size) override {
    std::lock_guard<std::mutex> lock(mu_);
    buffers_.emplace_back(size);
    return buffers_.back().data();
  }
  void Deliver(DataLink* link, std::string header, void* data,
               size_t size) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      headers_.push_back(std::move(header));
      payloads_.emplace_back(static_cast<char*>(data),
                             static_cast<char*>(data) + size);
      cv_.notify_all();
    }
    if (auto_grant_) link->Grant(1);
  }
  void Closed(DataLink*, const Status& why) override {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = why;
    ++closes_;
    cv_.notify_all();
  }
  bool WaitFor(size_t n, int ms = 10000) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(ms),
                        [&] { return headers_.size() >= n; });
  }
  bool WaitClosed(int ms = 10000) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(ms),
                        [&] { return closes_ > 0; });
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return headers_.size();
  }
  std::vector<std::string> headers_;
  std::vector<std::vector<char>> payloads_;
  Status closed_;
  int closes_ = 0;

 private:
  const bool auto_grant_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> buffers_;  // stable addresses
};

struct Pair {
  std::unique_ptr<DataEndpoint> server, client;
  HostAddress bound;
  std::atomic<DataLink*> accepted{nullptr};
  DataLink* link = nullptr;
};

void MakePair(Pair* p, DataSink* server_sink, DataSink* client_sink,
              uint32_t credits = 16, const std::string& client_key = kKey) {
  DataLinkOptions so;
  so.key = kKey;
  so.credits = credits;
  ASSERT_TRUE(DataEndpoint::Create(so, &p->server).ok());
  ASSERT_TRUE(p->server
                  ->Listen(
                      {"127.0.0.1", 0},
                      [p, server_sink](DataLink* l) {
                        p->accepted = l;
                        return server_sink;
                      },
                      &p->bound)
                  .ok());
  ASSERT_NE(p->bound.port, 0);
  DataLinkOptions co = so;
  co.key = client_key;
  ASSERT_TRUE(DataEndpoint::Create(co, &p->client).ok());
  Status s = p->client->Connect(p->bound, client_sink, &p->link);
  if (client_key == kKey) {
    ASSERT_TRUE(s.ok()) << s.ToString();
  } else {
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  }
}

std::vector<char> Pattern(size_t size, int seed) {
  std::vector<char> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = static_cast<char>(i * 31 + seed);
  return v;
}

TEST(DataLinkTest, EverySizeArrivesWholeAndInOrder) {
  RecordingSink server_sink, client_sink;
  Pair p;
  MakePair(&p, &server_sink, &client_sink);
  const std::vector<size_t> sizes = {0,    1,     64,      4096,
                                     8192, 65537, 1 << 20, 4 << 20};
  std::vector<std::vector<char>> sent;
  for (size_t i = 0; i < sizes.size(); ++i) {
    sent.push_back(Pattern(sizes[i], static_cast<int>(i)));
    Status s = p.link->SendAndWait("h" + std::to_string(i), sent[i].data(),
                                   sent[i].size(), 5000);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_TRUE(server_sink.WaitFor(sizes.size()));
  for (size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(server_sink.headers_[i], "h" + std::to_string(i));
    EXPECT_TRUE(server_sink.payloads_[i] == sent[i]) << "size " << sizes[i];
  }
  // The link carries the other way too.
  DataLink* back = p.accepted.load();
  ASSERT_NE(back, nullptr);
  const std::vector<char> reply = Pattern(300000, 9);
  ASSERT_TRUE(
      back->SendAndWait("reply", reply.data(), reply.size(), 5000).ok());
  ASSERT_TRUE(client_sink.WaitFor(1));
  EXPECT_EQ(client_sink.headers_[0], "reply");
  EXPECT_TRUE(client_sink.payloads_[0] == reply);
}

TEST(DataLinkTest, CreditsBoundWhatASenderHasInFlight) {
  RecordingSink server_sink(/*auto_grant=*/false), client_sink;
  Pair p;
  MakePair(&p, &server_sink, &client_sink, /*credits=*/4);
  const std::vector<char> msg = Pattern(1000, 1);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(p.link->SendAndWait("m", msg.data(), msg.size(), 5000).ok());
  }
  ASSERT_TRUE(server_sink.WaitFor(4));
  // A fifth message waits for a credit the receiver has not given back.
  Status s = p.link->SendAndWait("m", msg.data(), msg.size(), 200);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_NE(s.message().find("data link to 127.0.0.1:" +
                             std::to_string(p.bound.port) + ": no credit"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(server_sink.count(), 4u);
  // Two credits back: two more go, the third waits again.
  p.accepted.load()->Grant(2);
  ASSERT_TRUE(p.link->SendAndWait("m", msg.data(), msg.size(), 5000).ok());
  ASSERT_TRUE(p.link->SendAndWait("m", msg.data(), msg.size(), 5000).ok());
  EXPECT_EQ(p.link->SendAndWait("m", msg.data(), msg.size(), 200).code(),
            StatusCode::kTimeout);
  ASSERT_TRUE(server_sink.WaitFor(6));
}

TEST(DataLinkTest, ManySendersOnOneLinkLoseNothing) {
  RecordingSink server_sink, client_sink;
  Pair p;
  MakePair(&p, &server_sink, &client_sink, /*credits=*/8);
  constexpr int kThreads = 4, kEach = 200;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<char> msg = Pattern(100 + t * 5000, t);
      for (int i = 0; i < kEach; ++i) {
        if (!p.link
                 ->SendAndWait(std::to_string(t), msg.data(), msg.size(), 10000)
                 .ok()) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(server_sink.WaitFor(kThreads * kEach));
  std::map<std::string, int> per_sender;
  for (const auto& h : server_sink.headers_) per_sender[h]++;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(per_sender[std::to_string(t)], kEach);
  }
}

TEST(DataLinkTest, AnotherKeyIsRefusedOnBothSides) {
  RecordingSink server_sink, client_sink;
  const std::string other = "another-key-0123456789abcdef";
  // A client with another key: the server cannot prove the client's key,
  // so the client refuses it, and the server's owner never sees a link.
  Pair p;
  MakePair(&p, &server_sink, &client_sink, 16, other);
  EXPECT_EQ(p.link, nullptr);
  EXPECT_EQ(p.accepted.load(), nullptr);
  DataLinkOptions o;
  o.key = other;
  std::unique_ptr<DataEndpoint> e;
  ASSERT_TRUE(DataEndpoint::Create(o, &e).ok());
  DataLink* link = nullptr;
  Status s = e->Connect(p.bound, &client_sink, &link);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("the peer could not prove the session key"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(server_sink.count(), 0u);
  EXPECT_EQ(p.accepted.load(), nullptr);
  // Keys too short to be secrets are refused up front.
  o.key = "short";
  Status c = DataEndpoint::Create(o, &e);
  EXPECT_EQ(c.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(c.message().find("at least 16 bytes"), std::string::npos);
}

TEST(DataLinkTest, PipelinedLargeAndSmallMessagesKeepTheirOrder) {
  RecordingSink server_sink, client_sink;
  Pair p;
  MakePair(&p, &server_sink, &client_sink, /*credits=*/32);
  // Rendezvous (large) and eager (small) messages in flight together: a
  // small one must not overtake a large one sent before it.
  std::vector<std::vector<char>> sent;
  for (int i = 0; i < 24; ++i) {
    sent.push_back(Pattern(i % 3 == 0 ? (3 << 20) + i : 10 + i, i));
  }
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  for (size_t i = 0; i < sent.size(); ++i) {
    ASSERT_TRUE(p.link
                    ->Send(std::to_string(i), sent[i].data(), sent[i].size(),
                           5000,
                           [&](const Status& st) {
                             EXPECT_TRUE(st.ok()) << st.ToString();
                             std::lock_guard<std::mutex> lock(mu);
                             ++done;
                             cv.notify_all();
                           })
                    .ok());
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20),
                            [&] { return done == int(sent.size()); }));
  }
  ASSERT_TRUE(server_sink.WaitFor(sent.size()));
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ(server_sink.headers_[i], std::to_string(i));
    EXPECT_TRUE(server_sink.payloads_[i] == sent[i]) << i;
  }
}

TEST(DataLinkTest, NothingListeningFailsFastNamingTheAddress) {
  RecordingSink sink;
  DataLinkOptions o;
  o.key = kKey;
  std::unique_ptr<DataEndpoint> e;
  ASSERT_TRUE(DataEndpoint::Create(o, &e).ok());
  DataLink* link = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  Status s = e->Connect({"127.0.0.1", 1}, &sink, &link);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("data link to 127.0.0.1:1"), std::string::npos)
      << s.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(6));
  // An address no interface has exactly cannot be listened on.
  HostAddress bound;
  s = e->Listen(
      {"192.0.2.77", 0}, [&](DataLink*) { return &sink; }, &bound);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("no interface has exactly that address"),
            std::string::npos);
}

TEST(DataLinkTest, AClosedPeerFailsItsLinksAndWakesSenders) {
  RecordingSink server_sink(/*auto_grant=*/false), client_sink;
  Pair p;
  MakePair(&p, &server_sink, &client_sink, /*credits=*/1);
  const std::vector<char> msg = Pattern(64, 3);
  ASSERT_TRUE(p.link->SendAndWait("m", msg.data(), msg.size(), 5000).ok());
  ASSERT_TRUE(server_sink.WaitFor(1));
  // A sender waiting for a credit forever is woken by the peer's end.
  std::atomic<bool> returned{false};
  Status waited;
  std::thread sender([&] {
    waited = p.link->SendAndWait("m", msg.data(), msg.size(), -1);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(returned.load());
  p.server.reset();  // closes its side of every link
  sender.join();
  EXPECT_FALSE(waited.ok());
  ASSERT_TRUE(client_sink.WaitClosed());
  EXPECT_FALSE(client_sink.closed_.ok());
  EXPECT_FALSE(p.link->status().ok());
  EXPECT_EQ(p.link->SendAndWait("m", msg.data(), msg.size(), 100).code(),
            p.link->status().code());
}

}  // namespace
}  // namespace hflow::net
