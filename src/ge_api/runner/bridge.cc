// The bridge (bridge.h) on hflow's Session API. The one file of the GE
// libraries built with the new string ABI: it speaks hflow's types inside
// and bridge.h's plain views outside.
//
// Thread-safety: the session table is guarded by g_mu; a session's calls
// go to hflow::Session, which is safe from any thread. The last error is
// per thread.
#include "ge_api/runner/bridge.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hflow/context_guard.h"
#include "hflow/ctxcheck.h"
#include "hflow/ge_options.h"
#include "hflow/rt.h"
#include "hflow/session.h"
#include "session/ge_codes.h"
#include "session/model_convert.h"

namespace hflow {
namespace gebridge {
namespace {

struct SessionState {
  Session session;
  GeGraphOptions defaults;
  Status options_error;  // a bad option given to the constructor
};

std::mutex g_mu;
bool g_initialized = false;       // GUARDED_BY(g_mu)
GeGraphOptions g_graph_defaults;  // GUARDED_BY(g_mu)
std::map<uint64_t, std::shared_ptr<SessionState>> g_sessions;  // g_mu
uint64_t g_next_session = 1;  // GUARDED_BY(g_mu)

thread_local std::string t_last_error;

uint32_t Report(const std::string& call, uint32_t code,
                const std::string& reason) {
  t_last_error = "hflow ge: " + call + ": " + reason;
  std::fprintf(stderr, "%s\n", t_last_error.c_str());
  return code;
}

// GE's code for `s` (SUCCESS for OK), reporting a failure.
uint32_t Code(const std::string& call, const Status& s) {
  if (s.ok()) return ge::kGeSuccess;
  return Report(call, ge::GeCodeOf(s), s.ToString());
}

std::map<std::string, std::string> Options(const KeyValue* kv, size_t n) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < n; ++i) {
    out[kv[i].key == nullptr ? "" : kv[i].key] =
        kv[i].value == nullptr ? "" : kv[i].value;
  }
  return out;
}

std::string GraphCall(const char* call, uint32_t graph_id) {
  return std::string(call) + "(graph " + std::to_string(graph_id) + ")";
}

// The session, or null with the failure reported (after g_mu is released,
// so a slow stderr holds up no other call).
std::shared_ptr<SessionState> Find(uint64_t id, const std::string& call,
                                   uint32_t* code) {
  std::shared_ptr<SessionState> state;
  bool initialized = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    initialized = g_initialized;
    auto it = g_sessions.find(id);
    if (it != g_sessions.end()) state = it->second;
  }
  if (!initialized) {
    // GE's words, not hflow's: the caller knows GEInitialize.
    *code = Report(call, ge::kGeFailed,
                   "GE is not initialized; call GEInitialize first (and not "
                   "after GEFinalize)");
    return nullptr;
  }
  if (!state) {
    *code = Report(call, ge::kGeFailed,
                   "session " + std::to_string(id) +
                       " does not exist (destroyed, or never made)");
    return nullptr;
  }
  if (!state->options_error.ok()) {
    *code = Code(call, state->options_error.WithContext(
                           "session " + std::to_string(id) + ": "));
    return nullptr;
  }
  return state;
}

Tensor ToTensor(const TensorView& v) {
  Tensor t;
  t.dtype = static_cast<DataType>(v.dtype);
  t.shape.assign(v.dims, v.dims + v.dim_num);
  const auto* p = static_cast<const uint8_t*>(v.data);
  if (v.size > 0 && p != nullptr) t.data.assign(p, p + v.size);
  return t;
}

TensorView ToView(const Tensor& t) {
  TensorView v;
  v.dtype = static_cast<int32_t>(t.dtype);
  v.dims = t.shape.data();
  v.dim_num = t.shape.size();
  v.data = t.data.data();
  v.size = t.data.size();
  return v;
}

FlowInfo ToInfo(const InfoView& v) {
  FlowInfo i;
  i.start_time = v.start_time;
  i.end_time = v.end_time;
  i.flags = v.flags;
  i.transaction_id = v.transaction_id;
  if (v.user_data != nullptr) {
    i.user_data.assign(v.user_data, v.user_data + v.user_data_size);
  }
  i.ret_code = v.ret_code;
  return i;
}

InfoView ToView(const FlowInfo& i) {
  InfoView v;
  v.start_time = i.start_time;
  v.end_time = i.end_time;
  v.flags = i.flags;
  v.transaction_id = i.transaction_id;
  v.user_data = i.user_data.data();
  v.user_data_size = i.user_data.size();
  v.ret_code = i.ret_code;
  return v;
}

// GE's SINGLE deploy mode (ge.exec.logicalDeviceClusterDeployMode with
// ge.exec.logicalDeviceId): every node goes onto the logical devices, unless
// a deploy info file places the graph. The graph-file text gets that
// placement as its "deploy".
Status PlaceSingle(const GeGraphOptions& g, std::string* json) {
  if (g.deploy_mode != "SINGLE" || g.logical_devices.empty() ||
      !g.deploy_info_path.empty()) {
    return Status::OK();
  }
  nlohmann::json doc = nlohmann::json::parse(*json, nullptr, false);
  if (doc.is_discarded() || !doc.contains("nodes")) return Status::OK();
  nlohmann::json names = nlohmann::json::array();
  for (const auto& n : doc["nodes"]) names.push_back(n.value("name", ""));
  std::string list;
  for (const GeLogicalDevice& d : g.logical_devices) {
    if (!list.empty()) list += ",";
    list +=
        "0:" + std::to_string(d.node_id) + ":" + std::to_string(d.device_id);
  }
  doc["deploy"] = {
      {"batch_deploy_info",
       {{{"flow_node_list", names}, {"logic_device_list", list}}}}};
  *json = doc.dump();
  return Status::OK();
}

// Note [ge.exec.deviceId is logical]: CANN numbers the devices a process
// sees from 0 (ASCEND_RT_VISIBLE_DEVICES renumbers them), and GE's programs
// pass "0" whatever the resource config lists. So an id that is not one of
// the cluster's device ids but is below their count picks the cluster's
// device at that position: "0" on a cluster of devices 2,3,4,5 is device 2.
// An id the cluster has is that device, as before.
void LogicalDeviceId(hflow::Options* o) {
  if (!o->default_device || *o->default_device < 0) return;
  const std::vector<int32_t> ids = o->cluster.LocalDeviceIds();
  const int32_t id = *o->default_device;
  if (o->cluster.HasLocalDevice(id)) return;
  if (static_cast<size_t>(id) < ids.size()) o->default_device = ids[id];
}

// Note [GE after aclInit]: a program that called aclInit (and set its
// thread's device through ACL) before GEInitialize must keep its contexts,
// so GE uses the runtime ACL holds (hflow::Initialize adopts a held runtime
// made from the same options). When ACL's runtime covers the same devices,
// its default device stands: ge.exec.deviceId names GE's device, not the
// one a thread without a context falls back to, which ACL already decided.
void ShareAclRuntime(hflow::Options* o) {
  rt::InstalledRuntime installed = rt::GetInstalledRuntime();
  if (!installed.runtime || installed.holds <= 0 || !installed.options) return;
  rt::RuntimeOptions want;
  want.backend = o->backend;
  want.cluster = o->cluster;
  want.default_device = installed.options->default_device;
  if (rt::SameRuntime(*installed.options, want)) {
    o->default_device = installed.options->default_device;
  }
}

std::vector<uint32_t> Indexes(const uint32_t* p, size_t n) {
  return p == nullptr ? std::vector<uint32_t>()
                      : std::vector<uint32_t>(p, p + n);
}

}  // namespace

uint32_t Initialize(const KeyValue* options, size_t option_num) {
  ContextGuard guard;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_initialized) return ge::kGeSuccess;  // GE: a second call is a no-op
  hflow::Options o;
  GeGraphOptions defaults;
  std::vector<std::string> notes;
  Status s =
      ApplyGeOptions(Options(options, option_num), &o, &notes, &defaults);
  if (!s.ok()) return Code("GEInitialize", s);
  LogicalDeviceId(&o);
  ShareAclRuntime(&o);
  s = hflow::Initialize(o);
  if (!s.ok()) return Code("GEInitialize", s);
  g_graph_defaults = defaults;
  g_initialized = true;
  return ge::kGeSuccess;
}

uint32_t Finalize() {
  ContextGuard guard;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_initialized) return ge::kGeSuccess;  // GE: nothing to finalize
    g_initialized = false;
  }
  return Code("GEFinalize", hflow::Finalize());
}

uint64_t CreateSession(const KeyValue* options, size_t option_num) {
  ContextGuard guard;
  auto state = std::make_shared<SessionState>();
  uint64_t id = 0;
  bool initialized = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    initialized = g_initialized;
    state->defaults = g_graph_defaults;
    id = g_next_session++;
    g_sessions[id] = state;
  }
  const std::string call = "Session(id " + std::to_string(id) + ")";
  if (!initialized) {
    // As GE: a session made before GEInitialize stays unusable.
    state->options_error = Status::FailedPrecondition(
        "it was made before GEInitialize; call GEInitialize first, then "
        "make the session");
    Code(call, state->options_error);
    return id;
  }
  hflow::Options scratch;  // global keys were GEInitialize's to apply
  std::vector<std::string> notes;
  state->options_error = ApplyGeOptions(Options(options, option_num), &scratch,
                                        &notes, &state->defaults);
  if (!state->options_error.ok()) Code(call, state->options_error);
  return id;
}

void DestroySession(uint64_t session) {
  ContextGuard guard;
  std::shared_ptr<SessionState> state;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_sessions.find(session);
    if (it == g_sessions.end()) return;
    state = std::move(it->second);
    g_sessions.erase(it);
  }
  // A call blocked on one of its graphs holds the state too: removing the
  // graphs now wakes it (kCancelled), so it returns and lets go.
  for (uint32_t graph_id : state->session.GraphIds()) {
    (void)state->session.RemoveGraph(graph_id);
  }
}

uint32_t AddGraph(uint64_t session, uint32_t graph_id, const char* json,
                  const char* source, const KeyValue* options,
                  size_t option_num) {
  ContextGuard guard;
  const std::string call = GraphCall("AddGraph", graph_id);
  uint32_t code = ge::kGeSuccess;
  auto s = Find(session, call, &code);
  if (!s) return code;
  GeGraphOptions g = s->defaults;
  std::vector<std::string> notes;
  Status st = ApplyGeGraphOptions(Options(options, option_num), &g, &notes);
  if (!st.ok()) return Code(call, st);
  std::string text = json == nullptr ? "" : json;
  st = PlaceSingle(g, &text);
  if (!st.ok()) return Code(call, st);
  return Code(call, s->session.AddGraphJson(graph_id, text, source, "",
                                            g.deploy_info_path));
}

uint32_t BuildGraph(uint64_t session, uint32_t graph_id) {
  ContextGuard guard;
  const std::string call = GraphCall("BuildGraph", graph_id);
  uint32_t code = ge::kGeSuccess;
  auto s = Find(session, call, &code);
  if (!s) return code;
  return Code(call, s->session.BuildGraph(graph_id));
}

uint32_t RemoveGraph(uint64_t session, uint32_t graph_id) {
  ContextGuard guard;
  const std::string call = GraphCall("RemoveGraph", graph_id);
  uint32_t code = ge::kGeSuccess;
  auto s = Find(session, call, &code);
  if (!s) return code;
  return Code(call, s->session.RemoveGraph(graph_id));
}

uint32_t FeedTensors(uint64_t session, uint32_t graph_id,
                     const uint32_t* indexes, size_t index_num,
                     const TensorView* tensors, size_t tensor_num,
                     const InfoView& info, int32_t timeout) {
  ContextGuard guard;
  const std::string call = GraphCall("FeedDataFlowGraph", graph_id);
  uint32_t code = ge::kGeSuccess;
  auto s = Find(session, call, &code);
  if (!s) return code;
  std::vector<Tensor> in;
  in.reserve(tensor_num);
  for (size_t i = 0; i < tensor_num; ++i) in.push_back(ToTensor(tensors[i]));
  return Code(call, s->session.FeedData(graph_id, Indexes(indexes, index_num),
                                        in, ToInfo(info), timeout));
}

uint32_t FeedMessages(uint64_t session, uint32_t graph_id,
                      const uint32_t* indexes, size_t index_num,
                      const MessageView* messages, size_t message_num,
                      int32_t timeout) {
  ContextGuard guard;
  const std::string call = GraphCall("FeedDataFlowGraph", graph_id);
  uint32_t code = ge::kGeSuccess;
  auto s = Find(session, call, &code);
  if (!s) return code;
  std::vector<Message> in(message_num);
  for (size_t i = 0; i < message_num; ++i) {
    const MessageView& v = messages[i];
    Message& m = in[i];
    m.msg_type = v.msg_type;
    m.empty = v.empty;
    m.info = ToInfo(v.info);
    if (v.empty) continue;
    if (v.msg_type == kMsgTypeTensor) {
      m.tensors.push_back(ToTensor(v.tensor));
    } else if (v.raw != nullptr) {
      const auto* p = static_cast<const uint8_t*>(v.raw);
      m.raw.assign(p, p + v.raw_size);
    }
  }
  return Code(call, s->session.FeedMessages(
                        graph_id, Indexes(indexes, index_num), in, timeout));
}

uint32_t FeedRaw(uint64_t session, uint32_t graph_id, const RawPiece* pieces,
                 size_t piece_num, uint32_t index, const InfoView& info,
                 int32_t timeout) {
  ContextGuard guard;
  const std::string call = GraphCall("FeedRawData", graph_id);
  uint32_t code = ge::kGeSuccess;
  auto s = Find(session, call, &code);
  if (!s) return code;
  std::vector<RawData> parts(piece_num);
  for (size_t i = 0; i < piece_num; ++i) {
    parts[i].data = pieces[i].data;
    parts[i].len = pieces[i].len;
  }
  return Code(call, s->session.FeedRawData(graph_id, parts, index, ToInfo(info),
                                           timeout));
}

uint32_t FetchTensors(uint64_t session, uint32_t graph_id,
                      const uint32_t* indexes, size_t index_num,
                      int32_t timeout, FetchSink* sink) {
  ContextGuard guard;
  const std::string call = GraphCall("FetchDataFlowGraph", graph_id);
  uint32_t code = ge::kGeSuccess;
  auto s = Find(session, call, &code);
  if (!s) return code;
  std::vector<Tensor> out;
  FlowInfo info;
  Status st = s->session.FetchData(graph_id, Indexes(indexes, index_num), &out,
                                   &info, timeout);
  ge::GeFetchFacts facts;
  facts.api = ge::GeFetchApi::kTensors;
  facts.raised_exception = st.ok() && info.raised_exception;
  facts.end_of_sequence = st.ok() && (info.flags & kFlowFlagEos) != 0;
  facts.timeout_ms = timeout;
  code = ge::GeFetchCode(st, info.ret_code, facts);
  if (st.ok()) {
    for (size_t i = 0; i < out.size(); ++i) sink->OnTensor(i, ToView(out[i]));
    sink->OnInfo(ToView(info));
  }
  if (code == ge::kGeSuccess) return code;
  if (!st.ok()) return Report(call, code, st.ToString());
  return Report(call, code,
                (info.raised_exception
                     ? "node '" + info.error_node + "' raised exception "
                     : "node '" + info.error_node + "' returned error code ") +
                    std::to_string(info.ret_code) + " for transaction " +
                    std::to_string(info.transaction_id));
}

uint32_t FetchMessages(uint64_t session, uint32_t graph_id,
                       const uint32_t* indexes, size_t index_num,
                       int32_t timeout, FetchSink* sink) {
  ContextGuard guard;
  const std::string call = GraphCall("FetchDataFlowGraph", graph_id);
  uint32_t code = ge::kGeSuccess;
  auto s = Find(session, call, &code);
  if (!s) return code;
  std::vector<Message> out;
  Status st = s->session.FetchMessages(graph_id, Indexes(indexes, index_num),
                                       &out, timeout);
  ge::GeFetchFacts facts;
  facts.api = ge::GeFetchApi::kFlowMsgs;
  facts.timeout_ms = timeout;
  if (st.ok()) {
    for (size_t i = 0; i < out.size(); ++i) {
      const Message& m = out[i];
      facts.end_of_sequence =
          facts.end_of_sequence || (m.info.flags & kFlowFlagEos) != 0;
      facts.raised_exception =
          facts.raised_exception || m.info.raised_exception;
      MessageView v;
      v.msg_type = m.msg_type;
      v.empty = m.empty;
      if (!m.tensors.empty()) v.tensor = ToView(m.tensors[0]);
      v.raw = m.raw.data();
      v.raw_size = m.raw.size();
      v.info = ToView(m.info);
      sink->OnMessage(i, v);
    }
  }
  code = ge::GeFetchCode(st, 0, facts);
  if (code == ge::kGeSuccess) return code;
  if (!st.ok()) return Report(call, code, st.ToString());
  return Report(call, code,
                facts.raised_exception
                    ? std::string("a UDF raised an exception for the "
                                  "transaction (exception catch)")
                    : std::string("the stream ended (end of sequence)"));
}

uint32_t ParseModel(const char* call, const char* framework,
                    const char* model_file, const KeyValue* params,
                    size_t param_num, const char* graph_name, char** out,
                    size_t* out_len) {
  std::string bytes;
  const Status s =
      ConvertModelToGeGraph(framework, model_file == nullptr ? "" : model_file,
                            Options(params, param_num),
                            graph_name == nullptr ? "" : graph_name, &bytes);
  if (!s.ok()) return Code(call, s);
  *out = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (*out == nullptr) return Report(call, ge::kGeFailed, "out of memory");
  std::memcpy(*out, bytes.data(), bytes.size());
  *out_len = bytes.size();
  return ge::kGeSuccess;
}

void FreeBytes(char* bytes) { std::free(bytes); }

uint32_t Fail(const char* call, uint32_t code, const char* reason) {
  return Report(call == nullptr ? "" : call, code,
                reason == nullptr ? "" : reason);
}

void RunUserCallback(const char* what, void (*fn)(void*), void* arg) {
  // Outside the check, so that the check sees what the callback left.
  hflow::ContextGuard restore;
  hflow::RunCtxCheckedUserCall(what, "callback", [&] { fn(arg); });
}

const char* LastError() { return t_last_error.c_str(); }

}  // namespace gebridge
}  // namespace hflow
