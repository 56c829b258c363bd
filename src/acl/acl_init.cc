// aclInit and aclFinalize: ACL's lifetime on hflow's process-wide device
// runtime. aclInit uses the installed runtime when there is one (hflow is
// initialized, or a test installed its own), else makes hflow's over the
// cluster $RESOURCE_CONFIG_PATH names; either way it holds the runtime
// (Note [One runtime for ACL and GE] in hflow/rt.h), so hflow::Initialize
// adopts it rather than stranding the contexts made through ACL.
// aclFinalize releases the hold and uninstalls the runtime it made once
// nothing else holds it.
//
// Thread-safety: g_mu serializes aclInit and aclFinalize; as in CANN they
// must not race the other calls (which read the runtime without a lock).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "acl/acl.h"
#include "acl/acl_call.h"
#include "hflow/ge_options.h"
#include "hflow/rt.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace acl {
namespace {

struct AclState {
  bool initialized = false;
  bool ever_initialized = false;
  // The runtime aclInit holds, and whether aclInit made it.
  std::shared_ptr<rt::DeviceRuntime> runtime;
  bool made = false;
};

util::Mutex g_mu;
// Never destroyed: a program may call aclFinalize from a static destructor.
// A function-local static cannot carry GUARDED_BY; the function does.
AclState& State() REQUIRES(g_mu) {
  static auto* state = new AclState();
  return *state;
}

std::string Quoted(const char* s) {
  return s == nullptr ? std::string("NULL") : "\"" + std::string(s) + "\"";
}

// ACL's config file holds dump and profiling settings hflow has no use
// for; it is checked as CANN does (readable, a JSON object) and ignored.
aclError CheckConfigFile(const CallText& call, const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Fail(call, ACL_ERROR_INVALID_FILE,
                std::string("cannot read the config file: ") +
                    std::strerror(errno) +
                    "; pass an existing JSON file, or NULL for none");
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string body = text.str();
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return ACL_SUCCESS;  // an empty file is an empty config
  }
  nlohmann::json j = nlohmann::json::parse(body, nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Fail(call, ACL_ERROR_PARSE_FILE,
                "the config file is not a JSON object; write {} (hflow "
                "ignores ACL's dump and profiling settings) or pass NULL");
  }
  return ACL_SUCCESS;
}

}  // namespace
}  // namespace acl
}  // namespace hflow

using hflow::acl::CallText;

extern "C" aclError aclInit(const char* configPath) {
  namespace acl = hflow::acl;
  namespace rt = hflow::rt;
  const CallText call = [&] {
    return "aclInit(" + acl::Quoted(configPath) + ")";
  };
  hflow::util::MutexLock lock(acl::g_mu);
  acl::AclState& st = acl::State();
  if (st.initialized) {
    return acl::Fail(call, ACL_ERROR_REPEAT_INITIALIZE,
                     "ACL is already initialized; call aclFinalize before "
                     "initializing again");
  }
  if (configPath != nullptr && configPath[0] != '\0') {
    aclError err = acl::CheckConfigFile(call, configPath);
    if (err != ACL_SUCCESS) return err;
  }
  std::shared_ptr<rt::DeviceRuntime> runtime =
      rt::GetInstalledRuntime().runtime;
  bool made = false;
  if (!runtime) {
    rt::RuntimeOptions options;
    hflow::Status s =
        hflow::ClusterConfigFromEnvironment(&options.cluster, nullptr);
    if (!s.ok()) {
      return acl::Fail(call,
                       s.code() == hflow::StatusCode::kNotFound
                           ? ACL_ERROR_INVALID_FILE
                           : ACL_ERROR_PARSE_FILE,
                       s.message());
    }
    s = rt::InitializeRuntime(options, &runtime);
    if (!s.ok()) return acl::FromStatus(call, s);
    made = true;
  }
  rt::HoldRuntime(runtime.get());
  st.initialized = true;
  st.ever_initialized = true;
  st.runtime = std::move(runtime);
  st.made = made;
  return ACL_SUCCESS;
}

extern "C" aclError aclFinalize(void) {
  namespace acl = hflow::acl;
  namespace rt = hflow::rt;
  const CallText call = [] { return std::string("aclFinalize()"); };
  hflow::util::MutexLock lock(acl::g_mu);
  acl::AclState& st = acl::State();
  if (!st.initialized) {
    if (st.ever_initialized) {
      return acl::Fail(call, ACL_ERROR_REPEAT_FINALIZE,
                       "ACL is already finalized; each aclInit pairs with "
                       "one aclFinalize");
    }
    return acl::Fail(call, ACL_ERROR_UNINITIALIZE,
                     "ACL was never initialized; call aclInit first");
  }
  rt::ReleaseRuntime(st.runtime.get());
  if (st.made) {
    // Keep it while hflow::Initialize uses it; its contexts stay valid for
    // the session. Otherwise it goes, as CANN's runtime goes with
    // aclFinalize (the graveyard keeps the object for stale handles).
    rt::InstalledRuntime installed = rt::GetInstalledRuntime();
    if (installed.runtime == st.runtime && installed.holds == 0) {
      rt::InstallRuntime(nullptr);
    }
  }
  st.initialized = false;
  st.runtime.reset();
  st.made = false;
  return ACL_SUCCESS;
}
