// GraphState (see graph_state.h).
// Thread-safety: as documented there.
#include "session/graph_state.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "deploy/planner.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "rt/sim/sim_runtime.h"

namespace hflow {
using Clock = GraphState::Clock;

// What is left of a timeout that started at `t0` (-1 and 0 stay as they are).
int32_t GraphState::Remaining(int32_t timeout_ms, Clock::time_point t0) {
  if (timeout_ms <= 0) return timeout_ms;
  auto spent =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0)
          .count();
  return spent >= timeout_ms ? 0 : static_cast<int32_t>(timeout_ms - spent);
}

GraphState::GraphState(uint32_t id, deploy::GraphDef def,
                       std::string deploy_file,
                       std::shared_ptr<session::Environment> env)
    : id_(id),
      def_(std::move(def)),
      deploy_file_(std::move(deploy_file)),
      env_(std::move(env)) {}

GraphState::~GraphState() { (void)Remove(); }

std::string GraphState::Where() const {
  return "graph " + std::to_string(id_) + " ('" + def_.name + "'): ";
}

Status GraphState::Build() {
  std::lock_guard<std::mutex> control(control_mu_);
  std::unique_lock<std::shared_mutex> life(life_mu_);
  if (deployment_) return Status::OK();
  if (removed_) return Status::NotFound(Where() + "was removed");
  // Before planning, which would place a model node as if it could run.
  HFLOW_RETURN_IF_ERROR(deploy::CheckModelNodes(def_));
  HFLOW_RETURN_IF_ERROR(deploy::ExpandInputAttrs(&def_));
  deploy::DeployInfo info;
  HFLOW_RETURN_IF_ERROR(deploy::DeployInfoForGraph(
      def_, deploy_file_, env_->options.cluster, &info));
  deploy::PlanOptions popts;
  popts.queue_depth = env_->options.queue_depth;
  popts.group_bytes = env_->options.mbuf_pool_bytes;
  popts.cache_bytes = env_->options.mbuf_pool_bytes;
  popts.max_alloc_bytes = env_->options.max_message_bytes;
  deploy::Plan plan;
  HFLOW_RETURN_IF_ERROR(
      deploy::MakePlan(def_, env_->options.cluster, info, popts, &plan));
  deploy::DeployOptions dopts;
  dopts.pool_threads = env_->options.deploy_threads;
  dopts.alloc_timeout_ms = env_->options.alloc_timeout_ms;
  const bool catch_exceptions = def_.exception_catch;
  // The UDFs reach this graph only through `owner`, which Remove clears:
  // a UDF thread left running (abandoned) never calls into a freed graph.
  callbacks_ = std::make_shared<Callbacks>();
  callbacks_->owner = this;
  dopts.on_exception = [cb = callbacks_, catch_exceptions](
                           const std::string& node, int32_t code,
                           uint64_t ctx) {
    std::lock_guard<std::mutex> owner_lock(cb->mu);
    GraphState* g = cb->owner;
    if (g == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(g->exc_mu_);
      g->last_exception_ = {code, ctx};
      g->has_exception_ = true;
    }
    if (catch_exceptions) g->DeliverException(node, code, ctx);
  };
  dopts.get_exception = [cb = callbacks_](int32_t* code, uint64_t* ctx) {
    std::lock_guard<std::mutex> owner_lock(cb->mu);
    GraphState* g = cb->owner;
    if (g == nullptr) return false;
    std::lock_guard<std::mutex> lock(g->exc_mu_);
    if (!g->has_exception_) return false;
    *code = g->last_exception_.first;
    *ctx = g->last_exception_.second;
    return true;
  };
  dopts.init_timeout_ms = env_->options.init_timeout_ms;
  dopts.stop_timeout_ms = env_->options.stop_timeout_ms;
  // Workers make their own runtime as the host's: the same devices and the
  // same default device (the implicit-binding quirk included).
  const Options& o = env_->options;
  dopts.isolate_udfs = o.udf_isolation;
  dopts.worker.runtime_devices = o.cluster.LocalDeviceIds();
  const std::optional<int32_t> dd =
      o.default_device
          ? (*o.default_device < 0 ? std::nullopt : o.default_device)
          : o.cluster.ResolvedDefaultDevice();
  dopts.worker.default_device = dd.value_or(-1);
  if (auto* sim = dynamic_cast<rt::SimRuntime*>(env_->runtime.get())) {
    dopts.worker.ctxcheck = rt::ctxcheck::ModeName(sim->CtxCheck());
  }
  dopts.worker.segment_bytes = 2 * o.mbuf_pool_bytes;
  dopts.worker.counters = env_->worker_counters;
  dopts.worker.heartbeat_ms = o.worker_heartbeat_ms;
  dopts.worker.max_restarts =
      o.restart_policy == RestartPolicy::kRestart ? o.max_worker_restarts : 0;
  dopts.on_abandon = [env = env_](std::unique_ptr<deploy::Deployment> d) {
    session::KeepForever(env, nullptr, std::move(d));
  };
  router_ = std::make_shared<exec::Router>();
  dopts.outputs = router_;
  HFLOW_RETURN_IF_ERROR(
      deploy::Deploy(plan, env_->svc.get(), dopts, &deployment_));
  const deploy::Plan& p = deployment_->plan();
  input_routes_.clear();
  input_devices_.clear();
  output_queues_.clear();
  for (const std::string& in : def_.inputs) {
    auto queues = p.QueuesFedBy({in, 0});
    input_routes_.push_back(router_->RoutesOf({in, 0}));
    input_devices_.push_back(queues.empty() ? -1
                                            : p.queues[queues.front()].device);
  }
  std::vector<std::string> names;
  std::vector<size_t> hold_limit;
  for (uint32_t k = 0; k < def_.outputs.size(); ++k) {
    const size_t qi = static_cast<size_t>(p.OutputQueue(k));
    output_queues_.push_back(deployment_->queue(qi).get());
    names.push_back(def_.outputs[k].ToString());
    // A few queue depths: replicas and parallel branches reorder within
    // what is in flight, which the depths bound.
    hold_limit.push_back(std::max<size_t>(256, 4 * size_t{p.queues[qi].depth}));
  }
  const session::AlignLimits align{def_.align.max_cache, def_.align.timeout_ms,
                                   def_.align.dropout};
  matcher_ = std::make_unique<session::OutputMatcher>(
      env_->svc.get(), output_queues_, std::move(names), std::move(hold_limit),
      align);
  if (catch_exceptions) {
    matcher_->SetRaised([this](uint64_t t, int32_t* code) {
      std::lock_guard<std::mutex> lock(exc_mu_);
      auto it = raised_.find(t);
      if (it == raised_.end()) return false;
      *code = it->second;
      return true;
    });
  }
  runner_ = std::make_unique<exec::GraphRunner>(
      deployment_.get(), router_.get(), env_->options.exec_threads,
      env_->options.exec_handoff);
  runner_->Start();
  built_.store(true, std::memory_order_release);
  return Status::OK();
}

// With exception catch, an exception reaches the fetcher like a failed
// message: one error message (ret code = the exception code, transaction id
// = the user context id) on every graph output, waking a waiting fetch.
void GraphState::DeliverException(const std::string& node, int32_t code,
                                  uint64_t ctx) {
  deploy::Deployment* d = deployment_.get();
  if (d == nullptr) return;  // raised during Init: deployment fails anyway
  const uint32_t tag = d->ErrorNodeTag(node);
  {
    std::lock_guard<std::mutex> lock(exc_mu_);
    if (raised_.emplace(ctx, code).second) raised_order_.push_back(ctx);
    if (raised_order_.size() > kRaisedKept) {
      raised_.erase(raised_order_.front());
      raised_order_.pop_front();
    }
  }
  for (uint32_t k = 0; k < def_.outputs.size(); ++k) {
    size_t qi = static_cast<size_t>(d->plan().OutputQueue(k));
    services::MbufPtr m;
    Status s =
        d->AllocErrorMbuf(d->plan().queues[qi].device, code, ctx, tag, &m);
    if (s.ok()) s = env_->svc->Enqueue(*d->queue(qi), std::move(m), -1);
    if (!s.ok()) {
      // An exception the fetcher cannot be told about must not vanish
      // (Note [Failing a graph] in deployer.cc).
      d->Fail(s.WithContext(Where() + "delivering a UDF exception: "));
      return;
    }
  }
}

Status GraphState::Remove() {
  std::lock_guard<std::mutex> control(control_mu_);
  removed_ = true;
  // Wake every feed and fetch blocked on a queue, then wait for them to
  // leave before anything is freed. Running UDFs get stop_timeout_ms.
  Status s;
  if (runner_) s = runner_->Stop(env_->options.stop_timeout_ms);
  if (callbacks_) {  // after the queues closed: no callback waits on one
    std::lock_guard<std::mutex> lock(callbacks_->mu);
    callbacks_->owner = nullptr;
  }
  std::unique_lock<std::shared_mutex> life(life_mu_);
  if (s.ok()) {
    runner_.reset();
    if (matcher_) matcher_->Clear();  // their memory goes before the groups
    if (deployment_) {
      // The peaks outlive the groups (hflow::DeviceReports after removal).
      for (int32_t d : env_->options.cluster.LocalDeviceIds()) {
        if (services::MemoryGroup* g = deployment_->Group(d)) {
          env_->RecordPeakInUse(d, g->Stats().peak_in_use_bytes);
        }
      }
      s = deployment_->Undeploy();
    }
  }
  if ((runner_ && runner_->abandoned()) ||
      (deployment_ && deployment_->abandoned())) {
    // A UDF thread still runs in them (Note [Abandoning a stuck graph] in
    // exec/graph_runner.cc).
    if (deployment_ && !deployment_->abandoned()) {
      (void)deployment_->Abandon(s);
    }
    session::KeepForever(env_, std::move(runner_), std::move(deployment_));
    return s.WithContext(Where());
  }
  runner_.reset();
  deployment_.reset();
  router_.reset();
  return s;
}

// Stops the runner (waking every feed and fetch in flight with kCancelled),
// drops what the fetch side holds and the last exception, resets the
// deployment and starts a new runner; transaction ids start at 1 again. A
// graph never built has nothing to reset.
Status GraphState::Reset() {
  std::lock_guard<std::mutex> control(control_mu_);
  if (removed_) return Status::NotFound(Where() + "was removed");
  if (!built_.load(std::memory_order_acquire)) return Status::OK();
  Status s = runner_->Stop(env_->options.stop_timeout_ms,
                           "the graph is being reset (ResetGraph)");
  // A stuck UDF: the runner is abandoned, RemoveGraph keeps it.
  if (!s.ok()) return s.WithContext(Where() + "reset: ");
  std::unique_lock<std::shared_mutex> life(life_mu_);
  matcher_->Clear();
  {
    std::lock_guard<std::mutex> lock(exc_mu_);
    has_exception_ = false;
    last_exception_ = {0, 0};
    raised_.clear();
    raised_order_.clear();
  }
  size_t recreated = 0;
  HFLOW_RETURN_IF_ERROR(deployment_->Reset(&recreated).WithContext(Where()));
  runner_ = std::make_unique<exec::GraphRunner>(
      deployment_.get(), router_.get(), env_->options.exec_threads,
      env_->options.exec_handoff);
  runner_->Start();
  next_trans_.store(1);
  return Status::OK();
}

Status GraphState::Reports(std::vector<DeviceReport>* out) {
  *out = session::RuntimeReports(*env_);
  CountDeployment(out);
  std::shared_lock<std::shared_mutex> life(life_mu_);
  if (!deployment_) return Status::OK();
  return deployment_->RemoteReports(out);
}

void GraphState::CountDeployment(std::vector<DeviceReport>* rows) {
  std::shared_lock<std::shared_mutex> life(life_mu_);
  if (!deployment_) return;
  for (DeviceReport& r : *rows) {
    // The most of the graph's pool its messages held at once, not the pool
    // reserved on the device.
    if (services::MemoryGroup* g = deployment_->Group(r.id)) {
      r.peak_mem_bytes =
          std::max(r.peak_mem_bytes, g->Stats().peak_in_use_bytes);
    }
    for (const auto& i : deployment_->plan().instances)
      r.submodels += !i.Remote() && i.device == r.id;
    const auto& queues = deployment_->plan().queues;
    for (size_t i = 0; i < queues.size(); ++i) {
      if (queues[i].device != r.id) continue;
      ++r.queues;
      r.dropped_msgs += deployment_->queue(i)->dropped();
    }
  }
}

}  // namespace hflow
