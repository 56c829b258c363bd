// RemoteInstance's batched calls (remote_instance.h): Note [Batched
// calls], ProcBatch, and the process-wide counts of round trips.
//
// Thread-safety: ProcBatch runs on the thread calling the instance; the
// counts are atomics, read from any thread.
#include <atomic>
#include <cstdlib>

#include "flow_func/flow_func_defines.h"
#include "util/crash_report.h"
#include "util/fast_tls.h"
#include "worker/remote_instance.h"

namespace hflow {
namespace worker {

namespace {

std::atomic<uint64_t> g_batch_calls{0};
std::atomic<uint64_t> g_batch_trips{0};

}  // namespace

size_t MaxBatchFromEnv(size_t fallback) {
  const char* env = std::getenv("HFLOW_WORKER_BATCH");
  if (env == nullptr || *env == '\0') return fallback;
  const long v = std::strtol(env, nullptr, 10);
  return v >= 1 && v <= 64 ? size_t(v) : fallback;
}

void CountRoundTrip(size_t calls) {
  g_batch_calls.fetch_add(calls, std::memory_order_relaxed);
  g_batch_trips.fetch_add(1, std::memory_order_relaxed);
}

namespace {
thread_local GatheredReleases* t_gathering HFLOW_FAST_TLS = nullptr;
}  // namespace

GatheredReleases::GatheredReleases() {
  if (t_gathering != nullptr) return;
  t_gathering = this;
  active_ = true;
}

GatheredReleases::~GatheredReleases() {
  Flush();
  if (active_) t_gathering = nullptr;
}

void GatheredReleases::Flush() {
  for (auto& [weak, msg] : by_worker_) {
    if (auto w = weak.lock()) w->Send(msg);
  }
  by_worker_.clear();
}

bool GatheredReleases::Add(const std::weak_ptr<WorkerProcess>& worker,
                           uint64_t offset) {
  GatheredReleases* g = t_gathering;
  if (g == nullptr) return false;
  for (auto& [weak, msg] : g->by_worker_) {
    if (!weak.owner_before(worker) && !worker.owner_before(weak)) {
      msg.mutable_release()->add_offsets(offset);
      return true;
    }
  }
  g->by_worker_.emplace_back(worker, v1::HostMessage());
  g->by_worker_.back().second.mutable_release()->add_offsets(offset);
  return true;
}

BatchCounts ProcBatchCounts() {
  BatchCounts c;
  c.calls = g_batch_calls.load(std::memory_order_relaxed);
  c.round_trips = g_batch_trips.load(std::memory_order_relaxed);
  return c;
}

// Note [Batched calls]
// A synchronous call to a worker costs a round trip of four thread
// wake-ups (the executor, the worker's reader, its slot thread, the
// host's supervisor), tens of microseconds against a light UDF's one:
// a chain of isolated light nodes would run at the speed of the round
// trips, the executor thread idle in each. ProcBatch sends every call of
// a batch (BatchLimit) before it waits, so the worker's slot thread
// works through them back to back while the host gathers the replies,
// and the round trip is paid once per batch. The worker still runs one
// call at a time, in order, and the outputs go out in order, each call's
// inside its own scope (its transaction), as separate Proc calls would;
// only the pending exception a call sees is read when the batch is sent
// rather than when the call before it has returned. A death loses no
// more than before: the worker runs a slot's calls one at a time, in
// order, so the first call left unanswered was the one in flight (lost,
// as Note [Restarting a worker] says) and those after it never began:
// they run again in the new worker (or fail with the graph when there
// is no restart). Only the first call of
// a batch waits for segment memory: the others' inputs may need what the
// first's frees, so a call whose inputs do not fit at once starts the
// next batch instead.
void RemoteInstance::ProcBatch(const rt::ScopedDevice& bound, size_t index,
                               std::vector<flow_func::ProcCall>* calls,
                               const flow_func::DeliverScope& scope) {
  std::vector<v1::HostMessage> reqs;
  size_t i = 0;
  while (i < calls->size()) {
    std::shared_ptr<const Life> p = seat_->Current();
    const bool ready = p->process->alive() && loaded_.load() == p->number;
    Status first;  // why the first call of the batch could not go
    reqs.clear();
    if (ready) {
      trans_.store((*calls)[i].trans);
      phase_.store(uint32_t(util::UdfPhase::kProc));
      for (size_t k = i; k < calls->size() && k - i < max_batch_; ++k) {
        const flow_func::ProcCall& c = (*calls)[k];
        v1::HostMessage req;
        Status put = Prepare(*p, index, *c.inputs, c.trans,
                             k == i ? config().alloc_timeout_ms : 0, &req);
        if (!put.ok()) {
          if (k == i) first = put;
          break;
        }
        reqs.push_back(std::move(req));
      }
    }
    if (reqs.empty()) {  // a recovery or a failure: one call alone
      phase_.store(0);
      flow_func::ProcCall& c = (*calls)[i];
      scope(i, [&] {
        bool sent = true;
        c.rc = ready ? PrepareFailed(*p, first, &sent)
                     : ProcOnce(bound, index, *c.inputs, c.trans, &sent);
        if (!sent && c.rc == FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING) {
          c.rc = ProcOnce(bound, index, *c.inputs, c.trans, &sent);
        }
      });
      ++i;
      continue;
    }
    CountRoundTrip(reqs.size());
    // The call in flight, for a stop's or a death's report: the first
    // unanswered (a slot's replies come in order).
    const std::function<void(size_t)> answered = [&](size_t k) {
      if (i + k + 1 < calls->size()) trans_.store((*calls)[i + k + 1].trans);
    };
    const v1::WorkerMessage none;
    // The inputs the calls drop go back to their workers in one message.
    GatheredReleases releases;
    bool lost = false;  // a call of this batch died with its worker
    const std::shared_ptr<Ring> ring = RingOf(*p);
    p->process->CallEach(
        &reqs, "Proc",
        [&](size_t k, const Status& st, bool sent, v1::WorkerMessage* reply) {
          flow_func::ProcCall& c = (*calls)[i + k];
          // Never seen by a worker that died first (as Proc), or never
          // begun: the first unanswered call was the one in flight.
          bool again = !sent;
          if (!st.ok() && !p->process->alive()) {
            again = again || lost;
            lost = true;
          }
          scope(i + k, [&] {
            c.rc = Finish(*p, reqs[k], st, sent, reply ? *reply : none);
            if (again && c.rc == FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING) {
              releases.Flush();  // nothing held back over a call
              bool once = true;
              c.rc = ProcOnce(bound, index, *c.inputs, c.trans, &once);
            }
          });
        },
        &answered, ring ? &ring->rings : nullptr);
    phase_.store(0);
    i += reqs.size();
  }
}

}  // namespace worker
}  // namespace hflow
