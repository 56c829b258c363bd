// ge::Shape, ge::TensorDesc and ge::Tensor: GE's host tensor, what a GE host
// program feeds to and fetches from a DataFlow graph.
//
// As in GE, a Tensor and a Shape are handles: copies share their state
// (Tensor::Clone makes a deep copy); TensorDesc copies are independent.
//
// Errors: setters return GRAPH_SUCCESS or GRAPH_PARAM_INVALID (an index out
// of range, a null pointer with a size); no call throws.
//
// Thread-safety: distinct objects may be used from any thread; copies of one
// Tensor share state and must not be written concurrently.
#ifndef HFLOW_GE_GRAPH_TENSOR_H_
#define HFLOW_GE_GRAPH_TENSOR_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/ascend_string.h"
#include "graph/error_codes.h"
#include "graph/types.h"

namespace ge {
class ShapeImpl;
class Shape {
 public:
  Shape();
  ~Shape() = default;
  explicit Shape(const std::vector<int64_t>& dims);

  size_t GetDimNum() const;
  // 0 for an index out of range.
  int64_t GetDim(size_t idx) const;
  graphStatus SetDim(size_t idx, int64_t value);
  std::vector<int64_t> GetDims() const;
  // The element count: 1 for a scalar (no dims), 0 with a zero dim, -1 with
  // an unknown (negative) dim.
  int64_t GetShapeSize() const;

 private:
  std::shared_ptr<ShapeImpl> impl_;
};

class TensorDescImpl;
class TensorDesc {
 public:
  TensorDesc();
  ~TensorDesc() = default;
  explicit TensorDesc(Shape shape, Format format = FORMAT_ND,
                      DataType dt = DT_FLOAT);
  TensorDesc(const TensorDesc& desc);
  TensorDesc(TensorDesc&& desc);
  TensorDesc& operator=(const TensorDesc& desc);
  TensorDesc& operator=(TensorDesc&& desc);

  void Update(const Shape& shape, Format format = FORMAT_ND,
              DataType dt = DT_FLOAT);
  Shape GetShape() const;
  void SetShape(const Shape& shape);
  graphStatus SetUnknownDimNumShape();
  graphStatus SetShapeRange(
      const std::vector<std::pair<int64_t, int64_t>>& range);
  graphStatus GetShapeRange(
      std::vector<std::pair<int64_t, int64_t>>& range) const;

  Format GetFormat() const;
  void SetFormat(Format format);
  Shape GetOriginShape() const;
  void SetOriginShape(const Shape& origin_shape);
  Format GetOriginFormat() const;
  void SetOriginFormat(Format origin_format);
  DataType GetDataType() const;
  void SetDataType(DataType dt);

  ATTRIBUTED_DEPRECATED(graphStatus GetName(AscendString&))
  std::string GetName() const;
  graphStatus GetName(AscendString& name);
  graphStatus GetName(AscendString& name) const;
  ATTRIBUTED_DEPRECATED(void SetName(const char_t*))
  void SetName(const std::string& name);
  void SetName(const char_t* name);

  void SetSize(int64_t size);
  int64_t GetSize() const;
  int64_t GetRealDimCnt() const;
  void SetRealDimCnt(const int64_t real_dim_cnt);
  void SetPlacement(Placement placement);
  Placement GetPlacement() const;

 private:
  std::shared_ptr<TensorDescImpl> impl;
};

class TensorImpl;
class Tensor {
 public:
  using DeleteFunc = std::function<void(uint8_t*)>;
  Tensor();
  ~Tensor() = default;
  explicit Tensor(const TensorDesc& tensor_desc);
  Tensor(const TensorDesc& tensor_desc, const std::vector<uint8_t>& data);
  Tensor(const TensorDesc& tensor_desc, const uint8_t* data, size_t size);
  Tensor(TensorDesc&& tensor_desc, std::vector<uint8_t>&& data);

  TensorDesc GetTensorDesc() const;
  graphStatus SetTensorDesc(const TensorDesc& tensor_desc);

  // Null when the tensor holds no bytes.
  const uint8_t* GetData() const;
  uint8_t* GetData();
  size_t GetSize() const;
  // Hands the bytes to the caller (the tensor is empty after it).
  std::unique_ptr<uint8_t[], Tensor::DeleteFunc> ResetData();

  graphStatus SetData(std::vector<uint8_t>&& data);
  graphStatus SetData(const std::vector<uint8_t>& data);
  graphStatus SetData(const uint8_t* data, size_t size);
  ATTRIBUTED_DEPRECATED(graphStatus SetData(const char_t* data))
  graphStatus SetData(const std::string& data);
  graphStatus SetData(const char_t* data);
  // A string tensor's bytes in GE's layout: one {offset, length} head of two
  // int64s per string, then the strings, each NUL-terminated.
  ATTRIBUTED_DEPRECATED(graphStatus SetData(const std::vector<AscendString>&))
  graphStatus SetData(const std::vector<std::string>& data);
  graphStatus SetData(const std::vector<AscendString>& datas);
  // Takes ownership of `data` (freed with `deleter_func`), no copy.
  graphStatus SetData(uint8_t* data, size_t size,
                      const Tensor::DeleteFunc& deleter_func);
  // GRAPH_SUCCESS when the bytes match the descriptor's shape and dtype
  // (or the dtype has no fixed size).
  graphStatus IsValid();

  graphStatus SetShapeDimNum(const size_t dim_num);
  size_t GetShapeDimNum() const;
  graphStatus SetShapeDim(const size_t idx, const int64_t dim_value);
  int64_t GetShapeDim(const size_t idx) const;
  graphStatus SetOriginShapeDimNum(const size_t dim_num);
  size_t GetOriginShapeDimNum() const;
  graphStatus SetOriginShapeDim(const size_t idx, const int64_t dim_value);
  int64_t GetOriginShapeDim(const size_t idx) const;
  graphStatus SetFormat(const ge::Format& format);
  ge::Format GetFormat() const;
  graphStatus SetOriginFormat(const ge::Format& format);
  ge::Format GetOriginFormat() const;
  graphStatus SetDataType(const ge::DataType& dtype);
  ge::DataType GetDataType() const;
  graphStatus SetPlacement(const ge::Placement& placement);
  ge::Placement GetPlacement() const;

  // As SetData with a deleter.
  graphStatus ResetData(uint8_t* data, size_t size,
                        const Tensor::DeleteFunc& deleter_func);

  // A deep copy: its own descriptor and bytes.
  Tensor Clone() const;

 private:
  std::shared_ptr<TensorImpl> impl;
};
}  // namespace ge

#endif  // HFLOW_GE_GRAPH_TENSOR_H_
