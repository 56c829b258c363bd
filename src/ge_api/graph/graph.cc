// ge::Graph (graph/graph.h). Part of libgraph.so (old string ABI).
//
// Thread-safety: as the handle: one thread builds, any thread reads.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "ge_api/graph/graph_internal.h"

namespace ge {
namespace {
GraphImpl& Ensure(std::shared_ptr<GraphImpl>& impl) {
  if (!impl) impl = std::make_shared<GraphImpl>();
  return *impl;
}
}  // namespace

Graph::Graph(const std::string& name) : Graph(name.c_str()) {}
Graph::Graph(const char_t* name) : impl_(std::make_shared<GraphImpl>()) {
  impl_->name = name == nullptr ? "" : name;
}

Graph& Graph::SetInputs(const std::vector<Operator>& inputs) {
  Ensure(impl_).inputs = inputs;
  return *this;
}
Graph& Graph::SetOutputs(const std::vector<Operator>& outputs) {
  GraphImpl& g = Ensure(impl_);
  g.outputs.clear();
  for (const Operator& op : outputs) g.outputs.push_back({op, {}});
  return *this;
}
Graph& Graph::SetOutputs(
    const std::vector<std::pair<Operator, std::vector<size_t>>>& outputs) {
  Ensure(impl_).outputs = outputs;
  return *this;
}
Graph& Graph::SetOutputs(
    const std::vector<std::pair<Operator, AscendString>>& outputs) {
  GraphImpl& g = Ensure(impl_);
  g.outputs.clear();
  for (const auto& o : outputs) {
    const auto& impl = OperatorAccess::Impl(o.first);
    const int idx = impl ? impl->OutputIndex(o.second.GetString()) : -1;
    g.outputs.push_back(
        {o.first, {idx < 0 ? size_t{0} : static_cast<size_t>(idx)}});
  }
  return *this;
}
Graph& Graph::SetTargets(const std::vector<Operator>& targets) {
  Ensure(impl_).targets = targets;
  return *this;
}
bool Graph::IsValid() const {
  return impl_ != nullptr && (impl_->flow_json || !impl_->inputs.empty() ||
                              !impl_->outputs.empty());
}
graphStatus Graph::AddOp(const Operator& op) {
  if (op.IsEmpty()) return GRAPH_PARAM_INVALID;
  Ensure(impl_).ops.push_back(op);
  return GRAPH_SUCCESS;
}

namespace {
// Every operator reachable from the graph's inputs, outputs, targets and
// added ops, walking inputs back; each once.
std::vector<Operator> AllOps(const GraphImpl& g) {
  std::vector<Operator> out;
  std::vector<const OperatorImpl*> seen;
  std::vector<Operator> stack = g.inputs;
  for (const auto& o : g.outputs) stack.push_back(o.first);
  stack.insert(stack.end(), g.targets.begin(), g.targets.end());
  stack.insert(stack.end(), g.ops.begin(), g.ops.end());
  while (!stack.empty()) {
    Operator op = stack.back();
    stack.pop_back();
    const auto& impl = OperatorAccess::Impl(op);
    if (!impl) continue;
    bool dup = false;
    for (const OperatorImpl* s : seen) dup = dup || s == impl.get();
    if (dup) continue;
    seen.push_back(impl.get());
    out.push_back(op);
    for (const auto& in : impl->inputs) {
      if (!in.second.src) continue;
      stack.push_back(OperatorAccess::Wrap(in.second.src));
    }
  }
  return out;
}
}  // namespace

graphStatus Graph::FindOpByName(const char_t* name, Operator& op) const {
  if (!impl_ || name == nullptr) return GRAPH_FAILED;
  for (const Operator& o : AllOps(*impl_)) {
    if (OperatorAccess::Impl(o)->name == name) {
      op = o;
      return GRAPH_SUCCESS;
    }
  }
  return GRAPH_FAILED;
}
graphStatus Graph::FindOpByType(const char_t* type,
                                std::vector<Operator>& ops) const {
  if (!impl_ || type == nullptr) return GRAPH_FAILED;
  ops.clear();
  for (const Operator& o : AllOps(*impl_)) {
    if (OperatorAccess::Impl(o)->type == type) ops.push_back(o);
  }
  return GRAPH_SUCCESS;
}
graphStatus Graph::GetAllOpName(std::vector<AscendString>& names) const {
  names.clear();
  if (!impl_) return GRAPH_SUCCESS;
  for (const Operator& o : AllOps(*impl_)) {
    names.emplace_back(OperatorAccess::Impl(o)->name.c_str());
  }
  return GRAPH_SUCCESS;
}
graphStatus Graph::SaveToFile(const char_t* file_name) const {
  const std::string path = file_name == nullptr ? "" : file_name;
  std::string bytes, error;
  if (path.empty()) {
    error = "no file name";
  } else if (GraphToBytes(*this, &bytes, &error)) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (out) return GRAPH_SUCCESS;
    error = "cannot write the file";
  }
  std::fprintf(stderr, "hflow ge: Graph::SaveToFile(%s): %s\n", path.c_str(),
               error.c_str());
  return GRAPH_FAILED;
}
graphStatus Graph::LoadFromFile(const char_t* file_name) {
  const std::string path = file_name == nullptr ? "" : file_name;
  std::ifstream in(path, std::ios::binary);
  std::string error = "cannot open the file";
  if (in) {
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (GraphFromBytes(bytes.str(), this, &error)) return GRAPH_SUCCESS;
  }
  std::fprintf(stderr,
               "hflow ge: Graph::LoadFromFile(%s): %s (hflow reads the GE "
               "graph files Graph::SaveToFile writes, not GE's .air/.om)\n",
               path.c_str(), error.c_str());
  return GRAPH_FAILED;
}
const std::string& Graph::GetName() const {
  static const std::string kEmpty;
  return impl_ ? impl_->name : kEmpty;
}
graphStatus Graph::GetName(AscendString& name) const {
  if (!impl_) return GRAPH_FAILED;
  name = AscendString(impl_->name.c_str());
  return GRAPH_SUCCESS;
}
void Graph::SetNeedIteration(bool need_iteration) {
  Ensure(impl_).need_iteration = need_iteration;
}
}  // namespace ge
