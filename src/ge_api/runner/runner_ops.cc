// GE's session calls in bridge terms (runner_ops.h). Part of libge_runner.so
// (old string ABI).
//
// Thread-safety: as the bridge.
#include "ge_api/runner/runner_ops.h"

#include "ge_api/graph/graph_internal.h"
#include "ge_api/runner/runner_internal.h"

namespace ge {
namespace runner {
namespace gb = hflow::gebridge;

namespace {
// Collects a fetch's outputs as GE's types.
class Collector : public gb::FetchSink {
 public:
  void OnTensor(size_t, const gb::TensorView& t) override {
    tensors.push_back(TensorOf(t));
  }
  void OnInfo(const gb::InfoView& i) override { info.From(i); }
  void OnMessage(size_t, const gb::MessageView& v) override {
    auto m = std::make_shared<HostFlowMsg>();
    m->type_ = static_cast<MsgType>(v.msg_type);
    m->empty_ = v.empty;
    m->info_.From(v.info);
    if (v.msg_type == 0) {
      m->tensor_ =
          std::make_shared<Tensor>(v.empty ? Tensor() : TensorOf(v.tensor));
    } else if (v.raw != nullptr) {
      const auto* p = static_cast<const uint8_t*>(v.raw);
      m->raw_.assign(p, p + v.raw_size);
    }
    msgs.push_back(m);
  }
  std::vector<Tensor> tensors;
  std::vector<FlowMsgPtr> msgs;
  FlowInfoData info;
};
}  // namespace

KeyValues::KeyValues(const std::map<AscendString, AscendString>& options) {
  text.reserve(options.size() * 2);
  for (const auto& o : options) {
    text.emplace_back(o.first.GetString(), o.first.GetLength());
    text.emplace_back(o.second.GetString(), o.second.GetLength());
  }
  for (size_t i = 0; i + 1 < text.size(); i += 2) {
    kv.push_back({text[i].c_str(), text[i + 1].c_str()});
  }
}

std::string Call(const char* name, uint32_t graph_id) {
  return std::string(name) + "(graph " + std::to_string(graph_id) + ")";
}

std::map<std::string, std::string> ToStd(
    const std::map<AscendString, AscendString>& options) {
  std::map<std::string, std::string> out;
  for (const auto& o : options) {
    out[std::string(o.first.GetString(), o.first.GetLength())] =
        std::string(o.second.GetString(), o.second.GetLength());
  }
  return out;
}

Status Initialize(const std::map<AscendString, AscendString>& options) {
  KeyValues kv(options);
  return gb::Initialize(kv.kv.data(), kv.kv.size());
}

uint64_t NewSession(const std::map<AscendString, AscendString>& options) {
  KeyValues kv(options);
  return gb::CreateSession(kv.kv.data(), kv.kv.size());
}

Status AddGraph(uint64_t sid, uint32_t graph_id, const Graph& graph,
                const std::map<AscendString, AscendString>& options) {
  const auto& impl = GraphAccess::Impl(graph);
  const std::string call = Call("AddGraph", graph_id);
  if (impl && !impl->flow_json) {
    return AddModelGraph(sid, graph_id, graph, options);  // a model graph
  }
  if (!impl) {
    return gb::Fail(call.c_str(), ACL_ERROR_GE_PARAM_INVALID,
                    "the graph is empty (default-constructed)");
  }
  std::string json, error;
  if (!impl->flow_json(&json, &error)) {
    return gb::Fail(call.c_str(), ACL_ERROR_GE_PARAM_INVALID, error.c_str());
  }
  KeyValues kv(options);
  const std::string source = "FlowGraph '" + impl->name + "'";
  return gb::AddGraph(sid, graph_id, json.c_str(), source.c_str(), kv.kv.data(),
                      kv.kv.size());
}

Status FeedTensors(uint64_t sid, uint32_t graph_id,
                   const std::vector<uint32_t>& indexes,
                   const std::vector<Tensor>& inputs, const DataFlowInfo& info,
                   int32_t timeout) {
  std::vector<std::vector<int64_t>> dims(inputs.size());
  std::vector<gb::TensorView> views;
  views.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    views.push_back(ViewOf(inputs[i], &dims[i]));
  }
  return gb::FeedTensors(sid, graph_id, indexes.data(), indexes.size(),
                         views.data(), views.size(),
                         DataFlowInfoUtils::Data(info).View(), timeout);
}

Status FeedMsgs(uint64_t sid, uint32_t graph_id,
                const std::vector<uint32_t>& indexes,
                const std::vector<FlowMsgPtr>& inputs, int32_t timeout) {
  std::vector<std::vector<int64_t>> dims(inputs.size());
  std::vector<gb::MessageView> views(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto* m = dynamic_cast<const HostFlowMsg*>(inputs[i].get());
    if (m == nullptr) {
      return gb::Fail(Call("FeedDataFlowGraph", graph_id).c_str(),
                      ACL_ERROR_GE_PARAM_INVALID,
                      ("message " + std::to_string(i) +
                       " is null or not made by FlowBufferFactory")
                          .c_str());
    }
    gb::MessageView& v = views[i];
    v.msg_type = static_cast<uint16_t>(m->type_);
    v.empty = m->empty_;
    if (m->tensor_ && !m->empty_) v.tensor = ViewOf(*m->tensor_, &dims[i]);
    v.raw = m->raw_.data();
    v.raw_size = m->raw_.size();
    v.info = m->info_.View();
  }
  return gb::FeedMessages(sid, graph_id, indexes.data(), indexes.size(),
                          views.data(), views.size(), timeout);
}

Status FeedRaw(uint64_t sid, uint32_t graph_id, const std::vector<RawData>& raw,
               uint32_t index, const DataFlowInfo& info, int32_t timeout) {
  std::vector<gb::RawPiece> pieces;
  pieces.reserve(raw.size());
  for (const RawData& r : raw) pieces.push_back({r.addr, r.len});
  return gb::FeedRaw(sid, graph_id, pieces.data(), pieces.size(), index,
                     DataFlowInfoUtils::Data(info).View(), timeout);
}

Status FetchTensors(uint64_t sid, uint32_t graph_id,
                    const std::vector<uint32_t>& indexes,
                    std::vector<Tensor>& outputs, DataFlowInfo& info,
                    int32_t timeout) {
  Collector c;
  const Status s = gb::FetchTensors(sid, graph_id, indexes.data(),
                                    indexes.size(), timeout, &c);
  outputs = std::move(c.tensors);
  DataFlowInfoUtils::Data(info) = c.info;
  return s;
}

Status FetchMsgs(uint64_t sid, uint32_t graph_id,
                 const std::vector<uint32_t>& indexes,
                 std::vector<FlowMsgPtr>& outputs, int32_t timeout) {
  Collector c;
  const Status s = gb::FetchMessages(sid, graph_id, indexes.data(),
                                     indexes.size(), timeout, &c);
  outputs = std::move(c.msgs);
  return s;
}

graphStatus ParseModel(const char* call, const char* framework,
                       const char* model_file,
                       const std::map<AscendString, AscendString>& params,
                       Graph& graph) {
  KeyValues kv(params);
  const auto& impl = GraphAccess::Impl(graph);
  std::string name = impl ? impl->name : "";
  if (name.empty() && model_file != nullptr) {
    name = model_file;
    name = name.substr(name.find_last_of('/') + 1);
    name = name.substr(0, name.find('.'));
  }
  const std::string c =
      std::string(call) + "(" + (model_file ? model_file : "(null)") + ")";
  char* bytes = nullptr;
  size_t len = 0;
  if (gb::ParseModel(c.c_str(), framework, model_file, kv.kv.data(),
                     kv.kv.size(), name.c_str(), &bytes, &len) != SUCCESS) {
    return GRAPH_FAILED;
  }
  const std::string file(bytes, len);
  gb::FreeBytes(bytes);
  std::string error;
  Graph parsed;
  if (!GraphFromBytes(file, &parsed, &error)) {
    gb::Fail(c.c_str(), GRAPH_FAILED, error.c_str());
    return GRAPH_FAILED;
  }
  GraphAccess::Impl(parsed)->name = name;
  graph = parsed;
  return GRAPH_SUCCESS;
}

}  // namespace runner
}  // namespace ge
