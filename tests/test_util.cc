// Test helpers (see test_util.h).
#include "test_util.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "hflow/rt.h"
#include "util/sanitizers.h"
#include "util/thread_name.h"

namespace hflow {
namespace testing {

std::shared_ptr<rt::SimRuntime> MakeSim(const std::vector<int32_t>& devices,
                                        std::optional<int32_t> default_device,
                                        uint64_t memory_bytes) {
  rt::SimOptions opts;
  opts.cluster = MakeLocalCluster(devices, memory_bytes);
  opts.default_device = default_device;
  std::shared_ptr<rt::SimRuntime> sim;
  Status s = rt::SimRuntime::Create(std::move(opts), &sim);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  return sim;
}

std::shared_ptr<rt::SimRuntime> InstallSim(
    const std::vector<int32_t>& devices, std::optional<int32_t> default_device,
    uint64_t memory_bytes) {
  auto sim = MakeSim(devices, default_device, memory_bytes);
  rt::InstallRuntime(sim);
  return sim;
}

std::string DevicesName(const std::vector<int32_t>& devices) {
  std::string s = "Devices";
  for (int32_t d : devices) s += "_" + std::to_string(d);
  return s;
}

void LeaveCrashSignalsToTheProcess() {
#if defined(HFLOW_ASAN) || defined(HFLOW_TSAN)
#if defined(HFLOW_ASAN)
  static const char kLeave[] =
      ":handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:"
      "handle_abort=0:detect_leaks=0";
  const char* name = "ASAN_OPTIONS";
#else
  // atexit_sleep_ms=0: TSan's exit otherwise sleeps a second (for other
  // threads to finish), which a test timing a child's death would count.
  static const char kLeave[] =
      ":handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:"
      "handle_abort=0:detect_leaks=0:atexit_sleep_ms=0";
  const char* name = "TSAN_OPTIONS";
#endif
  const char* old = std::getenv(name);
  std::string value = old == nullptr ? "" : old;
  if (value.find(kLeave) == std::string::npos) value += kLeave;
  setenv(name, value.c_str(), 1);
#endif
}

void UseBuildTreeForUdfs() {
#ifdef HFLOW_BUILD_SDK_DIR
  const std::filesystem::path build =
      std::filesystem::path(HFLOW_BUILD_SDK_DIR).parent_path();
  setenv("HFLOW_UDF_BUILD_DIR", (build / "examples_udf_builds").c_str(), 0);
  setenv("HFLOW_SDK_DIR", HFLOW_BUILD_SDK_DIR, 0);
#endif
}

void RunOnFreshThread(const std::function<void()>& fn,
                      const std::string& name) {
  std::thread t([&] {
    util::SetCurrentThreadName(name);
    fn();
  });
  t.join();
}

uint64_t ContextsCreated(rt::SimRuntime& sim,
                         const std::vector<int32_t>& devices) {
  uint64_t n = 0;
  for (int32_t d : devices) {
    rt::DeviceStats s;
    if (sim.GetDeviceStats(d, &s).ok()) n += s.contexts_created;
  }
  return n;
}

uint64_t ImplicitBindings(rt::SimRuntime& sim,
                          const std::vector<int32_t>& devices) {
  uint64_t n = 0;
  for (int32_t d : devices) {
    rt::DeviceStats s;
    if (sim.GetDeviceStats(d, &s).ok()) n += s.implicit_bindings;
  }
  return n;
}

std::string SimHoldings::ToString() const {
  return std::to_string(mem_bytes) + " bytes in " +
         std::to_string(allocations) + " allocations, " +
         std::to_string(contexts) + " contexts";
}

SimHoldings Holdings(const rt::SimRuntime& sim) {
  SimHoldings h;
  for (const rt::DeviceStats& s : sim.AllDeviceStats()) {
    h.mem_bytes += s.mem_used_bytes;
    h.allocations += s.live_allocations;
    h.contexts += s.contexts_alive;
  }
  return h;
}

Watchdog::Watchdog(std::chrono::milliseconds limit, std::string what)
    : what_(std::move(what)) {
  thread_ = std::thread([this, limit] {
    util::SetCurrentThreadName("test-watchdog");
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, limit, [this] { return disarmed_; })) return;
    std::fprintf(stderr, "watchdog: '%s' did not finish within %lld ms\n",
                 what_.c_str(), static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::abort();
  });
}

Watchdog::~Watchdog() {
  Disarm();
  thread_.join();
}

void Watchdog::SetWhat(std::string what) {
  std::lock_guard<std::mutex> lock(mu_);
  what_ = std::move(what);
}

void Watchdog::Disarm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    disarmed_ = true;
  }
  cv_.notify_all();
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  const char* old = std::getenv(name);
  had_ = old != nullptr;
  if (had_) old_ = old;
  setenv(name, value, 1);
}

ScopedEnv::~ScopedEnv() {
  if (had_) {
    setenv(name_, old_.c_str(), 1);
  } else {
    unsetenv(name_);
  }
}

}  // namespace testing
}  // namespace hflow
