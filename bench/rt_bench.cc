// Device-runtime micro-benchmarks: the costs every public entry point and
// every bound device call pay.
//   GuardUnchanged        ContextGuard enter+exit, context unchanged (≤ 5 ns)
//   SetDeviceAlreadyBound SetDevice(d) when d's default context is bound (≤ 20
//   ns)
//   ...                   with baselines measured in the same run:
//   GetCurrentContext     one read of the binding (the guard's floor is two)
//   EmptyCall             a non-inlined empty function (call overhead)
//   PublicCallGuarded     a cheap public call (rt::GetDevice) inside a
//                         ContextGuard, as every public entry point runs it,
//   PublicCallBare        the same call without the guard (row 6: the
//                         difference is what the guard costs a caller)
#include <benchmark/benchmark.h>

#include "hflow/context_guard.h"
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"

namespace {

using hflow::rt::SimRuntime;

std::shared_ptr<SimRuntime> Install() {
  static std::shared_ptr<SimRuntime> sim = [] {
    hflow::rt::SimOptions opts;
    opts.cluster = hflow::MakeLocalCluster({2, 3, 4, 5});
    auto s = std::make_shared<SimRuntime>(opts);
    hflow::rt::InstallRuntime(s);
    return s;
  }();
  return sim;
}

__attribute__((noinline)) void EmptyCall() { benchmark::ClobberMemory(); }

void BM_EmptyCall(benchmark::State& state) {
  for (auto _ : state) EmptyCall();
}
BENCHMARK(BM_EmptyCall);

void BM_GetCurrentContext(benchmark::State& state) {
  Install();
  (void)hflow::rt::SetDevice(3);
  for (auto _ : state) {
    benchmark::DoNotOptimize(hflow::rt::GetCurrentContext());
  }
  (void)hflow::rt::ResetDevice(3);
}
BENCHMARK(BM_GetCurrentContext);

void BM_GuardUnchanged(benchmark::State& state) {
  Install();
  (void)hflow::rt::SetDevice(3);
  for (auto _ : state) {
    hflow::ContextGuard guard;
    benchmark::DoNotOptimize(&guard);
  }
  (void)hflow::rt::ResetDevice(3);
}
BENCHMARK(BM_GuardUnchanged);

void BM_GuardUnchangedUnbound(benchmark::State& state) {
  Install();
  for (auto _ : state) {
    hflow::ContextGuard guard;
    benchmark::DoNotOptimize(&guard);
  }
}
BENCHMARK(BM_GuardUnchangedUnbound);

void BM_SetDeviceAlreadyBound(benchmark::State& state) {
  auto sim = Install();
  (void)hflow::rt::SetDevice(4);
  int64_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(hflow::rt::SetDevice(4));
    ++n;
  }
  // Give back every reference taken above.
  for (int64_t i = 0; i <= n; ++i) (void)hflow::rt::ResetDevice(4);
}
BENCHMARK(BM_SetDeviceAlreadyBound);

void BM_GuardWithSwitch(benchmark::State& state) {
  // The guarded body switches device: enter, bind another context, restore.
  Install();
  (void)hflow::rt::SetDevice(2);
  hflow::rt::Context* two = hflow::rt::GetCurrentContext();
  (void)hflow::rt::SetDevice(5);
  hflow::rt::Context* five = hflow::rt::GetCurrentContext();
  (void)hflow::rt::SetCurrentContext(two);
  for (auto _ : state) {
    hflow::ContextGuard guard;
    benchmark::DoNotOptimize(hflow::rt::SetCurrentContext(five));
  }
  (void)hflow::rt::ResetDevice(5);
  (void)hflow::rt::ResetDevice(2);
}
BENCHMARK(BM_GuardWithSwitch);

void BM_PublicCallBare(benchmark::State& state) {
  Install();
  (void)hflow::rt::SetDevice(3);
  int32_t d = -1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(hflow::rt::GetDevice(&d));
  }
  (void)hflow::rt::ResetDevice(3);
}
BENCHMARK(BM_PublicCallBare);

void BM_PublicCallGuarded(benchmark::State& state) {
  Install();
  (void)hflow::rt::SetDevice(3);
  int32_t d = -1;
  for (auto _ : state) {
    hflow::ContextGuard guard;
    benchmark::DoNotOptimize(hflow::rt::GetDevice(&d));
  }
  (void)hflow::rt::ResetDevice(3);
}
BENCHMARK(BM_PublicCallGuarded);

void BM_MallocFree64(benchmark::State& state) {
  Install();
  (void)hflow::rt::SetDevice(2);
  for (auto _ : state) {
    void* p = nullptr;
    (void)hflow::rt::Malloc(2, 64, &p);
    (void)hflow::rt::Free(2, p);
  }
  (void)hflow::rt::ResetDevice(2);
}
BENCHMARK(BM_MallocFree64);

}  // namespace

BENCHMARK_MAIN();
