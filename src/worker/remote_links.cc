// RemoteInstance's links (remote_instance.h): the outputs it hands
// straight to another instance of its worker (Note [Chains in a worker] in
// worker_chain.cc), the instances they reach, and the death report that
// names the one a chained call was in (Note [The call page] in segment.h).
//
// Thread-safety: LinkOutput runs before the first Proc (GraphRunner's
// Start); the calls and the seat's death report then only read the links.
#include <algorithm>
#include <string>

#include "util/crash_report.h"
#include "worker/remote_instance.h"

namespace hflow {
namespace worker {

bool RemoteInstance::LinkOutput(uint32_t output, flow_func::Instance* to,
                                size_t func) {
  auto* r = dynamic_cast<RemoteInstance*>(to);
  if (!chains_ || r == nullptr || r == this || r->seat_ != seat_ ||
      r->env_.device != env_.device || func >= r->funcs_.size()) {
    return false;
  }
  std::vector<Link> before = links_;
  links_.erase(
      std::remove_if(links_.begin(), links_.end(),
                     [&](const Link& l) { return l.output == output; }),
      links_.end());
  links_.push_back(Link{output, r, uint32_t(func)});
  // The current worker learns it now; a new one with its Load.
  std::shared_ptr<const Life> p = seat_->Current();
  if (p && p->process->alive() && loaded_.load() == p->number) {
    v1::HostMessage req = Request();
    v1::Load load;
    AddLinks(&load);
    *req.mutable_links()->mutable_links() = load.links();
    v1::WorkerMessage reply;
    Status s = p->process->Call(&req, &reply, config().init_timeout_ms,
                                "linking outputs");
    if (s.ok() && reply.done().code() != 0) {
      s = Status(static_cast<StatusCode>(reply.done().code()),
                 reply.done().message());
    }
    if (!s.ok()) {
      links_ = std::move(before);
      return false;
    }
  }
  linked_nodes_.clear();
  for (const Link& l : links_) {
    linked_nodes_ +=
        (linked_nodes_.empty() ? "'" : ", '") + l.to->env_.node + "'";
  }
  return true;
}

void RemoteInstance::AddLinks(v1::Load* load) const {
  for (const Link& l : links_) {
    v1::Link* w = load->add_links();
    w->set_output(l.output);
    w->set_slot(l.to->slot_);
    w->set_func(l.func);
  }
}

const RemoteInstance* RemoteInstance::Downstream(uint32_t slot,
                                                 int depth) const {
  if (depth > 64) return nullptr;  // a cycle of links (never made)
  for (const Link& l : links_) {
    if (l.to->slot_ == slot) return l.to;
    if (const RemoteInstance* r = l.to->Downstream(slot, depth + 1)) return r;
  }
  return nullptr;
}

std::string RemoteInstance::CallReport() const {
  std::shared_ptr<const Life> p = seat_->Current();
  const CallWord* w =
      p && p->segment && phase_.load() == uint32_t(util::UdfPhase::kProc)
          ? CallWordOf(p->segment->base(), slot_)
          : nullptr;
  const uint32_t slot =
      w == nullptr ? 0 : __atomic_load_n(&w->slot, __ATOMIC_ACQUIRE);
  const RemoteInstance* by = slot == 0 ? nullptr : Downstream(slot);
  if (by == nullptr) return Name() + " " + Doing();
  return by->Name() + " in Proc of transaction " +
         std::to_string(__atomic_load_n(&w->trans, __ATOMIC_RELAXED)) +
         " (fed by " + Name() + " in the worker)";
}

}  // namespace worker
}  // namespace hflow
