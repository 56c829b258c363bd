// Thread naming. Every thread hflow creates names itself (visible in the sim
// call log, in debuggers and in `top -H`).
//
// Thread-safety: both functions act on the calling thread only.
#ifndef HFLOW_UTIL_THREAD_NAME_H_
#define HFLOW_UTIL_THREAD_NAME_H_

#include <string>
#include <string_view>

namespace hflow {
namespace util {

// Names the calling thread. The OS name is cut to 15 characters (Linux
// limit); CurrentThreadName() keeps the full name.
void SetCurrentThreadName(std::string_view name);

// The name given with SetCurrentThreadName, else the OS name.
const std::string& CurrentThreadName();

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_THREAD_NAME_H_
