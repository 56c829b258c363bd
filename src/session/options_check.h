// The checks Initialize makes of its Options before it starts anything,
// and the UDF log level it applies: one place that says which values are
// refused and what to give instead.
//
// Thread-safety: CheckOptions is a pure function; ApplyUdfLogLevel sets
// the process's UDF log level (Initialize holds its lock).
#ifndef HFLOW_SESSION_OPTIONS_CHECK_H_
#define HFLOW_SESSION_OPTIONS_CHECK_H_

#include <string>

#include "hflow/session.h"

namespace hflow {
namespace session {

// kInvalidArgument naming the field, its value and what to give.
Status CheckOptions(const Options& options);
// `level` is one CheckOptions accepted; empty keeps the current level.
void ApplyUdfLogLevel(const std::string& level);

}  // namespace session
}  // namespace hflow

#endif  // HFLOW_SESSION_OPTIONS_CHECK_H_
