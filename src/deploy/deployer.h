// Deployer: turns a Plan into running state on the devices. It resolves every
// node's functions (builds and loads UDF libraries, checks names and arity)
// on the host, then, on a named pool whose tasks carry their device, creates
// a memory group per device, a queue per edge, and one UDF instance per
// (node, replica): model load + Init. Undeploy unloads instances and
// destroys queues in parallel. A failure anywhere rolls back everything done
// so far and returns the first error, naming the node and device. An Init
// (or a UDF destructor on undeploy) that does not return in time leaves
// the deployment abandoned: kept whole, never destroyed (Note [Abandoning a
// stuck deployment] in deployer.cc).
//
// Messages are routed by the exec layer (exec::Router), which Deploy asks,
// through DeployOptions::outputs, for each instance's output function
// before the instance's Init runs.
//
// Thread-safety: Deploy is reentrant. A Deployment's accessors, Fail and
// CancelAllocWaits may be called from many threads; Undeploy must not race
// with users that have not finished (the exec layer stops its threads
// first).
#ifndef HFLOW_DEPLOY_DEPLOYER_H_
#define HFLOW_DEPLOY_DEPLOYER_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "deploy/planner.h"
#include "deploy/remote_hosts.h"
#include "flow_func/udf_builder.h"
#include "flow_func/udf_instance.h"
#include "rt/device_binding.h"
#include "rt/thread_pool.h"
#include "services/exchange_service.h"
#include "worker/remote_config.h"

namespace hflow {
namespace worker {
class SharedWorker;
}  // namespace worker
namespace deploy {

class Deployment;
struct DeployedInstance;

// How the outputs of a deployment's UDF instances reach their consumers.
// Declared here and implemented above (exec::Router), so that Deploy can
// wire each instance's outputs before its Init runs without deploy knowing
// how messages are routed.
class OutputWiring {
 public:
  using OutputFn =
      std::function<int32_t(uint32_t, std::shared_ptr<flow_func::MbufFlowMsg>)>;
  virtual ~OutputWiring() = default;
  // Called once by Deploy, after the queues and groups exist and before any
  // instance is created.
  virtual void Attach(Deployment* deployment) = 0;
  // The output function (InstanceEnv::output) of `inst`, whose UDF has
  // `udf_outputs` outputs. Called on deploy pool threads, concurrently.
  virtual OutputFn OutputOf(const DeployedInstance& inst,
                            uint32_t udf_outputs) = 0;
};

struct DeployOptions {
  int pool_threads = 4;
  flow_func::UdfBuildOptions build;
  int32_t event_timeout_ms = 60000;
  // How long UDF allocations and executor copies wait for pool memory
  // (Options::alloc_timeout_ms).
  int32_t alloc_timeout_ms = 10000;
  // The exception channel of the UDFs (exec layer): RaiseException and
  // GetException of every instance.
  std::function<void(const std::string& node, int32_t code, uint64_t ctx)>
      on_exception;
  std::function<bool(int32_t* code, uint64_t* ctx)> get_exception;
  // How long Deploy waits for the instances' Init, and Undeploy for their
  // destructors (-1: forever).
  int32_t init_timeout_ms = -1;
  int32_t stop_timeout_ms = -1;
  // Takes a deployment that Deploy had to abandon (an Init did not return
  // in time), to keep it for the rest of the process; without it, Deploy
  // leaks it.
  std::function<void(std::unique_ptr<class Deployment>)> on_abandon;
  // Wires the instances' outputs; the deployment keeps it as long as it
  // lives (an abandoned deployment's instances may still emit). Null: the
  // UDFs' outputs are not supported (a deployment nothing executes).
  std::shared_ptr<OutputWiring> outputs;
  // Worker processes (Note [heavy_load] in deployment_remote.cc):
  // instances of heavy_load nodes always run in one of their own, and with
  // isolate_udfs (Options::udf_isolation) every node whose functions come
  // from UDF libraries, in its device's shared one. `worker` gives the
  // executable (empty: FindWorkerBinary) and the segment size; the timeouts
  // above apply to the workers too.
  bool isolate_udfs = false;
  worker::RemoteConfig worker;
};

struct DeployedInstance {
  InstancePlan plan;
  std::vector<flow_func::FuncDesc> funcs;  // functions of the node's pp
  std::unique_ptr<flow_func::Instance> udf;
  // Input queue per node input (on this instance's device).
  std::vector<std::shared_ptr<services::DeviceQueue>> inputs;
  bool loaded = false;  // model loaded on the device (unload on undeploy)
};

class Deployment {
 public:
  ~Deployment();
  Deployment(const Deployment&) = delete;
  Deployment& operator=(const Deployment&) = delete;

  const Plan& plan() const { return plan_; }
  const DeployOptions& options() const { return opts_; }
  services::ExchangeService* exchange() const { return svc_; }
  const std::vector<std::unique_ptr<DeployedInstance>>& instances() const {
    return instances_;
  }
  // The queue of plan().queues[index].
  const std::shared_ptr<services::DeviceQueue>& queue(size_t index) const {
    return queues_[index];
  }
  // Memory group (name) messages on `device` come from.
  const std::string& GroupName() const;
  // A data-less message carrying a failure (ret code `rc`) of transaction
  // `trans_id`, allocated on `device`: how failures and caught exceptions
  // travel to the fetcher.
  // `error_node` is the failing node's tag (ErrorNodeTag).
  Status AllocErrorMbuf(int32_t device, int32_t rc, uint64_t trans_id,
                        uint32_t error_node, services::MbufPtr* out) const;
  // MbufHead::error_node for `node`: 1 + its index in plan().graph.nodes
  // (0 when the graph has no such node).
  uint32_t ErrorNodeTag(std::string_view node) const;
  // The registry the deployment binds through: its exchange service's (the
  // session's one).
  rt::DeviceContexts* contexts() const { return svc_->contexts(); }
  // The graph's memory group on `device` (null if the graph has none there).
  services::MemoryGroup* Group(int32_t device) const;

  // Fails the graph (Note [Failing a graph] in deployer.cc): closes every
  // queue with `reason`, so feeds, fetches and executors return it at once
  // instead of waiting for messages that will never come; the outputs the
  // graph produced before stay fetchable first, except when `reason` is a
  // lost device (kDeviceLost), whose queues are gone with it. Called when a
  // device of the graph is lost, when a worker process dies without a
  // restart, and by executors on a runtime error they cannot turn into an
  // error message. Idempotent (the first reason sticks); thread-safe; not
  // after Undeploy has started.
  void Fail(const Status& reason);
  // Ends every wait for pool memory on the graph's groups with `reason`
  // (Fail does it too): called when the graph stops.
  void CancelAllocWaits(const Status& reason);
  // How a feed of the graph waits for pool memory within `timeout_ms`: it
  // leaves two largest messages free (Note [Waiting for memory] in
  // services/memory_group.cc).
  services::AllocWait FeedWait(int32_t timeout_ms) const;
  // The first reason Fail got; OK while the graph has not failed.
  Status failure() const;
  // Resets every UDF instance and reopens the queues, empty, forgetting a
  // failure (Note [Resetting a graph] in deployment_reset.cc); `recreated`
  // (may be null) counts the instances made anew. Only while nothing runs
  // the graph (the exec layer's runner is stopped). A graph that lost a
  // device is refused; a failed reset fails the graph.
  Status Reset(size_t* recreated);

  // Unloads every instance and destroys queues and groups, in parallel on
  // the deploy pool. Idempotent; returns the first error. A UDF destructor
  // that does not return within stop_timeout_ms makes it return a timeout
  // naming the node and abandon the deployment: its caller must then keep
  // it (never destroy it).
  Status Undeploy();
  bool deployed() const { return deployed_; }
  // Whether a thread of this deployment was given up on (Init or a
  // destructor did not return): the object must outlive the process.
  bool abandoned() const { return abandoned_; }
  // Marks the deployment abandoned (by its own wait, or because an
  // executor thread was left running in it): the deploy pool's threads are
  // given up on (Note [Abandoning a stuck deployment]), nothing is freed,
  // and the object must outlive the process. Returns `why`.
  Status Abandon(Status why);

 private:
  friend Status Deploy(const Plan&, services::ExchangeService*,
                       const DeployOptions&, std::unique_ptr<Deployment>*);
  Deployment(Plan plan, services::ExchangeService* svc, DeployOptions opts);

  Status ResolveFunctions();
  Status CreateGroups();
  Status OpenGroups();
  Status CreateQueues();
  Status LoadInstances();
  // "node 'n' replica r on device d" of instance `index`.
  std::string InstanceName(size_t index) const;

  // A pool task: `bound` is the pool's binding of the instance's device.
  Status LoadOne(DeployedInstance* inst, const rt::ScopedDevice& bound);
  flow_func::InstanceEnv MakeEnv(const DeployedInstance& inst);
  // Whether `inst` runs in a worker; `*own`: in one of its own
  // (heavy_load), not its device's shared one.
  bool Isolated(const DeployedInstance& inst, bool* own = nullptr) const;
  Status CreateRemote(const DeployedInstance& inst, bool own,
                      std::unique_ptr<flow_func::Instance>* out);
  // The worker seat an isolated instance of `device` joins: the device's
  // shared one for its kind of worker (`launcher`: empty for
  // hflow-worker), or one of its own.
  Status SeatFor(int32_t device, bool own,
                 const std::vector<std::string>& launcher,
                 std::shared_ptr<worker::SharedWorker>* out);
  // Starts failing the graph when one of its devices is lost.
  Status WatchDeviceLoss();
  // Connects to the hosts of the plan's remote instances (none: nothing).
  Status OpenHosts();
  Status CreateOnHost(const DeployedInstance& inst,
                      std::unique_ptr<flow_func::Instance>* out);
  // Init's the instances CreateOnHost made, each host's in one call.
  Status InitOnHosts();

 public:
  // Appends the devices of the other hosts the plan uses, as their
  // daemons count them, with this deployment's submodels there (none
  // without other hosts). Thread-safety: any thread while deployed.
  Status RemoteReports(std::vector<DeviceReport>* out) const;

 private:
  Plan plan_;
  services::ExchangeService* svc_;
  DeployOptions opts_;
  std::unique_ptr<rt::ThreadPool> pool_;
  std::map<std::string, std::vector<flow_func::FuncDesc>> funcs_;  // by node
  // Parsed models the instances' loads share; dropped once they are loaded.
  std::vector<std::shared_ptr<void>> model_holds_;
  std::vector<int32_t> groups_;  // devices with a group
  std::map<int32_t, std::shared_ptr<services::MemoryGroup>> group_handles_;
  std::vector<uint32_t> queue_ids_;
  std::vector<std::shared_ptr<services::DeviceQueue>> queues_;
  std::vector<std::unique_ptr<DeployedInstance>> instances_;
  std::string group_name_;
  uint64_t id_ = 0;
  std::atomic<bool> deployed_{false};
  bool abandoned_ = false;
  std::mutex undeploy_mu_;
  // The device-loss listener reaches the deployment through `watch_`, whose
  // owner Undeploy clears (under its mutex) before anything is torn down.
  struct LossWatch {
    std::mutex mu;
    Deployment* owner = nullptr;
  };
  std::shared_ptr<LossWatch> watch_;  // made once (Watch), under watch_mu_
  std::mutex watch_mu_;
  // The watch the device-loss listener and the workers' death reports
  // reach the deployment through (made on first use: instances load on
  // several pool threads at once).
  std::shared_ptr<LossWatch> Watch();
  int loss_listener_ = 0;
  // The shared worker of each device and kind (its instances keep it
  // alive).
  std::mutex seats_mu_;
  std::map<std::pair<int32_t, std::vector<std::string>>,
           std::weak_ptr<worker::SharedWorker>>
      seats_;
  mutable std::mutex fail_mu_;
  Status failure_;  // guarded by fail_mu_
  // The other hosts the plan places instances on (OpenHosts); goes after
  // the instances, which end the session on each daemon.
  std::unique_ptr<RemoteHosts> hosts_;
};

Status Deploy(const Plan& plan, services::ExchangeService* svc,
              const DeployOptions& options, std::unique_ptr<Deployment>* out);

// Where libhflow_model.so is ($HFLOW_MODEL_LIBRARY, else beside libhflow);
// NotFound saying how to get it.
Status FindModelLibrary(std::string* path);

// A model node (NodeDef::model with a graph file): its model checked by the
// model library on the host (file, compile config, operators, input and
// output counts against the node's), and `out` the model UDF to run.
// `hold` (may be null) keeps the parsed model for the instances' loads
// (Note [One parse per build] in src/model/loaded_model.h).
Status ResolveModelNode(const GraphDef& graph, const NodeDef& n,
                        flow_func::FuncDesc* out,
                        std::shared_ptr<void>* hold = nullptr);

// The models a node's UDF invokes (NodeDef::invoked), each checked by the
// model library on the host, as ResolveModelNode checks a model node's;
// `holds` (may be null) keeps the parsed models for the instances' loads.
Status ResolveInvokedModels(const GraphDef& graph, const NodeDef& n,
                            std::vector<std::shared_ptr<void>>* holds);

// Host-side checks of every node's functions: compile configs load, UDF
// libraries build and load, names are registered, arity matches. Fills the
// functions of each node (by node name).
// `holds` (may be null) keeps what the instances' loads reuse (the parsed
// models of model nodes) until the caller lets go.
Status ResolveFunctions(
    const GraphDef& graph, const flow_func::UdfBuildOptions& build,
    std::map<std::string, std::vector<flow_func::FuncDesc>>* out,
    std::vector<std::shared_ptr<void>>* holds = nullptr);

}  // namespace deploy
}  // namespace hflow

#endif  // HFLOW_DEPLOY_DEPLOYER_H_
