// ge::Shape, ge::TensorDesc and ge::Tensor (graph/tensor.h). Part of
// libgraph_base.so (old string ABI, as GE's).
//
// Thread-safety: no shared state beyond what a Tensor's copies share.
#include "graph/tensor.h"

#include <cstring>
#include <limits>

namespace ge {
class ShapeImpl {
 public:
  std::vector<int64_t> dims;
};

class TensorDescImpl {
 public:
  Shape shape;
  Shape origin_shape;
  Format format = FORMAT_ND;
  Format origin_format = FORMAT_ND;
  DataType dtype = DT_FLOAT;
  std::string name;
  int64_t size = 0;
  int64_t real_dim_cnt = 0;
  Placement placement = kPlacementHost;
  std::vector<std::pair<int64_t, int64_t>> range;
};

class TensorImpl {
 public:
  TensorDesc desc;
  // The bytes: owned by `owner` (a vector, or a user buffer with its
  // deleter); `data`/`size` view them.
  std::shared_ptr<uint8_t> owner;
  uint8_t* data = nullptr;
  size_t size = 0;

  void Take(std::vector<uint8_t>&& bytes) {
    auto v = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
    size = v->size();
    data = v->empty() ? nullptr : v->data();
    owner = std::shared_ptr<uint8_t>(v, data);
  }
};

int64_t GetSizeInBytes(int64_t element_count, DataType data_type) {
  const int size = GetSizeByDataType(data_type);
  if (element_count < 0 || size < 0) return -1;
  if (size > kDataTypeSizeBitOffset) {
    const int64_t bits = element_count * (size - kDataTypeSizeBitOffset);
    return (bits + 7) / 8;
  }
  return element_count * size;
}

// ---- Shape ----
Shape::Shape() : impl_(std::make_shared<ShapeImpl>()) {}
Shape::Shape(const std::vector<int64_t>& dims)
    : impl_(std::make_shared<ShapeImpl>()) {
  impl_->dims = dims;
}
size_t Shape::GetDimNum() const { return impl_->dims.size(); }
int64_t Shape::GetDim(size_t idx) const {
  return idx < impl_->dims.size() ? impl_->dims[idx] : 0;
}
graphStatus Shape::SetDim(size_t idx, int64_t value) {
  if (idx >= impl_->dims.size()) return GRAPH_PARAM_INVALID;
  impl_->dims[idx] = value;
  return GRAPH_SUCCESS;
}
std::vector<int64_t> Shape::GetDims() const { return impl_->dims; }
int64_t Shape::GetShapeSize() const {
  int64_t n = 1;
  for (int64_t d : impl_->dims) {
    if (d < 0) return -1;
    if (d == 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

// ---- TensorDesc ----
namespace {
Shape CopyShape(const Shape& s) { return Shape(s.GetDims()); }
std::shared_ptr<TensorDescImpl> CopyDesc(const TensorDescImpl& d) {
  auto c = std::make_shared<TensorDescImpl>(d);
  c->shape = CopyShape(d.shape);
  c->origin_shape = CopyShape(d.origin_shape);
  return c;
}
}  // namespace

TensorDesc::TensorDesc() : impl(std::make_shared<TensorDescImpl>()) {}
TensorDesc::TensorDesc(Shape shape, Format format, DataType dt)
    : impl(std::make_shared<TensorDescImpl>()) {
  Update(shape, format, dt);
}
TensorDesc::TensorDesc(const TensorDesc& desc) : impl(CopyDesc(*desc.impl)) {}
TensorDesc::TensorDesc(TensorDesc&& desc) : impl(CopyDesc(*desc.impl)) {}
TensorDesc& TensorDesc::operator=(const TensorDesc& desc) {
  if (this != &desc) impl = CopyDesc(*desc.impl);
  return *this;
}
TensorDesc& TensorDesc::operator=(TensorDesc&& desc) {
  if (this != &desc) impl = CopyDesc(*desc.impl);
  return *this;
}
void TensorDesc::Update(const Shape& shape, Format format, DataType dt) {
  impl->shape = CopyShape(shape);
  impl->origin_shape = CopyShape(shape);
  impl->format = format;
  impl->origin_format = format;
  impl->dtype = dt;
}
Shape TensorDesc::GetShape() const { return CopyShape(impl->shape); }
void TensorDesc::SetShape(const Shape& shape) {
  impl->shape = CopyShape(shape);
}
graphStatus TensorDesc::SetUnknownDimNumShape() {
  impl->shape = Shape(UNKNOWN_RANK);
  return GRAPH_SUCCESS;
}
graphStatus TensorDesc::SetShapeRange(
    const std::vector<std::pair<int64_t, int64_t>>& range) {
  impl->range = range;
  return GRAPH_SUCCESS;
}
graphStatus TensorDesc::GetShapeRange(
    std::vector<std::pair<int64_t, int64_t>>& range) const {
  range = impl->range;
  return GRAPH_SUCCESS;
}
Format TensorDesc::GetFormat() const { return impl->format; }
void TensorDesc::SetFormat(Format format) { impl->format = format; }
Shape TensorDesc::GetOriginShape() const {
  return CopyShape(impl->origin_shape);
}
void TensorDesc::SetOriginShape(const Shape& s) {
  impl->origin_shape = CopyShape(s);
}
Format TensorDesc::GetOriginFormat() const { return impl->origin_format; }
void TensorDesc::SetOriginFormat(Format f) { impl->origin_format = f; }
DataType TensorDesc::GetDataType() const { return impl->dtype; }
void TensorDesc::SetDataType(DataType dt) { impl->dtype = dt; }
std::string TensorDesc::GetName() const { return impl->name; }
graphStatus TensorDesc::GetName(AscendString& name) {
  name = AscendString(impl->name.c_str());
  return GRAPH_SUCCESS;
}
graphStatus TensorDesc::GetName(AscendString& name) const {
  name = AscendString(impl->name.c_str());
  return GRAPH_SUCCESS;
}
void TensorDesc::SetName(const std::string& name) { impl->name = name; }
void TensorDesc::SetName(const char_t* name) {
  impl->name = name == nullptr ? "" : name;
}
void TensorDesc::SetSize(int64_t size) { impl->size = size; }
int64_t TensorDesc::GetSize() const { return impl->size; }
int64_t TensorDesc::GetRealDimCnt() const { return impl->real_dim_cnt; }
void TensorDesc::SetRealDimCnt(const int64_t n) { impl->real_dim_cnt = n; }
void TensorDesc::SetPlacement(Placement p) { impl->placement = p; }
Placement TensorDesc::GetPlacement() const { return impl->placement; }

// ---- Tensor ----
Tensor::Tensor() : impl(std::make_shared<TensorImpl>()) {}
Tensor::Tensor(const TensorDesc& desc) : Tensor() { impl->desc = desc; }
Tensor::Tensor(const TensorDesc& desc, const std::vector<uint8_t>& data)
    : Tensor(desc) {
  SetData(data);
}
Tensor::Tensor(const TensorDesc& desc, const uint8_t* data, size_t size)
    : Tensor(desc) {
  SetData(data, size);
}
Tensor::Tensor(TensorDesc&& desc, std::vector<uint8_t>&& data) : Tensor(desc) {
  impl->Take(std::move(data));
}

TensorDesc Tensor::GetTensorDesc() const { return impl->desc; }
graphStatus Tensor::SetTensorDesc(const TensorDesc& desc) {
  impl->desc = desc;
  return GRAPH_SUCCESS;
}
const uint8_t* Tensor::GetData() const { return impl->data; }
uint8_t* Tensor::GetData() { return impl->data; }
size_t Tensor::GetSize() const { return impl->size; }

std::unique_ptr<uint8_t[], Tensor::DeleteFunc> Tensor::ResetData() {
  // The caller gets a buffer of its own (the bytes may be shared with
  // copies of this tensor, which keep theirs).
  uint8_t* copy = nullptr;
  if (impl->size > 0) {
    copy = new uint8_t[impl->size];
    std::memcpy(copy, impl->data, impl->size);
  }
  impl->owner.reset();
  impl->data = nullptr;
  impl->size = 0;
  return std::unique_ptr<uint8_t[], DeleteFunc>(copy,
                                                [](uint8_t* p) { delete[] p; });
}

graphStatus Tensor::SetData(std::vector<uint8_t>&& data) {
  impl->Take(std::move(data));
  return GRAPH_SUCCESS;
}
graphStatus Tensor::SetData(const std::vector<uint8_t>& data) {
  impl->Take(std::vector<uint8_t>(data));
  return GRAPH_SUCCESS;
}
graphStatus Tensor::SetData(const uint8_t* data, size_t size) {
  if (data == nullptr && size > 0) return GRAPH_PARAM_INVALID;
  impl->Take(size == 0 ? std::vector<uint8_t>()
                       : std::vector<uint8_t>(data, data + size));
  return GRAPH_SUCCESS;
}
graphStatus Tensor::SetData(const std::string& data) {
  return SetData(data.c_str());
}
graphStatus Tensor::SetData(const char_t* data) {
  if (data == nullptr) return GRAPH_PARAM_INVALID;
  // GE stores a string tensor's text with its terminating NUL.
  const size_t n = std::strlen(data) + 1;
  return SetData(reinterpret_cast<const uint8_t*>(data), n);
}
graphStatus Tensor::SetData(uint8_t* data, size_t size,
                            const Tensor::DeleteFunc& deleter) {
  if (data == nullptr && size > 0) return GRAPH_PARAM_INVALID;
  DeleteFunc del = deleter;
  impl->owner = std::shared_ptr<uint8_t>(data, [del](uint8_t* p) {
    if (del) del(p);
  });
  impl->data = data;
  impl->size = size;
  return GRAPH_SUCCESS;
}
graphStatus Tensor::IsValid() {
  const int64_t n = impl->desc.GetShape().GetShapeSize();
  const int64_t bytes = GetSizeInBytes(n, impl->desc.GetDataType());
  if (bytes < 0) return GRAPH_SUCCESS;  // no fixed size to check
  return static_cast<size_t>(bytes) == impl->size ? GRAPH_SUCCESS
                                                  : GRAPH_FAILED;
}

namespace {
graphStatus ResizeDims(Shape* s, size_t n) {
  std::vector<int64_t> d = s->GetDims();
  d.resize(n, 0);
  *s = Shape(d);
  return GRAPH_SUCCESS;
}
}  // namespace

graphStatus Tensor::SetShapeDimNum(const size_t n) {
  Shape s = impl->desc.GetShape();
  ResizeDims(&s, n);
  impl->desc.SetShape(s);
  return GRAPH_SUCCESS;
}
size_t Tensor::GetShapeDimNum() const {
  return impl->desc.GetShape().GetDimNum();
}
graphStatus Tensor::SetShapeDim(const size_t idx, const int64_t v) {
  Shape s = impl->desc.GetShape();
  if (s.SetDim(idx, v) != GRAPH_SUCCESS) return GRAPH_PARAM_INVALID;
  impl->desc.SetShape(s);
  return GRAPH_SUCCESS;
}
int64_t Tensor::GetShapeDim(const size_t idx) const {
  return impl->desc.GetShape().GetDim(idx);
}
graphStatus Tensor::SetOriginShapeDimNum(const size_t n) {
  Shape s = impl->desc.GetOriginShape();
  ResizeDims(&s, n);
  impl->desc.SetOriginShape(s);
  return GRAPH_SUCCESS;
}
size_t Tensor::GetOriginShapeDimNum() const {
  return impl->desc.GetOriginShape().GetDimNum();
}
graphStatus Tensor::SetOriginShapeDim(const size_t idx, const int64_t v) {
  Shape s = impl->desc.GetOriginShape();
  if (s.SetDim(idx, v) != GRAPH_SUCCESS) return GRAPH_PARAM_INVALID;
  impl->desc.SetOriginShape(s);
  return GRAPH_SUCCESS;
}
int64_t Tensor::GetOriginShapeDim(const size_t idx) const {
  return impl->desc.GetOriginShape().GetDim(idx);
}
graphStatus Tensor::SetFormat(const Format& f) {
  impl->desc.SetFormat(f);
  return GRAPH_SUCCESS;
}
Format Tensor::GetFormat() const { return impl->desc.GetFormat(); }
graphStatus Tensor::SetOriginFormat(const Format& f) {
  impl->desc.SetOriginFormat(f);
  return GRAPH_SUCCESS;
}
Format Tensor::GetOriginFormat() const { return impl->desc.GetOriginFormat(); }
graphStatus Tensor::SetDataType(const DataType& dt) {
  impl->desc.SetDataType(dt);
  return GRAPH_SUCCESS;
}
DataType Tensor::GetDataType() const { return impl->desc.GetDataType(); }
graphStatus Tensor::SetPlacement(const Placement& p) {
  impl->desc.SetPlacement(p);
  return GRAPH_SUCCESS;
}
Placement Tensor::GetPlacement() const { return impl->desc.GetPlacement(); }

Tensor Tensor::Clone() const {
  Tensor t(impl->desc);
  t.SetData(impl->data, impl->size);
  return t;
}
}  // namespace ge
