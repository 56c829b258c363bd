// hflow::Initialize/Finalize and Session (see hflow/session.h). Every public
// entry point opens with a ContextGuard (invariant 2).
// Session's state lives in Session::Impl (pImpl), so that hflow/session.h
// brings users no <mutex> or <map>.
// Thread-safety: g_env_mu guards the environment and the session registry;
// a session's graph table is guarded by its Impl's mutex. Lock order:
// g_env_mu before a session's mutex (DeviceReports); a session's mutex is
// never held while taking g_env_mu.
#include <atomic>
#include <map>
#include <optional>
#include <set>

#include "deploy/graph_def.h"
#include "hflow/context_guard.h"
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "session/environment.h"
#include "session/graph_state.h"
#include "session/options_check.h"
#include "util/crash_report.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace session {
namespace {

util::Mutex g_env_mu;
std::shared_ptr<Environment> g_env GUARDED_BY(g_env_mu);
// Whether g_env is set: feeds and fetches check it without the lock.
std::atomic<bool> g_initialized{false};
// The live sessions (Finalize removes their graphs). A function-local
// static, never destroyed (a Session may outlive static destruction), so it
// cannot carry GUARDED_BY: the function does instead.
std::set<Session*>& Sessions() REQUIRES(g_env_mu) {
  static auto* s = new std::set<Session*>();
  return *s;
}

// What Finalize saw last (hflow::DeviceReports after Finalize).
std::optional<std::vector<DeviceReport>> g_final_reports GUARDED_BY(g_env_mu);

struct Kept {
  std::shared_ptr<Environment> env;
  std::unique_ptr<exec::GraphRunner> runner;
  std::unique_ptr<deploy::Deployment> deployment;
};

}  // namespace

std::vector<DeviceReport> RuntimeReports(const Environment& env) {
  std::vector<DeviceReport> rows;
  const rt::ForeignCounters::PerDevice workers = env.worker_counters->Totals();
  const int32_t node = env.options.cluster.LocalNode().node_id;
  for (int32_t d : env.options.cluster.LocalDeviceIds()) {
    DeviceReport r;
    r.id = d;
    r.node = node;
    rt::DeviceStats st;
    if (env.runtime->GetDeviceStats(d, &st).ok()) {
      r.contexts_created = st.contexts_created;
      r.implicit_bindings = st.implicit_bindings;
    }
    if (auto w = workers.find(d); w != workers.end()) {
      r.contexts_created += w->second.contexts_created;
      r.implicit_bindings += w->second.implicit_bindings;
    }
    r.peak_mem_bytes = env.PeakInUse(d);
    rows.push_back(r);
  }
  return rows;
}

void KeepForever(std::shared_ptr<Environment> env,
                 std::unique_ptr<exec::GraphRunner> runner,
                 std::unique_ptr<deploy::Deployment> deployment) {
  // Reachable, never destroyed (not even at exit, when a stuck thread may
  // still run): leak checkers see them as live.
  static auto* mu = new util::Mutex();
  static auto* kept PT_GUARDED_BY(*mu) = new std::vector<Kept>();
  env->abandoned.store(true);
  util::MutexLock lock(*mu);
  kept->push_back(
      Kept{std::move(env), std::move(runner), std::move(deployment)});
}

Status GetEnvironment(std::shared_ptr<Environment>* out) {
  util::MutexLock lock(g_env_mu);
  if (!g_env) {
    return Status::FailedPrecondition(
        "hflow is not initialized (call hflow::Initialize first, and not "
        "after hflow::Finalize)");
  }
  *out = g_env;
  return Status::OK();
}

void RegisterSession(Session* s) {
  util::MutexLock lock(g_env_mu);
  Sessions().insert(s);
}

void UnregisterSession(Session* s) {
  util::MutexLock lock(g_env_mu);
  Sessions().erase(s);
}

}  // namespace session

using session::Environment;

// The graph table. Graphs are shared with the calls using them: a call
// takes its GraphState out under `mu` and works on it without the lock, so
// RemoveGraph of one graph never waits for a feed of another.
struct Session::Impl {
  // The graph, once hflow is known initialized; kNotFound when absent.
  Status Find(uint32_t graph_id, std::shared_ptr<GraphState>* out) EXCLUDES(mu);
  // Adds a converted graph (AddGraph, AddGraphFile).
  Status Add(uint32_t graph_id, deploy::GraphDef def, std::string deploy_file)
      EXCLUDES(mu);

  util::Mutex mu;
  std::map<uint32_t, std::shared_ptr<GraphState>> graphs GUARDED_BY(mu);
};

Status Initialize(const Options& options) {
  ContextGuard guard;
  util::MutexLock lock(session::g_env_mu);
  if (session::g_env) {
    return Status::FailedPrecondition(
        "hflow::Initialize: already initialized; call Finalize first");
  }
  HFLOW_RETURN_IF_ERROR(session::CheckOptions(options));
  session::ApplyUdfLogLevel(options.udf_log_level);
  auto env = std::make_shared<Environment>();
  env->options = options;
  rt::RuntimeOptions ro;
  ro.backend = options.backend;  // "": the cluster's, else the sim
  ro.cluster = options.cluster;
  ro.default_device = options.default_device;
  ro.record_calls = options.record_calls;
  ro.ctxcheck = options.ctxcheck;
  // Note [One runtime for ACL and GE] (hflow/rt.h): adopt the runtime ACL
  // holds when it is the one these options would make.
  rt::InstalledRuntime installed = rt::GetInstalledRuntime();
  if (installed.runtime && installed.holds > 0 && installed.options &&
      rt::SameRuntime(*installed.options, ro)) {
    env->runtime = std::move(installed.runtime);
    auto* sim = dynamic_cast<rt::SimRuntime*>(env->runtime.get());
    if (ro.record_calls && sim != nullptr) sim->SetRecordCalls(true);
    rt::ctxcheck::Mode mode;
    if (sim != nullptr && rt::ctxcheck::ParseModeName(ro.ctxcheck, &mode)) {
      sim->SetCtxCheck(mode);  // ACL's runtime, checked from now on
    }
  } else {
    HFLOW_RETURN_IF_ERROR(rt::InitializeRuntime(ro, &env->runtime)
                              .WithContext("hflow::Initialize: "));
  }
  env->contexts = std::make_shared<rt::DeviceContexts>(env->runtime);
  env->svc = std::make_unique<services::ExchangeService>(env->contexts);
  env->host_memory = std::make_unique<session::HostMemory>(env->runtime);
  if (options.crash_report) {
    HFLOW_RETURN_IF_ERROR(
        util::InstallCrashReport().WithContext("hflow::Initialize: "));
  }
  rt::HoldRuntime(env->runtime.get());
  session::g_env = std::move(env);
  session::g_final_reports.reset();
  session::g_initialized.store(true);
  return Status::OK();
}

Status Finalize() {
  ContextGuard guard;
  std::set<Session*> sessions;
  std::shared_ptr<Environment> env;
  {
    util::MutexLock lock(session::g_env_mu);
    if (!session::g_env) {
      return Status::FailedPrecondition("hflow::Finalize: not initialized");
    }
    sessions = session::Sessions();
    env = std::move(session::g_env);  // later calls now fail clearly
    session::g_initialized.store(false);
  }
  Status first;
  for (Session* s : sessions) {
    for (uint32_t id : s->GraphIds()) {
      Status r = s->RemoveGraph(id);
      if (first.ok() && !r.ok() && r.code() != StatusCode::kNotFound) first = r;
    }
  }
  {
    util::MutexLock lock(session::g_env_mu);
    session::g_final_reports = session::RuntimeReports(*env);
  }
  // Destroys queues and groups and stops the agents, unless a stuck UDF
  // thread may still use them (the keep holds them then).
  if (!env->abandoned.load()) {
    env->svc.reset();
    env->contexts.reset();  // the devices' references go (unless held)
  }
  // Registrations still used by fetched views end with the last of them.
  env->host_memory->Clear();
  if (env->options.crash_report) util::UninstallCrashReport();
  rt::ReleaseRuntime(env->runtime.get());
  return first;
}

Status RegisterHostMemory(const void* ptr, size_t bytes) {
  ContextGuard guard;
  std::shared_ptr<Environment> env;
  HFLOW_RETURN_IF_ERROR(session::GetEnvironment(&env));
  return env->host_memory->Register(ptr, bytes);
}

Status UnregisterHostMemory(const void* ptr) {
  ContextGuard guard;
  std::shared_ptr<Environment> env;
  HFLOW_RETURN_IF_ERROR(session::GetEnvironment(&env));
  return env->host_memory->Unregister(ptr);
}

Status DeviceReports(std::vector<DeviceReport>* out) {
  ContextGuard guard;
  if (out == nullptr) return Status::InvalidArgument("DeviceReports: null out");
  util::MutexLock lock(session::g_env_mu);
  if (!session::g_env) {
    if (!session::g_final_reports) {
      return Status::FailedPrecondition(
          "hflow::DeviceReports: hflow was never initialized");
    }
    *out = *session::g_final_reports;
    return Status::OK();
  }
  // Sessions unregister under g_env_mu, so none goes away meanwhile.
  *out = session::RuntimeReports(*session::g_env);
  for (Session* s : session::Sessions()) {
    std::vector<std::shared_ptr<GraphState>> graphs;
    {
      util::MutexLock graphs_lock(s->impl_->mu);
      for (const auto& [id, g] : s->impl_->graphs) graphs.push_back(g);
    }
    for (const auto& g : graphs) g->CountDeployment(out);
  }
  return Status::OK();
}

Session::Session() : impl_(std::make_unique<Impl>()) {
  session::RegisterSession(this);
}

Session::~Session() {
  session::UnregisterSession(this);
  ContextGuard guard;
  util::MutexLock lock(impl_->mu);
  impl_->graphs.clear();  // each GraphState removes itself
}

std::vector<uint32_t> Session::GraphIds() {
  util::MutexLock lock(impl_->mu);
  std::vector<uint32_t> ids;
  for (const auto& [id, g] : impl_->graphs) ids.push_back(id);
  return ids;
}

Status Session::Impl::Find(uint32_t graph_id,
                           std::shared_ptr<GraphState>* out) {
  if (!session::g_initialized.load()) {
    std::shared_ptr<Environment> env;
    HFLOW_RETURN_IF_ERROR(session::GetEnvironment(&env));  // the message
  }
  util::MutexLock lock(mu);
  auto it = graphs.find(graph_id);
  if (it == graphs.end()) {
    return Status::NotFound("graph " + std::to_string(graph_id) +
                            " is not in this session (AddGraph first)");
  }
  *out = it->second;
  return Status::OK();
}

Status Session::Impl::Add(uint32_t graph_id, deploy::GraphDef def,
                          std::string deploy_file) {
  std::shared_ptr<Environment> env;
  HFLOW_RETURN_IF_ERROR(session::GetEnvironment(&env));
  util::MutexLock lock(mu);
  if (graphs.count(graph_id)) {
    return Status::AlreadyExists("graph " + std::to_string(graph_id) +
                                 " already exists in this session");
  }
  graphs[graph_id] = std::make_shared<GraphState>(graph_id, std::move(def),
                                                  std::move(deploy_file), env);
  return Status::OK();
}

Status Session::AddGraph(uint32_t graph_id, const FlowGraph& graph) {
  ContextGuard guard;
  deploy::GraphDef def;
  HFLOW_RETURN_IF_ERROR(deploy::GraphFromFlowGraph(graph, &def));
  return impl_->Add(graph_id, std::move(def), "");
}

Status Session::AddGraphFile(uint32_t graph_id, const std::string& path,
                             const std::string& deploy_file) {
  ContextGuard guard;
  deploy::GraphDef def;
  HFLOW_RETURN_IF_ERROR(deploy::LoadGraphFile(path, &def));
  return impl_->Add(graph_id, std::move(def), deploy_file);
}

Status Session::AddGraphJson(uint32_t graph_id, const std::string& json,
                             const std::string& source,
                             const std::string& base_dir,
                             const std::string& deploy_file) {
  ContextGuard guard;
  deploy::GraphDef def;
  HFLOW_RETURN_IF_ERROR(deploy::ParseGraphJson(json, source, base_dir, &def));
  return impl_->Add(graph_id, std::move(def), deploy_file);
}

Status Session::BuildGraph(uint32_t graph_id) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->Build();
}

Status Session::FeedData(uint32_t graph_id, const std::vector<Tensor>& inputs,
                         const FlowInfo& info, int32_t timeout_ms) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->Feed(nullptr, inputs, info, timeout_ms);
}

Status Session::FeedData(uint32_t graph_id,
                         const std::vector<uint32_t>& indexes,
                         const std::vector<Tensor>& inputs,
                         const FlowInfo& info, int32_t timeout_ms) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->Feed(&indexes, inputs, info, timeout_ms);
}

Status Session::FeedMessages(uint32_t graph_id,
                             const std::vector<uint32_t>& indexes,
                             const std::vector<Message>& inputs,
                             int32_t timeout_ms) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->FeedMessages(indexes, inputs, timeout_ms);
}

Status Session::FeedRawData(uint32_t graph_id,
                            const std::vector<RawData>& parts, uint32_t index,
                            const FlowInfo& info, int32_t timeout_ms) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->FeedRaw(parts, index, info, timeout_ms);
}

Status Session::FetchData(uint32_t graph_id, std::vector<Tensor>* outputs,
                          FlowInfo* info, int32_t timeout_ms) {
  ContextGuard guard;
  if (outputs == nullptr || info == nullptr) {
    return Status::InvalidArgument("FetchData: null outputs or info");
  }
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->Fetch(nullptr, outputs, info, timeout_ms);
}

Status Session::FetchData(uint32_t graph_id,
                          const std::vector<uint32_t>& indexes,
                          std::vector<Tensor>* outputs, FlowInfo* info,
                          int32_t timeout_ms) {
  ContextGuard guard;
  if (outputs == nullptr || info == nullptr) {
    return Status::InvalidArgument("FetchData: null outputs or info");
  }
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->Fetch(&indexes, outputs, info, timeout_ms);
}

Status Session::FeedViews(uint32_t graph_id,
                          const std::vector<TensorView>& inputs,
                          const FlowInfo& info, int32_t timeout_ms) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->FeedViews(inputs, info, timeout_ms);
}

Status Session::FetchViews(uint32_t graph_id, std::vector<TensorView>* outputs,
                           FlowInfo* info, int32_t timeout_ms) {
  ContextGuard guard;
  if (outputs == nullptr || info == nullptr) {
    return Status::InvalidArgument("FetchViews: null outputs or info");
  }
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->FetchViews(outputs, info, timeout_ms);
}

Status Session::FetchMessages(uint32_t graph_id,
                              const std::vector<uint32_t>& indexes,
                              std::vector<Message>* outputs,
                              int32_t timeout_ms) {
  ContextGuard guard;
  if (outputs == nullptr) {
    return Status::InvalidArgument("FetchMessages: null outputs");
  }
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->FetchMessages(indexes, outputs, timeout_ms);
}

Status Session::FeedDataBatch(uint32_t graph_id,
                              const std::vector<std::vector<Tensor>>& batch,
                              const std::vector<FlowInfo>& infos,
                              int32_t timeout_ms, size_t* fed) {
  ContextGuard guard;
  size_t local = 0;
  if (fed == nullptr) fed = &local;
  *fed = 0;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->FeedBatch(batch, infos, timeout_ms, fed);
}

Status Session::FetchDataBatch(uint32_t graph_id, size_t max,
                               std::vector<std::vector<Tensor>>* outputs,
                               std::vector<FlowInfo>* infos,
                               int32_t timeout_ms) {
  ContextGuard guard;
  if (outputs == nullptr || infos == nullptr) {
    return Status::InvalidArgument("FetchDataBatch: null outputs or infos");
  }
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->FetchBatch(max, outputs, infos, timeout_ms);
}

Status Session::RemoveGraph(uint32_t graph_id) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  {
    util::MutexLock lock(impl_->mu);
    auto it = impl_->graphs.find(graph_id);
    if (it == impl_->graphs.end()) {
      return Status::NotFound("graph " + std::to_string(graph_id) +
                              " is not in this session");
    }
    g = std::move(it->second);
    impl_->graphs.erase(it);
  }
  return g->Remove();
}

Status Session::ResetGraph(uint32_t graph_id) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->Reset();
}

Status Session::DeviceReports(uint32_t graph_id,
                              std::vector<DeviceReport>* out) {
  ContextGuard guard;
  std::shared_ptr<GraphState> g;
  HFLOW_RETURN_IF_ERROR(impl_->Find(graph_id, &g));
  return g->Reports(out);
}

}  // namespace hflow
