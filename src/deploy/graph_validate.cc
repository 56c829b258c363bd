// Structural validation and ordering of a GraphDef (see graph_def.h): the
// checks both front ends (graph file, C++ API) share, so a graph is judged
// the same way whichever way it was written. Checks run in a fixed order —
// names, node wiring, mappings, outputs, cycles — so each failure reports
// the first problem a reader of the graph would meet, naming the source,
// the node and the field, and what to do.
//
// Thread-safety: pure functions over a const GraphDef; reentrant.
#include <algorithm>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "deploy/graph_def.h"

namespace hflow {
namespace deploy {
namespace {

using NameIndex = std::unordered_map<std::string, size_t>;

Status Bad(const GraphDef& g, const std::string& what) {
  return Status::InvalidArgument(g.source + ": " + what);
}

std::string NodeWhere(const NodeDef& n) { return "node '" + n.name + "': "; }

// "a, b, add": every name a reference may use, for "known: ..." hints.
std::string KnownNames(const GraphDef& g) {
  std::string s;
  auto add = [&s](const std::string& n) { s += (s.empty() ? "" : ", ") + n; };
  for (const auto& in : g.inputs) add(in);
  for (const auto& n : g.nodes) add(n.name);
  return s;
}

// A reference as the user would write it: graph inputs have no index.
std::string RefText(const GraphDef& g, const OutputRef& r) {
  return g.IsGraphInput(r.op) ? r.op : r.ToString();
}

Status CheckName(const GraphDef& g, const std::string& kind,
                 const std::string& name) {
  if (name.empty()) return Bad(g, kind + " has an empty name; name it");
  if (name.find(':') != std::string::npos) {
    return Bad(g, kind + " '" + name +
                      "': names may not contain ':' (it "
                      "separates a node from its output index); rename it");
  }
  return Status::OK();
}

// Unique, well-formed names; fills `nodes` with node name -> position.
Status CheckNames(const GraphDef& g, NameIndex* nodes) {
  if (g.name.empty()) return Bad(g, "the graph has an empty name; name it");
  std::set<std::string> inputs;
  for (const auto& in : g.inputs) {
    HFLOW_RETURN_IF_ERROR(CheckName(g, "graph input", in));
    if (!inputs.insert(in).second) {
      return Bad(g, "graph input '" + in +
                        "' is declared twice; give each "
                        "graph input its own name");
    }
  }
  if (g.nodes.empty()) return Bad(g, "the graph has no nodes; add one");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const std::string& name = g.nodes[i].name;
    HFLOW_RETURN_IF_ERROR(CheckName(g, "node", name));
    if (inputs.count(name)) {
      return Bad(g, "node '" + name +
                        "' has the name of a graph input; "
                        "rename one of them");
    }
    if (!nodes->emplace(name, i).second) {
      return Bad(g, "node '" + name +
                        "' is defined twice; give each node "
                        "its own name");
    }
  }
  return Status::OK();
}

Status CheckNodeInputs(const GraphDef& g, const NameIndex& nodes,
                       const NodeDef& n) {
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const OutputRef& r = n.inputs[i];
    const std::string where = NodeWhere(n) + "input " + std::to_string(i);
    if (r.op.empty()) {
      return Bad(g, where +
                        " is not connected; connect every node input to "
                        "a graph input or a node output");
    }
    if (g.IsGraphInput(r.op)) continue;
    auto it = nodes.find(r.op);
    if (it == nodes.end()) {
      return Bad(g, where + ": '" + r.ToString() +
                        "' is neither a graph "
                        "input nor a node (known: " +
                        KnownNames(g) + ")");
    }
    const NodeDef& p = g.nodes[it->second];
    if (r.index >= p.output_num) {
      return Bad(g, where + ": '" + r.ToString() + "' is out of range: node '" +
                        p.name + "' has " + std::to_string(p.output_num) +
                        " output(s), numbered from 0");
    }
  }
  return Status::OK();
}

// A mapping is empty (identity) or a permutation of [0, size): a node has
// one pp, whose inputs and outputs are the node's (GE), only reordered.
Status CheckMap(const GraphDef& g, const NodeDef& n, const char* field,
                const std::vector<uint32_t>& map, size_t size) {
  if (map.empty()) return Status::OK();
  const std::string where = NodeWhere(n) + field;
  if (map.size() != size) {
    return Bad(g, where + " has " + std::to_string(map.size()) +
                      " entries but the node has " + std::to_string(size) +
                      "; map every one or none");
  }
  std::vector<bool> seen(size, false);
  for (size_t i = 0; i < map.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (map[i] >= size) {
      return Bad(g, at + ": pp index " + std::to_string(map[i]) +
                        " is out of range (the pp has " + std::to_string(size) +
                        ")");
    }
    if (seen[map[i]]) {
      return Bad(g, at + ": pp index " + std::to_string(map[i]) +
                        " is mapped twice; each pp index takes one node index");
    }
    seen[map[i]] = true;
  }
  return Status::OK();
}

Status CheckAttr(const GraphDef& g, const std::string& where,
                 const InputAttr& attr) {
  if (const auto* c = std::get_if<CountBatch>(&attr)) {
    if (c->batch_size < 1)
      return Bad(g, where + ": count batch batch_size must be >= 1");
    if (c->slide_stride < 0 || c->slide_stride > c->batch_size) {
      return Bad(g, where +
                        ": count batch slide_stride must be in [0, "
                        "batch_size]");
    }
    if (c->timeout < 0)
      return Bad(g, where + ": count batch timeout must be >= 0");
    if (c->batch_dim < -1)
      return Bad(g, where + ": count batch batch_dim must be >= -1");
    return Status::OK();
  }
  const auto& t = std::get<TimeBatch>(attr);
  if (t.time_window == 0 || t.time_window < -1) {
    return Bad(g, where +
                      ": time batch time_window must be > 0 ms, or -1 "
                      "for whole segments");
  }
  if (t.timeout < 0) return Bad(g, where + ": time batch timeout must be >= 0");
  if (t.batch_dim < -1)
    return Bad(g, where + ": time batch batch_dim must be >= -1");
  return Status::OK();
}

Status CheckInputAttrs(const GraphDef& g, const NameIndex& nodes,
                       const NodeDef& n) {
  if (n.input_attrs.empty()) return Status::OK();
  if (n.input_attrs.size() != n.inputs.size()) {
    return Bad(g, NodeWhere(n) + "input attrs cover " +
                      std::to_string(n.input_attrs.size()) +
                      " inputs but the node has " +
                      std::to_string(n.inputs.size()));
  }
  for (size_t i = 0; i < n.input_attrs.size(); ++i) {
    const std::string where = NodeWhere(n) + "input " + std::to_string(i);
    if (n.input_attrs[i].size() > 1) {
      return Bad(g, where + ": " + std::to_string(n.input_attrs[i].size()) +
                        " batch attrs; an input takes one (count or time)");
    }
    for (const auto& a : n.input_attrs[i]) {
      HFLOW_RETURN_IF_ERROR(CheckAttr(g, where, a));
    }
    // ExpandInputAttrs turns the attr into node "<node>.batch<i>"; a graph
    // input or node of that name would be shadowed by it (found by fuzzing:
    // graph input "n.batch0" made the expanded graph invalid).
    const std::string batch = n.name + ".batch" + std::to_string(i);
    if (!n.input_attrs[i].empty() &&
        (g.IsGraphInput(batch) || nodes.count(batch))) {
      return Bad(g, where + ": its batch attr becomes node '" + batch +
                        "', which is already the name of a " +
                        (g.IsGraphInput(batch) ? "graph input" : "node") +
                        "; rename that one");
    }
  }
  return Status::OK();
}

Status CheckNode(const GraphDef& g, const NameIndex& nodes, const NodeDef& n) {
  // A model node has neither; it fails at build (CheckModelNodes).
  if (n.pp.function.empty() && n.pp.compile_config.empty() &&
      n.pp.funcs.empty() && n.model_pp.empty()) {
    return Bad(g, NodeWhere(n) +
                      "has no function and no compile config; "
                      "give it one or both");
  }
  HFLOW_RETURN_IF_ERROR(CheckNodeInputs(g, nodes, n));
  HFLOW_RETURN_IF_ERROR(
      CheckMap(g, n, "input_map", n.input_map, n.inputs.size()));
  HFLOW_RETURN_IF_ERROR(
      CheckMap(g, n, "output_map", n.output_map, n.output_num));
  return CheckInputAttrs(g, nodes, n);
}

Status CheckOutputs(const GraphDef& g, const NameIndex& nodes) {
  if (g.outputs.empty()) {
    return Bad(g, "the graph has no outputs; name at least one node output");
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const OutputRef& r = g.outputs[i];
    const std::string where =
        "output " + std::to_string(i) + ": '" + RefText(g, r) + "'";
    if (g.IsGraphInput(r.op)) {
      return Bad(g, where +
                        " is a graph input; graph outputs must be node "
                        "outputs");
    }
    auto it = nodes.find(r.op);
    if (it == nodes.end()) {
      return Bad(g, where + " is not a node (known nodes and inputs: " +
                        KnownNames(g) + ")");
    }
    if (r.index >= g.nodes[it->second].output_num) {
      return Bad(g, where + " is out of range: node '" + r.op + "' has " +
                        std::to_string(g.nodes[it->second].output_num) +
                        " output(s), numbered from 0");
    }
  }
  return Status::OK();
}

// Note [Balance producers]
// GE's compile check (DataFlowGraph::CheckFlowNode): a node fed by more
// than one node must have all or none of them balance nodes (scatter or
// gather), so that either every input carries cells or none does. Graph
// inputs count as producers without the attribute; producers are counted
// once however many of their outputs the node reads.
Status CheckBalanceProducers(const GraphDef& g, const NameIndex& nodes,
                             const NodeDef& n) {
  std::vector<std::string> producers;
  for (const auto& r : n.inputs) {
    if (std::find(producers.begin(), producers.end(), r.op) ==
        producers.end()) {
      producers.push_back(r.op);
    }
  }
  if (producers.size() < 2) return Status::OK();
  std::string with, without;
  for (const std::string& p : producers) {
    auto it = nodes.find(p);
    const bool balance = it != nodes.end() && g.nodes[it->second].balance !=
                                                  flow_func::BalanceKind::kNone;
    std::string& list = balance ? with : without;
    list += (list.empty() ? "" : ", ") + p;
  }
  if (with.empty() || without.empty()) return Status::OK();
  return Bad(g, NodeWhere(n) + "has " + std::to_string(producers.size()) +
                    " input nodes, but only some are balance nodes (" + with +
                    "; not: " + without +
                    "); make all of its producers balance nodes or none");
}

// consumers[p]: nodes reading an output of node p, in file order, once each.
std::vector<std::vector<size_t>> Consumers(const GraphDef& g,
                                           const NameIndex& nodes) {
  std::vector<std::vector<size_t>> out(g.nodes.size());
  for (size_t c = 0; c < g.nodes.size(); ++c) {
    for (const auto& r : g.nodes[c].inputs) {
      auto it = nodes.find(r.op);
      if (it == nodes.end()) continue;
      auto& list = out[it->second];
      if (list.empty() || list.back() != c) list.push_back(c);
    }
  }
  return out;
}

// Depth-first search along data flow; the first back edge closes a cycle,
// reported producer first ("a -> b -> a") so it reads as the data flows.
// Iterative, with an explicit stack: a recursive search overflowed the
// thread's stack on a long chain of nodes (a generated graph file).
Status CheckAcyclic(const GraphDef& g, const NameIndex& nodes) {
  const auto next = Consumers(g, nodes);
  enum Color { kWhite, kGray, kBlack };
  std::vector<Color> color(g.nodes.size(), kWhite);
  // The path from the root: (node, position of its next consumer to visit).
  std::vector<std::pair<size_t, size_t>> path;
  for (size_t root = 0; root < g.nodes.size(); ++root) {
    if (color[root] != kWhite) continue;
    color[root] = kGray;
    path.emplace_back(root, 0);
    while (!path.empty()) {
      auto& [v, k] = path.back();
      if (k == next[v].size()) {
        color[v] = kBlack;
        path.pop_back();
        continue;
      }
      const size_t w = next[v][k++];
      if (color[w] == kGray) {
        std::string cycle;
        auto from = std::find_if(path.begin(), path.end(),
                                 [w](const auto& e) { return e.first == w; });
        for (auto it = from; it != path.end(); ++it) {
          cycle += g.nodes[it->first].name + " -> ";
        }
        cycle += g.nodes[w].name;
        return Bad(g, "cycle: " + cycle +
                          "; a node may not depend on its own "
                          "outputs, break the loop");
      }
      if (color[w] == kWhite) {
        color[w] = kGray;
        path.emplace_back(w, 0);  // invalidates v and k; the loop re-reads
      }
    }
  }
  return Status::OK();
}

// The inputs and outputs the node's function sees (after input_map and
// output_map).
uint32_t FunctionInputs(const NodeDef& n) {
  if (n.input_map.empty()) return static_cast<uint32_t>(n.inputs.size());
  return *std::max_element(n.input_map.begin(), n.input_map.end()) + 1;
}
uint32_t FunctionOutputs(const NodeDef& n) {
  if (n.output_map.empty()) return n.output_num;
  return *std::max_element(n.output_map.begin(), n.output_map.end()) + 1;
}

// Built-ins have a fixed arity that would otherwise fail every Proc (Add
// with one input) or never produce an output (Identity with more outputs
// than inputs): refuse the graph instead.
Status CheckNodeArity(const GraphDef& g, const NodeDef& n) {
  if (!n.pp.compile_config.empty() || !n.pp.funcs.empty() ||
      !n.model_pp.empty()) {
    return Status::OK();
  }
  const uint32_t in = FunctionInputs(n), out = FunctionOutputs(n);
  if (n.pp.function == "_BuiltIn_Add" && (in != 2 || out != 1)) {
    return Bad(g, NodeWhere(n) +
                      "_BuiltIn_Add takes 2 inputs and gives 1 "
                      "output, but the node has " +
                      std::to_string(in) + " input(s) and " +
                      std::to_string(out) + " output(s); wire it so");
  }
  if (n.pp.function == "_BuiltIn_Identity" && out > in) {
    return Bad(g, NodeWhere(n) +
                      "_BuiltIn_Identity passes input i to output "
                      "i, but the node has " +
                      std::to_string(out) + " outputs for " +
                      std::to_string(in) +
                      " input(s); give it at most one output per input");
  }
  return Status::OK();
}

}  // namespace

std::string OutputRef::ToString() const {
  return op + ":" + std::to_string(index);
}

const NodeDef* GraphDef::FindNode(std::string_view name) const {
  for (const auto& n : nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

bool GraphDef::IsGraphInput(std::string_view name) const {
  return std::find(inputs.begin(), inputs.end(), name) != inputs.end();
}

Status ValidateGraphStructure(const GraphDef& graph) {
  NameIndex nodes;
  HFLOW_RETURN_IF_ERROR(CheckNames(graph, &nodes));
  for (const auto& n : graph.nodes) {
    HFLOW_RETURN_IF_ERROR(CheckNode(graph, nodes, n));
  }
  for (const auto& n : graph.nodes) {
    HFLOW_RETURN_IF_ERROR(CheckBalanceProducers(graph, nodes, n));
  }
  HFLOW_RETURN_IF_ERROR(CheckOutputs(graph, nodes));
  return CheckAcyclic(graph, nodes);
}

Status CheckModelNodes(const GraphDef& graph) {
  for (const auto& n : graph.nodes) {
    std::string what =
        n.model.graph_file.empty() && !n.model_pp.empty() ? n.model_pp : "";
    for (const InvokedModelDef& d : n.invoked) {
      if (what.empty() && d.model.graph_file.empty()) what = d.what;
    }
    if (what.empty()) continue;
    return Status::NotSupported(
        graph.source + ": node '" + n.name + "': process point " + what +
        " is a model graph without a model file, and hflow does not run "
        "those; give it a \"graph_file\" (an ONNX or TensorFlow model, or "
        "a GE graph file), or replace it with a FunctionPp (a UDF)");
  }
  return Status::OK();
}

Status CheckBuiltinArity(const GraphDef& graph) {
  HFLOW_RETURN_IF_ERROR(CheckModelNodes(graph));
  for (const auto& n : graph.nodes) {
    HFLOW_RETURN_IF_ERROR(CheckNodeArity(graph, n));
  }
  return Status::OK();
}

// Kahn's algorithm with a min-heap of file positions: among ready nodes the
// earliest in the file goes first, so the order is stable and predictable.
// Nodes on a cycle never become ready and are left out (validate first).
std::vector<const NodeDef*> TopologicalOrder(const GraphDef& graph) {
  NameIndex nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    nodes.emplace(graph.nodes[i].name, i);
  }
  const auto next = Consumers(graph, nodes);
  std::vector<size_t> pending(graph.nodes.size(), 0);
  for (const auto& list : next) {
    for (size_t c : list) ++pending[c];
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<const NodeDef*> order;
  while (!ready.empty()) {
    size_t v = ready.top();
    ready.pop();
    order.push_back(&graph.nodes[v]);
    for (size_t c : next[v]) {
      if (--pending[c] == 0) ready.push(c);
    }
  }
  return order;
}

}  // namespace deploy
}  // namespace hflow
