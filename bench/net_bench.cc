// The data channel between hosts, on loopback between two processes:
//
//   DataLink1MiB   this process --[UCX data link, 1 MiB messages]--> child
//   TcpStream1MiB  this process --[one TCP socket, 1 MiB writes]---> child
//
// The child is this binary again (--serve-data-link / --serve-tcp), so each
// side is a process of its own as on two hosts. UCX is held to its TCP
// transport (UCX_TLS=tcp unless the environment says otherwise): between
// hosts without RDMA that is what it has, and it is the baseline's.
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "net/data_link.h"

namespace {

constexpr size_t kMessage = 1 << 20;
constexpr char kKey[] = "bench-session-key-0123456789";
std::string g_self;

// Discards what arrives and gives each credit back at once.
class DiscardSink : public hflow::net::DataSink {
 public:
  void* Allocate(hflow::net::DataLink*, size_t size) override {
    if (buffer_.size() < size) buffer_.resize(size);
    return buffer_.data();
  }
  void Deliver(hflow::net::DataLink* link, std::string, void*,
               size_t) override {
    link->Grant(1);
  }
  void Closed(hflow::net::DataLink*, const hflow::Status&) override {}

 private:
  std::vector<char> buffer_;
};

int ServeDataLink() {
  hflow::net::DataLinkOptions o;
  o.key = kKey;
  std::unique_ptr<hflow::net::DataEndpoint> e;
  DiscardSink sink;
  hflow::net::HostAddress bound;
  if (!hflow::net::DataEndpoint::Create(o, &e).ok() ||
      !e->Listen(
            {"127.0.0.1", 0}, [&](hflow::net::DataLink*) { return &sink; },
            &bound)
           .ok()) {
    return 1;
  }
  std::printf("%d\n", bound.port);
  std::fflush(stdout);
  pause();  // until the benchmark kills it
  return 0;
}

int ServeTcp() {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  socklen_t len = sizeof(a);
  if (bind(l, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(l, 1) != 0) {
    return 1;
  }
  getsockname(l, reinterpret_cast<sockaddr*>(&a), &len);
  std::printf("%d\n", ntohs(a.sin_port));
  std::fflush(stdout);
  int c = accept(l, nullptr, nullptr);
  std::vector<char> buf(kMessage);
  while (read(c, buf.data(), buf.size()) > 0) {
  }
  return 0;
}

// Starts this binary with `flag`; returns its pid and the port it printed.
pid_t StartChild(const char* flag, int* port) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    execl(g_self.c_str(), g_self.c_str(), flag, nullptr);
    _exit(127);
  }
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  *port = 0;
  if (std::fscanf(in, "%d", port) != 1) *port = 0;
  std::fclose(in);
  return pid;
}

void StopChild(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

void BM_DataLink1MiB(benchmark::State& state) {
  int port = 0;
  pid_t child = StartChild("--serve-data-link", &port);
  hflow::net::DataLinkOptions o;
  o.key = kKey;
  std::unique_ptr<hflow::net::DataEndpoint> e;
  DiscardSink sink;
  hflow::net::DataLink* link = nullptr;
  if (port == 0 || !hflow::net::DataEndpoint::Create(o, &e).ok() ||
      !e->Connect({"127.0.0.1", static_cast<uint16_t>(port)}, &sink, &link)
           .ok()) {
    state.SkipWithError("no data link to the child");
    StopChild(child);
    return;
  }
  // Up to the link's credits in flight, as a stage streaming out would.
  std::vector<char> data(kMessage, 7);
  std::mutex mu;
  std::condition_variable cv;
  int64_t in_flight = 0;
  bool failed = false;
  for (auto _ : state) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++in_flight;
    }
    hflow::Status s = link->Send("", data.data(), data.size(), -1,
                                 [&](const hflow::Status& st) {
                                   std::lock_guard<std::mutex> lock(mu);
                                   --in_flight;
                                   failed = failed || !st.ok();
                                   cv.notify_all();
                                 });
    if (!s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      break;
    }
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return in_flight == 0; });
  if (failed) state.SkipWithError("a send failed");
  state.SetBytesProcessed(state.iterations() * int64_t(kMessage));
  lock.unlock();
  e.reset();
  StopChild(child);
}
BENCHMARK(BM_DataLink1MiB)->UseRealTime();

void BM_TcpStream1MiB(benchmark::State& state) {
  int port = 0;
  pid_t child = StartChild("--serve-tcp", &port);
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (port == 0 ||
      connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    state.SkipWithError("no TCP connection to the child");
    StopChild(child);
    return;
  }
  std::vector<char> data(kMessage, 7);
  for (auto _ : state) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t w = write(s, data.data() + off, data.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
  }
  state.SetBytesProcessed(state.iterations() * int64_t(kMessage));
  close(s);
  StopChild(child);
}
BENCHMARK(BM_TcpStream1MiB)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  g_self = argv[0];
  setenv("UCX_TLS", "tcp", /*overwrite=*/0);
  signal(SIGPIPE, SIG_IGN);
  if (argc == 2 && std::strcmp(argv[1], "--serve-data-link") == 0) {
    return ServeDataLink();
  }
  if (argc == 2 && std::strcmp(argv[1], "--serve-tcp") == 0) return ServeTcp();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
