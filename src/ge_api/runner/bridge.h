// The seam between GE's API (built with the old string ABI, as GE's
// libraries are) and hflow's core (built with the new one). Nothing that
// crosses it depends on the string ABI: plain structs of integers and
// pointers, NUL-terminated text, and an abstract sink for fetch results.
// GE's layers (ge_session.cc, dflow_session.cc) call it; bridge.cc, the only
// new-ABI file of libge_runner, implements it on hflow::Session.
//
// Note [One state, two ABIs]: a GE program links seven GE libraries in any
// order; all of them reach hflow through these functions, so the process
// has one hflow state (libhflow.so's) whichever library a call came from.
//
// Every function returns GE's status code (ge/ge_error_codes.h) and, on a
// failure, writes one line to stderr ("hflow ge: <call>: <reason>") and
// keeps it as the calling thread's LastError. Every function leaves the
// caller's current device context as it found it.
//
// Thread-safety: every function may be called from any thread; Initialize
// and Finalize must not race with other calls (GE's rule).
#ifndef HFLOW_GE_API_RUNNER_BRIDGE_H_
#define HFLOW_GE_API_RUNNER_BRIDGE_H_

#include <cstddef>
#include <cstdint>

namespace hflow {
namespace gebridge {

struct KeyValue {
  const char* key;
  const char* value;
};

struct TensorView {
  int32_t dtype = 0;  // GE's DataType numbers
  const int64_t* dims = nullptr;
  size_t dim_num = 0;
  const void* data = nullptr;
  size_t size = 0;
};

struct InfoView {
  uint64_t start_time = 0;
  uint64_t end_time = 0;
  uint32_t flags = 0;
  uint64_t transaction_id = 0;
  const uint8_t* user_data = nullptr;
  size_t user_data_size = 0;
  int32_t ret_code = 0;
};

struct MessageView {
  uint16_t msg_type = 0;
  bool empty = false;         // no payload (GE's AllocEmptyDataMsg)
  TensorView tensor;          // msg_type 0
  const void* raw = nullptr;  // other types
  size_t raw_size = 0;
  InfoView info;
};

struct RawPiece {
  const void* data;
  size_t len;
};

// Receives what a fetch returns; the views are valid during the call only.
class FetchSink {
 public:
  virtual void OnTensor(size_t position, const TensorView& tensor) = 0;
  virtual void OnInfo(const InfoView& info) = 0;
  virtual void OnMessage(size_t position, const MessageView& message) = 0;

 protected:
  ~FetchSink() = default;
};

uint32_t Initialize(const KeyValue* options, size_t option_num);
uint32_t Finalize();
// A session id (never 0). Bad options do not fail here (GE's constructor
// cannot): every later call on the session returns the error.
uint64_t CreateSession(const KeyValue* options, size_t option_num);
void DestroySession(uint64_t session);

// `json` is the graph in hflow's graph-file form; relative paths in it are
// resolved against the working directory, as GE resolves them.
uint32_t AddGraph(uint64_t session, uint32_t graph_id, const char* json,
                  const char* source, const KeyValue* options,
                  size_t option_num);
uint32_t BuildGraph(uint64_t session, uint32_t graph_id);
uint32_t RemoveGraph(uint64_t session, uint32_t graph_id);

// `indexes` may be null (index_num 0): every input in order.
uint32_t FeedTensors(uint64_t session, uint32_t graph_id,
                     const uint32_t* indexes, size_t index_num,
                     const TensorView* tensors, size_t tensor_num,
                     const InfoView& info, int32_t timeout);
uint32_t FeedMessages(uint64_t session, uint32_t graph_id,
                      const uint32_t* indexes, size_t index_num,
                      const MessageView* messages, size_t message_num,
                      int32_t timeout);
uint32_t FeedRaw(uint64_t session, uint32_t graph_id, const RawPiece* pieces,
                 size_t piece_num, uint32_t index, const InfoView& info,
                 int32_t timeout);
// Calls sink->OnTensor per output (then OnInfo once) on success, and for a
// UDF's error code (returned as the status, as GE does).
uint32_t FetchTensors(uint64_t session, uint32_t graph_id,
                      const uint32_t* indexes, size_t index_num,
                      int32_t timeout, FetchSink* sink);
uint32_t FetchMessages(uint64_t session, uint32_t graph_id,
                       const uint32_t* indexes, size_t index_num,
                       int32_t timeout, FetchSink* sink);

// GE's parsers: `model_file` of `framework` ("onnx", "tensorflow") with
// GE's parser options as a GE graph file's bytes in *out (give them back
// with FreeBytes).
uint32_t ParseModel(const char* call, const char* framework,
                    const char* model_file, const KeyValue* params,
                    size_t param_num, const char* graph_name, char** out,
                    size_t* out_len);
void FreeBytes(char* bytes);

// Runs fn(arg), a GE callback into user code on one of hflow's threads, as
// hflow runs a UDF's Proc: with hflow ctxcheck on, a return on another
// context than the entry's is a context_leak finding naming `what`; the
// thread's context is put back either way.
void RunUserCallback(const char* what, void (*fn)(void*), void* arg);

// Reports a failure found on the GE side (logs it, keeps it as LastError)
// and returns `code`.
uint32_t Fail(const char* call, uint32_t code, const char* reason);
// The calling thread's last failure line, "" when none. Valid until the
// thread's next bridge call.
const char* LastError();

}  // namespace gebridge
}  // namespace hflow

#endif  // HFLOW_GE_API_RUNNER_BRIDGE_H_
