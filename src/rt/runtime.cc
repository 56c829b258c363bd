// The process-wide runtime and the hflow::rt free functions forwarding to it.
//
// Thread-safety: the current runtime is an atomic pointer. Replaced runtimes
// are parked in a graveyard until exit, so a thread still holding a pointer
// or a context handle of one never touches freed memory.
#include <mutex>
#include <vector>

#include "hflow/rt.h"
#include "util/fast_tls.h"

namespace hflow {
namespace rt {
namespace internal {
std::atomic<DeviceRuntime*> g_runtime{nullptr};
thread_local ThreadSlot t_slot HFLOW_FAST_TLS;
}  // namespace internal

namespace {
std::atomic<uint64_t> g_next_runtime_id{1};
}  // namespace

DeviceRuntime::DeviceRuntime(bool slot_backed)
    : id_(g_next_runtime_id.fetch_add(1)), slot_backed_(slot_backed) {}

namespace {
std::mutex g_install_mu;
std::vector<std::shared_ptr<DeviceRuntime>>& Graveyard() {
  static auto* all = new std::vector<std::shared_ptr<DeviceRuntime>>();
  return *all;
}
// The installed runtime's record (Note [One runtime for ACL and GE]),
// guarded by g_install_mu. Never destroyed, like the graveyard.
InstalledRuntime& Installed() {
  static auto* installed = new InstalledRuntime();
  return *installed;
}

Status NoRuntime(const char* call) {
  return Status::FailedPrecondition(
      std::string("hflow::rt::") + call +
      ": no device runtime is installed; call hflow::Initialize first");
}
}  // namespace

namespace internal {
void InstallMadeRuntime(std::shared_ptr<DeviceRuntime> runtime,
                        std::optional<RuntimeOptions> options) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (runtime) Graveyard().push_back(runtime);
  internal::g_runtime.store(runtime.get(), std::memory_order_release);
  InstalledRuntime& rec = Installed();
  rec.runtime = std::move(runtime);
  rec.options = rec.runtime ? std::move(options) : std::nullopt;
  rec.holds = 0;
}
}  // namespace internal

void InstallRuntime(std::shared_ptr<DeviceRuntime> runtime) {
  internal::InstallMadeRuntime(std::move(runtime), std::nullopt);
}

InstalledRuntime GetInstalledRuntime() {
  std::lock_guard<std::mutex> lock(g_install_mu);
  return Installed();
}

void HoldRuntime(const DeviceRuntime* runtime) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  InstalledRuntime& rec = Installed();
  if (runtime != nullptr && rec.runtime.get() == runtime) ++rec.holds;
}

void ReleaseRuntime(const DeviceRuntime* runtime) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  InstalledRuntime& rec = Installed();
  if (runtime != nullptr && rec.runtime.get() == runtime && rec.holds > 0) {
    --rec.holds;
  }
}

const char* OpName(Op op) {
  static const char* const kNames[] = {"SetDevice",
                                       "ResetDevice",
                                       "CreateContext",
                                       "DestroyContext",
                                       "SetCurrentContext",
                                       "Malloc",
                                       "Free",
                                       "Memcpy",
                                       "Memset",
                                       "Synchronize",
                                       "GetMemInfo",
                                       "EventSubmit",
                                       "GroupCreate",
                                       "GroupAddMember",
                                       "GroupDestroy",
                                       "MbufAlloc",
                                       "MbufFree",
                                       "QueueCreate",
                                       "QueueDestroy",
                                       "QueueEnqueue",
                                       "QueueDequeue",
                                       "ModelLoad",
                                       "ModelUnload",
                                       "ModelExecute",
                                       "HostRegister",
                                       "HostUnregister",
                                       "AnyOp"};
  static_assert(
      sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(Op::kCount) + 1,
      "OpName table out of date");
  auto i = static_cast<size_t>(op);
  return i <= static_cast<size_t>(Op::kCount) ? kNames[i] : "?";
}

// Each forwarder checks for a runtime, then delegates.
#define HFLOW_FORWARD(call, ...)             \
  DeviceRuntime* r = CurrentRuntime();       \
  if (r == nullptr) return NoRuntime(#call); \
  return r->call(__VA_ARGS__)

Status SetDevice(int32_t device) { HFLOW_FORWARD(SetDevice, device); }
Status ResetDevice(int32_t device) { HFLOW_FORWARD(ResetDevice, device); }
Status GetDevice(int32_t* device) { HFLOW_FORWARD(GetDevice, device); }
Status CreateContext(int32_t device, Context** ctx) {
  HFLOW_FORWARD(CreateContext, device, ctx);
}
Status DestroyContext(Context* ctx) { HFLOW_FORWARD(DestroyContext, ctx); }
Status SetCurrentContext(Context* ctx) {
  HFLOW_FORWARD(SetCurrentContext, ctx);
}
Context* GetCurrentContext() noexcept {
  DeviceRuntime* r = CurrentRuntime();
  return r ? r->CurrentContextFast() : nullptr;
}
Status GetContextDevice(const Context* ctx, int32_t* device) {
  HFLOW_FORWARD(GetContextDevice, ctx, device);
}
Status Malloc(int32_t device, size_t bytes, void** ptr) {
  HFLOW_FORWARD(Malloc, device, bytes, ptr);
}
Status Free(int32_t device, void* ptr) { HFLOW_FORWARD(Free, device, ptr); }
Status Memcpy(int32_t device, void* dst, const void* src, size_t bytes,
              MemcpyKind kind) {
  HFLOW_FORWARD(Memcpy, device, dst, src, bytes, kind);
}
Status Memset(int32_t device, void* dst, int value, size_t bytes) {
  HFLOW_FORWARD(Memset, device, dst, value, bytes);
}
Status Synchronize(int32_t device) { HFLOW_FORWARD(Synchronize, device); }
Status GetMemInfo(int32_t device, uint64_t* free_bytes, uint64_t* total_bytes) {
  HFLOW_FORWARD(GetMemInfo, device, free_bytes, total_bytes);
}
#undef HFLOW_FORWARD

}  // namespace rt
}  // namespace hflow
