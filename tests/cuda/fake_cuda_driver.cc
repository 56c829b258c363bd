// FakeCudaDriver's implementation: every driver call runs under one mutex
// through Run(), which counts, logs and injects failures, so the bodies
// below only model the driver. The thread-current context lives in a
// thread_local map keyed by the fake's instance id, as CUDA's binding lives
// in the driver's per-thread state.
//
// Thread-safety: see fake_cuda_driver.h.
#include "cuda/fake_cuda_driver.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <unordered_map>

namespace hflow {
namespace testing {
namespace {

constexpr int kDriverVersion = 13000;

// Never reused, so a binding left on a thread by a dead fake can never be
// mistaken for one of a later fake's at the same address.
std::atomic<uint64_t> next_instance_id{1};

// The calling thread's current context, per fake instance.
thread_local std::unordered_map<uint64_t, CUcontext> t_current;

CUcontext Bound(uint64_t instance) {
  auto it = t_current.find(instance);
  return it == t_current.end() ? nullptr : it->second;
}

void Bind(uint64_t instance, CUcontext ctx) {
  if (ctx == nullptr) {
    t_current.erase(instance);
  } else {
    t_current[instance] = ctx;
  }
}

// Stores a call's result, as the driver does, unless `out` is null.
template <typename T, typename V>
CUresult Put(T* out, V value) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = static_cast<T>(value);
  return CUDA_SUCCESS;
}

std::string ThreadName() {
  char name[64] = "";
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return "";
  return name;
}

struct ErrorEntry {
  CUresult result;
  const char* name;
  const char* text;  // the real driver's cuGetErrorString sentence
};

#define HFLOW_FAKE_ERROR(code, text) \
  { code, #code, text }
constexpr ErrorEntry kErrors[] = {
    HFLOW_FAKE_ERROR(CUDA_SUCCESS, "no error"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_NO_DEVICE,
                     "no CUDA-capable device is detected"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_ECC_UNCORRECTABLE,
                     "uncorrectable ECC error encountered"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS,
                     "an illegal memory access was encountered"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
    HFLOW_FAKE_ERROR(
        CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
        "part or all of the requested memory range is already mapped"),
    HFLOW_FAKE_ERROR(
        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
        "pointer does not correspond to a registered memory region"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
    HFLOW_FAKE_ERROR(CUDA_ERROR_UNKNOWN, "unknown error"),
};
#undef HFLOW_FAKE_ERROR

}  // namespace

FakeCudaDriver::FakeCudaDriver(int gpus, size_t memory_bytes_per_gpu)
    : instance_id_(next_instance_id.fetch_add(1)),
      memory_per_gpu_(memory_bytes_per_gpu),
      devices_(gpus > 0 ? gpus : 0) {}

FakeCudaDriver::~FakeCudaDriver() {
  for (auto& [addr, allocation] : allocations_) {
    std::free(reinterpret_cast<void*>(addr));
  }
  for (auto& [addr, bytes] : dead_allocations_) {
    std::free(reinterpret_cast<void*>(addr));
  }
  Bind(instance_id_, nullptr);  // other threads' entries are inert
}

CUresult FakeCudaDriver::Run(const char* method, Needs needs,
                             const std::function<CUresult(Context*)>& body) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t call = ++calls_[method];
  // Bindings hold only this fake's records, which outlive every handle.
  const CUcontext bound = Bound(instance_id_);
  const int ordinal =
      bound == nullptr ? -1 : reinterpret_cast<Context*>(bound)->ordinal;
  CUresult result = CUDA_SUCCESS;
  std::vector<Injection>& pending = injections_[method];
  auto due = std::find_if(pending.begin(), pending.end(),
                          [&](const Injection& i) { return i.call <= call; });
  Context* current = nullptr;
  if (due != pending.end()) {
    result = due->result;
    pending.erase(due);
  } else if (needs != Needs::kNothing && !initialized_) {
    result = CUDA_ERROR_NOT_INITIALIZED;
  } else if (needs == Needs::kContext) {
    result = CurrentLocked(&current);
    if (result == CUDA_SUCCESS) result = body(current);
  } else {
    result = body(nullptr);
  }
  log_.push_back({ThreadName(), method, ordinal, result});
  return result;
}

CUresult FakeCudaDriver::CurrentLocked(Context** ctx) const {
  Context* bound = reinterpret_cast<Context*>(Bound(instance_id_));
  if (bound == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (!bound->alive) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  if (devices_[bound->ordinal].lost != CUDA_SUCCESS) {
    return devices_[bound->ordinal].lost;
  }
  *ctx = bound;
  return CUDA_SUCCESS;
}

CUresult FakeCudaDriver::CheckDeviceLocked(CUdevice device) const {
  if (device < 0 || device >= static_cast<int>(devices_.size())) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  return devices_[device].lost;
}

FakeCudaDriver::Context* FakeCudaDriver::FindLocked(CUcontext handle) const {
  auto it = by_handle_.find(handle);
  return it == by_handle_.end() ? nullptr : it->second;
}

FakeCudaDriver::Context* FakeCudaDriver::NewContextLocked(int ordinal,
                                                          bool primary) {
  contexts_.push_back(std::make_unique<Context>(
      Context{ordinal, primary, /*alive=*/true, contexts_.size() + 1}));
  Context* ctx = contexts_.back().get();
  by_handle_[ctx] = ctx;
  ++devices_[ordinal].contexts_created;
  return ctx;
}

// As cuCtxDestroy does, the context's allocations and host registrations
// die with it. The memory is parked, not freed: see dead_allocations_.
void FakeCudaDriver::KillContextLocked(Context* ctx) {
  FlushLocked();
  ctx->alive = false;
  for (auto it = allocations_.begin(); it != allocations_.end();) {
    if (it->second.owner != ctx) {
      ++it;
      continue;
    }
    Device& device = devices_[it->second.ordinal];
    device.used_bytes -= it->second.bytes;
    --device.live_allocations;
    ++device.freed_with_context;
    dead_allocations_[it->first] = it->second.bytes;
    it = allocations_.erase(it);
  }
  for (auto it = registrations_.begin(); it != registrations_.end();) {
    it = it->second.owner == ctx ? registrations_.erase(it) : std::next(it);
  }
}

CUresult FakeCudaDriver::Init(unsigned int flags) {
  return Run("Init", Needs::kNothing, [&](Context*) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (devices_.empty()) return CUDA_ERROR_NO_DEVICE;  // as cuInit
    initialized_ = true;
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::DriverGetVersion(int* version) {
  return Run("DriverGetVersion", Needs::kNothing,
             [&](Context*) { return Put(version, kDriverVersion); });
}

CUresult FakeCudaDriver::DeviceGetCount(int* count) {
  return Run("DeviceGetCount", Needs::kInit,
             [&](Context*) { return Put(count, devices_.size()); });
}

CUresult FakeCudaDriver::DeviceGet(CUdevice* device, int ordinal) {
  return Run("DeviceGet", Needs::kInit, [&](Context*) {
    if (CUresult r = CheckDeviceLocked(ordinal); r != CUDA_SUCCESS) return r;
    return Put(device, ordinal);
  });
}

CUresult FakeCudaDriver::DeviceGetName(char* name, int len, CUdevice device) {
  return Run("DeviceGetName", Needs::kInit, [&](Context*) {
    if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = CheckDeviceLocked(device); r != CUDA_SUCCESS) return r;
    std::snprintf(name, static_cast<size_t>(len), "Fake GPU %d", device);
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::DeviceTotalMem(size_t* bytes, CUdevice device) {
  return Run("DeviceTotalMem", Needs::kInit, [&](Context*) {
    if (CUresult r = CheckDeviceLocked(device); r != CUDA_SUCCESS) return r;
    return Put(bytes, memory_per_gpu_);
  });
}

CUresult FakeCudaDriver::DeviceGetAttribute(int* value, CUdevice_attribute attr,
                                            CUdevice device) {
  return Run("DeviceGetAttribute", Needs::kInit, [&](Context*) {
    if (CUresult r = CheckDeviceLocked(device); r != CUDA_SUCCESS) return r;
    int v = 0;
    if (attr == CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) {
      v = concurrent_managed_access_ ? 1 : 0;
    } else if (attr == CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) {
      v = 1;
    }
    return Put(value, v);
  });
}

// Unlike the real driver, whose primary handle survives a release to zero,
// a retain from zero makes a new record: a runtime still holding the old
// handle then fails (CONTEXT_IS_DESTROYED) instead of silently working.
CUresult FakeCudaDriver::DevicePrimaryCtxRetain(CUcontext* ctx,
                                                CUdevice device) {
  return Run("DevicePrimaryCtxRetain", Needs::kInit, [&](Context*) {
    if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = CheckDeviceLocked(device); r != CUDA_SUCCESS) return r;
    Device& d = devices_[device];
    if (d.primary_refs == 0) d.primary = NewContextLocked(device, true);
    ++d.primary_refs;
    *ctx = reinterpret_cast<CUcontext>(d.primary);
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::DevicePrimaryCtxRelease(CUdevice device) {
  return Run("DevicePrimaryCtxRelease", Needs::kInit, [&](Context*) {
    if (CUresult r = CheckDeviceLocked(device); r != CUDA_SUCCESS) return r;
    Device& d = devices_[device];
    if (d.primary_refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--d.primary_refs == 0) {
      KillContextLocked(d.primary);  // threads bound to it keep a dead one
      d.primary = nullptr;
    }
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::DevicePrimaryCtxGetState(CUdevice device,
                                                  unsigned int* flags,
                                                  int* active) {
  return Run("DevicePrimaryCtxGetState", Needs::kInit, [&](Context*) {
    if (CUresult r = CheckDeviceLocked(device); r != CUDA_SUCCESS) return r;
    if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = 0;
    *active = devices_[device].primary_refs > 0 ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::CtxCreate(CUcontext* ctx, CUdevice device) {
  return Run("CtxCreate", Needs::kInit, [&](Context*) {
    if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = CheckDeviceLocked(device); r != CUDA_SUCCESS) return r;
    *ctx = reinterpret_cast<CUcontext>(NewContextLocked(device, false));
    Bind(instance_id_, *ctx);
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::CtxDestroy(CUcontext handle) {
  return Run("CtxDestroy", Needs::kInit, [&](Context*) {
    Context* ctx = FindLocked(handle);
    if (ctx == nullptr || !ctx->alive || ctx->primary) {
      return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (CUresult r = devices_[ctx->ordinal].lost; r != CUDA_SUCCESS) return r;
    KillContextLocked(ctx);
    // Only the calling thread is unbound; others keep the dead context.
    if (Bound(instance_id_) == handle) Bind(instance_id_, nullptr);
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::CtxSetCurrent(CUcontext handle) {
  return Run("CtxSetCurrent", Needs::kInit, [&](Context*) {
    if (handle != nullptr) {
      Context* ctx = FindLocked(handle);
      if (ctx == nullptr || !ctx->alive) return CUDA_ERROR_INVALID_CONTEXT;
      if (CUresult r = devices_[ctx->ordinal].lost; r != CUDA_SUCCESS) {
        return r;
      }
    }
    Bind(instance_id_, handle);
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::CtxGetCurrent(CUcontext* ctx) {
  return Run("CtxGetCurrent", Needs::kInit, [&](Context*) {
    return Put(ctx, Bound(instance_id_));  // even if it died since
  });
}

CUresult FakeCudaDriver::CtxGetDevice(CUdevice* device) {
  return Run("CtxGetDevice", Needs::kContext,
             [&](Context* ctx) { return Put(device, ctx->ordinal); });
}

CUresult FakeCudaDriver::CtxSynchronize() {
  return Run("CtxSynchronize", Needs::kContext, [&](Context*) {
    FlushLocked();
    return CUDA_SUCCESS;
  });
}

std::string FakeCudaDriver::ErrorName(CUresult result) {
  return ErrorText(result, /*name=*/true);
}

std::string FakeCudaDriver::ErrorString(CUresult result) {
  return ErrorText(result, /*name=*/false);
}

std::string FakeCudaDriver::ErrorText(CUresult result, bool name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++calls_[name ? "ErrorName" : "ErrorString"];
  }
  for (const ErrorEntry& e : kErrors) {
    if (e.result == result) return name ? e.name : e.text;
  }
  return "CUresult " + std::to_string(static_cast<int>(result));
}

void FakeCudaDriver::SetConcurrentManagedAccess(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  concurrent_managed_access_ = on;
}

void FakeCudaDriver::FailNext(const std::string& method, CUresult result,
                              int nth) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t base = calls_.count(method) ? calls_.at(method) : 0;
  injections_[method].push_back(
      Injection{base + static_cast<uint64_t>(nth < 1 ? 1 : nth), result});
}

void FakeCudaDriver::LoseDevice(int ordinal, CUresult sticky) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ordinal < 0 || ordinal >= static_cast<int>(devices_.size())) {
    std::fprintf(stderr, "FakeCudaDriver::LoseDevice: no device %d\n", ordinal);
    std::abort();  // a broken test, not a driver condition
  }
  devices_[ordinal].lost = sticky;
}

uint64_t FakeCudaDriver::Calls(const std::string& method) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = calls_.find(method);
  return it == calls_.end() ? 0 : it->second;
}

template <typename T>
T FakeCudaDriver::DeviceStat(int ordinal, T Device::*field) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (ordinal < 0 || ordinal >= static_cast<int>(devices_.size())) return 0;
  return devices_[ordinal].*field;
}

uint64_t FakeCudaDriver::ContextsCreated(int ordinal) const {
  return DeviceStat(ordinal, &Device::contexts_created);
}

int FakeCudaDriver::PrimaryRefs(int ordinal) const {
  return DeviceStat(ordinal, &Device::primary_refs);
}

uint64_t FakeCudaDriver::LiveAllocations(int ordinal) const {
  return DeviceStat(ordinal, &Device::live_allocations);
}

size_t FakeCudaDriver::UsedBytes(int ordinal) const {
  return DeviceStat(ordinal, &Device::used_bytes);
}

uint64_t FakeCudaDriver::AllocationsFreedWithContext(int ordinal) const {
  return DeviceStat(ordinal, &Device::freed_with_context);
}

CUcontext FakeCudaDriver::CurrentOnThisThread() const {
  return Bound(instance_id_);
}

std::vector<FakeCudaDriver::Call> FakeCudaDriver::Log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

}  // namespace testing
}  // namespace hflow
