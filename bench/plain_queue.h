// PlainQueue: the bounded mutex + condition-variable queue a user would write
// by hand; the baseline several benchmarks measure hflow's queues against.
//
// Thread-safety: any number of producers and consumers.
#ifndef HFLOW_BENCH_PLAIN_QUEUE_H_
#define HFLOW_BENCH_PLAIN_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace hflow {
namespace bench {

template <typename T, size_t kDepth = 64>
class PlainQueue {
 public:
  void Push(T v) {
    std::unique_lock<std::mutex> l(mu_);
    not_full_.wait(l, [&] { return q_.size() < kDepth; });
    q_.push_back(std::move(v));
    l.unlock();
    not_empty_.notify_one();
  }
  T Pop() {
    std::unique_lock<std::mutex> l(mu_);
    not_empty_.wait(l, [&] { return !q_.empty(); });
    T v = std::move(q_.front());
    q_.pop_front();
    l.unlock();
    not_full_.notify_one();
    return v;
  }

 private:
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> q_;
};

}  // namespace bench
}  // namespace hflow

#endif  // HFLOW_BENCH_PLAIN_QUEUE_H_
