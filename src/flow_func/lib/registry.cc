// The process-wide registry of UDF creators (RegisterFlowFunc,
// RegisterMultiFunc) and its internal lookups.
//
// UDF shared objects register from static initialisers, possibly before any
// of this library's own globals would be constructed, so the state hangs off
// a function-local static (constructed on first use, thread-safe) that is
// deliberately never destroyed: creators stored here may point into objects
// already unloaded at exit. One mutex guards the maps; observers run after
// it is released so they may call back into the registry.
//
// Note [Names per library]
// Each name is registered per library: the UDF .so whose static
// initialisers ran it (the loader names it on the dlopen thread with
// SetRegisteringLibrary), or the process ("") for built-ins and code linked
// into the executable. Two UDF libraries may register the same name with
// different code; a node's function is resolved in its own library first,
// then in the process, so each node runs its own library's code and never
// another library's (a first-registration-wins table ran the other one,
// silently). A lookup without a library finds a name registered by the
// process, or by exactly one library; with several it is ambiguous.
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func_internal.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace FlowFunc {
namespace internal {
namespace {

using AnyCreator = std::variant<FLOW_FUNC_CREATOR_FUNC, MULTI_FUNC_CREATOR_FUNC,
                                MULTI_FUNC_WITH_Q_CREATOR_FUNC>;

struct Entry {
  AnyCreator creator;
  uint64_t generation;
};

using Libraries = std::map<std::string, Entry>;  // library -> entry

struct Registry {
  hflow::util::Mutex mu;
  // name -> its libraries
  std::map<std::string, Libraries> entries GUARDED_BY(mu);
  uint64_t generation GUARDED_BY(mu) = 0;
  std::map<int, RegistrationObserver> observers GUARDED_BY(mu);
  int next_observer_id GUARDED_BY(mu) = 1;
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // Never destroyed, see top.
  return *registry;
}

// The library whose registrations this thread is making (see the Note).
thread_local std::string t_registering_library;

// The entry a node of `library` uses for `name` (Note [Names per library]);
// null when there is none or the choice is ambiguous.
const Entry* Resolve(const Registry& reg, const std::string& library,
                     const char* name) REQUIRES(reg.mu) {
  if (name == nullptr) return nullptr;
  auto it = reg.entries.find(name);
  if (it == reg.entries.end()) return nullptr;
  const Libraries& libs = it->second;
  auto own = libs.find(library);
  if (own != libs.end()) return &own->second;
  auto process = libs.find(std::string());
  if (process != libs.end()) return &process->second;
  if (library.empty() && libs.size() == 1) return &libs.begin()->second;
  return nullptr;
}

const char* KindName(FunctionKind kind) {
  switch (kind) {
    case FunctionKind::kFlowFunc:
      return "flow func";
    case FunctionKind::kMultiFunc:
      return "multi func";
    case FunctionKind::kMultiFuncWithQ:
      return "multi func with queues";
  }
  return "?";
}

FunctionKind KindOf(const AnyCreator& creator) {
  return static_cast<FunctionKind>(creator.index());
}

void Notify(const RegistrationEvent& event) {
  std::vector<RegistrationObserver> observers;
  {
    Registry& reg = GetRegistry();
    hflow::util::MutexLock lock(reg.mu);
    for (const auto& [id, observer] : reg.observers)
      observers.push_back(observer);
  }
  for (const RegistrationObserver& observer : observers) {
    try {
      observer(event);
    } catch (...) {
      // An observer's failure must not undo or fail the registration.
      FLOW_FUNC_LOG_ERROR("registration observer threw for \"%s\"",
                          event.name.c_str());
    }
  }
}

// Inserts unless the name is taken; logs why a registration is refused.
bool Insert(const char* name, AnyCreator creator) {
  FunctionKind kind = KindOf(creator);
  if (name == nullptr || *name == '\0') {
    FLOW_FUNC_LOG_ERROR("refusing to register a %s without a name",
                        KindName(kind));
    return false;
  }
  bool accepted = false;
  FunctionKind existing = kind;
  const std::string& library = t_registering_library;
  {
    Registry& reg = GetRegistry();
    hflow::util::MutexLock lock(reg.mu);
    Libraries& libs = reg.entries[name];
    auto it = libs.find(library);
    if (it == libs.end()) {
      libs.emplace(library, Entry{std::move(creator), ++reg.generation});
      accepted = true;
    } else {
      existing = KindOf(it->second.creator);
    }
  }
  if (!accepted) {
    FLOW_FUNC_LOG_ERROR(
        "function \"%s\" (%s) is already registered as a %s by %s; keeping "
        "the first",
        name, KindName(kind), KindName(existing),
        library.empty() ? "the process" : library.c_str());
  }
  Notify(RegistrationEvent{name, kind, accepted});
  return accepted;
}

// Shared body of the public entry points: they are noexcept, so anything
// thrown (bad_alloc, a creator's throwing copy, an observer) ends here.
template <typename Creator>
bool RegisterNoexcept(const char* name, const Creator& creator) noexcept {
  try {
    if (!creator) {
      FLOW_FUNC_LOG_ERROR("refusing to register \"%s\": empty creator",
                          name == nullptr ? "(null)" : name);
      return false;
    }
    return Insert(name, AnyCreator(std::in_place_type<Creator>, creator));
  } catch (const std::exception& e) {
    FLOW_FUNC_LOG_ERROR("registering \"%s\" failed: %s",
                        name == nullptr ? "(null)" : name, e.what());
  } catch (...) {
    FLOW_FUNC_LOG_ERROR("registering \"%s\" failed: unknown exception",
                        name == nullptr ? "(null)" : name);
  }
  return false;
}

template <typename Creator>
bool Lookup(const std::string& library, const char* name, Creator* out) {
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  const Entry* entry = Resolve(reg, library, name);
  if (entry == nullptr) return false;
  const Creator* creator = std::get_if<Creator>(&entry->creator);
  if (creator == nullptr) return false;
  if (out != nullptr) *out = *creator;
  return true;
}

}  // namespace

bool LookupFlowFunc(const char* name, FLOW_FUNC_CREATOR_FUNC* out) {
  return Lookup(std::string(), name, out);
}

bool LookupMultiFunc(const char* name, MULTI_FUNC_CREATOR_FUNC* out) {
  return Lookup(std::string(), name, out);
}

bool LookupMultiFuncWithQ(const char* name,
                          MULTI_FUNC_WITH_Q_CREATOR_FUNC* out) {
  return Lookup(std::string(), name, out);
}

bool LookupKind(const char* name, FunctionKind* out) {
  return LookupKind(std::string(), name, out);
}

bool LookupFlowFunc(const std::string& library, const char* name,
                    FLOW_FUNC_CREATOR_FUNC* out) {
  return Lookup(library, name, out);
}

bool LookupMultiFunc(const std::string& library, const char* name,
                     MULTI_FUNC_CREATOR_FUNC* out) {
  return Lookup(library, name, out);
}

bool LookupMultiFuncWithQ(const std::string& library, const char* name,
                          MULTI_FUNC_WITH_Q_CREATOR_FUNC* out) {
  return Lookup(library, name, out);
}

bool LookupKind(const std::string& library, const char* name,
                FunctionKind* out) {
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  const Entry* entry = Resolve(reg, library, name);
  if (entry == nullptr) return false;
  if (out != nullptr) *out = KindOf(entry->creator);
  return true;
}

std::vector<std::string> LibrariesRegistering(const char* name) {
  std::vector<std::string> libs;
  if (name == nullptr) return libs;
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  auto it = reg.entries.find(name);
  if (it == reg.entries.end()) return libs;
  for (const auto& [library, entry] : it->second) libs.push_back(library);
  return libs;
}

std::vector<std::string> NamesRegisteredBy(const std::string& library) {
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  std::vector<std::string> names;
  for (const auto& [name, libs] : reg.entries) {
    if (libs.count(library)) names.push_back(name);
  }
  return names;
}

std::string SetRegisteringLibrary(std::string library) {
  std::swap(library, t_registering_library);
  return library;
}

std::vector<std::string> RegisteredFunctionNames() {
  return NamesRegisteredSince(0);
}

uint64_t RegistryGeneration() {
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  return reg.generation;
}

std::vector<std::string> NamesRegisteredSince(uint64_t generation) {
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  std::vector<std::string> names;
  for (const auto& [name, libs] : reg.entries) {
    for (const auto& [library, entry] : libs) {
      if (entry.generation > generation) {
        names.push_back(name);
        break;
      }
    }
  }
  return names;  // std::map iterates in sorted order.
}

bool UnregisterFunction(const char* name) {
  if (name == nullptr) return false;
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  return reg.entries.erase(name) > 0;
}

int AddRegistrationObserver(RegistrationObserver observer) {
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  int id = reg.next_observer_id++;
  reg.observers.emplace(id, std::move(observer));
  return id;
}

void RemoveRegistrationObserver(int id) {
  Registry& reg = GetRegistry();
  hflow::util::MutexLock lock(reg.mu);
  reg.observers.erase(id);
}

}  // namespace internal

bool RegisterFlowFunc(const char* flowFuncName,
                      const FLOW_FUNC_CREATOR_FUNC& func) noexcept {
  return internal::RegisterNoexcept(flowFuncName, func);
}

bool RegisterMultiFunc(const char* flowFuncName,
                       const MULTI_FUNC_CREATOR_FUNC& funcCreator) noexcept {
  return internal::RegisterNoexcept(flowFuncName, funcCreator);
}

bool RegisterMultiFunc(
    const char* flowFuncName,
    const MULTI_FUNC_WITH_Q_CREATOR_FUNC& funcWithQCreator) noexcept {
  return internal::RegisterNoexcept(flowFuncName, funcWithQCreator);
}

}  // namespace FlowFunc
