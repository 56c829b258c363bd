// The TensorFlow importer's class and helpers (tf_import.cc: the graph
// walk, constants and placeholders; tf_import_ops.cc: the operators).
// Private to the model library.
//
// Thread-safety: an Importer belongs to one import; the helpers are
// reentrant.
#ifndef HFLOW_MODEL_TF_IMPORTER_H_
#define HFLOW_MODEL_TF_IMPORTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hflow/status.h"
#include "model/ir.h"
#include "model/proto/tf_graph.pb.h"

namespace hflow {
namespace model {
namespace tf_import_internal {

// TensorFlow's DataType number `t` as the IR's; `where` names the node.
Status ToDataType(int t, const std::string& where, DataType* out);
// The ONNX TensorProto data type number of `t` (the IR's Cast attribute).
int64_t OnnxTypeOf(DataType t);
// A TensorProto's value.
Status ToTensor(const tf::TensorProto& p, const std::string& where,
                IrTensor* out);
// "x" -> "x:0"; "x:1" as is; "^x" (a control input) -> "".
std::string ValueOf(const std::string& input);
// An IR output value named `name`, without a shape.
IrValue Output(const std::string& name);
// The node an input names ("x:1" -> "x", "^x" -> "x").
std::string NodeOf(const std::string& input);

class Importer {
 public:
  explicit Importer(std::string source) : source_(std::move(source)) {}
  Status Run(const tf::GraphDef& g, const std::string& out_nodes, ModelIr* ir);

  using Handler = Status (Importer::*)(const tf::NodeDef&);
  static const std::map<std::string, Handler>& Handlers();

 private:
  std::string Where(const tf::NodeDef& n) const {
    return source_ + ": node '" + n.name() + "' (" + n.op() + ")";
  }
  Status Error(const tf::NodeDef& n, const std::string& what) const {
    return Status::InvalidArgument(Where(n) + ": " + what);
  }
  // The attribute, or null.
  static const tf::AttrValue* Attr(const tf::NodeDef& n, const char* name) {
    auto it = n.attr().find(name);
    return it == n.attr().end() ? nullptr : &it->second;
  }
  std::string Str(const tf::NodeDef& n, const char* name,
                  const std::string& def) const {
    const tf::AttrValue* a = Attr(n, name);
    return a ? a->s() : def;
  }
  std::vector<int64_t> Ints(const tf::NodeDef& n, const char* name) const {
    const tf::AttrValue* a = Attr(n, name);
    if (!a) return {};
    return std::vector<int64_t>(a->list().i().begin(), a->list().i().end());
  }
  // Input i's value name.
  std::string In(const tf::NodeDef& n, int i) const {
    return ValueOf(n.input(i));
  }
  Status NeedInputs(const tf::NodeDef& n, int count) const {
    int data = 0;
    for (const auto& in : n.input()) data += in[0] != '^';
    return data >= count ? Status::OK()
                         : Error(n, "needs " + std::to_string(count) +
                                        " inputs, has " + std::to_string(data));
  }
  // The constant value `v` is, or an error naming what needs it.
  Status ConstInput(const tf::NodeDef& n, int i, const IrTensor** out) const {
    auto it = consts_.find(In(n, i));
    if (it == consts_.end()) {
      return Error(n, "input " + std::to_string(i) +
                          " must be a constant (a Const node) in a frozen "
                          "graph");
    }
    *out = &it->second;
    return Status::OK();
  }
  std::vector<int64_t> IntsOfConst(const IrTensor& t) const;
  std::string AddConst(const std::string& name, IrTensor t) {
    consts_[name] = t;
    ir_->constants.emplace_back(name, std::move(t));
    return name;
  }
  // Emits an IR node; returns its first output's name.
  std::string Emit(const std::string& op, const std::string& name,
                   std::vector<std::string> inputs,
                   std::map<std::string, IrAttr> attrs = {}) {
    IrNode node;
    node.op = op;
    node.name = name;
    node.inputs = std::move(inputs);
    node.outputs = {name + ":0"};
    node.attrs = std::move(attrs);
    ir_->nodes.push_back(std::move(node));
    return name + ":0";
  }
  // The NHWC output of an NCHW op `op` on NHWC `x` (Note [TensorFlow's
  // layouts]); `extra` are its other inputs.
  Status Nchw(const tf::NodeDef& n, const std::string& op,
              const std::vector<std::string>& extra,
              std::map<std::string, IrAttr> attrs);
  bool Nhwc(const tf::NodeDef& n) const {
    return Str(n, "data_format", "NHWC") == "NHWC";
  }
  // Spatial strides, dilations or ksize of a 4-entry NHWC/NCHW list.
  std::vector<int64_t> Spatial(const tf::NodeDef& n, const char* name) const {
    std::vector<int64_t> v = Ints(n, name);
    if (v.size() != 4) return {1, 1};
    return Nhwc(n) ? std::vector<int64_t>{v[1], v[2]}
                   : std::vector<int64_t>{v[2], v[3]};
  }
  Status Padding(const tf::NodeDef& n, std::map<std::string, IrAttr>* attrs);

  Status Placeholder(const tf::NodeDef& n);
  Status Const(const tf::NodeDef& n);
  Status Same(const tf::NodeDef& n);  // one IR op of the same meaning
  Status MatMul(const tf::NodeDef& n);
  Status BiasAdd(const tf::NodeDef& n);
  Status Conv(const tf::NodeDef& n);
  Status Pool(const tf::NodeDef& n);
  Status BatchNorm(const tf::NodeDef& n);
  Status Relu6(const tf::NodeDef& n);
  Status Reshape(const tf::NodeDef& n);
  Status Squeeze(const tf::NodeDef& n);
  Status Concat(const tf::NodeDef& n);
  Status Reduce(const tf::NodeDef& n);
  Status Cast(const tf::NodeDef& n);
  Status Pad(const tf::NodeDef& n);
  Status Transpose(const tf::NodeDef& n);

  const std::string source_;
  ModelIr* ir_ = nullptr;
  std::map<std::string, IrTensor> consts_;  // by value name
};

}  // namespace tf_import_internal
}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_TF_IMPORTER_H_
