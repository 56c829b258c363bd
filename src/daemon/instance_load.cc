// InstanceHost::Load: a driver's instance made and Init'ed here, bound to
// its device (daemon/instance_host.h).
//
// Thread-safety: as InstanceHost's; the new instance enters the table
// only once its Init succeeded, so no other call reaches it before.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <thread>

#include "daemon/hosted_instance.h"
#include "daemon/instance_host.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "flow_func/udf_library.h"
#include "worker/wire.h"

namespace hflow::daemon {

namespace v1 = worker::v1;

namespace {

// The functions a Load names, their UDF libraries loaded from the paths
// the driver gave (which must exist on this host).
Status Funcs(const v1::Load& load, const std::string& what,
             std::vector<flow_func::FuncDesc>* out) {
  for (const v1::FuncDesc& w : load.funcs()) {
    if (w.library().empty()) {
      return Status::InvalidArgument(
          what + ": function '" + w.name() +
          "' comes from no UDF library (a built-in or a Python UDF), and "
          "only UDF libraries run on another host; place the node on the "
          "driver's host");
    }
    HFLOW_RETURN_IF_ERROR(
        flow_func::LoadUdfLibrary(w.library())
            .WithContext(what + ": the UDF library of function '" + w.name() +
                         "' (install it at the same path on every host, or "
                         "give deploy_res_path): "));
    flow_func::FuncDesc f;
    f.name = w.name();
    f.inputs_index.assign(w.inputs_index().begin(), w.inputs_index().end());
    f.outputs_index.assign(w.outputs_index().begin(), w.outputs_index().end());
    f.library = w.library();
    out->push_back(std::move(f));
  }
  return Status::OK();
}

// Where a hosted UDF's messages live: host memory the message owns, on
// 64-byte boundaries as a memory group's blocks are (a payload's
// alignment slack counts on it: MsgAllocator's Slack).
std::shared_ptr<flow_func::MsgAllocator> Allocator(const v1::Load& load,
                                                   int32_t device) {
  return std::make_shared<flow_func::MsgAllocator>(
      [device](uint64_t bytes, int32_t, services::MbufPtr* out) -> Status {
        constexpr uint64_t kAlign = 64;
        const uint64_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
        void* p = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
        if (p == nullptr) {
          return Status::OutOfMemory("hflowd: a message of " +
                                     std::to_string(bytes) + " bytes");
        }
        std::shared_ptr<void> block(p, std::free);
        *out = services::MakeHostMbuf(device, p, bytes, std::move(block));
        return Status::OK();
      },
      device,
      flow_func::MsgLimits{load.node(), load.max_message_bytes(),
                           load.alloc_timeout_ms()});
}

// The instance of `load` made in `h` and Init'ed, on its thread.
Status Create(const v1::Load& load, InstanceHost::Hosted* h,
              const rt::ScopedDevice& bound) {
  std::vector<flow_func::FuncDesc> funcs;
  HFLOW_RETURN_IF_ERROR(Funcs(load, h->What(), &funcs));
  flow_func::InstanceEnv env;
  env.node = load.node();
  env.work_path = load.work_path();
  env.device = h->device;
  env.instance_id = load.instance_id();
  env.instance_num = load.instance_num();
  env.input_num = load.input_num();
  env.output_num = load.output_num();
  env.balance = static_cast<flow_func::BalanceKind>(load.balance());
  env.error_tag = load.error_tag();
  HFLOW_RETURN_IF_ERROR(worker::AttrsFromWire(load.attrs(), &env.attrs)
                            .WithContext(h->What() + ": "));
  h->allocator = Allocator(load, h->device);
  env.allocator = h->allocator;
  // Outputs, raises and the exception travel with the Proc's reply; a UDF
  // setting an output outside Proc (from Init, or a thread of its own) has
  // no reply to ride on here.
  env.output = [h](uint32_t index,
                   std::shared_ptr<flow_func::MbufFlowMsg> msg) -> int32_t {
    if (!h->in_proc || std::this_thread::get_id() != h->caller) {
      std::fprintf(stderr,
                   "hflowd: node '%s' set an output outside Proc, which a "
                   "node on another host cannot deliver yet\n",
                   h->node.c_str());
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    h->outputs.emplace_back(index, msg->mbuf());
    return FlowFunc::FLOW_FUNC_SUCCESS;
  };
  env.raise = [h](int32_t code, uint64_t user_context_id) {
    if (!h->in_proc || std::this_thread::get_id() != h->caller) return;
    v1::Raised r;
    r.set_code(code);
    r.set_user_context_id(user_context_id);
    h->raised.push_back(std::move(r));
  };
  env.get_exception = [h](int32_t* code, uint64_t* user_context_id) {
    if (!h->has_pending) return false;
    *code = h->pending.code();
    *user_context_id = h->pending.user_context_id();
    return true;
  };
  for (const flow_func::FuncDesc& f : funcs) {
    h->inputs_of.push_back(f.inputs_index.empty() ? load.input_num()
                                                  : f.inputs_index.size());
  }
  h->caller = std::this_thread::get_id();  // its thread, for its life
  HFLOW_RETURN_IF_ERROR(flow_func::UdfInstance::Create(
      std::move(funcs), std::move(env), &h->udf));
  return h->udf->Init(bound);
}

}  // namespace

// Everything of an instance runs on its own thread, bound to its device
// from the start: the library's static initialisers, the UDF's
// constructor and Init included. BeginLoad checks the Load, starts the
// thread and hands it the load; EndLoad waits for it and enters the
// instance in the table, or unloads it.
Status InstanceHost::BeginLoad(const Key& key, const v1::Load& load,
                               Loading* out) {
  auto h = std::make_shared<Hosted>();
  h->key = key;
  h->device = load.device();
  h->node = load.node();
  if (std::find(devices_.begin(), devices_.end(), h->device) ==
      devices_.end()) {
    return Status::InvalidArgument(
        h->What() + ": this hflowd serves devices " + Devices() +
        " only (--devices); place the node on one of them, or start "
        "hflowd with the devices the cluster config lists for its node");
  }
  if (key.second == 0) {
    return Status::InvalidArgument(h->What() +
                                   ": a Load must name its instance (not 0)");
  }
  {
    // Counted from here to EndLoad's end: a session's end waits for it
    // (Note [A session's end waits for its loads]).
    std::lock_guard<std::mutex> l(mu_);
    if (ended_.count(key.first) != 0) {
      return Status::FailedPrecondition("hflowd: session " + key.first +
                                        " has ended; deploy the graph again");
    }
    if (hosted_.count(key) != 0) {
      return Status::AlreadyExists(h->What() + ": instance " +
                                   std::to_string(key.second) + " of session " +
                                   key.first + " is loaded already");
    }
    ++loading_[key.first];
  }
  try {
    h->thread = std::make_unique<InstanceThread>(
        &contexts_, h->device, "hflowd-i" + std::to_string(key.second));
  } catch (const std::system_error& e) {
    LoadEnded(key.first);
    return Status::OutOfMemory(h->What() + ": no thread for the instance (" +
                               e.what() + "); this host runs too many");
  }
  Hosted* raw = h.get();
  h->thread->Post([&load, raw](const rt::ScopedDevice& bound) {
    return Create(load, raw, bound);
  });
  out->key = key;
  out->h = std::move(h);
  return Status::OK();
}

Status InstanceHost::EndLoad(Loading* loading, v1::Done* done) {
  std::shared_ptr<Hosted> h = std::move(loading->h);
  const Key key = loading->key;
  struct Ended {  // however this returns
    InstanceHost* host;
    const std::string& session;
    ~Ended() { host->LoadEnded(session); }
  } ended_guard{this, key.first};
  Status s = h->thread->Wait();
  *done = ToDone(s.WithContext(h->What() + ": "));
  if (!s.ok()) {
    Unload({std::move(h)});  // its destructors run now, bound
    return Status::OK();
  }
  std::unique_lock<std::mutex> l(mu_);
  if (ended_.count(key.first) != 0 || !hosted_.emplace(key, h).second) {
    const bool ended = ended_.count(key.first) != 0;
    l.unlock();
    Unload({std::move(h)});  // its destructors run now, bound
    if (ended) {
      return Status::FailedPrecondition("hflowd: session " + key.first +
                                        " ended while its Load ran");
    }
    return Status::AlreadyExists("hflowd: instance " +
                                 std::to_string(key.second) + " of session " +
                                 key.first + " loaded twice at once");
  }
  l.unlock();
  log_("loaded node '" + h->node + "' (instance " + std::to_string(key.second) +
       " of session " + key.first + ") on device " + std::to_string(h->device));
  return Status::OK();
}

Status InstanceHost::Load(const Key& key, const v1::HostMessage& m,
                          net::InstanceReply* reply) {
  Loading loading;
  HFLOW_RETURN_IF_ERROR(BeginLoad(key, m.load(), &loading));
  v1::WorkerMessage out;
  out.set_id(m.id());
  HFLOW_RETURN_IF_ERROR(EndLoad(&loading, out.mutable_done()));
  Reply(out, reply);
  return Status::OK();
}

// Note [Loads side by side]
// A deployment places many instances on a host; one round trip and one
// load after the other would make its build as slow as their sum. The
// driver sends all of a host's Loads in one Batch (each naming its
// instance), and the daemon starts every one on its own thread before it
// waits for any, so their libraries, constructors and Inits run side by
// side (kLoadsAtOnce at a time: a batch of thousands must not start
// thousands of user Inits, or threads, at once). Each Load has its own
// answer, in order; one that fails (or is refused) fails alone, and the
// driver's rollback ends the session, which unloads the rest.
Status InstanceHost::LoadBatch(const std::string& session,
                               const v1::Batch& batch,
                               net::InstanceReply* reply) {
  const int n = batch.msgs_size();
  std::vector<Loading> loading(n);
  std::vector<v1::WorkerMessage> outs(n);
  // At most kLoadsAtOnce user Inits at a time, however large the batch.
  for (int first = 0; first < n; first += kLoadsAtOnce) {
    const int end = std::min(n, first + kLoadsAtOnce);
    for (int i = first; i < end; ++i) {
      const v1::HostMessage& one = batch.msgs(i);
      outs[i].set_id(one.id());
      const Key key(session, one.load().hosted_instance());
      Status s = BeginLoad(key, one.load(), &loading[i]);
      if (!s.ok()) *outs[i].mutable_done() = ToDone(s);
    }
    for (int i = first; i < end; ++i) {
      if (loading[i].h == nullptr) continue;  // refused above
      Status s = EndLoad(&loading[i], outs[i].mutable_done());
      if (!s.ok()) *outs[i].mutable_done() = ToDone(s);
    }
  }
  for (const v1::WorkerMessage& out : outs) {
    reply->replies.push_back(out.SerializeAsString());
  }
  return Status::OK();
}

}  // namespace hflow::daemon
