// hflow_soak: a long-running mixed workload (not part of CI; scripts/soak).
//
// Several graphs (a chain over 2->3->4->5, replicas on 2~5, a two-input add)
// live in "slots" on a sim cluster {2,3,4,5}. T threads each pick, at
// random, a feed, a fetch, or (at most every few seconds, process-wide) a
// graph recycle: orderly (drain what was fed, remove, add and build a new
// graph) or abrupt (RemoveGraph while feeders and fetchers are busy on it).
// Every message carries a unique value; every graph doubles it, so each
// output is checked against the set of values fed to that slot and not yet
// fetched. Nothing may be lost: an orderly recycle must get back every
// message fed; only an abrupt recycle may drop what it finds in flight (by
// design; counted as dropped_by_remove).
//
// Every 10 s a line: elapsed, fed, fetched, errors by code, process RSS and
// the sim's device memory and contexts in use. At the end a JSON summary
// (stdout, and --json FILE). Exit status non-zero on: an unexpected error
// code, a lost, duplicated or corrupted message, a hang (a call running far
// past its timeout: the watchdog exits at once), RSS or device-memory growth
// past the threshold after warm-up, or anything left on the sim after
// Finalize.
//
// Thread-safety: slot state is guarded by each slot's mutexes; counters are
// atomics. Threads name themselves; they do no device work directly (the
// Session API binds).
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "soak/soak_graphs.h"
#include "soak/soak_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace soak {
namespace {

using Clock = std::chrono::steady_clock;

// Errors: counted by code; `unexpected` ones fail the run (first few kept).
struct Tally {
  std::atomic<uint64_t> fed{0}, fetched{0}, failed_messages{0};
  std::atomic<uint64_t> recycles{0}, abrupt{0}, dropped_by_remove{0};
  std::atomic<uint64_t> unexpected{0}, lost{0}, corrupt{0};
  std::mutex mu;
  std::map<std::string, uint64_t> errors;  // "code" or "code (unexpected)"
  std::vector<std::string> first_problems;

  void Error(const Status& s, bool expected, const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    ++errors[std::string(StatusCodeName(s.code())) +
             (expected ? "" : " (unexpected)")];
    if (!expected) {
      unexpected.fetch_add(1);
      Problem(what + ": " + s.ToString());
    }
  }
  void Problem(const std::string& p) {  // mu held or not: a short append
    if (first_problems.size() < 20) first_problems.push_back(p);
    std::fprintf(stderr, "soak: PROBLEM %s\n", p.c_str());
  }
};

struct Slot {
  int index = 0;
  // Feeds and fetches hold it shared; a recycle exclusively while it swaps
  // the graph (an abrupt one removes first, without it).
  std::shared_mutex life;
  uint32_t graph_id = 0;  // guarded by life
  int kind = 0;           // guarded by life
  std::atomic<bool> removing{false};
  std::atomic<bool> recycling{false};         // one recycle of a slot at a time
  std::atomic<bool> exclusive_wanted{false};  // a recycle waits for `life`
  std::mutex set_mu;
  std::unordered_set<int64_t> outstanding;  // fed, not yet fetched
};

class Soak {
 public:
  explicit Soak(const Args& a) : args_(a) {}
  int Run();

 private:
  void Worker(int t);
  void Feed(Slot& s, std::mt19937_64& rng);
  void Fetch(Slot& s, int32_t timeout_ms, bool drain_check);
  void Recycle(Slot& s, bool abrupt);
  void Drain(Slot& s);
  Status AddSlotGraph(Slot& s);
  void Report(double elapsed);
  void DumpThreads();

  const Args args_;
  Session session_;
  std::vector<std::unique_ptr<Slot>> slots_;
  Tally tally_;
  std::atomic<uint32_t> next_graph_id_{1};
  std::atomic<int64_t> next_value_{1};
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> last_recycle_ms_{0};
  Clock::time_point t0_ = Clock::now();
  // Per thread: when its current call started (ms since t0_, -1 idle).
  std::vector<std::atomic<int64_t>> busy_since_;
  std::vector<std::atomic<const char*>> busy_op_;
  std::vector<std::atomic<int>> busy_slot_;
};

int64_t MsSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                               t0)
      .count();
}

Status Soak::AddSlotGraph(Slot& s) {
  s.graph_id = next_graph_id_.fetch_add(1);
  // A slot keeps its kind, so the device memory the live graphs hold is
  // the same after every recycle and growth means a leak.
  s.kind = s.index % kGraphKinds;
  HFLOW_RETURN_IF_ERROR(session_.AddGraph(s.graph_id, MakeGraph(s.kind)));
  return session_.BuildGraph(s.graph_id);
}

void Soak::Feed(Slot& s, std::mt19937_64& rng) {
  std::shared_lock<std::shared_mutex> life(s.life);
  int64_t v = next_value_.fetch_add(1);
  size_t n = 1 + rng() % 64;
  {
    std::lock_guard<std::mutex> lock(s.set_mu);
    s.outstanding.insert(v);  // before the feed: a fetch may beat us
  }
  Status st =
      session_.FeedData(s.graph_id, MakeInputs(s.kind, v, n), FlowInfo{}, 200);
  if (st.ok()) {
    tally_.fed.fetch_add(1);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(s.set_mu);
    s.outstanding.erase(v);
  }
  bool expected = st.IsTimeout() ||
                  (s.removing.load() && (st.code() == StatusCode::kCancelled ||
                                         st.code() == StatusCode::kNotFound));
  tally_.Error(st, expected, "FeedData on graph " + std::to_string(s.graph_id));
}

void Soak::Fetch(Slot& s, int32_t timeout_ms, bool drain_check) {
  std::vector<Tensor> out;
  FlowInfo info;
  Status st = session_.FetchData(s.graph_id, &out, &info, timeout_ms);
  if (!st.ok()) {
    bool expected =
        (st.IsTimeout() && !drain_check) ||
        (s.removing.load() && (st.code() == StatusCode::kCancelled ||
                               st.code() == StatusCode::kNotFound));
    tally_.Error(st, expected,
                 "FetchData on graph " + std::to_string(s.graph_id));
    return;
  }
  if (info.ret_code != 0) {  // the built-ins never fail
    tally_.failed_messages.fetch_add(1);
    std::lock_guard<std::mutex> lock(tally_.mu);
    tally_.Problem("graph " + std::to_string(s.graph_id) + ": ret code " +
                   std::to_string(info.ret_code));
    return;
  }
  int64_t v = 0;
  std::string bad = CheckOutput(out, &v);
  bool known;
  {
    std::lock_guard<std::mutex> lock(s.set_mu);
    known = bad.empty() && s.outstanding.erase(v) == 1;
  }
  if (!bad.empty() || !known) {
    tally_.corrupt.fetch_add(1);
    std::lock_guard<std::mutex> lock(tally_.mu);
    tally_.Problem("graph " + std::to_string(s.graph_id) + ": " +
                   (bad.empty() ? "value " + std::to_string(v) +
                                      " was never fed or came twice"
                                : bad));
    return;
  }
  tally_.fetched.fetch_add(1);
}

void Soak::Recycle(Slot& s, bool abrupt) {
  if (s.recycling.exchange(true)) return;
  if (abrupt) {
    // Remove under the feet of this slot's feeders and fetchers: they get
    // kCancelled or kNotFound, and what was in flight is dropped.
    uint32_t id;
    {
      std::shared_lock<std::shared_mutex> life(s.life);
      id = s.graph_id;
      s.removing = true;
    }
    Status st = session_.RemoveGraph(id);
    if (!st.ok()) tally_.Error(st, false, "RemoveGraph (abrupt)");
  }
  // glibc's rwlock prefers readers: with feeders and fetchers taking turns
  // on the slot, a plain lock() could wait forever. They step aside while
  // exclusive_wanted is set.
  s.exclusive_wanted = true;
  std::unique_lock<std::shared_mutex> life(s.life);
  s.exclusive_wanted = false;
  if (abrupt) {
    std::lock_guard<std::mutex> lock(s.set_mu);
    tally_.dropped_by_remove.fetch_add(s.outstanding.size());
    s.outstanding.clear();
    s.removing = false;
    tally_.abrupt.fetch_add(1);
  } else {
    // Everything fed comes back before the graph goes.
    Drain(s);
    Status st = session_.RemoveGraph(s.graph_id);
    if (!st.ok()) tally_.Error(st, false, "RemoveGraph");
  }
  Status st = AddSlotGraph(s);
  if (!st.ok()) tally_.Error(st, false, "AddGraph/BuildGraph");
  tally_.recycles.fetch_add(1);
  s.recycling = false;
}

// Fetches until every message fed to `s` is back (10 s at most).
void Soak::Drain(Slot& s) {
  auto deadline = Clock::now() + std::chrono::seconds(10);
  for (;;) {
    size_t left;
    {
      std::lock_guard<std::mutex> lock(s.set_mu);
      left = s.outstanding.size();
    }
    if (left == 0) return;
    if (Clock::now() > deadline) {
      tally_.lost.fetch_add(left);
      std::lock_guard<std::mutex> lock(tally_.mu);
      tally_.Problem("graph " + std::to_string(s.graph_id) + ": " +
                     std::to_string(left) + " fed messages never came back");
      std::lock_guard<std::mutex> lock2(s.set_mu);
      s.outstanding.clear();
      return;
    }
    Fetch(s, 1000, /*drain_check=*/false);
  }
}

void Soak::Worker(int t) {
  util::SetCurrentThreadName("soak-" + std::to_string(t));
  std::mt19937_64 rng(0x5eed + t);
  while (!stop_.load()) {
    Slot& s = *slots_[rng() % slots_.size()];
    if (s.exclusive_wanted.load()) {
      std::this_thread::yield();
      continue;
    }
    int64_t now = MsSince(t0_);
    int64_t last = last_recycle_ms_.load();
    int op = int(rng() % 100);
    busy_since_[t] = now;
    busy_slot_[t] = s.index;
    if (now - last > args_.recycle_ms &&
        last_recycle_ms_.compare_exchange_strong(last, now)) {
      bool abrupt = rng() % 4 == 0;
      busy_op_[t] = abrupt ? "abrupt recycle" : "orderly recycle";
      Recycle(s, abrupt);
    } else if (op < 50) {
      busy_op_[t] = "feed";
      Feed(s, rng);
    } else {
      busy_op_[t] = "fetch";
      std::shared_lock<std::shared_mutex> life(s.life);
      Fetch(s, 100, /*drain_check=*/false);
    }
    busy_since_[t] = -1;
  }
}

// On a hang: what every soak thread is doing, and (when gdb is there) the
// stacks of all threads.
void Soak::DumpThreads() {
  int64_t now = MsSince(t0_);
  for (size_t t = 0; t < busy_since_.size(); ++t) {
    int64_t b = busy_since_[t].load();
    std::fprintf(
        stderr, "soak:   soak-%zu: %s on slot %d%s\n", t,
        b < 0 ? "idle" : busy_op_[t].load(), busy_slot_[t].load(),
        b < 0 ? "" : (" for " + std::to_string(now - b) + " ms").c_str());
  }
  std::fflush(stderr);
  std::string cmd = "gdb -p " + std::to_string(getpid()) +
                    " -batch -ex 'thread apply all bt' 1>&2 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "soak: (no stacks: gdb failed)\n");
  }
  std::fflush(stderr);
}

void Soak::Report(double elapsed) {
  DeviceUse u = SimUse();
  std::string errs;
  {
    std::lock_guard<std::mutex> lock(tally_.mu);
    for (const auto& [k, n] : tally_.errors) {
      errs += (errs.empty() ? "" : ", ") + k + "=" + std::to_string(n);
    }
  }
  std::printf(
      "soak: %6.0f s  fed %llu  fetched %llu  recycles %llu  errors {%s}  "
      "rss %.1f MiB  device mem %.1f MiB  contexts %llu\n",
      elapsed, (unsigned long long)tally_.fed.load(),
      (unsigned long long)tally_.fetched.load(),
      (unsigned long long)tally_.recycles.load(), errs.c_str(),
      RssBytes() / 1048576.0, u.mem / 1048576.0,
      (unsigned long long)u.contexts);
  std::fflush(stdout);
}

int Soak::Run() {
  Options o;
  o.cluster = MakeLocalCluster({2, 3, 4, 5});
  o.queue_depth = 32;
  Status st = Initialize(o);
  if (!st.ok()) {
    std::fprintf(stderr, "soak: Initialize: %s\n", st.ToString().c_str());
    return 1;
  }
  for (int i = 0; i < args_.slots; ++i) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->index = i;
    st = AddSlotGraph(*slots_.back());
    if (!st.ok()) {
      std::fprintf(stderr, "soak: build: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  busy_since_ = std::vector<std::atomic<int64_t>>(args_.threads);
  busy_op_ = std::vector<std::atomic<const char*>>(args_.threads);
  busy_slot_ = std::vector<std::atomic<int>>(args_.threads);
  for (auto& b : busy_since_) b = -1;
  for (auto& b : busy_op_) b = "idle";
  t0_ = Clock::now();
  last_recycle_ms_ = 0;

  std::vector<std::thread> threads;
  for (int t = 0; t < args_.threads; ++t)
    threads.emplace_back([this, t] { Worker(t); });

  const double warmup = std::min(60.0, args_.seconds * args_.warmup_fraction);
  uint64_t rss_base = 0, dev_base = 0, rss_start = RssBytes(), rss_peak = 0,
           dev_peak = 0;
  DeviceUse dev_start = SimUse();
  bool grew = false;
  std::string growth;
  double next_report = 10;
  // A call runs at most a few seconds (every timeout is finite); far beyond
  // that the process hangs.
  const int64_t kHangMs = 60000;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    double elapsed = MsSince(t0_) / 1000.0;
    int64_t now = MsSince(t0_);
    for (int t = 0; t < args_.threads; ++t) {
      int64_t b = busy_since_[t].load();
      if (b >= 0 && now - b > kHangMs) {
        std::fprintf(stderr,
                     "soak: HANG: thread soak-%d has been in one call "
                     "for %lld ms\n",
                     t, (long long)(now - b));
        DumpThreads();
        std::_Exit(3);
      }
    }
    uint64_t rss = RssBytes();
    DeviceUse u = SimUse();
    if (elapsed < warmup) {
      rss_base = std::max(rss_base, rss);
      dev_base = std::max(dev_base, u.mem);
    } else {
      rss_peak = std::max(rss_peak, rss);
      dev_peak = std::max(dev_peak, u.mem);
      if (!grew && rss > rss_base + uint64_t(args_.rss_growth_mb * 1048576)) {
        grew = true;
        growth = "RSS grew from " + std::to_string(rss_base >> 20) + " to " +
                 std::to_string(rss >> 20) + " MiB after warm-up";
      }
      if (!grew && u.mem > dev_base + uint64_t(args_.dev_growth_mb * 1048576)) {
        grew = true;
        growth = "device memory grew from " + std::to_string(dev_base) +
                 " to " + std::to_string(u.mem) + " bytes after warm-up";
      }
    }
    if (elapsed >= next_report) {
      Report(elapsed);
      next_report += 10;
    }
    if (elapsed >= args_.seconds) break;
  }
  stop_ = true;
  for (auto& t : threads) t.join();
  double elapsed = MsSince(t0_) / 1000.0;

  // Orderly end: every slot drains what was fed, then everything goes.
  for (auto& s : slots_) {
    Drain(*s);
    st = session_.RemoveGraph(s->graph_id);
    if (!st.ok()) tally_.Error(st, false, "RemoveGraph (end)");
  }
  DeviceUse before_finalize = SimUse();
  st = Finalize();
  if (!st.ok()) tally_.Error(st, false, "Finalize");
  auto* sim = dynamic_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  uint64_t left_mem = 0, left_ctx = 0;
  if (sim != nullptr) {
    for (const auto& d : sim->AllDeviceStats()) {
      left_mem += d.mem_used_bytes;
      left_ctx += d.contexts_alive;
    }
  }
  Report(elapsed);

  bool ok = tally_.unexpected == 0 && tally_.lost == 0 && tally_.corrupt == 0 &&
            tally_.failed_messages == 0 && !grew && left_mem == 0 &&
            left_ctx == 0;
  std::string errs, problems;
  {
    std::lock_guard<std::mutex> lock(tally_.mu);
    for (const auto& [k, n] : tally_.errors) {
      errs += std::string(errs.empty() ? "" : ", ") + "\"" + k +
              "\": " + std::to_string(n);
    }
    for (const auto& p : tally_.first_problems) {
      std::string q;
      for (char c : p) {
        if (c == '"' || c == '\\') q += '\\';
        q += (c == '\n' ? ' ' : c);
      }
      problems += std::string(problems.empty() ? "" : ", ") + "\"" + q + "\"";
    }
  }
  char buf[2048];
  std::snprintf(
      buf, sizeof(buf),
      "{\"ok\": %s, \"seconds\": %.1f, \"threads\": %d, \"graphs\": %d, "
      "\"fed\": %llu, \"fetched\": %llu, \"failed_messages\": %llu, "
      "\"dropped_by_remove\": %llu, \"lost\": %llu, \"corrupt\": %llu, "
      "\"recycles\": %llu, \"abrupt_recycles\": %llu, \"unexpected_errors\": "
      "%llu, "
      "\"rss_start_mib\": %.1f, \"rss_after_warmup_mib\": %.1f, "
      "\"rss_peak_mib\": %.1f, \"rss_end_mib\": %.1f, "
      "\"device_mem_start_bytes\": %llu, \"device_mem_after_warmup_bytes\": "
      "%llu, "
      "\"device_mem_peak_bytes\": %llu, \"device_mem_before_finalize_bytes\": "
      "%llu, "
      "\"device_mem_after_finalize_bytes\": %llu, "
      "\"contexts_after_finalize\": %llu, \"growth\": \"%s\", ",
      ok ? "true" : "false", elapsed, args_.threads, args_.slots,
      (unsigned long long)tally_.fed.load(),
      (unsigned long long)tally_.fetched.load(),
      (unsigned long long)tally_.failed_messages.load(),
      (unsigned long long)tally_.dropped_by_remove.load(),
      (unsigned long long)tally_.lost.load(),
      (unsigned long long)tally_.corrupt.load(),
      (unsigned long long)tally_.recycles.load(),
      (unsigned long long)tally_.abrupt.load(),
      (unsigned long long)tally_.unexpected.load(), rss_start / 1048576.0,
      rss_base / 1048576.0, rss_peak / 1048576.0, RssBytes() / 1048576.0,
      (unsigned long long)dev_start.mem, (unsigned long long)dev_base,
      (unsigned long long)dev_peak, (unsigned long long)before_finalize.mem,
      (unsigned long long)left_mem, (unsigned long long)left_ctx,
      growth.c_str());
  std::string json = std::string(buf) + "\"errors\": {" + errs +
                     "}, \"problems\": [" + problems + "]}";
  std::printf("%s\n", json.c_str());
  if (!args_.json.empty()) {
    std::ofstream f(args_.json);
    f << json << "\n";
  }
  if (!ok) std::fprintf(stderr, "soak: FAILED\n");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace soak
}  // namespace hflow

int main(int argc, char** argv) {
  hflow::util::SetCurrentThreadName("soak-main");
  // Lets the hang dump's gdb (a child) attach to this process.
  (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  hflow::soak::Args a = hflow::soak::ParseArgs(argc, argv);
  hflow::soak::Soak soak(a);
  return soak.Run();
}
