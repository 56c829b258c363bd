// The FlowFunc logger: FlowFuncLogger::GetLogger's process-wide instances,
// writing "[LEVEL] message" lines to stderr or to a sink hflow installs.
//
// Thread-safety: the level is an atomic read on every IsLogEnable (the only
// cost of a disabled log); the sink is swapped under a mutex and called
// outside it through a shared_ptr copy, so a sink may log or be replaced
// concurrently. The extension header is thread_local. Loggers are never
// destroyed, so UDF static destructors may still log at exit.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "flow_func/flow_func_log.h"
#include "flow_func_internal.h"
#include "util/fast_tls.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace FlowFunc {
namespace internal {
namespace {

constexpr int kLevelOff = 4;  // Above ERROR: nothing is enabled.
constexpr int kDefaultLevel = static_cast<int>(FlowFuncLogLevel::WARN);

int ParseHflowLevel(std::string value) {
  std::transform(
      value.begin(), value.end(), value.begin(),
      [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value == "debug") return static_cast<int>(FlowFuncLogLevel::DEBUG);
  if (value == "info") return static_cast<int>(FlowFuncLogLevel::INFO);
  if (value == "warn" || value == "warning")
    return static_cast<int>(FlowFuncLogLevel::WARN);
  if (value == "error") return static_cast<int>(FlowFuncLogLevel::ERROR);
  if (value == "off" || value == "none") return kLevelOff;
  return -1;
}

// GE's scale: 0 debug, 1 info, 2 warning, 3 error, 4 null (off).
int ParseAscendLevel(const std::string& value) {
  if (value.size() == 1 && value[0] >= '0' && value[0] <= '4')
    return value[0] - '0';
  return -1;
}

int LevelFromEnvironment() {
  if (const char* v = std::getenv("HFLOW_FLOW_FUNC_LOG_LEVEL")) {
    int level = ParseHflowLevel(v);
    if (level >= 0) return level;
  }
  if (const char* v = std::getenv("ASCEND_GLOBAL_LOG_LEVEL")) {
    int level = ParseAscendLevel(v);
    if (level >= 0) return level;
  }
  return kDefaultLevel;
}

std::atomic<int>& Threshold() {
  static std::atomic<int> threshold(LevelFromEnvironment());
  return threshold;
}

struct SinkSlot {
  hflow::util::Mutex mu;
  std::shared_ptr<const LogSink> sink GUARDED_BY(mu);  // Null: stderr.
};

SinkSlot& GetSinkSlot() {
  static SinkSlot* slot = new SinkSlot();  // Never destroyed, see top.
  return *slot;
}

// Points at the caller's string (SetLogExtHeader): set twice per Proc, so
// it is not copied.
thread_local const char* tls_ext_header HFLOW_FAST_TLS = "";

const char* LevelTag(FlowFuncLogLevel level) {
  switch (level) {
    case FlowFuncLogLevel::DEBUG:
      return "[DEBUG] ";
    case FlowFuncLogLevel::INFO:
      return "[INFO] ";
    case FlowFuncLogLevel::WARN:
      return "[WARN] ";
    case FlowFuncLogLevel::ERROR:
      return "[ERROR] ";
  }
  return "[?] ";
}

// Formats into a stack buffer, growing to the heap only for long lines.
std::string Format(const char* fmt, va_list args) {
  if (fmt == nullptr) return std::string();
  char small[512];
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(small, sizeof(small), fmt, copy);
  va_end(copy);
  if (n < 0) return "(log format error)";
  if (static_cast<size_t>(n) < sizeof(small)) return std::string(small, n);
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(big.data(), big.size(), fmt, args);
  big.resize(n);
  return big;
}

// Never throws: logging must not turn into a UDF failure.
void Emit(FlowFuncLogLevel level, const char* fmt, va_list args) noexcept try {
  std::string line = LevelTag(level) + Format(fmt, args);
  std::shared_ptr<const LogSink> sink;
  {
    SinkSlot& slot = GetSinkSlot();
    hflow::util::MutexLock lock(slot.mu);
    sink = slot.sink;
  }
  if (sink != nullptr) {
    (*sink)(level, line);
    return;
  }
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(),
              stderr);  // One call: lines stay whole.
} catch (...) {
}

class StreamLogger final : public FlowFuncLogger {
 public:
  bool IsLogEnable(FlowFuncLogLevel level) override {
    return static_cast<int>(level) >=
           Threshold().load(std::memory_order_relaxed);
  }
  void Error(const char* fmt, ...) override {
    va_list args;
    va_start(args, fmt);
    Emit(FlowFuncLogLevel::ERROR, fmt, args);
    va_end(args);
  }
  void Warn(const char* fmt, ...) override {
    va_list args;
    va_start(args, fmt);
    Emit(FlowFuncLogLevel::WARN, fmt, args);
    va_end(args);
  }
  void Info(const char* fmt, ...) override {
    va_list args;
    va_start(args, fmt);
    Emit(FlowFuncLogLevel::INFO, fmt, args);
    va_end(args);
  }
  void Debug(const char* fmt, ...) override {
    va_list args;
    va_start(args, fmt);
    Emit(FlowFuncLogLevel::DEBUG, fmt, args);
    va_end(args);
  }
};

}  // namespace

void SetLogLevel(FlowFuncLogLevel level) {
  Threshold().store(static_cast<int>(level), std::memory_order_relaxed);
}

void ReloadLogLevelFromEnvironment() {
  Threshold().store(LevelFromEnvironment(), std::memory_order_relaxed);
}

void SetLogSink(LogSink sink) {
  std::shared_ptr<const LogSink> next;
  if (sink) next = std::make_shared<const LogSink>(std::move(sink));
  SinkSlot& slot = GetSinkSlot();
  hflow::util::MutexLock lock(slot.mu);
  slot.sink.swap(next);  // The old sink dies outside the lock, with `next`.
}

void SetLogExtHeader(const char* header) {
  tls_ext_header = header == nullptr ? "" : header;
}

}  // namespace internal

FlowFuncLogger& FlowFuncLogger::GetLogger(FlowFuncLogType type) {
  // Both types share the level and the sink; separate objects keep the
  // door open for diverging them.
  static internal::StreamLogger* debug_logger = new internal::StreamLogger();
  static internal::StreamLogger* run_logger = new internal::StreamLogger();
  return type == FlowFuncLogType::RUN_LOG ? *run_logger : *debug_logger;
}

const char* FlowFuncLogger::GetLogExtHeader() {
  return internal::tls_ext_header;
}

}  // namespace FlowFunc
