// ge::Operator: a node of a GE graph, with named or indexed inputs and
// attributes. DataFlow's FlowData and FlowNode derive from it
// (flow_graph/flow_graph.h), and the operator classes of all_ops.h build the
// model graphs (ge::Graph) a GraphPp describes.
//
// hflow builds and keeps these graphs but does not run model graphs yet: a
// DataFlow graph holding one fails at build (the user guide's "Coming from
// GE" page). Operators are handles: copies refer to the same node.
//
// Errors: setters return the operator for chaining (GE's style) or a
// graphStatus; an unknown input name, an index out of range or a missing
// attribute is GRAPH_PARAM_INVALID / GRAPH_FAILED; no call throws.
//
// Thread-safety: build a graph on one thread; copies share their node.
#ifndef HFLOW_GE_GRAPH_OPERATOR_H_
#define HFLOW_GE_GRAPH_OPERATOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/ascend_string.h"
#include "graph/error_codes.h"
#include "graph/tensor.h"
#include "graph/types.h"

namespace ge {
class OperatorImpl;
class OperatorAccess;

class Operator {
 public:
  Operator();
  explicit Operator(const char_t* type);
  Operator(const char_t* name, const char_t* type);
  ATTRIBUTED_DEPRECATED(Operator(const char_t*, const char_t*))
  Operator(const std::string& name, const std::string& type);
  virtual ~Operator();

  bool IsEmpty() const;
  ATTRIBUTED_DEPRECATED(graphStatus GetName(AscendString&) const)
  std::string GetName() const;
  graphStatus GetName(AscendString& name) const;
  ATTRIBUTED_DEPRECATED(graphStatus GetOpType(AscendString&) const)
  std::string GetOpType() const;
  graphStatus GetOpType(AscendString& type) const;

  // Input `dst_name` (or `dst_index`) is output `src_index` (or the output
  // named `name`) of `src_oprt`.
  Operator& SetInput(const char_t* dst_name, const Operator& src_oprt);
  Operator& SetInput(const char_t* dst_name, const Operator& src_oprt,
                     const char_t* name);
  Operator& SetInput(const char_t* dst_name, const Operator& src_oprt,
                     uint32_t index);
  Operator& SetInput(uint32_t dst_index, const Operator& src_oprt,
                     uint32_t src_index);

  size_t GetInputsSize() const;
  size_t GetOutputsSize() const;

  Operator& SetAttr(const char_t* name, int64_t attr_value);
  Operator& SetAttr(const char_t* name, int32_t attr_value);
  Operator& SetAttr(const char_t* name, uint32_t attr_value);
  Operator& SetAttr(const char_t* name, float attr_value);
  Operator& SetAttr(const char_t* name, bool attr_value);
  Operator& SetAttr(const char_t* name, const char_t* attr_value);
  Operator& SetAttr(const char_t* name, const AscendString& attr_value);
  Operator& SetAttr(const char_t* name, const std::vector<int64_t>& attr_value);
  Operator& SetAttr(const char_t* name, const std::vector<float>& attr_value);
  Operator& SetAttr(const char_t* name, const Tensor& attr_value);
  Operator& SetAttr(const char_t* name, DataType attr_value);

  graphStatus GetAttr(const char_t* name, int64_t& attr_value) const;
  graphStatus GetAttr(const char_t* name, int32_t& attr_value) const;
  graphStatus GetAttr(const char_t* name, float& attr_value) const;
  graphStatus GetAttr(const char_t* name, bool& attr_value) const;
  graphStatus GetAttr(const char_t* name, AscendString& attr_value) const;
  graphStatus GetAttr(const char_t* name,
                      std::vector<int64_t>& attr_value) const;
  graphStatus GetAttr(const char_t* name, Tensor& attr_value) const;
  graphStatus GetAttr(const char_t* name, DataType& attr_value) const;

  graphStatus UpdateInputDesc(const char_t* name,
                              const TensorDesc& tensor_desc);
  graphStatus UpdateOutputDesc(const char_t* name,
                               const TensorDesc& tensor_desc);
  TensorDesc GetInputDescByName(const char_t* name) const;
  TensorDesc GetOutputDescByName(const char_t* name) const;

 protected:
  // For operator classes (all_ops.h) and DataFlow's nodes: declare the
  // named inputs and outputs in order, and a fixed number of each.
  void InputRegister(const char_t* name);
  void OutputRegister(const char_t* name);
  void DynamicInputRegister(const char_t* name, uint32_t num);
  void DynamicOutputRegister(const char_t* name, uint32_t num);

 private:
  friend class OperatorAccess;
  std::shared_ptr<OperatorImpl> operator_impl_;
};
}  // namespace ge

#endif  // HFLOW_GE_GRAPH_OPERATOR_H_
