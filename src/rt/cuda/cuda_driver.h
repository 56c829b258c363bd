// CudaDriver: the slice of NVIDIA's driver API the CUDA backend uses, as an
// injected interface, so that CudaRuntime's rules (bindings, allocations,
// errors, device loss) are tested without a GPU against a fake driver
// (tests/cuda/fake_cuda_driver.h) and run unchanged on the real one.
//
// LoadCudaDriver opens the real driver (libcuda.so.1) at run time: hflow's
// libraries do not link it, so one build runs on machines with and without
// an NVIDIA driver, choosing `sim` on the latter (Note [Loading the driver]
// in cuda_driver.cc).
//
// Every method has its driver function's meaning and returns its CUresult;
// the thread-current context is the driver's own, per thread, as in CUDA.
// Thread-safety: as the driver's: every method may be called from any
// thread.
#ifndef HFLOW_RT_CUDA_CUDA_DRIVER_H_
#define HFLOW_RT_CUDA_CUDA_DRIVER_H_

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>

#include "hflow/status.h"

namespace hflow {
namespace rt {

class CudaDriver {
 public:
  virtual ~CudaDriver() = default;

  virtual CUresult Init(unsigned int flags) = 0;
  virtual CUresult DriverGetVersion(int* version) = 0;
  virtual CUresult DeviceGetCount(int* count) = 0;
  virtual CUresult DeviceGet(CUdevice* device, int ordinal) = 0;
  virtual CUresult DeviceGetName(char* name, int len, CUdevice device) = 0;
  virtual CUresult DeviceTotalMem(size_t* bytes, CUdevice device) = 0;
  virtual CUresult DeviceGetAttribute(int* value, CUdevice_attribute attr,
                                      CUdevice device) = 0;

  virtual CUresult DevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) = 0;
  virtual CUresult DevicePrimaryCtxRelease(CUdevice device) = 0;
  // Whether the device's primary context is active (retained by anyone).
  virtual CUresult DevicePrimaryCtxGetState(CUdevice device,
                                            unsigned int* flags,
                                            int* active) = 0;
  // A user context (cuCtxCreate with no parameters); made current.
  virtual CUresult CtxCreate(CUcontext* ctx, CUdevice device) = 0;
  virtual CUresult CtxDestroy(CUcontext ctx) = 0;
  virtual CUresult CtxSetCurrent(CUcontext ctx) = 0;
  virtual CUresult CtxGetCurrent(CUcontext* ctx) = 0;
  // The device of the current context.
  virtual CUresult CtxGetDevice(CUdevice* device) = 0;
  virtual CUresult CtxSynchronize() = 0;

  virtual CUresult MemAlloc(CUdeviceptr* ptr, size_t bytes) = 0;
  virtual CUresult MemAllocManaged(CUdeviceptr* ptr, size_t bytes,
                                   unsigned int flags) = 0;
  virtual CUresult MemFree(CUdeviceptr ptr) = 0;
  // Unified addressing: one call for every direction.
  virtual CUresult Memcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) = 0;
  virtual CUresult MemsetD8(CUdeviceptr dst, unsigned char value,
                            size_t count) = 0;
  virtual CUresult MemGetInfo(size_t* free_bytes, size_t* total_bytes) = 0;
  virtual CUresult MemHostRegister(void* ptr, size_t bytes,
                                   unsigned int flags) = 0;
  virtual CUresult MemHostUnregister(void* ptr) = 0;
  // cuPointerSetAttribute (hflow sets CU_POINTER_ATTRIBUTE_SYNC_MEMOPS).
  virtual CUresult PointerSetAttribute(const void* value,
                                       CUpointer_attribute attribute,
                                       CUdeviceptr ptr) = 0;

  // "CUDA_ERROR_INVALID_CONTEXT" and the driver's sentence for it; never
  // null (an unknown code reads as its number).
  virtual std::string ErrorName(CUresult result) = 0;
  virtual std::string ErrorString(CUresult result) = 0;
};

// Opens the driver library (`library`, default libcuda.so.1, or
// $HFLOW_CUDA_DRIVER when set) and resolves every entry point CudaDriver
// needs. kNotSupported naming the library and the reason when it cannot be
// opened (no NVIDIA driver installed) or lacks a symbol (a driver older than
// the CUDA headers hflow was built with).
Status LoadCudaDriver(const std::string& library,
                      std::unique_ptr<CudaDriver>* out);

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_CUDA_CUDA_DRIVER_H_
