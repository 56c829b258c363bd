// Deployer (see deployer.h): resolving functions, memory groups, queues,
// loading instances, failing and undeploying a graph. Messages are routed
// by the layer above (DeployOptions::outputs).
// Thread-safety: deploy steps write disjoint slots of pre-sized vectors from
// pool tasks; the plan and the resources are read-only after Deploy
// returns.
#include "deploy/deployer.h"

#include <algorithm>

#include "flow_func/compile_config.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/udf_library.h"

namespace hflow {
namespace deploy {
namespace {

std::atomic<uint64_t> g_next_deployment{1};

std::string Dev(int32_t d) { return "device " + std::to_string(d); }

}  // namespace

Deployment::Deployment(Plan plan, services::ExchangeService* svc,
                       DeployOptions opts)
    : plan_(std::move(plan)), svc_(svc), opts_(std::move(opts)) {
  pool_ = std::make_unique<rt::ThreadPool>("deploy", opts_.pool_threads,
                                           svc_->contexts());
  id_ = g_next_deployment.fetch_add(1);
  group_name_ = "hflow." + plan_.graph.name + "." + std::to_string(id_);
}

Deployment::~Deployment() { (void)Undeploy(); }

std::string Deployment::InstanceName(size_t index) const {
  const InstancePlan& p = instances_[index]->plan;
  return "node '" + p.node + "' replica " + std::to_string(p.replica) + " on " +
         Dev(p.device);
}

// Note [Abandoning a stuck deployment]
// A UDF whose Init (or destructor) never returns holds a deploy pool
// thread, and the thread still holds the instance, its environment (the
// allocator, the output routes into this deployment's queues), the pool
// and the runtime. Joining it would hang BuildGraph or RemoveGraph, so the
// wait is bounded (Options::init_timeout_ms, stop_timeout_ms) and then the
// deployment is abandoned: nothing it holds is freed, the pool's idle
// threads exit and the stuck one is detached, never joined, and the
// session keeps the object (with the exchange service and the runtime)
// for the rest of the process, so a thread that returns late finds
// everything in place. Its devices' resources stay allocated.
Status Deployment::Abandon(Status why) {
  abandoned_ = true;
  deployed_ = false;
  pool_->Abandon();
  return why;
}

const std::string& Deployment::GroupName() const { return group_name_; }

uint32_t Deployment::ErrorNodeTag(std::string_view node) const {
  const auto& nodes = plan_.graph.nodes;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == node) return static_cast<uint32_t>(i + 1);
  }
  return 0;
}

Status Deployment::AllocErrorMbuf(int32_t device, int32_t rc, uint64_t trans_id,
                                  uint32_t error_node,
                                  services::MbufPtr* out) const {
  HFLOW_RETURN_IF_ERROR(
      svc_->AllocMbuf(device, GroupName(), "deployer", 0, out,
                      services::AllocWait{opts_.alloc_timeout_ms, 0}));
  services::MbufHead& h = (*out)->head();
  h.ret_code = rc;
  h.error_node = error_node;
  h.trans_id = trans_id;
  h.msg_type = static_cast<uint16_t>(FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA);
  h.shape = {0};
  return Status::OK();
}

Status Deployment::ResolveFunctions() {
  return deploy::ResolveFunctions(plan_.graph, opts_.build, &funcs_,
                                  &model_holds_);
}

Status Deployment::CreateGroups() {
  rt::ThreadPool::DeviceTasks tasks;
  std::mutex mu;
  for (int32_t d : plan_.devices) {
    tasks.emplace_back(d, [this, d, &mu](const rt::ScopedDevice&) -> Status {
      const PlanOptions& o = plan_.options;
      HFLOW_RETURN_IF_ERROR(svc_->SubmitEventSync(
          d, services::CreateGroupRequest{GroupName(), o.group_bytes}, nullptr,
          opts_.event_timeout_ms));
      {
        std::lock_guard<std::mutex> lock(mu);
        groups_.push_back(d);
      }
      return svc_->SubmitEventSync(
          d,
          services::AllocCacheRequest{GroupName(), o.cache_bytes,
                                      o.max_alloc_bytes},
          nullptr, opts_.event_timeout_ms);
    });
  }
  return pool_->RunAll(std::move(tasks)).WithContext("deploy: memory group: ");
}

// Handles for the per-message paths (Deliver, feeds): no registry lookup
// per message.
Status Deployment::OpenGroups() {
  for (int32_t d : groups_) {
    std::shared_ptr<services::MemoryGroup> g;
    HFLOW_RETURN_IF_ERROR(svc_->OpenGroup(d, GroupName(), &g));
    group_handles_[d] = std::move(g);
  }
  return Status::OK();
}

services::MemoryGroup* Deployment::Group(int32_t device) const {
  auto it = group_handles_.find(device);
  return it == group_handles_.end() ? nullptr : it->second.get();
}

Status Deployment::CreateQueues() {
  queue_ids_.assign(plan_.queues.size(), 0);
  queues_.assign(plan_.queues.size(), nullptr);
  rt::ThreadPool::DeviceTasks tasks;
  for (size_t i = 0; i < plan_.queues.size(); ++i) {
    const QueuePlan& q = plan_.queues[i];
    tasks.emplace_back(
        q.device, [this, i, &q](const rt::ScopedDevice&) -> Status {
          uint32_t id = 0;
          const auto policy = q.policy == EnqueuePolicy::kOverwrite
                                  ? services::QueuePolicy::kOverwrite
                                  : services::QueuePolicy::kFifo;
          HFLOW_RETURN_IF_ERROR(
              svc_->CreateQueue(q.device, q.depth, q.name, &id, policy)
                  .WithContext("deploy: queue '" + q.name + "' on " +
                               Dev(q.device) + ": "));
          queue_ids_[i] = id;
          return svc_->OpenQueue(id, &queues_[i]);
        });
  }
  return pool_->RunAll(std::move(tasks));
}

flow_func::InstanceEnv Deployment::MakeEnv(const DeployedInstance& inst) {
  const NodeDef* n = plan_.graph.FindNode(inst.plan.node);
  flow_func::InstanceEnv env;
  env.node = n->name;
  env.work_path = plan_.graph.base_dir;
  env.device = inst.plan.device;
  env.instance_id = inst.plan.replica;
  env.instance_num = inst.plan.replicas;
  env.input_num = PpInputs(*n);
  env.output_num = PpOutputs(*n);
  env.balance = n->balance;
  env.error_tag = ErrorNodeTag(n->name);
  env.attrs = n->pp.init_params;
  env.allocator = std::make_shared<flow_func::MsgAllocator>(
      svc_, inst.plan.device, GroupName(), "deployer",
      flow_func::MsgLimits{n->name, plan_.options.max_alloc_bytes,
                           opts_.alloc_timeout_ms});
  if (opts_.outputs) {
    env.output = opts_.outputs->OutputOf(inst, env.output_num);
  }
  const std::string node = n->name;
  if (opts_.on_exception) {
    auto raise = opts_.on_exception;
    env.raise = [raise, node](int32_t code, uint64_t ctx) {
      raise(node, code, ctx);
    };
  }
  env.get_exception = opts_.get_exception;
  for (const InvokedModelDef& d : n->invoked) {
    flow_func::InvokedModelSpec spec;
    spec.key = d.key;
    spec.framework = d.model.framework;
    spec.graph_file = d.model.graph_file;
    spec.compile_config = d.model.compile_config;
    spec.load_params = d.model.load_params;
    spec.intra_op_threads = d.model.intra_op_threads;
    env.invoked.push_back(std::move(spec));
  }
  return env;
}

// One pool task per instance, bound to its device by the pool (`bound`):
// the model load and Init run under that one binding.
Status Deployment::LoadOne(DeployedInstance* inst,
                           const rt::ScopedDevice& bound) {
  const int32_t d = inst->plan.device;
  const std::string where = "deploy: node '" + inst->plan.node + "' replica " +
                            std::to_string(inst->plan.replica) + " on " +
                            Dev(d) + ": ";
  HFLOW_RETURN_IF_ERROR(
      svc_->runtime()->DriverCall(d, rt::Op::kModelLoad).WithContext(where));
  inst->loaded = true;
  std::unique_ptr<flow_func::Instance> udf;
  bool own = false;
  if (inst->plan.Remote()) {
    // Init'ed with the rest of its host's (LoadInstances, InitAll).
    HFLOW_RETURN_IF_ERROR(CreateOnHost(*inst, &udf).WithContext(where));
    inst->udf = std::move(udf);
    return Status::OK();
  } else if (Isolated(*inst, &own)) {
    HFLOW_RETURN_IF_ERROR(CreateRemote(*inst, own, &udf).WithContext(where));
  } else {
    std::unique_ptr<flow_func::UdfInstance> local;
    HFLOW_RETURN_IF_ERROR(
        flow_func::UdfInstance::Create(inst->funcs, MakeEnv(*inst), &local)
            .WithContext(where));
    udf = std::move(local);
  }
  HFLOW_RETURN_IF_ERROR(udf->Init(bound).WithContext(where));
  inst->udf = std::move(udf);
  return Status::OK();
}

Status Deployment::LoadInstances() {
  for (const InstancePlan& p : plan_.instances) {
    auto inst = std::make_unique<DeployedInstance>();
    inst->plan = p;
    inst->funcs = funcs_[p.node];
    const NodeDef* n = plan_.graph.FindNode(p.node);
    for (uint32_t i = 0; i < n->inputs.size(); ++i) {
      inst->inputs.push_back(queues_[plan_.InputQueue(p.node, p.replica, i)]);
    }
    instances_.push_back(std::move(inst));
  }
  rt::ThreadPool::DeviceTasks tasks;
  for (auto& inst : instances_) {
    DeployedInstance* raw = inst.get();
    tasks.emplace_back(raw->plan.device,
                       [this, raw](const rt::ScopedDevice& bound) {
                         return LoadOne(raw, bound);
                       });
  }
  std::vector<size_t> late;
  Status s =
      pool_->RunAllWithin(std::move(tasks), opts_.init_timeout_ms, &late);
  if (late.empty()) return s.ok() ? InitOnHosts() : s;
  std::string stuck;
  for (size_t i : late) stuck += (stuck.empty() ? "" : ", ") + InstanceName(i);
  return Abandon(Status::Timeout(
      "deploy: " + stuck + ": the UDF's Init did not return within " +
      std::to_string(opts_.init_timeout_ms) +
      " ms (Options::init_timeout_ms); its thread is left running, never "
      "joined, and the deployment is kept for the rest of the process"));
}

// Note [Failing a graph]
// A stage that cannot go on must not go quiet: its consumers, and in the end
// the fetcher, would wait for messages that never come (until their
// timeouts, or forever with -1). Two kinds of trouble cannot be turned into
// an error message for one transaction:
//   - a device of the graph is lost: its queues and instances are gone, and
//     with them whatever was on them;
//   - a runtime error inside the executor: an input queue that cannot be
//     read, an error message that cannot be allocated, or an output that
//     reached some consumers but not others (a node consuming both would
//     pair the next transactions wrongly from then on).
// The graph then fails as a whole, as a dataflow system tears down a graph
// whose actor died: every queue is closed with the reason, so blocked and
// later feeds and fetches return it (kDeviceLost for a lost device, the
// runtime's code otherwise) at once, and the caller removes the graph.
// Messages in flight are dropped with the queues; the error the caller gets
// is their report (invariant 4). What the graph already produced is not in
// flight: the graph's output queues keep their messages, and fetches take
// them before they get the error (a worker that answered calls 1 and 2 and
// died in 3 loses 3 alone, whether or not 1 and 2 were fetched yet). A lost
// device is the exception: its queues' memory is gone with it.
void Deployment::Fail(const Status& reason) {
  Status r = reason.ok() ? Status::Internal("graph failed") : reason;
  {
    std::lock_guard<std::mutex> lock(fail_mu_);
    if (!failure_.ok()) return;
    failure_ = r;
  }
  const bool keep_outputs = r.code() != StatusCode::kDeviceLost;
  for (size_t i = 0; i < queues_.size(); ++i) {
    if (!queues_[i]) continue;
    const bool output = i < plan_.queues.size() && plan_.queues[i].graph_output;
    queues_[i]->Close(r, /*keep_queued=*/keep_outputs && output);
  }
  CancelAllocWaits(r);
}

void Deployment::CancelAllocWaits(const Status& reason) {
  for (const auto& [d, g] : group_handles_) g->CancelWaits(reason);
}

services::AllocWait Deployment::FeedWait(int32_t timeout_ms) const {
  return services::AllocWait{timeout_ms, 2 * plan_.options.max_alloc_bytes};
}

Status Deployment::failure() const {
  std::lock_guard<std::mutex> lock(fail_mu_);
  return failure_;
}

Status Deployment::WatchDeviceLoss() {
  (void)Watch();
  rt::DeviceRuntime* runtime = svc_->runtime();
  std::vector<int32_t> devices = plan_.devices;
  const std::string graph = plan_.graph.name;
  loss_listener_ = runtime->AddDeviceLostListener([watch = watch_, devices,
                                                   graph](int32_t device) {
    if (std::find(devices.begin(), devices.end(), device) == devices.end()) {
      return;
    }
    std::lock_guard<std::mutex> lock(watch->mu);
    if (watch->owner == nullptr) return;
    watch->owner->Fail(
        Status::DeviceLost(Dev(device) + " of graph '" + graph + "' is lost"));
  });
  // A loss before the listener was in place fails the deployment now.
  for (int32_t d : devices) {
    rt::DeviceStats st;
    if (runtime->GetDeviceStats(d, &st).ok() && st.lost) {
      return Status::DeviceLost("deploy: " + Dev(d) + " is lost");
    }
  }
  return Status::OK();
}

Status Deployment::Undeploy() {
  std::lock_guard<std::mutex> lock(undeploy_mu_);
  if (abandoned_) {
    return Status::FailedPrecondition(
        "deploy: the deployment was abandoned (a UDF did not return); it is "
        "kept, not undeployed");
  }
  if (watch_) {
    svc_->runtime()->RemoveDeviceLostListener(loss_listener_);
    std::lock_guard<std::mutex> wl(watch_->mu);  // waits out a running one
    watch_->owner = nullptr;
  }
  deployed_ = false;
  Status first;
  auto note = [&first](const Status& s) {
    if (first.ok() && !s.ok()) first = s;
  };
  if (hosts_) hosts_->Closing();  // their sessions end as a whole, below
  rt::ThreadPool::DeviceTasks tasks;
  std::vector<size_t> unloading;  // instance index per task
  for (size_t i = 0; i < instances_.size(); ++i) {
    auto& inst = instances_[i];
    if (!inst->loaded) continue;
    unloading.push_back(i);
    DeployedInstance* raw = inst.get();
    tasks.emplace_back(
        raw->plan.device, [this, raw](const rt::ScopedDevice&) -> Status {
          raw->udf.reset();  // user destructors run bound to the device
          raw->loaded = false;
          Status s = svc_->runtime()->DriverCall(raw->plan.device,
                                                 rt::Op::kModelUnload);
          // A lost device took the model with it: nothing is left to unload.
          return s.IsDeviceLost() ? Status::OK() : s;
        });
  }
  std::vector<size_t> late;
  note(pool_->RunAllWithin(std::move(tasks), opts_.stop_timeout_ms, &late));
  if (!late.empty()) {
    std::string stuck;
    for (size_t t : late) {
      stuck += (stuck.empty() ? "" : ", ") + InstanceName(unloading[t]);
    }
    return Abandon(Status::Timeout(
        "undeploy: " + stuck + ": the UDF's destructor did not return within " +
        std::to_string(opts_.stop_timeout_ms) +
        " ms (Options::stop_timeout_ms); its thread is left running, never "
        "joined, and the deployment is kept for the rest of the process"));
  }
  instances_.clear();
  hosts_.reset();  // ends the sessions: each daemon unloads its instances
  tasks.clear();
  for (size_t i = 0; i < queue_ids_.size(); ++i) {
    if (queue_ids_[i] == 0) continue;
    uint32_t id = queue_ids_[i];
    tasks.emplace_back(
        plan_.queues[i].device,
        [this, id](const rt::ScopedDevice&) { return svc_->DestroyQueue(id); });
  }
  note(pool_->RunAll(std::move(tasks)));
  queue_ids_.clear();
  queues_.clear();
  tasks.clear();
  group_handles_.clear();  // the groups' memory goes with RetireGroup
  for (int32_t d : groups_) {
    tasks.emplace_back(d, [this, d](const rt::ScopedDevice&) -> Status {
      // Messages the caller still holds (fetched views) keep their group
      // alive; its memory returns when the last of them is released.
      Status s = svc_->RetireGroup(d, GroupName());
      return s.code() == StatusCode::kFailedPrecondition ? Status::OK() : s;
    });
  }
  note(pool_->RunAll(std::move(tasks)));
  groups_.clear();
  return first;
}

Status Deploy(const Plan& plan, services::ExchangeService* svc,
              const DeployOptions& options, std::unique_ptr<Deployment>* out) {
  std::unique_ptr<Deployment> d(new Deployment(plan, svc, options));
  Status s = d->ResolveFunctions();
  if (s.ok()) s = d->CreateGroups();
  if (s.ok()) s = d->OpenGroups();
  if (s.ok()) s = d->CreateQueues();
  // Outputs are wired before instances: each instance's Init may emit.
  if (s.ok() && options.outputs) options.outputs->Attach(d.get());
  if (s.ok()) s = d->OpenHosts();
  if (s.ok()) s = d->LoadInstances();
  d->model_holds_.clear();  // every instance has its model now
  if (s.ok()) s = d->WatchDeviceLoss();
  if (!s.ok()) {
    // Rollback: everything done so far, unless a thread still runs in it.
    if (!d->abandoned()) (void)d->Undeploy();
    if (d->abandoned()) {  // kept whole (Note [Abandoning a stuck deployment])
      if (options.on_abandon) {
        options.on_abandon(std::move(d));
      } else {
        (void)d.release();
      }
    }
    return s;
  }
  d->deployed_ = true;
  *out = std::move(d);
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow
