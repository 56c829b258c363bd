// A small ACL program for `hflow ctxcheck`'s tests: the seed's bug, and its
// cousin, in a user's own code.
//
//   acl_pool unbound DEV    main binds DEV; a pool thread ("pool-1") then
//                           allocates, copies and frees on DEV without
//                           binding (the bug)
//   acl_pool fixed DEV      the same, the pool thread binding DEV first
//   acl_pool cross A B      main allocates on B; a thread bound to A
//                           frees it (another device's memory)
//   acl_pool crash DEV      as unbound, then abort()
//
// Exit status 0 when every call succeeded, 1 when one failed (printed on
// stderr with its ACL code), 2 for bad arguments.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "acl/acl.h"

namespace {

constexpr aclrtMemMallocPolicy kHuge = ACL_MEM_MALLOC_HUGE_FIRST;

bool Check(aclError rc, const char* what) {
  if (rc == ACL_SUCCESS) return true;
  std::fprintf(stderr, "acl_pool: %s failed: %d\n", what, static_cast<int>(rc));
  return false;
}

// The pool thread's work on `device`'s memory; binds first when `bind`.
bool PoolWork(int32_t device, bool bind) {
  if (bind && !Check(aclrtSetDevice(device), "aclrtSetDevice")) return false;
  void* p = nullptr;
  void* q = nullptr;
  aclError rc = aclrtMalloc(&p, 256, kHuge);  // CTXCHECK: malloc
  if (!Check(rc, "aclrtMalloc")) return false;
  bool ok =
      Check(aclrtMalloc(&q, 256, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc") &&
      Check(aclrtMemcpy(q, 256, p, 256, ACL_MEMCPY_DEVICE_TO_DEVICE),
            "aclrtMemcpy");
  if (q != nullptr) ok = Check(aclrtFree(q), "aclrtFree") && ok;
  ok = Check(aclrtFree(p), "aclrtFree") && ok;
  if (bind) ok = Check(aclrtResetDevice(device), "aclrtResetDevice") && ok;
  return ok;
}

int Pool(int32_t device, bool bind) {
  if (!Check(aclrtSetDevice(device), "main aclrtSetDevice")) return 1;
  bool ok = false;
  std::thread pool([&] {
    pthread_setname_np(pthread_self(), "pool-1");
    ok = PoolWork(device, bind);
  });
  pool.join();
  (void)aclrtResetDevice(device);
  return ok ? 0 : 1;
}

int Cross(int32_t a, int32_t b) {
  if (!Check(aclrtSetDevice(b), "main aclrtSetDevice")) return 1;
  void* p = nullptr;
  if (!Check(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc")) {
    return 1;
  }
  bool ok = false;
  std::thread other([&] {
    pthread_setname_np(pthread_self(), "other-dev");
    if (!Check(aclrtSetDevice(a), "aclrtSetDevice")) return;
    aclError rc = aclrtFree(p);  // CTXCHECK: cross free
    ok = Check(rc, "aclrtFree");
  });
  other.join();
  if (!ok) (void)aclrtFree(p);  // on its own device: the fix
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: acl_pool unbound|fixed|crash DEV | cross A B\n");
    return 2;
  }
  const std::string mode = argv[1];
  const int32_t dev = std::atoi(argv[2]);
  if (!Check(aclInit(nullptr), "aclInit")) return 1;
  int rc = 2;
  if (mode == "unbound" || mode == "crash") rc = Pool(dev, false);
  if (mode == "fixed") rc = Pool(dev, true);
  if (mode == "cross" && argc > 3) rc = Cross(dev, std::atoi(argv[3]));
  if (mode == "crash") std::abort();
  (void)aclFinalize();
  return rc;
}
