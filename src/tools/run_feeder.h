// The feeder of `hflow run`: feeds transactions 1..N on its own thread while
// the command's thread fetches, so a run longer than the pipeline's queues
// are deep cannot deadlock.
//
// Each FeedData waits at most a short slice and is retried until --timeout
// has passed for that transaction (FeedData takes a transaction whole or not
// at all, so a retry never duplicates one). Stop() is therefore noticed
// within a slice and Join() never waits on a graph that hangs.
//
// Thread-safety: the counters are guarded by a mutex; Start/Stop/Join from
// the owning thread.
#ifndef HFLOW_TOOLS_RUN_FEEDER_H_
#define HFLOW_TOOLS_RUN_FEEDER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow::tools {

class RunFeeder {
 public:
  RunFeeder(Session* session, uint32_t graph_id,
            const std::vector<Tensor>* inputs, int64_t n, int32_t timeout_ms);
  ~RunFeeder();  // Stop() and Join()

  void Start();
  // Asks the thread to stop after its current slice.
  void Stop() { stop_ = true; }
  void Join();

  int64_t fed();
  bool done();
  // Why feeding ended early (not after Stop()); OK otherwise.
  Status error();
  // Waits up to `ms` until more than `count` are fed or feeding is over.
  void WaitFed(int64_t count, int32_t ms);

 private:
  void Loop();
  Status FeedOne(uint64_t trans_id);

  Session* const session_;
  const uint32_t graph_id_;
  const std::vector<Tensor>* const inputs_;
  const int64_t n_;
  const int32_t timeout_ms_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t fed_ = 0;  // guarded by mu_
  bool done_ = false;
  Status error_;
  std::thread thread_;
};

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RUN_FEEDER_H_
