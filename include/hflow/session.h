// The host API (DataFlow style): Initialize/Finalize, and Session with
// AddGraph, BuildGraph (compile + deploy), FeedData, FetchData and
// RemoveGraph. Every entry point leaves the calling thread's current device
// context exactly as it found it (ContextGuard), on success, on error and
// when an exception passes through.
//
//   hflow::Initialize(options);
//   hflow::Session s;
//   s.AddGraph(1, graph);  s.BuildGraph(1);
//   s.FeedData(1, {a, b}, info, 1000);  s.FetchData(1, &outs, &info, 1000);
//
// Errors: every call returns a Status (no exception leaves hflow). Calls on
// a session while hflow is not initialized fail with kFailedPrecondition;
// calls naming a graph the session does not hold fail with kNotFound.
//
// Thread-safety: every Session method may be called from any thread, on
// the same session and graph at once (concurrent feeders and fetchers, and
// several graphs); Initialize/Finalize must not race with other calls.
// Session keeps its state behind a pointer (pImpl), so this header brings
// no implementation headers (<mutex>, <map>) into users' builds.
#ifndef HFLOW_SESSION_H_
#define HFLOW_SESSION_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hflow/cluster.h"
#include "hflow/graph.h"
#include "hflow/status.h"
#include "hflow/types.h"

namespace hflow {

inline constexpr uint32_t kFlowFlagEos = 1;
inline constexpr uint32_t kFlowFlagSeg = 2;

// Flow information travelling with a message (GE's FlowInfo).
struct FlowInfo {
  uint64_t start_time = 0;
  uint64_t end_time = 0;
  uint32_t flags = 0;              // kFlowFlagEos | kFlowFlagSeg
  uint64_t transaction_id = 0;     // 0 on feed: the session assigns 1, 2, ...
  std::vector<uint8_t> user_data;  // up to 64 bytes
  int32_t ret_code = 0;            // on fetch: the UDF's code (0 = ok)
  // On fetch, when ret_code != 0: the node whose UDF failed (or raised the
  // exception); empty otherwise.
  std::string error_node;
  // On fetch, when ret_code != 0: true when ret_code is an exception a UDF
  // raised (RaiseException, with exception catch on) rather than the code
  // a failing UDF returned (GE's ACL_ERROR_GE_USER_RAISE_EXCEPTION).
  bool raised_exception = false;

  // GE's offset API over user_data (DataFlowInfo::SetUserData/GetUserData):
  // writes `size` bytes at `offset` (growing user_data to offset + size), or
  // reads them. kInvalidArgument when offset + size exceeds 64 bytes, for a
  // null pointer with a size, or (GetUserData) beyond what user_data holds.
  Status SetUserData(const void* data, size_t size, size_t offset = 0);
  Status GetUserData(void* data, size_t size, size_t offset = 0) const;
};

// A host tensor.
struct Tensor {
  DataType dtype = DataType::kFloat;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  template <typename T>
  static Tensor From(DataType dt, std::vector<int64_t> shape,
                     const std::vector<T>& values) {
    Tensor t;
    t.dtype = dt;
    t.shape = std::move(shape);
    t.data.resize(values.size() * sizeof(T));
    if (!values.empty())
      std::memcpy(t.data.data(), values.data(), t.data.size());
    return t;
  }
  template <typename T>
  std::vector<T> As() const {
    std::vector<T> v(data.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), data.data(), v.size() * sizeof(T));
    return v;
  }
};

// A tensor whose bytes hflow does not copy (Session::FeedViews and
// FetchViews, docs/user_guide.md "Zero-copy feed and fetch"): `bytes`
// bytes at `data`, valid for as long as `keep` (or any copy of it) lives.
// `keep`'s deleter is the release callback: hflow holds a copy while it
// uses the bytes and drops it exactly once, whatever the call returns.
struct TensorView {
  DataType dtype = DataType::kFloat;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<const void> keep;

  // A view of `t`'s bytes that keeps `t` alive.
  static TensorView Of(std::shared_ptr<const Tensor> t) {
    TensorView v;
    v.dtype = t->dtype;
    v.shape = t->shape;
    v.data = t->data.data();
    v.bytes = t->data.size();
    v.keep = std::move(t);
    return v;
  }
  // A copy of the bytes as an owning Tensor.
  Tensor ToTensor() const {
    Tensor t;
    t.dtype = dtype;
    t.shape = shape;
    const auto* p = static_cast<const uint8_t*>(data);
    if (bytes > 0) t.data.assign(p, p + bytes);
    return t;
  }
};

// Message types: FlowFunc's MsgType numbers, so a host message reaches a
// UDF as the type it was fed with. Types from kMsgTypeUserDefineStart up
// are the user's own (GE's range), carried as raw bytes.
inline constexpr uint16_t kMsgTypeTensor = 0;
inline constexpr uint16_t kMsgTypeRawData = 1;
inline constexpr uint16_t kMsgTypeTensorList = 2;
// GE's torch plugin's message (dataflow.plugin.torch): raw bytes, a
// 1024-byte runtime tensor descriptor then the tensor's data.
inline constexpr uint16_t kMsgTypeTorchTensor = 1023;
inline constexpr uint16_t kMsgTypeUserDefineStart = 1024;

// One message of one graph input or output: GE's FlowMsg on the host
// (Session::FeedMessages / FetchMessages).
struct Message {
  uint16_t msg_type = kMsgTypeTensor;
  // kMsgTypeTensor: exactly one tensor (none when `empty`);
  // kMsgTypeTensorList: any number of tensors. Unused by other types.
  std::vector<Tensor> tensors;
  // kMsgTypeRawData and user-defined types: the bytes.
  std::vector<uint8_t> raw;
  // An empty message (GE's AllocEmptyDataMsg, "null data"): no payload.
  // An end-of-stream-only feed is made of these; a fetch says so here.
  bool empty = false;
  // Flags, times, transaction id, user data and ret code. On feed, the
  // messages of one call are one transaction: their transaction ids must
  // agree (0: the session assigns one); ret_code travels to the UDF.
  FlowInfo info;
};

// One piece of a raw-data feed (GE's RawData): `len` bytes at `data`.
struct RawData {
  const void* data = nullptr;
  size_t len = 0;
};

// Bytes per element of a DataType (0 for unknown values).
size_t DataTypeSize(DataType dt);
// "int32", "float32", ... (numpy names) and back.
const char* DataTypeName(DataType dt);
bool ParseDataTypeName(const std::string& name, DataType* out);

// What a UDF's worker process dying does (Options::udf_isolation,
// heavy_load; docs/user_guide.md "Isolating UDFs").
enum class RestartPolicy {
  // The graph fails with a status naming the node, device, signal or exit
  // code and transaction; ResetGraph starts the worker again and the graph
  // runs on (GE's suspend, clear, recover).
  kNever,
  // The worker is started again at the instance's next call and the graph
  // runs on: only the transaction in flight is lost (its fetch has
  // ret_code FLOW_FUNC_STATUS_REDEPLOYING, 564003) and what the UDFs in it
  // kept between calls (the new worker Inits a new object of each); up to
  // Options::max_worker_restarts times per worker, then as kNever.
  kRestart,
};

struct Options {
  // The device runtime: "sim" (simulated devices) or "cuda" (NVIDIA GPUs,
  // where the build found the CUDA toolkit); "" (the default): the cluster
  // file's "backend" field, else "sim".
  std::string backend;
  ClusterConfig cluster = DefaultClusterConfig();
  std::optional<int32_t> default_device;  // -1: none
  int deploy_threads = 4;
  // Executor threads per graph; 0: one per hardware thread (at least 2). A
  // UDF that blocks inside Proc holds one of them (docs/performance.md).
  int exec_threads = 0;
  // A stage whose output's consumer is idle runs that consumer next on the
  // same thread, with the message in hand (docs/performance.md). Off: every
  // message goes through its queue.
  bool exec_handoff = true;
  uint32_t queue_depth = 64;
  // Bytes of the message pool (memory group cache) on each device a graph
  // uses; at most the device's memory (the cluster config's memory_bytes)
  // and at least 3 * max_message_bytes (docs/user_guide.md "Memory").
  uint64_t mbuf_pool_bytes = kDefaultMbufPoolBytes;
  // The largest message a feed or a UDF may make; a larger one is refused
  // at once, naming this option.
  uint64_t max_message_bytes = kDefaultMaxMessageBytes;
  // How long a UDF's AllocTensorMsg (and an executor's copy of a message
  // to another device) waits for a free block of the pool before it fails
  // naming the node and the sizes. Never forever (>= 0): an executor thread
  // waiting forever may be the one that would free the memory. Feeds wait
  // within their own timeout instead.
  int32_t alloc_timeout_ms = 10000;
  bool record_calls = false;  // sim: keep a call log (tests, --stats)
  // Level of the UDF log (FlowFunc loggers): "debug", "info", "warn",
  // "error" or "off"; empty keeps $HFLOW_FLOW_FUNC_LOG_LEVEL (default warn).
  std::string udf_log_level;
  // How long BuildGraph waits for the UDFs' Init during deployment; a node
  // still in Init after it fails the build with a timeout naming the node
  // (-1: wait forever).
  int32_t init_timeout_ms = -1;
  // How long RemoveGraph and Finalize wait for running UDFs to return; a
  // node still in Proc after it makes them return a timeout naming the node
  // (the stuck thread is left behind, never joined: -1 waits forever).
  int32_t stop_timeout_ms = 10000;
  // Initialize installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and
  // SIGABRT that print, as the process dies, the node, function, device and
  // transaction the crashing thread was running (hflow run turns it on).
  bool crash_report = false;
  // Runs every UDF from a UDF library (a compile config's), and every
  // Python UDF of the dataflow package, in a worker process (hflow-worker,
  // or an interpreter of its own for Python), one per device of a graph
  // shared by that device's isolated instances, as GE runs its UDFs in
  // executor processes: a UDF that crashes fails its graph, naming the
  // node, device and signal, and the program goes on (docs/user_guide.md
  // "Isolating UDFs"). An instance of a node whose compile config says
  // "heavy_load": true runs in a worker of its own whatever this says.
  // Built-ins stay in the host.
  bool udf_isolation = false;
  RestartPolicy restart_policy = RestartPolicy::kNever;
  // Restarts per worker under kRestart (ResetGraph gives them back);
  // at least 1.
  int32_t max_worker_restarts = 3;
  // A worker process that sends nothing for this long (it beats every
  // fifth of it, from a thread no UDF holds, so a long Proc does not
  // count) has stopped answering: it is killed, and its death handled as
  // any (restart_policy). 0: never. At least 50 otherwise.
  int32_t worker_heartbeat_ms = 1000;
  // hflow ctxcheck on the simulated runtime (docs/ctxcheck.md): "report"
  // finds every device call made with no context bound, every touch of
  // one device's memory under another's context and every UDF call that
  // returns with its thread on another context, and lets the program go
  // on; "strict" also fails each unbound call with EE1018, device 0
  // included; "off" checks nothing. "" (the default) leaves it to
  // $HFLOW_CTXCHECK. Worker processes check their UDFs the same way.
  std::string ctxcheck;
};

// Starts hflow: creates the device runtime `options.backend` names over
// `options.cluster` and the services (queues, memory groups) on it.
// One runtime for ACL and GE: when the installed runtime is in use by ACL
// (aclInit ran, libascendcl) and was made for the same backend, local
// devices (ids and memory) and default device, Initialize adopts it
// instead, so the contexts the program made through ACL (aclrtSetDevice,
// aclrtCreateContext) stay valid and current across Initialize, the
// session's calls and Finalize (record_calls then turns the sim's call log
// on). A runtime in use by no one (one an earlier Initialize made) is
// replaced, so each Initialize starts with fresh counters; so is one made
// for other devices, which strands the contexts made on it.
// Errors: kFailedPrecondition when already initialized (Finalize first);
// kInvalidArgument for a negative alloc_timeout_ms, an init_timeout_ms or
// stop_timeout_ms below -1, or an unknown udf_log_level; the runtime's
// errors for a bad backend or cluster (kInvalidArgument, kNotSupported).
// Thread-safety: must not race with any other hflow call.
Status Initialize(const Options& options);
// Removes every graph of every session (as RemoveGraph), then releases the
// runtime's services. Sessions stay valid objects; their calls fail with
// kFailedPrecondition until the next Initialize. Errors:
// kFailedPrecondition when not initialized; otherwise the first error a
// RemoveGraph returned (kTimeout: a UDF did not return within
// stop_timeout_ms; everything else is still released).
// Thread-safety: must not race with any other hflow call.
Status Finalize();

// Registers `bytes` bytes of host memory at `ptr` with the device runtime
// (as cudaHostRegister or aclrtHostRegister), so that Session::FeedViews of
// views inside it hands the devices the caller's bytes instead of a copy.
// Errors: kFailedPrecondition when not initialized; kInvalidArgument for a
// null pointer, zero bytes, or a range overlapping a registered one (or
// device memory); the runtime's errors. Registrations end with
// UnregisterHostMemory, or at Finalize (once the last message using the
// memory is released). Thread-safety: any thread.
Status RegisterHostMemory(const void* ptr, size_t bytes);
// Ends the registration that starts at `ptr`. Errors: kFailedPrecondition
// when not initialized, or while messages fed from it are still alive in a
// graph or a fetched view (fetch or remove the graph first); kNotFound when
// no registration starts at `ptr`; the runtime's errors. After the caller
// drops its last fetched view, an executor may hold the message for a
// moment more: the release of every fed view's keep is the signal that the
// range is free (it runs after hflow's last hold goes).
Status UnregisterHostMemory(const void* ptr);

// contexts_created and implicit_bindings count every process that ran
// the graphs' UDFs: the host's runtime and the worker processes' own
// (Options::udf_isolation, heavy_load), whether they still run or not.
// A device of another host (Session::DeviceReports of a graph placed
// there) is that host's hflowd's count, with `node` its cluster node.
struct DeviceReport {
  int32_t id = 0;
  uint64_t contexts_created = 0;
  uint64_t implicit_bindings = 0;
  uint64_t submodels = 0;
  uint64_t queues = 0;
  uint64_t peak_mem_bytes = 0;
  // Messages the graph's OVERWRITE queues on this device dropped to make
  // room for newer ones (Session::DeviceReports only).
  uint64_t dropped_msgs = 0;
  int32_t node = 0;  // the cluster node of the device (ClusterNode::node_id)
};

// Per-device counters for every device of the cluster, with no live graph
// needed: while hflow is initialized, as they are now (submodels and queues
// of every graph deployed at the moment, in every session); after
// Finalize, as they were when Finalize had removed every graph and was
// about to release the devices (until the next Initialize).
// Errors: kInvalidArgument for a null `out`; kFailedPrecondition before
// the first Initialize. Thread-safety: any thread; not racing Initialize.
Status DeviceReports(std::vector<DeviceReport>* out);

class Session {
 public:
  // An empty session, registered so that Finalize can remove its graphs.
  // Needs no Initialize (graphs are added only while initialized).
  Session();
  // Removes its graphs (as RemoveGraph, errors dropped). Must not race
  // with other calls on this session.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Adds `graph` under `graph_id`, checked and converted but not yet
  // compiled or deployed (BuildGraph does that; FeedData before it fails).
  // The session keeps its own copy: later changes to `graph`'s handles do
  // not reach it.
  // Errors: kInvalidArgument for a misused builder (the first misuse,
  // naming the graph, node and call, e.g. an input index out of range, a
  // MapInput on another node's FunctionPp, an unset input) or an invalid
  // graph (no outputs, a cycle, duplicate or empty names, bad batch
  // attributes); kFailedPrecondition when hflow is not initialized;
  // kAlreadyExists when the session already holds `graph_id` (nothing
  // changes then).
  Status AddGraph(uint32_t graph_id, const FlowGraph& graph);
  // As AddGraph, from the JSON graph file (docs/user_guide.md, "Graph
  // file"); `deploy_file` (a deploy info JSON file) overrides its placement.
  // Errors: kNotFound when `path` cannot be read; kInvalidArgument for bad
  // JSON or an invalid graph (naming the file and field); then as AddGraph.
  // `deploy_file` is read by BuildGraph, not here.
  Status AddGraphFile(uint32_t graph_id, const std::string& path,
                      const std::string& deploy_file = "");
  // As AddGraphFile, from graph-file JSON text: `source` names it in
  // errors (e.g. "FlowGraph 'g'"), relative paths in it resolve against
  // `base_dir` (empty: the working directory). The GE host API adds its
  // graphs this way.
  Status AddGraphJson(uint32_t graph_id, const std::string& json,
                      const std::string& source, const std::string& base_dir,
                      const std::string& deploy_file = "");
  // Compiles and deploys the graph: resolves placement (deploy info),
  // plans queues and memory pools, loads every UDF on its device and runs
  // its Init, then starts the graph's executor. Building a built graph
  // again returns OK and does nothing. On an error nothing stays deployed
  // and the graph may be built again (or removed).
  // Errors: kFailedPrecondition when hflow is not initialized, or when a
  // UDF's Init returned an error code; kNotFound when the session does not
  // hold `graph_id` (or it was removed meanwhile), when a function is
  // neither registered nor in its compile config's func_list, or when the
  // deploy file cannot be read; kInvalidArgument for a bad compile config,
  // deploy info, batch attribute or placement (an unknown device), or pool
  // sizes the cluster cannot hold; kNotSupported for a node placed on a
  // remote cluster node; kTimeout when a UDF is still in Init after
  // Options::init_timeout_ms (its thread is left running, the deployment
  // kept); kDeviceLost when a device is lost meanwhile; a runtime error
  // (kOutOfMemory, kResourceExhausted) when pools or queues cannot be made.
  // Thread-safety: any thread; builds of one graph are serialized, and
  // feeds and fetches of it wait for the build to finish.
  Status BuildGraph(uint32_t graph_id);
  // One tensor per graph input; timeout in ms (-1 = forever, 0 = try).
  // The transaction goes in whole or not at all: on kTimeout nothing was
  // fed, and the same transaction may be fed again. A graph not built yet
  // is built first (as BuildGraph, whose errors it returns: GE builds on
  // the first feed). No tensors with kFlowFlagEos in info.flags is an
  // end-of-stream-only feed: an empty message carrying the flags goes to
  // every input.
  // Errors: kFailedPrecondition when not initialized;
  // kNotFound for an unknown or removed graph; kInvalidArgument for a wrong
  // number of tensors, a tensor whose bytes do not match its dtype and
  // shape, a message over Options::max_message_bytes, or user_data over 64
  // bytes; kTimeout when the input queues stay full (or the pool has no
  // room) for the whole timeout; kCancelled when the graph is removed
  // while the call waits; kDeviceLost when a device it uses is lost.
  Status FeedData(uint32_t graph_id, const std::vector<Tensor>& inputs,
                  const FlowInfo& info, int32_t timeout_ms);
  // As FeedData, to the graph inputs `indexes` name (inputs[i] goes to input
  // indexes[i]; empty: every input in order); inputs not named get nothing
  // from this transaction. Errors: kInvalidArgument for an index out of
  // range, a repeated index, or as many indexes as tensors not given; then
  // as FeedData.
  Status FeedData(uint32_t graph_id, const std::vector<uint32_t>& indexes,
                  const std::vector<Tensor>& inputs, const FlowInfo& info,
                  int32_t timeout_ms);
  // One tensor per graph output (of one transaction); a distinct kTimeout
  // status when nothing arrives in time. A UDF failure comes back as
  // info->ret_code with empty tensors (an OK status).
  // Errors: kFailedPrecondition when not initialized or not built (nothing
  // fed yet); kInvalidArgument for null outputs or info; then as FeedData
  // (kTimeout: nothing arrived within the timeout).
  Status FetchData(uint32_t graph_id, std::vector<Tensor>* outputs,
                   FlowInfo* info, int32_t timeout_ms);
  // As FetchData, for the graph outputs `indexes` name, in that order
  // (empty: every output): (*outputs)[i] is output indexes[i], all of one
  // transaction. Outputs not named are left for later fetches, so a node
  // whose outputs carry different transactions is fetched one output at a
  // time. Errors: kInvalidArgument for an index out of range or repeated;
  // then as FetchData.
  Status FetchData(uint32_t graph_id, const std::vector<uint32_t>& indexes,
                   std::vector<Tensor>* outputs, FlowInfo* info,
                   int32_t timeout_ms);
  // Message-level feed (GE's FeedDataFlowGraph of FlowMsgs): inputs[i] goes
  // to graph input indexes[i] (empty: every input in order), each with its
  // own type, flags, user data and ret code, as one transaction.
  // Errors: kInvalidArgument for the index errors of FeedData, a message
  // whose payload does not match its type (a tensor message without
  // exactly one tensor, tensors on a raw message, an unknown type below
  // kMsgTypeUserDefineStart), a tensor whose bytes do not match its shape,
  // user data over 64 bytes, or transaction ids that differ; then as
  // FeedData.
  Status FeedMessages(uint32_t graph_id, const std::vector<uint32_t>& indexes,
                      const std::vector<Message>& inputs, int32_t timeout_ms);
  // Message-level fetch: one message per output `indexes` names (empty:
  // every output), of one transaction, each with its type, flags, user data
  // and ret code (a failed message has ret_code set and no payload).
  // Errors: as FetchData.
  Status FetchMessages(uint32_t graph_id, const std::vector<uint32_t>& indexes,
                       std::vector<Message>* outputs, int32_t timeout_ms);
  // GE's FeedRawData: the pieces, joined in order, as one raw-data message
  // to graph input `index`, with `info`'s flow info. No pieces with
  // kFlowFlagEos is an end-of-stream-only feed of every input.
  // Errors: kInvalidArgument for an index out of range or a null piece
  // with a length; then as FeedData.
  Status FeedRawData(uint32_t graph_id, const std::vector<RawData>& parts,
                     uint32_t index, const FlowInfo& info, int32_t timeout_ms);

  // hflow extensions for streams of small messages: many transactions per
  // call, with FeedData's and FetchData's guarantees, paying the per-call
  // costs (lookup, locks, device binding) once (docs/performance.md).
  //
  // Feeds batch[i] (one tensor per graph input) as one transaction each, in
  // order; infos is empty (defaults) or one FlowInfo per transaction. Every
  // transaction is checked before any is fed, so bad input feeds nothing.
  // The timeout bounds the whole call. On an error partway, *fed (may be
  // null) says how many transactions went in; feed the rest again.
  // Errors: as FeedData; kInvalidArgument also when infos is neither empty
  // nor batch.size() long.
  Status FeedDataBatch(uint32_t graph_id,
                       const std::vector<std::vector<Tensor>>& batch,
                       const std::vector<FlowInfo>& infos, int32_t timeout_ms,
                       size_t* fed = nullptr);
  // Waits up to the timeout for one transaction, then also takes whatever
  // else is ready, up to `max` in all, without waiting. outputs and infos
  // get one entry per transaction (their buffers are reused). kTimeout when
  // nothing arrived. Errors: kInvalidArgument for null outputs or infos,
  // or `max` 0; then as FetchData.
  Status FetchDataBatch(uint32_t graph_id, size_t max,
                        std::vector<std::vector<Tensor>>* outputs,
                        std::vector<FlowInfo>* infos, int32_t timeout_ms);
  // Zero-copy feed: as FeedData, one view per graph input. A view inside
  // host memory registered with RegisterHostMemory is handed to the graph
  // as it is: no copy, and its `keep` is released when the last message
  // using it is (after the nodes that read it, or a fetched view of it, let
  // go). Any other view is copied into the device pool as FeedData does
  // and its keep released before the call returns. The caller must not
  // change the bytes until the keep is released. On every error (kTimeout
  // included) nothing is fed and hflow has already dropped its copies of
  // the keeps, except when a queue fails part way through delivery (a lost
  // device: the graph is failed then), whose delivered messages release
  // later. A release may run on any hflow thread, some holding hflow locks:
  // it must not block or call into hflow, UnregisterHostMemory excepted.
  // Errors: as FeedData (kInvalidArgument also for a view whose `bytes` do not
  // match its dtype and shape, or a null `data` with bytes).
  Status FeedViews(uint32_t graph_id, const std::vector<TensorView>& inputs,
                   const FlowInfo& info, int32_t timeout_ms);
  // Zero-copy fetch: as FetchData, but each output comes back as a view of
  // the message that carries it (no copy where the runtime lets the host
  // read device memory, as the sim does; else one copy into host memory the
  // view owns). A view stays valid, and keeps its message's pool block, for
  // as long as its `keep` lives: past RemoveGraph and Finalize too (the
  // pool's memory returns when the last view is dropped). A failed or
  // empty output is a view of shape {0} with null data; raw data comes as
  // 1-D uint8. Errors: as FetchData; kInvalidArgument for a tensor list
  // output (fetch it with FetchMessages; nothing is lost).
  Status FetchViews(uint32_t graph_id, std::vector<TensorView>* outputs,
                    FlowInfo* info, int32_t timeout_ms);

  // Takes the graph out of the session at once (later calls naming it get
  // kNotFound, and its id may be added again), then stops it: wakes every
  // feed and fetch blocked on it (they return kCancelled), waits for
  // running UDFs, destroys the UDFs and releases its queues and memory.
  // Works on built and unbuilt graphs.
  // Errors: kNotFound when the session does not hold `graph_id`; kTimeout
  // when a UDF is still in Proc (or its destructor) after
  // Options::stop_timeout_ms: its thread is left running, never joined,
  // and the graph's resources are kept for the rest of the process; an
  // error of the undeploy (e.g. kDeviceLost); the graph is gone either way.
  // Thread-safety: any thread, also while other threads feed or fetch it.
  Status RemoveGraph(uint32_t graph_id);

  // Brings a built graph back to its state right after BuildGraph without
  // redeploying it: wakes every feed and fetch in flight on it (they return
  // kCancelled), waits for running UDFs (Options::stop_timeout_ms), drops
  // every message queued or held in it and a pending exception, and calls
  // each UDF instance's ResetFlowFuncState; an instance that does not
  // return success from it (the default returns FLOW_FUNC_ERR_NOT_SUPPORT)
  // is destroyed, created again and Init'ed. Transaction ids start at 1
  // again. A graph that failed (a UDF's runtime error, a worker process's
  // death: the worker is started again) runs again after it.
  // An unbuilt graph has nothing to reset (OK).
  // Errors: kNotFound for an unknown graph; kTimeout when a UDF is still in
  // Proc after stop_timeout_ms, or in ResetFlowFuncState or Init after
  // init_timeout_ms (the graph is then abandoned as RemoveGraph describes);
  // kFailedPrecondition when a device of the graph was lost (remove the
  // graph and add it again); a failed Init of a recreated instance (the
  // graph is failed then).
  // Thread-safety: any thread, also while other threads feed or fetch it.
  Status ResetGraph(uint32_t graph_id);

  // Per-device counters for every device of this host, counting this
  // graph's submodels and queues (hflow run --stats), then every device of
  // each other host the graph is placed on, as its hflowd counts them,
  // with this graph's submodels there. Needs the graph; after RemoveGraph
  // or Finalize use hflow::DeviceReports (this host's devices).
  // Errors: kFailedPrecondition when not initialized; kNotFound for an
  // unknown graph; a host that does not answer (its client's error,
  // naming it): `out` then holds this host's rows only. The hosts are
  // asked with the graph held: a RemoveGraph waits for their answers.
  Status DeviceReports(uint32_t graph_id, std::vector<DeviceReport>* out);

  // The ids of the graphs the session holds, ascending. Never fails.
  std::vector<uint32_t> GraphIds();

 private:
  // The graph table and its lock (src/session/session.cc).
  struct Impl;
  friend Status DeviceReports(std::vector<DeviceReport>* out);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hflow

#endif  // HFLOW_SESSION_H_
