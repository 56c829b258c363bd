// The exit watchdog of the CLI (see exit_watchdog.h).
//
// Thread-safety: mu_ guards the deadline; the thread touches no device, so
// it binds none.
#include "tools/exit_watchdog.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "util/thread_name.h"

namespace hflow::tools {

void FlushAndExit(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}

ExitWatchdog::ExitWatchdog() : thread_([this] { Loop(); }) {}

ExitWatchdog::~ExitWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ExitWatchdog::Arm(int64_t ms, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    deadline_ =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    message_ = message;
  }
  cv_.notify_all();
}

void ExitWatchdog::Disarm() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }
  cv_.notify_all();
}

void ExitWatchdog::Loop() {
  util::SetCurrentThreadName("cli-watchdog");
  std::unique_lock<std::mutex> lock(mu_);
  while (!quit_) {
    if (!armed_) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
        !quit_ && std::chrono::steady_clock::now() >= deadline_) {
      std::cout.flush();
      std::fprintf(stderr, "%s\n", message_.c_str());
      FlushAndExit(1);
    }
  }
}

}  // namespace hflow::tools
