// LoadCudaDriver: the real driver, opened with dlopen and resolved symbol by
// symbol.
//
// Thread-safety: a loaded driver is immutable; its calls are the driver's.
#include "rt/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <string>

namespace hflow {
namespace rt {

namespace {

// Note [Loading the driver]
// hflow's libraries never link libcuda: a binary linked against it does not
// start where no NVIDIA driver is installed (CI, laptops), and the default
// backend, sim, needs none. The CUDA backend opens libcuda.so.1 when a
// runtime is made for it and resolves each entry point by the name cuda.h
// maps it to (cuMemAlloc is cuMemAlloc_v2): the macro below expands the
// header's name before making it a string, so the versions are those of
// the headers hflow was built with, and a driver too old for them is
// refused at load, naming the missing symbol, not called with the wrong
// signature.
#define HFLOW_CU_NAME2(x) #x
#define HFLOW_CU_NAME(x) HFLOW_CU_NAME2(x)

class DlopenDriver final : public CudaDriver {
 public:
  ~DlopenDriver() override {
    // The library stays loaded: contexts and threads of the driver outlive
    // any runtime object, and unloading it under them is undefined.
  }

  Status Load(const std::string& library) {
    handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* err = dlerror();
      return Status::NotSupported(
          "device runtime 'cuda': cannot open the NVIDIA driver library '" +
          library + "' (" + (err ? err : "unknown error") +
          "); install the NVIDIA driver, set $HFLOW_CUDA_DRIVER to its "
          "libcuda.so.1, or use the 'sim' backend");
    }
    std::string missing;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(handle_, name));
      if (fn == nullptr && missing.empty()) missing = name;
    };
#define HFLOW_CU_RESOLVE(field, symbol) get(field, HFLOW_CU_NAME(symbol))
    HFLOW_CU_RESOLVE(init_, cuInit);
    HFLOW_CU_RESOLVE(version_, cuDriverGetVersion);
    HFLOW_CU_RESOLVE(count_, cuDeviceGetCount);
    HFLOW_CU_RESOLVE(get_, cuDeviceGet);
    HFLOW_CU_RESOLVE(name_, cuDeviceGetName);
    HFLOW_CU_RESOLVE(total_, cuDeviceTotalMem);
    HFLOW_CU_RESOLVE(attr_, cuDeviceGetAttribute);
    HFLOW_CU_RESOLVE(retain_, cuDevicePrimaryCtxRetain);
    HFLOW_CU_RESOLVE(release_, cuDevicePrimaryCtxRelease);
    HFLOW_CU_RESOLVE(state_, cuDevicePrimaryCtxGetState);
    HFLOW_CU_RESOLVE(create_, cuCtxCreate);
    HFLOW_CU_RESOLVE(destroy_, cuCtxDestroy);
    HFLOW_CU_RESOLVE(set_current_, cuCtxSetCurrent);
    HFLOW_CU_RESOLVE(get_current_, cuCtxGetCurrent);
    HFLOW_CU_RESOLVE(ctx_device_, cuCtxGetDevice);
    HFLOW_CU_RESOLVE(sync_, cuCtxSynchronize);
    HFLOW_CU_RESOLVE(alloc_, cuMemAlloc);
    HFLOW_CU_RESOLVE(managed_, cuMemAllocManaged);
    HFLOW_CU_RESOLVE(free_, cuMemFree);
    HFLOW_CU_RESOLVE(memcpy_, cuMemcpy);
    HFLOW_CU_RESOLVE(memset_, cuMemsetD8);
    HFLOW_CU_RESOLVE(info_, cuMemGetInfo);
    HFLOW_CU_RESOLVE(register_, cuMemHostRegister);
    HFLOW_CU_RESOLVE(unregister_, cuMemHostUnregister);
    HFLOW_CU_RESOLVE(pointer_attr_, cuPointerSetAttribute);
    HFLOW_CU_RESOLVE(error_name_, cuGetErrorName);
    HFLOW_CU_RESOLVE(error_string_, cuGetErrorString);
#undef HFLOW_CU_RESOLVE
    if (!missing.empty()) {
      return Status::NotSupported(
          "device runtime 'cuda': the driver library '" + library +
          "' has no " + missing + " (hflow was built with CUDA " +
          std::to_string(CUDA_VERSION / 1000) + "." +
          std::to_string(CUDA_VERSION % 1000 / 10) +
          " headers; the driver is older): update the NVIDIA driver");
    }
    return Status::OK();
  }

  CUresult Init(unsigned int flags) override { return init_(flags); }
  CUresult DriverGetVersion(int* v) override { return version_(v); }
  CUresult DeviceGetCount(int* n) override { return count_(n); }
  CUresult DeviceGet(CUdevice* d, int ordinal) override {
    return get_(d, ordinal);
  }
  CUresult DeviceGetName(char* name, int len, CUdevice d) override {
    return name_(name, len, d);
  }
  CUresult DeviceTotalMem(size_t* bytes, CUdevice d) override {
    return total_(bytes, d);
  }
  CUresult DeviceGetAttribute(int* v, CUdevice_attribute a,
                              CUdevice d) override {
    return attr_(v, a, d);
  }
  CUresult DevicePrimaryCtxRetain(CUcontext* c, CUdevice d) override {
    return retain_(c, d);
  }
  CUresult DevicePrimaryCtxRelease(CUdevice d) override { return release_(d); }
  CUresult DevicePrimaryCtxGetState(CUdevice d, unsigned int* flags,
                                    int* active) override {
    return state_(d, flags, active);
  }
  CUresult CtxCreate(CUcontext* c, CUdevice d) override {
#if CUDA_VERSION >= 13000
    // cuCtxCreate is cuCtxCreate_v4 from CUDA 13 on (12.x maps it to _v2,
    // three arguments); no execution-affinity or CIG parameters.
    CUctxCreateParams params = {};
    return create_(c, &params, 0, d);
#else
    return create_(c, 0, d);
#endif
  }
  CUresult CtxDestroy(CUcontext c) override { return destroy_(c); }
  CUresult CtxSetCurrent(CUcontext c) override { return set_current_(c); }
  CUresult CtxGetCurrent(CUcontext* c) override { return get_current_(c); }
  CUresult CtxGetDevice(CUdevice* d) override { return ctx_device_(d); }
  CUresult CtxSynchronize() override { return sync_(); }
  CUresult MemAlloc(CUdeviceptr* p, size_t bytes) override {
    return alloc_(p, bytes);
  }
  CUresult MemAllocManaged(CUdeviceptr* p, size_t bytes,
                           unsigned int flags) override {
    return managed_(p, bytes, flags);
  }
  CUresult MemFree(CUdeviceptr p) override { return free_(p); }
  CUresult Memcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) override {
    return memcpy_(dst, src, bytes);
  }
  CUresult MemsetD8(CUdeviceptr p, unsigned char v, size_t n) override {
    return memset_(p, v, n);
  }
  CUresult MemGetInfo(size_t* f, size_t* t) override { return info_(f, t); }
  CUresult MemHostRegister(void* p, size_t bytes, unsigned int flags) override {
    return register_(p, bytes, flags);
  }
  CUresult MemHostUnregister(void* p) override { return unregister_(p); }
  CUresult PointerSetAttribute(const void* value, CUpointer_attribute a,
                               CUdeviceptr p) override {
    return pointer_attr_(value, a, p);
  }
  std::string ErrorName(CUresult r) override {
    const char* s = nullptr;
    if (error_name_(r, &s) != CUDA_SUCCESS || s == nullptr) {
      return "CUresult " + std::to_string(static_cast<int>(r));
    }
    return s;
  }
  std::string ErrorString(CUresult r) override {
    const char* s = nullptr;
    if (error_string_(r, &s) != CUDA_SUCCESS || s == nullptr) {
      return "unknown error";
    }
    return s;
  }

 private:
  void* handle_ = nullptr;
  decltype(&cuInit) init_ = nullptr;
  decltype(&cuDriverGetVersion) version_ = nullptr;
  decltype(&cuDeviceGetCount) count_ = nullptr;
  decltype(&cuDeviceGet) get_ = nullptr;
  decltype(&cuDeviceGetName) name_ = nullptr;
  decltype(&cuDeviceTotalMem) total_ = nullptr;
  decltype(&cuDeviceGetAttribute) attr_ = nullptr;
  decltype(&cuDevicePrimaryCtxRetain) retain_ = nullptr;
  decltype(&cuDevicePrimaryCtxRelease) release_ = nullptr;
  decltype(&cuDevicePrimaryCtxGetState) state_ = nullptr;
  decltype(&cuCtxCreate) create_ = nullptr;
  decltype(&cuCtxDestroy) destroy_ = nullptr;
  decltype(&cuCtxSetCurrent) set_current_ = nullptr;
  decltype(&cuCtxGetCurrent) get_current_ = nullptr;
  decltype(&cuCtxGetDevice) ctx_device_ = nullptr;
  decltype(&cuCtxSynchronize) sync_ = nullptr;
  decltype(&cuMemAlloc) alloc_ = nullptr;
  decltype(&cuMemAllocManaged) managed_ = nullptr;
  decltype(&cuMemFree) free_ = nullptr;
  decltype(&cuMemcpy) memcpy_ = nullptr;
  decltype(&cuMemsetD8) memset_ = nullptr;
  decltype(&cuMemGetInfo) info_ = nullptr;
  decltype(&cuMemHostRegister) register_ = nullptr;
  decltype(&cuMemHostUnregister) unregister_ = nullptr;
  decltype(&cuPointerSetAttribute) pointer_attr_ = nullptr;
  decltype(&cuGetErrorName) error_name_ = nullptr;
  decltype(&cuGetErrorString) error_string_ = nullptr;
};

}  // namespace

Status LoadCudaDriver(const std::string& library,
                      std::unique_ptr<CudaDriver>* out) {
  auto driver = std::make_unique<DlopenDriver>();
  HFLOW_RETURN_IF_ERROR(driver->Load(library));
  *out = std::move(driver);
  return Status::OK();
}

}  // namespace rt
}  // namespace hflow
