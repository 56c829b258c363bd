// ForeignCounters: see foreign_counters.h.
//
// Thread-safety: mu_ guards everything, sources' calls included.
#include "rt/foreign_counters.h"

#include <utility>

namespace hflow {
namespace rt {

int ForeignCounters::Add(Source source) {
  std::lock_guard<std::mutex> l(mu_);
  const int id = next_id_++;
  live_.emplace(id, std::move(source));
  return id;
}

void ForeignCounters::Retire(int id) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = live_.find(id);
  if (it == live_.end()) return;
  AddTo(it->second(), &retired_);
  live_.erase(it);
}

ForeignCounters::PerDevice ForeignCounters::Totals() const {
  std::lock_guard<std::mutex> l(mu_);
  PerDevice sum = retired_;
  for (const auto& [id, source] : live_) AddTo(source(), &sum);
  return sum;
}

void ForeignCounters::AddTo(const PerDevice& from, PerDevice* to) {
  for (const auto& [device, c] : from) {
    Counts& t = (*to)[device];
    t.contexts_created += c.contexts_created;
    t.implicit_bindings += c.implicit_bindings;
  }
}

}  // namespace rt
}  // namespace hflow
