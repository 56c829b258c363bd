// The feeder thread of `hflow run` (see run_feeder.h).
//
// Thread-safety: mu_ guards fed_, done_ and error_; stop_ is atomic.
#include "tools/run_feeder.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "util/thread_name.h"

namespace hflow::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int32_t kFeedSliceMs = 100;

}  // namespace

RunFeeder::RunFeeder(Session* session, uint32_t graph_id,
                     const std::vector<Tensor>* inputs, int64_t n,
                     int32_t timeout_ms)
    : session_(session),
      graph_id_(graph_id),
      inputs_(inputs),
      n_(n),
      timeout_ms_(timeout_ms) {}

RunFeeder::~RunFeeder() {
  Stop();
  Join();
}

void RunFeeder::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void RunFeeder::Join() {
  if (thread_.joinable()) thread_.join();
}

int64_t RunFeeder::fed() {
  std::lock_guard<std::mutex> lock(mu_);
  return fed_;
}

bool RunFeeder::done() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

Status RunFeeder::error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void RunFeeder::WaitFed(int64_t count, int32_t ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms),
               [&] { return fed_ > count || done_; });
}

Status RunFeeder::FeedOne(uint64_t trans_id) {
  FlowInfo info;
  info.transaction_id = trans_id;
  const auto start = Clock::now();
  for (;;) {
    int64_t waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                         Clock::now() - start)
                         .count();
    int32_t slice = kFeedSliceMs;
    if (timeout_ms_ >= 0) {
      slice = static_cast<int32_t>(
          std::clamp<int64_t>(timeout_ms_ - waited, 0, kFeedSliceMs));
    }
    Status s = session_->FeedData(graph_id_, *inputs_, info, slice);
    if (!s.IsTimeout() || stop_) return s;
    if (timeout_ms_ >= 0 && waited + slice >= timeout_ms_) {
      return Status::Timeout(
          "the graph took no input for " + std::to_string(timeout_ms_) +
          " ms (--timeout " + std::to_string(timeout_ms_) +
          "); its first node is not keeping up, or is stuck");
    }
  }
}

void RunFeeder::Loop() {
  // No device work happens here directly: FeedData binds what it needs.
  util::SetCurrentThreadName("run-feeder");
  Status s;
  for (int64_t i = 1; i <= n_ && !stop_ && s.ok(); ++i) {
    s = FeedOne(static_cast<uint64_t>(i));
    std::lock_guard<std::mutex> lock(mu_);
    if (s.ok()) fed_ = i;
    cv_.notify_all();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!s.ok() && !stop_) {
    error_ =
        s.WithContext("feeding transaction " + std::to_string(fed_ + 1) + ": ");
  }
  done_ = true;
  cv_.notify_all();
}

}  // namespace hflow::tools
