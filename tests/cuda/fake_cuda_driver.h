// FakeCudaDriver: an in-process stand-in for NVIDIA's driver behind
// rt::CudaDriver, so CudaRuntime's context handling is tested on machines
// without a GPU. It is strict where the real driver is: the current context
// is per thread (and per fake), calls without a live current context fail,
// primary contexts are refcounted and die at zero, destroying a context
// frees its memory, and a context handle that was destroyed stays
// recognisable as stale (its record is kept until the fake dies) instead of
// being dereferenced after free. "Device memory" is real host memory, so
// Memcpy and MemsetD8 move real bytes; ranges are checked against the
// allocations the way a device would fault. Test hooks inject failures
// (FailNext), make a device's errors sticky (LoseDevice), and expose counts
// and a call log.
//
// Thread-safety: every method may be called from any thread concurrently
// (one mutex guards the state; the thread-current bindings are
// thread_local and need none).
#ifndef HFLOW_TESTS_CUDA_FAKE_CUDA_DRIVER_H_
#define HFLOW_TESTS_CUDA_FAKE_CUDA_DRIVER_H_

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rt/cuda/cuda_driver.h"

namespace hflow {
namespace testing {

class FakeCudaDriver final : public rt::CudaDriver {
 public:
  // `gpus` devices of `memory_bytes_per_gpu` each.
  explicit FakeCudaDriver(int gpus, size_t memory_bytes_per_gpu = 1ull << 30);
  // Frees all memory still allocated (including that of dead contexts).
  ~FakeCudaDriver() override;

  FakeCudaDriver(const FakeCudaDriver&) = delete;
  FakeCudaDriver& operator=(const FakeCudaDriver&) = delete;

  // rt::CudaDriver.
  CUresult Init(unsigned int flags) override;
  CUresult DriverGetVersion(int* version) override;
  CUresult DeviceGetCount(int* count) override;
  CUresult DeviceGet(CUdevice* device, int ordinal) override;
  CUresult DeviceGetName(char* name, int len, CUdevice device) override;
  CUresult DeviceTotalMem(size_t* bytes, CUdevice device) override;
  CUresult DeviceGetAttribute(int* value, CUdevice_attribute attr,
                              CUdevice device) override;
  CUresult DevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) override;
  CUresult DevicePrimaryCtxRelease(CUdevice device) override;
  CUresult DevicePrimaryCtxGetState(CUdevice device, unsigned int* flags,
                                    int* active) override;
  CUresult CtxCreate(CUcontext* ctx, CUdevice device) override;
  CUresult CtxDestroy(CUcontext ctx) override;
  CUresult CtxSetCurrent(CUcontext ctx) override;
  CUresult CtxGetCurrent(CUcontext* ctx) override;
  CUresult CtxGetDevice(CUdevice* device) override;
  CUresult CtxSynchronize() override;
  CUresult MemAlloc(CUdeviceptr* ptr, size_t bytes) override;
  CUresult MemAllocManaged(CUdeviceptr* ptr, size_t bytes,
                           unsigned int flags) override;
  CUresult MemFree(CUdeviceptr ptr) override;
  CUresult Memcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) override;
  CUresult MemsetD8(CUdeviceptr dst, unsigned char value,
                    size_t count) override;
  CUresult MemGetInfo(size_t* free_bytes, size_t* total_bytes) override;
  CUresult MemHostRegister(void* ptr, size_t bytes,
                           unsigned int flags) override;
  CUresult MemHostUnregister(void* ptr) override;
  // Only CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, on a live allocation.
  CUresult PointerSetAttribute(const void* value, CUpointer_attribute attr,
                               CUdeviceptr ptr) override;
  std::string ErrorName(CUresult result) override;
  std::string ErrorString(CUresult result) override;

  // Test hooks.

  // What CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS reports (default on).
  void SetConcurrentManagedAccess(bool on);
  // The nth next call of `method` (a CudaDriver method name, e.g.
  // "MemAlloc") returns `result` and does nothing else. Several may be
  // pending for one method.
  void FailNext(const std::string& method, CUresult result, int nth = 1);
  // From now on every call that uses a context of `ordinal` (its current
  // context, or the context owning an allocation it touches) or names the
  // device returns `sticky`, as after a real sticky error.
  void LoseDevice(int ordinal, CUresult sticky = CUDA_ERROR_ILLEGAL_ADDRESS);

  // Calls of `method` so far, failed and injected ones included.
  uint64_t Calls(const std::string& method) const;
  // Contexts ever created on `ordinal`: primary (re)creations and user ones.
  uint64_t ContextsCreated(int ordinal) const;
  int PrimaryRefs(int ordinal) const;
  uint64_t LiveAllocations(int ordinal) const;
  size_t UsedBytes(int ordinal) const;
  // Allocations that were never MemFree'd but died with their context
  // (CtxDestroy, or the last DevicePrimaryCtxRelease): legal in CUDA, but
  // usually a leak in the runtime under test.
  uint64_t AllocationsFreedWithContext(int ordinal) const;
  // The calling thread's current context of this fake (nullptr if none);
  // neither counted nor logged.
  CUcontext CurrentOnThisThread() const;

  struct Call {
    std::string thread_name;  // pthread_getname_np
    std::string method;
    int ordinal;  // of the thread's current context at entry, -1 if none
    CUresult result;
  };
  // Every CUresult-returning call so far, in order.
  std::vector<Call> Log() const;

 private:
  struct Context {
    int ordinal;
    bool primary;
    bool alive;
    uint64_t id;
  };
  struct Device {
    size_t used_bytes = 0;
    uint64_t live_allocations = 0;
    uint64_t contexts_created = 0;
    uint64_t freed_with_context = 0;
    Context* primary = nullptr;
    int primary_refs = 0;
    CUresult lost = CUDA_SUCCESS;
  };
  struct Allocation {
    size_t bytes;
    int ordinal;
    bool managed;
    const Context* owner;
    bool sync_memops = false;
  };
  // A write into device memory the driver has not made yet (Note
  // [Asynchronous copies] in the .cc).
  struct PendingWrite {
    uintptr_t dst;
    std::vector<unsigned char> bytes;
  };
  struct Registration {
    size_t bytes;
    const Context* owner;
  };
  struct Injection {
    uint64_t call;  // fires on this call number of its method, or later
    CUresult result;
  };

  // What a driver call requires before its body runs.
  enum class Needs { kNothing, kInit, kContext };
  // Runs `body(current context or nullptr)` under the lock with the
  // bookkeeping every driver call shares: counting, logging, injected
  // failures, the Init check and (kContext) a live current context.
  CUresult Run(const char* method, Needs needs,
               const std::function<CUresult(Context*)>& body);
  std::string ErrorText(CUresult result, bool name);
  template <typename T>
  T DeviceStat(int ordinal, T Device::*field) const;

  // The thread's current context: CUDA_SUCCESS with it live, or the error a
  // call needing one returns.
  CUresult CurrentLocked(Context** ctx) const;
  CUresult CheckDeviceLocked(CUdevice device) const;
  // The live-or-dead record behind `handle`, or nullptr when it is not one
  // of this fake's handles.
  Context* FindLocked(CUcontext handle) const;
  Context* NewContextLocked(int ordinal, bool primary);
  void KillContextLocked(Context* ctx);
  CUresult AllocLocked(Context* ctx, CUdeviceptr* ptr, size_t bytes,
                       bool managed);
  // Checks [addr, addr + bytes) against live and dead allocations.
  CUresult CheckRangeLocked(uintptr_t addr, size_t bytes) const;
  // Makes `bytes` land at `dst` now, or at the next synchronizing call
  // when dst is device memory without CU_POINTER_ATTRIBUTE_SYNC_MEMOPS.
  void WriteLocked(uintptr_t dst, std::vector<unsigned char> bytes);
  void FlushLocked();

  const uint64_t instance_id_;  // keys this fake's thread-local bindings
  const size_t memory_per_gpu_;

  mutable std::mutex mu_;
  bool initialized_ = false;
  bool concurrent_managed_access_ = true;
  std::vector<Device> devices_;
  // Records live as long as the fake so stale handles stay recognisable.
  std::vector<std::unique_ptr<Context>> contexts_;
  std::map<const void*, Context*> by_handle_;
  std::map<uintptr_t, Allocation> allocations_;  // by start address
  // Memory of allocations that died with their context: kept (not freed)
  // until the fake dies, so a stale access is reported, not a use after
  // free.
  std::map<uintptr_t, size_t> dead_allocations_;
  std::map<uintptr_t, Registration> registrations_;  // by start address
  std::vector<PendingWrite> pending_;                // in issue order
  std::map<std::string, std::vector<Injection>> injections_;
  std::map<std::string, uint64_t> calls_;
  std::vector<Call> log_;
};

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_CUDA_FAKE_CUDA_DRIVER_H_
