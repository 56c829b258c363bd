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
  std::unique_lock<std::shared_mutex> life(life_mu_);
  if (deployment_) return Status::OK();
  if (removed_) return Status::NotFound(Where() + "was removed");
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
  size_t targets = 0;
  for (const auto* r : input_routes_) targets += r == nullptr ? 0 : r->size();
  multi_target_ = targets > 1;
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
  matcher_ = std::make_unique<session::OutputMatcher>(
      env_->svc.get(), output_queues_, std::move(names), std::move(hold_limit));
  runner_ = std::make_unique<exec::GraphRunner>(
      deployment_.get(), router_.get(), env_->options.exec_threads,
      env_->options.exec_handoff);
  runner_->Start();
  return Status::OK();
}

Status GraphState::CheckInputs(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != def_.inputs.size()) {
    std::string names;
    for (const auto& n : def_.inputs) names += (names.empty() ? "" : ", ") + n;
    return Status::InvalidArgument(
        Where() + "FeedData got " + std::to_string(inputs.size()) +
        " tensors for " + std::to_string(def_.inputs.size()) + " inputs (" +
        names + ")");
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    size_t es = DataTypeSize(t.dtype);
    int64_t n = flow_func::ElementCount(t.shape);
    if (es == 0 || n < 0 || uint64_t(n) * es != t.data.size()) {
      return Status::InvalidArgument(
          Where() + "input " + std::to_string(k) + " ('" + def_.inputs[k] +
          "'): " + std::to_string(t.data.size()) +
          " data bytes do not match its shape and dtype " +
          DataTypeName(t.dtype));
    }
    const uint64_t max = env_->options.max_message_bytes;
    if (t.data.size() > max) {
      return Status::InvalidArgument(
          Where() + "input " + std::to_string(k) + " ('" + def_.inputs[k] +
          "'): " + std::to_string(t.data.size()) +
          " bytes exceed the max message size of " + std::to_string(max) +
          " bytes; raise Options::max_message_bytes (hflow run "
          "--max-message-bytes)");
    }
  }
  return Status::OK();
}

int32_t GraphState::InputDevice(size_t k, uint64_t trans) const {
  return input_routes_[k] != nullptr && !input_routes_[k]->empty()
             ? router_->FirstDeviceOf(*input_routes_[k], trans)
             : input_devices_[k];
}

// A transaction's inputs made on one device hold their blocks until all of
// them are in, so together they must fit in what a feed may use of that
// device's pool: the pool less the reserve a feed leaves free (Note
// [Waiting for memory] in services/memory_group.cc). More could never fit,
// and would wait forever with a timeout of -1: it is refused at once.
Status GraphState::CheckFeedFits(const std::vector<Tensor>& inputs,
                                 uint64_t trans) const {
  const uint64_t pool = env_->options.mbuf_pool_bytes;
  const uint64_t reserve = deployment_->FeedWait(-1).keep_free;
  const uint64_t room = pool > reserve ? pool - reserve : 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (input_devices_[k] < 0) continue;
    const int32_t d = InputDevice(k, trans);
    uint64_t sum = 0;
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (input_devices_[j] >= 0 && InputDevice(j, trans) == d) {
        sum += inputs[j].data.size();
      }
    }
    if (sum > room) {
      return Status::InvalidArgument(
          Where() + "FeedData: transaction " + std::to_string(trans) +
          "'s inputs on device " + std::to_string(d) + " need " +
          std::to_string(sum) +
          " bytes together, more than a feed may use "
          "of its message pool (" +
          std::to_string(room) + " of " + std::to_string(pool) +
          " bytes; two largest messages stay free for "
          "the nodes): raise Options::mbuf_pool_bytes (--mbuf-pool-bytes)");
    }
  }
  return Status::OK();
}

Status GraphState::MakeInputMbuf(size_t k, const Tensor& t,
                                 const FlowInfo& info, int32_t timeout_ms,
                                 uint64_t trans, services::MbufPtr* out) {
  if (input_devices_[k] < 0) return Status::OK();  // an unused input
  // Note [Feed onto the replica]
  // An input consumed by a replicated node used to be made on the first
  // replica's device and copied to the others' (3 of 4 messages with four
  // replicas): an allocation, a device-to-device copy and a release more
  // per message. The transaction id decides the replica before the message
  // exists, so it is made on that replica's device, as a real host would
  // DMA straight to the device that consumes it. Bound here, so the
  // allocation and the write below make no switch of their own.
  const int32_t device = InputDevice(k, trans);
  rt::ScopedDevice bound(env_->contexts.get(), device);
  HFLOW_RETURN_IF_ERROR(bound.status());
  services::ExchangeService* svc = env_->svc.get();
  services::MemoryGroup* g = deployment_->Group(device);
  // A full pool is waited out (Note [Waiting for memory] in
  // services/memory_group.cc): kTimeout when it stays full, and nothing
  // was fed.
  const services::AllocWait wait = deployment_->FeedWait(timeout_ms);
  Status s = g != nullptr
                 ? svc->AllocMbuf(*g, "deployer", t.data.size(), out, wait)
                 : svc->AllocMbuf(device, deployment_->GroupName(), "deployer",
                                  t.data.size(), out, wait);
  if (!s.ok()) {
    return s.WithContext(Where() + "FeedData: input " + std::to_string(k) +
                         " ('" + def_.inputs[k] + "'): ");
  }
  if (!t.data.empty()) {
    HFLOW_RETURN_IF_ERROR(svc->WriteMbuf(*out, t.data.data(), t.data.size()));
  }
  services::MbufHead& h = (*out)->head();
  h.msg_type = static_cast<uint16_t>(FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA);
  h.dtype = static_cast<int32_t>(t.dtype);
  h.shape = t.shape;
  h.trans_id = trans;
  h.flags = info.flags;
  h.start_time = info.start_time;
  h.end_time = info.end_time;
  return h.SetUserData(info.user_data.data(), info.user_data.size());
}

Status GraphState::CheckUsable() const {
  if (removed_) return Status::NotFound(Where() + "was removed");
  if (!deployment_) {
    return Status::FailedPrecondition(Where() + "not built; call BuildGraph");
  }
  return Status::OK();
}

Status GraphState::CheckFeed(const std::vector<Tensor>& inputs,
                             const FlowInfo& info) const {
  HFLOW_RETURN_IF_ERROR(CheckInputs(inputs));
  if (info.user_data.size() > services::kMaxUserData) {
    return Status::InvalidArgument(Where() + "user data over 64 bytes");
  }
  return Status::OK();
}

// Bound once per call, the service calls find their device bound (usually
// all inputs live on one device); the caller's binding comes back when the
// call returns.
void GraphState::BindFeed(std::optional<rt::ScopedDevice>* bound) {
  for (int32_t d : input_devices_) {
    if (d >= 0) {
      bound->emplace(env_->contexts.get(), d);
      return;
    }
  }
}

void GraphState::BindFetch(std::optional<rt::ScopedDevice>* bound) {
  if (!output_queues_.empty()) {
    bound->emplace(env_->contexts.get(), output_queues_[0]->device());
  }
}

Status GraphState::Feed(const std::vector<Tensor>& inputs, const FlowInfo& info,
                        int32_t timeout_ms) {
  std::shared_lock<std::shared_mutex> life(life_mu_);
  HFLOW_RETURN_IF_ERROR(CheckUsable());
  HFLOW_RETURN_IF_ERROR(CheckFeed(inputs, info));
  // All inputs of one transaction are routed together, so concurrent
  // feeders never interleave their inputs.
  std::lock_guard<std::mutex> lock(feed_mu_);
  std::optional<rt::ScopedDevice> bound;
  BindFeed(&bound);
  return FeedLocked(inputs, info, timeout_ms);
}

Status GraphState::FeedLocked(const std::vector<Tensor>& inputs,
                              const FlowInfo& info, int32_t timeout_ms) {
  uint64_t trans =
      info.transaction_id != 0 ? info.transaction_id : next_trans_.fetch_add(1);
  const auto t0 = timeout_ms > 0 ? Clock::now() : Clock::time_point{};
  if (inputs.size() > 1) HFLOW_RETURN_IF_ERROR(CheckFeedFits(inputs, trans));
  MbufSlots slots(inputs.size());
  services::MbufPtr* mbufs = slots.data();
  for (size_t k = 0; k < inputs.size(); ++k) {
    HFLOW_RETURN_IF_ERROR(MakeInputMbuf(
        k, inputs[k], info, Remaining(timeout_ms, t0), trans, &mbufs[k]));
  }
  timeout_ms = Remaining(timeout_ms, t0);
  if (multi_target_) return FeedWhole(mbufs, inputs.size(), trans, timeout_ms);
  // At most one queue to fill (inputs nothing consumes are skipped).
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!mbufs[k] || input_routes_[k] == nullptr) continue;
    Status s = router_->RouteTo(*input_routes_[k], mbufs[k], timeout_ms);
    if (!s.ok()) return s.WithContext(Where() + "FeedData: ");
  }
  return Status::OK();
}

// Note [A transaction goes in whole]
// A transaction that reaches some of its queues but not others breaks the
// graph for good: a node pairing its inputs waits for the missing one while
// it sets aside every later message of the others, and graph outputs
// fetched together pair one transaction's output with the next one's (more
// so when the caller feeds the transaction again). So a feed with several
// target queues (several inputs, or one input for several nodes) first
// makes every copy across devices, then waits until every target queue has
// room, and only then puts the messages in: a timeout or a full memory
// group leaves nothing behind, and the caller may feed again. The room
// stays because only this feeder adds to these queues: feed_mu_ orders
// feeders, validation makes every graph output a node output (so graph
// inputs feed node-input queues only), executors deliver node outputs only,
// and a fetch's PutBack and DeliverException touch output queues only.
// Every target must have room at once, so a graph whose node drains one
// input only once another input got the same transaction (a batching input
// next to a plain one) needs queues deep enough for that. An enqueue that
// still fails part way (a queue closed by a lost device, a runtime error)
// fails the graph as a whole (Note [Failing a graph] in deployer.cc).
Status GraphState::FeedWhole(services::MbufPtr* mbufs, size_t n, uint64_t trans,
                             int32_t timeout_ms) {
  const auto t0 = timeout_ms > 0 ? Clock::now() : Clock::time_point{};
  exec::Router::Prepared sends;
  for (size_t k = 0; k < n; ++k) {
    if (!mbufs[k] || input_routes_[k] == nullptr) continue;
    Status s = router_->Prepare(*input_routes_[k], mbufs[k], &sends,
                                Remaining(timeout_ms, t0));
    if (!s.ok()) return s.WithContext(Where() + "FeedData: ");
  }
  for (const auto& [qi, m] : sends) {
    Status s = deployment_->queue(qi)->WaitForRoom(Remaining(timeout_ms, t0));
    if (!s.ok()) return s.WithContext(Where() + "FeedData: ");
  }
  for (size_t i = 0; i < sends.size(); ++i) {
    Status s = router_->Deliver(sends[i].first, sends[i].second,
                                Remaining(timeout_ms, t0));
    if (s.ok()) continue;
    if (i == 0) return s.WithContext(Where() + "FeedData: ");
    s = s.WithContext(Where() + "FeedData: transaction " +
                      std::to_string(trans) +
                      " went in part way, so the graph fails: ");
    deployment_->Fail(s);
    return s;
  }
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

Status GraphState::Reports(std::vector<DeviceReport>* out) {
  *out = session::RuntimeReports(*env_);
  CountDeployment(out);
  return Status::OK();
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
      r.submodels += i.device == r.id;
    for (const auto& q : deployment_->plan().queues)
      r.queues += q.device == r.id;
  }
}

}  // namespace hflow
