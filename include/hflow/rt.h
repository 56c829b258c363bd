// hflow::rt: the device runtime calls an outside client relies on (ACL-like),
// forwarding to the process-wide DeviceRuntime chosen at initialization
// (`sim` by default; tests may install their own).
//
// These calls *are* the context API: SetDevice and friends deliberately
// change the calling thread's binding. hflow's other public entry points never
// do (ContextGuard).
//
// Errors: each call forwards to DeviceRuntime's method of the same name
// (device_runtime.h says what each returns) and fails with
// kFailedPrecondition, naming the call, while no runtime is installed.
//
// Thread-safety: all calls may be made from any thread. InstallRuntime must
// not race with other calls into the runtime (do it at start-up, as
// hflow::Initialize does); runtimes it replaces stay alive until process exit
// so stale handles never dangle. GetInstalledRuntime, HoldRuntime and
// ReleaseRuntime take the install lock and may be called from any thread.
#ifndef HFLOW_RT_H_
#define HFLOW_RT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "hflow/cluster.h"
#include "hflow/device_runtime.h"
#include "hflow/status.h"

namespace hflow {
namespace rt {

namespace internal {
extern std::atomic<DeviceRuntime*> g_runtime;
}  // namespace internal

// The process-wide runtime, or nullptr before initialization. Never fails;
// any thread.
inline DeviceRuntime* CurrentRuntime() noexcept {
  return internal::g_runtime.load(std::memory_order_acquire);
}

// Makes `runtime` the process-wide runtime (nullptr uninstalls), with no
// holds and no known options (see InstalledRuntime below). The previous
// one is kept alive until exit. Never fails; must not race other calls.
void InstallRuntime(std::shared_ptr<DeviceRuntime> runtime);

// How the process-wide runtime is chosen at initialization.
struct RuntimeOptions {
  // "sim", "cuda" (where the build found the CUDA toolkit), or "": the
  // cluster's "backend" field, else "sim" (ResolvedBackend).
  std::string backend;
  ClusterConfig cluster = DefaultClusterConfig();
  // Overrides the cluster's default device; -1 means none.
  std::optional<int32_t> default_device;
  bool record_calls = false;  // sim: keep a call log from the start
  // sim: hflow ctxcheck (docs/ctxcheck.md): "off", "report" or "strict";
  // "" lets $HFLOW_CTXCHECK decide. SameRuntime ignores it.
  std::string ctxcheck;
};

// The backend `options` name: their own, else their cluster's, else "sim".
// Never fails.
std::string ResolvedBackend(const RuntimeOptions& options);

// Creates the runtime `options` describe and installs it (`*out`, if given,
// shares it). Unknown backends and invalid clusters are rejected with
// kInvalidArgument / kNotSupported, and nothing is installed then. Must
// not race other calls (hflow::Initialize makes it).
Status InitializeRuntime(const RuntimeOptions& options,
                         std::shared_ptr<DeviceRuntime>* out = nullptr);

// Note [One runtime for ACL and GE]: the ACL layer (aclInit) and the session
// (hflow::Initialize) each need the process-wide runtime for a while, and a
// program may start either first. Contexts belong to one runtime instance,
// so replacing the runtime strands every context the other made. Each
// therefore holds the runtime it uses (HoldRuntime .. ReleaseRuntime), and
// the one that starts second adopts a held runtime made from the same
// options (SameRuntime) instead of making a new one.
struct InstalledRuntime {
  std::shared_ptr<DeviceRuntime> runtime;  // nullptr: none is installed
  // What InitializeRuntime made it from; unset for a runtime installed with
  // InstallRuntime (a test's), which nothing can compare.
  std::optional<RuntimeOptions> options;
  int holds = 0;  // HoldRuntime calls minus ReleaseRuntime calls
};
// The installed runtime and what is known of it. Never fails.
InstalledRuntime GetInstalledRuntime();
// Count a hold on `runtime` while it is the installed one; holds on a
// runtime that has since been replaced are forgotten with it. Never fail.
void HoldRuntime(const DeviceRuntime* runtime);
void ReleaseRuntime(const DeviceRuntime* runtime);
// Whether `a` and `b` make interchangeable runtimes: the same backend,
// the same local devices (ids and memory) and the same default device
// (after resolving the cluster's rule). record_calls does not count: a
// recording can be turned on later. Never fails.
bool SameRuntime(const RuntimeOptions& a, const RuntimeOptions& b);

namespace internal {
// InitializeRuntime's install: InstallRuntime, remembering `options`.
void InstallMadeRuntime(std::shared_ptr<DeviceRuntime> runtime,
                        std::optional<RuntimeOptions> options);
}  // namespace internal

// The context API and the memory calls of the current runtime (see the
// DeviceRuntime methods of the same names for what they do and return).
Status SetDevice(int32_t device);
Status ResetDevice(int32_t device);
Status GetDevice(int32_t* device);
Status CreateContext(int32_t device, Context** ctx);
Status DestroyContext(Context* ctx);
Status SetCurrentContext(Context* ctx);
Context* GetCurrentContext() noexcept;
Status GetContextDevice(const Context* ctx, int32_t* device);

Status Malloc(int32_t device, size_t bytes, void** ptr);
Status Free(int32_t device, void* ptr);
Status Memcpy(int32_t device, void* dst, const void* src, size_t bytes,
              MemcpyKind kind);
Status Memset(int32_t device, void* dst, int value, size_t bytes);
Status Synchronize(int32_t device);
Status GetMemInfo(int32_t device, uint64_t* free_bytes, uint64_t* total_bytes);

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_H_
