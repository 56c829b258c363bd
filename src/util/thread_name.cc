// Thread naming (see thread_name.h). Thread-safety: per-thread state only.
#include "util/thread_name.h"

#include <pthread.h>

namespace hflow {
namespace util {
namespace {
thread_local std::string t_name;
thread_local bool t_named = false;
}  // namespace

void SetCurrentThreadName(std::string_view name) {
  t_name.assign(name);
  t_named = true;
  std::string os_name(name.substr(0, 15));
  pthread_setname_np(pthread_self(), os_name.c_str());
}

const std::string& CurrentThreadName() {
  if (!t_named) {
    char buf[32] = {0};
    if (pthread_getname_np(pthread_self(), buf, sizeof(buf)) == 0) {
      t_name = buf;
    }
    t_named = true;
  }
  return t_name;
}

}  // namespace util
}  // namespace hflow
