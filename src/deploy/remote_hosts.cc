// Loading the hosts library (deploy/remote_hosts.h), and how a deployment
// places instances on other hosts.
//
// Thread-safety: OpenRemoteHosts may run concurrently (dlopen is).
#include "deploy/remote_hosts.h"

#include <dlfcn.h>

#include "util/beside_library.h"

namespace hflow {
namespace deploy {

// Note [Instances on other hosts]
// A node placed on a device of another cluster node (deploy info's
// logic_device_id "cluster:node:device:...") runs there, in the hflowd of
// that host, on that device; this process keeps everything else about it.
// Its input queues live on a device of this host (the planner's
// round-robin choice, InstancePlan::device), whose executor calls it as
// it calls any instance; the instance (libhflow_hosts' HostInstance)
// sends each call to the daemon with the data of its input messages, and
// hands the outputs in the reply to the same output function a local
// instance's go to. So routing, pairing, depth bounds, exceptions and
// failures behave as they do on one host; what a hop costs is a round
// trip. Each deployment is a session on each daemon it uses, kept by a
// heartbeat stream: a daemon unloads a session's instances when the
// stream ends (undeploy, this process's death), and this process fails
// the graph, naming the host, when the daemon stops answering.

namespace {

constexpr const char* kHostsLibrary = "libhflow_hosts.so";

Status FindHostsLibrary(std::string* path) {
  std::string tried;
  if (util::FindBesideLibhflow(kHostsLibrary, "HFLOW_HOSTS_LIBRARY", path,
                               &tried)) {
    return Status::OK();
  }
  return Status::NotFound(
      std::string("a node placed on another host needs ") + kHostsLibrary +
      ", which was not found (tried " + tried +
      "): hflow builds it where gRPC and UCX are installed "
      "(scripts/install-deps, then rebuild), or point $HFLOW_HOSTS_LIBRARY "
      "at it");
}

}  // namespace

Status OpenRemoteHosts(const RemoteHostsOptions& options,
                       std::unique_ptr<RemoteHosts>* out) {
  std::string path;
  HFLOW_RETURN_IF_ERROR(FindHostsLibrary(&path));
  // Never closed: its instances' code must outlive every one of them.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return Status::NotFound("cannot load " + path + ": " +
                            (err ? err : "unknown dlopen error"));
  }
  auto open =
      reinterpret_cast<OpenRemoteHostsFn>(dlsym(handle, "hflow_hosts_open_v1"));
  if (open == nullptr) {
    return Status::Internal(path +
                            " has no hflow_hosts_open_v1: not hflow's hosts "
                            "library, or of another version");
  }
  return open(options, out);
}

}  // namespace deploy
}  // namespace hflow
