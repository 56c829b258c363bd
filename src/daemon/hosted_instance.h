// One instance hflowd hosts for a driver, shared by InstanceHost's files
// (instance_host.cc: calls and unloads; instance_load.cc: Load).
//
// Thread-safety: the per-call fields and the instance are touched only
// under call_mu (the UDF's SetOutput runs on the calling thread, inside
// it); key, device and node are fixed once loaded.
#ifndef HFLOW_DAEMON_HOSTED_INSTANCE_H_
#define HFLOW_DAEMON_HOSTED_INSTANCE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/instance_host.h"
#include "daemon/instance_thread.h"
#include "flow_func/mbuf_msg.h"
#include "flow_func/udf_instance.h"
#include "services/mbuf.h"
#include "worker/proto/worker.pb.h"

namespace hflow::daemon {

struct InstanceHost::Hosted {
  std::pair<std::string, uint64_t> key;  // session, instance
  int32_t device = 0;
  std::string node;
  std::mutex call_mu;
  std::unique_ptr<flow_func::UdfInstance> udf;  // touched on `thread` only
  // Where its messages live (the inputs a Proc brings are copied there,
  // re-aligned as their heads ask).
  std::shared_ptr<flow_func::MsgAllocator> allocator;
  // The Proc in progress: its caller, the outputs its UDF set, what it
  // raised, and the exception the driver saw at its start.
  // Read by the UDF's callbacks from whatever thread calls them; the
  // caller is the instance's thread, set once before Init.
  std::atomic<bool> in_proc{false};
  std::thread::id caller;
  // Inputs a Proc of each function takes at least (the driver's word is
  // checked).
  std::vector<size_t> inputs_of;
  std::vector<std::pair<uint32_t, services::MbufPtr>> outputs;
  std::vector<worker::v1::Raised> raised;
  bool has_pending = false;
  worker::v1::Raised pending;
  // The thread its calls run on (made by Load, gone at Unload). Last: a
  // Hosted destroyed with its thread still set joins it before any field
  // the thread's task may use goes.
  std::unique_ptr<InstanceThread> thread;

  std::string What() const {
    return "hflowd: node '" + node + "' on device " + std::to_string(device);
  }
};

// A Done (the reply to Load, Reset and Unload) for `s`.
inline worker::v1::Done ToDone(const Status& s) {
  worker::v1::Done d;
  d.set_code(static_cast<int32_t>(s.code()));
  d.set_message(s.message());
  return d;
}

inline void Reply(const worker::v1::WorkerMessage& m,
                  net::InstanceReply* reply) {
  m.SerializeToString(&reply->reply);
}

}  // namespace hflow::daemon

#endif  // HFLOW_DAEMON_HOSTED_INSTANCE_H_
