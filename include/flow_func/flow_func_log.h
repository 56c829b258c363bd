// Logging for UDFs. FlowFuncLogger::GetLogger returns the process-wide logger
// of libflow_func.so (thread-safe); the FLOW_FUNC_LOG_* macros add the
// thread's log header, file, line and function, and format nothing unless
// the level is enabled. Output lines look like
//   [WARN] <header>file.cc:42 Proc: message
#ifndef HFLOW_FLOW_FUNC_FLOW_FUNC_LOG_H_
#define HFLOW_FLOW_FUNC_FLOW_FUNC_LOG_H_

#include "flow_func_defines.h"

namespace FlowFunc {

enum class FlowFuncLogType { DEBUG_LOG = 0, RUN_LOG = 1 };

enum class FlowFuncLogLevel { DEBUG = 0, INFO = 1, WARN = 2, ERROR = 3 };

class FLOW_FUNC_VISIBILITY FlowFuncLogger {
 public:
  // The logger of `type`; lives as long as the process.
  static FlowFuncLogger& GetLogger(FlowFuncLogType type);
  // Per-thread prefix the runtime sets (e.g. the node name); never null.
  static const char* GetLogExtHeader();

  FlowFuncLogger() = default;
  virtual ~FlowFuncLogger() = default;

  virtual bool IsLogEnable(FlowFuncLogLevel level) = 0;
  // printf-style; `this` is argument 1.
  virtual void Error(const char* fmt, ...)
      __attribute__((format(printf, 2, 3))) = 0;
  virtual void Warn(const char* fmt, ...)
      __attribute__((format(printf, 2, 3))) = 0;
  virtual void Info(const char* fmt, ...)
      __attribute__((format(printf, 2, 3))) = 0;
  virtual void Debug(const char* fmt, ...)
      __attribute__((format(printf, 2, 3))) = 0;
};

}  // namespace FlowFunc

// Shared body of the macros: check the level first so disabled logs cost one
// virtual call and no formatting. The odd local name avoids capturing a
// caller's variable used in the arguments.
#define FLOW_FUNC_LOG_AT_(type, level, method, fmt, ...)                     \
  do {                                                                       \
    ::FlowFunc::FlowFuncLogger& hflowFlowFuncLogger_ =                       \
        ::FlowFunc::FlowFuncLogger::GetLogger(                               \
            ::FlowFunc::FlowFuncLogType::type);                              \
    if (hflowFlowFuncLogger_.IsLogEnable(                                    \
            ::FlowFunc::FlowFuncLogLevel::level)) {                          \
      hflowFlowFuncLogger_.method(                                           \
          "%s%s:%d %s: " fmt, ::FlowFunc::FlowFuncLogger::GetLogExtHeader(), \
          __FILE__, __LINE__, __FUNCTION__, ##__VA_ARGS__);                  \
    }                                                                        \
  } while (0)

#define FLOW_FUNC_LOG_DEBUG(fmt, ...) \
  FLOW_FUNC_LOG_AT_(DEBUG_LOG, DEBUG, Debug, fmt, ##__VA_ARGS__)
#define FLOW_FUNC_LOG_INFO(fmt, ...) \
  FLOW_FUNC_LOG_AT_(DEBUG_LOG, INFO, Info, fmt, ##__VA_ARGS__)
#define FLOW_FUNC_LOG_WARN(fmt, ...) \
  FLOW_FUNC_LOG_AT_(DEBUG_LOG, WARN, Warn, fmt, ##__VA_ARGS__)
#define FLOW_FUNC_LOG_ERROR(fmt, ...) \
  FLOW_FUNC_LOG_AT_(DEBUG_LOG, ERROR, Error, fmt, ##__VA_ARGS__)
#define FLOW_FUNC_RUN_LOG_INFO(fmt, ...) \
  FLOW_FUNC_LOG_AT_(RUN_LOG, INFO, Info, fmt, ##__VA_ARGS__)
#define FLOW_FUNC_RUN_LOG_ERROR(fmt, ...) \
  FLOW_FUNC_LOG_AT_(RUN_LOG, ERROR, Error, fmt, ##__VA_ARGS__)

#endif  // HFLOW_FLOW_FUNC_FLOW_FUNC_LOG_H_
