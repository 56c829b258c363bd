// Internal API of libflow_func.so for libhflow (same compiler, C++17, new
// libstdc++ ABI): the function registry UDFs fill at load time, the logger's
// controls, and the per-thread tensor allocator behind
// FlowBufferFactory::AllocTensor. UDFs never see this header.
//
// Thread-safety: every function here may be called from any thread. The
// registry and logger state are process-wide and internally locked; the log
// header and the tensor allocator are per thread.
#ifndef HFLOW_FLOW_FUNC_LIB_FLOW_FUNC_INTERNAL_H_
#define HFLOW_FLOW_FUNC_LIB_FLOW_FUNC_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/tensor_data_type.h"

namespace FlowFunc::internal {

// ---- Function registry ----------------------------------------------------
// Names are registered per library (registry.cc, Note [Names per library]):
// by a UDF library (its canonical path) or by the process (""). Within one
// library the names form one namespace across the three kinds: a name
// registered as a flow func cannot also be registered as a multi func.

enum class FunctionKind { kFlowFunc, kMultiFunc, kMultiFuncWithQ };

// Each copies the creator into *out and returns true when `name` resolves,
// with that kind, for a node of `library`: its own registration, else the
// process's. Without a library: the process's, else the only library's
// (false when several libraries register it: ambiguous).
bool LookupFlowFunc(const char* name, FLOW_FUNC_CREATOR_FUNC* out);
bool LookupMultiFunc(const char* name, MULTI_FUNC_CREATOR_FUNC* out);
bool LookupMultiFuncWithQ(const char* name,
                          MULTI_FUNC_WITH_Q_CREATOR_FUNC* out);
bool LookupFlowFunc(const std::string& library, const char* name,
                    FLOW_FUNC_CREATOR_FUNC* out);
bool LookupMultiFunc(const std::string& library, const char* name,
                     MULTI_FUNC_CREATOR_FUNC* out);
bool LookupMultiFuncWithQ(const std::string& library, const char* name,
                          MULTI_FUNC_WITH_Q_CREATOR_FUNC* out);
// The kind `name` resolves to, by the same rule; false when it does not.
bool LookupKind(const char* name, FunctionKind* out);
bool LookupKind(const std::string& library, const char* name,
                FunctionKind* out);

// The libraries registering `name`, sorted ("" is the process).
std::vector<std::string> LibrariesRegistering(const char* name);
// The names `library` registered, sorted.
std::vector<std::string> NamesRegisteredBy(const std::string& library);
// Registrations this thread makes from now on belong to `library` ("" =
// the process); returns the previous value. A loader sets it around dlopen
// (static initialisers run on the dlopen thread) and restores it after.
std::string SetRegisteringLibrary(std::string library);

// Sorted.
std::vector<std::string> RegisteredFunctionNames();

// Generation counter: bumped by every accepted registration. A loader takes
// RegistryGeneration() before dlopen and NamesRegisteredSince(it) after, to
// learn what the new object registered (loads must be serialised for this).
uint64_t RegistryGeneration();
std::vector<std::string> NamesRegisteredSince(uint64_t generation);

// Removes a name (from every library), e.g. before dlclose of the object whose
// code its creator runs. False when unknown.
bool UnregisterFunction(const char* name);

// Observers see every registration attempt, accepted or not, on the
// registering thread (for a dlopen: the thread calling dlopen), after the
// registry lock is released.
struct RegistrationEvent {
  std::string name;
  FunctionKind kind;
  bool accepted;  // false: duplicate or invalid
};
using RegistrationObserver = std::function<void(const RegistrationEvent&)>;
int AddRegistrationObserver(RegistrationObserver observer);  // returns an id
void RemoveRegistrationObserver(int id);

// ---- Logger ---------------------------------------------------------------
// Initial level: HFLOW_FLOW_FUNC_LOG_LEVEL = debug|info|warn|error|off (any
// case), else ASCEND_GLOBAL_LOG_LEVEL = 0..3 (debug..error) or 4 (off), else
// warn. One level applies to both the debug and the run logger.

void SetLogLevel(FlowFuncLogLevel level);
// Re-reads the environment variables above (for tests and hot reconfig).
void ReloadLogLevelFromEnvironment();
// A sink receives each enabled line, e.g. "[WARN] hdr file.cc:3 Fn: text",
// without a trailing newline. An empty function restores stderr.
using LogSink = std::function<void(FlowFuncLogLevel, const std::string&)>;
void SetLogSink(LogSink sink);
// Per-thread prefix returned by FlowFuncLogger::GetLogExtHeader; null or ""
// clears it. The string is not copied: it must stay valid until the next
// call on this thread (UdfInstance passes its own header, which outlives the
// Proc call, and clears it after).
void SetLogExtHeader(const char* header);

// ---- Tensors --------------------------------------------------------------

// The one dtype table (tensor.cc, Note [One dtype table]): GE's name
// ("DT_BF16"), the host API's numpy-style name ("bfloat16"; null for types
// the host API has none for) and bits per element.
struct DataTypeInfo {
  TensorDataType dtype;
  const char* ge_name;
  const char* host_name;
  int32_t bits;
};
// Each returns null when the type or name is unknown.
const DataTypeInfo* FindDataType(TensorDataType dtype);
const DataTypeInfo* FindDataTypeByGeName(const std::string& name);
const DataTypeInfo* FindDataTypeByHostName(const std::string& name);
// Every defined type, in TensorDataType order.
std::vector<DataTypeInfo> AllDataTypes();

// Bytes per element; -1 for DT_UNDEFINED and unknown values. Sub-byte types
// (DT_INT4, DT_UINT1, DT_INT2, DT_UINT2) report 1: a byte is the smallest
// unit holding one element, so n * DataTypeSize never under-allocates. Their
// exact packed size is DataSizeBytes.
int64_t DataTypeSize(TensorDataType dtype);
// Bits per element (4 for DT_INT4, 1 for DT_UINT1, ...); -1 when unknown.
int64_t DataTypeBits(TensorDataType dtype);
// Packed payload bytes of `element_count` elements: ceil(count * bits / 8).
// -1 for unknown types, negative counts or overflow.
int64_t DataSizeBytes(TensorDataType dtype, int64_t element_count);

// Allocator FlowBufferFactory::AllocTensor uses on this thread, called with
// a validated shape (dims >= 0), a known dtype and an align AllocTensor
// accepted. Returns the previous allocator; an empty function restores the
// host-memory fallback.
using TensorAllocator = std::function<std::shared_ptr<Tensor>(
    const std::vector<int64_t>&, TensorDataType, uint32_t)>;
TensorAllocator SetTensorAllocator(TensorAllocator allocator);
// The same without copying: `allocator` (null: the fallback) must outlive
// its use on this thread. Returns the previous one, to swap back (per Proc
// call, where a std::function copy would cost an allocation per message).
const TensorAllocator* SwapTensorAllocator(const TensorAllocator* allocator);

}  // namespace FlowFunc::internal

#endif  // HFLOW_FLOW_FUNC_LIB_FLOW_FUNC_INTERNAL_H_
