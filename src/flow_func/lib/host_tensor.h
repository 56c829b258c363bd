// HostTensor: a Tensor in ordinary host memory, what FlowBufferFactory::
// AllocTensor returns when the runtime installed no allocator on the calling
// thread (unit tests, tools, UDF code run outside a device thread). Not
// thread-safe for Reshape; reads may be concurrent.
#ifndef HFLOW_FLOW_FUNC_LIB_HOST_TENSOR_H_
#define HFLOW_FLOW_FUNC_LIB_HOST_TENSOR_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "flow_func/flow_msg.h"
#include "flow_func/tensor_data_type.h"

namespace FlowFunc::internal {

// Number of elements of `shape` (1 for a scalar); -1 if a dim is negative or
// the product overflows int64_t.
int64_t ElementCount(const std::vector<int64_t>& shape);

// Whether `align` is accepted by AllocTensor: in [32, 1024] and divides 1024.
bool IsValidAlign(uint32_t align);

class HostTensor final : public Tensor {
 public:
  // Null on an invalid shape, dtype or align, or when memory runs out. The
  // buffer is zero-filled and its size rounded up to `align`.
  static std::shared_ptr<HostTensor> Create(const std::vector<int64_t>& shape,
                                            TensorDataType dtype,
                                            uint32_t align);

  const std::vector<int64_t>& GetShape() const override { return shape_; }
  TensorDataType GetDataType() const override { return dtype_; }
  void* GetData() const override { return buffer_.get(); }
  uint64_t GetDataSize() const override { return data_size_; }
  int64_t GetElementCnt() const override { return element_cnt_; }
  // Succeeds only for a valid shape with the same element count.
  int32_t Reshape(const std::vector<int64_t>& shape) override;
  uint64_t GetDataBufferSize() const override { return buffer_size_; }

 private:
  struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
  };

  HostTensor() = default;

  std::vector<int64_t> shape_;
  TensorDataType dtype_ = TensorDataType::DT_UNDEFINED;
  int64_t element_cnt_ = 0;
  uint64_t data_size_ = 0;
  uint64_t buffer_size_ = 0;
  std::unique_ptr<void, FreeDeleter> buffer_;
};

}  // namespace FlowFunc::internal

#endif  // HFLOW_FLOW_FUNC_LIB_HOST_TENSOR_H_
