// FlowFunc messages backed by mbufs: the runtime side of FlowMsg and Tensor.
// A message is one mbuf: its head carries the flow info (and, for tensor
// lists, each tensor's place), its data part lives on the instance's device.
// MsgAllocator makes messages from a memory group through the exchange
// service, which binds the device itself, so UDF code may allocate from any
// thread.
//
// Thread-safety: a message is owned by one UDF call at a time (like the
// mbuf). MsgAllocator is thread-safe.
#ifndef HFLOW_FLOW_FUNC_MBUF_MSG_H_
#define HFLOW_FLOW_FUNC_MBUF_MSG_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_msg.h"
#include "hflow/status.h"
#include "services/exchange_service.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace flow_func {

// A tensor viewing (part of) an mbuf's data.
class MbufTensor final : public FlowFunc::Tensor {
 public:
  MbufTensor(services::MbufPtr mbuf, void* data, uint64_t capacity,
             FlowFunc::TensorDataType dtype, std::vector<int64_t> shape);

  const std::vector<int64_t>& GetShape() const override { return shape_; }
  FlowFunc::TensorDataType GetDataType() const override { return dtype_; }
  void* GetData() const override { return data_; }
  uint64_t GetDataSize() const override;
  int64_t GetElementCnt() const override;
  int32_t Reshape(const std::vector<int64_t>& shape) override;
  uint64_t GetDataBufferSize() const override { return capacity_; }
  const services::MbufPtr& mbuf() const { return mbuf_; }

 private:
  services::MbufPtr mbuf_;
  void* data_;
  uint64_t capacity_;
  FlowFunc::TensorDataType dtype_;
  std::vector<int64_t> shape_;
};

class MbufFlowMsg final : public FlowFunc::FlowMsg {
 public:
  // Wraps an mbuf that arrived through a queue (its head says what it is).
  static std::shared_ptr<MbufFlowMsg> FromMbuf(services::MbufPtr mbuf);

 private:
  struct Key {};  // only FromMbuf constructs (through make_shared)

 public:
  MbufFlowMsg(Key, services::MbufPtr mbuf);

  FlowFunc::MsgType GetMsgType() const override;
  FlowFunc::Tensor* GetTensor() const override {
    EnsureViews();
    return tensor_.get();
  }
  int32_t GetRetCode() const override { return head().ret_code; }
  void SetRetCode(int32_t rc) override { head().ret_code = rc; }
  void SetStartTime(uint64_t t) override { head().start_time = t; }
  uint64_t GetStartTime() const override { return head().start_time; }
  void SetEndTime(uint64_t t) override { head().end_time = t; }
  uint64_t GetEndTime() const override { return head().end_time; }
  void SetFlowFlags(uint32_t f) override { head().flags = f; }
  uint32_t GetFlowFlags() const override { return head().flags; }
  void SetRouteLabel(uint32_t l) override { head().route_label = l; }
  uint64_t GetTransactionId() const override { return head().trans_id; }
  const std::vector<FlowFunc::Tensor*> GetTensorList() const override;
  int32_t GetRawData(void*& data, uint64_t& size) const override;
  void SetMsgType(FlowFunc::MsgType t) override;
  void SetTransactionId(uint64_t id) override { head().trans_id = id; }

  const services::MbufPtr& mbuf() const { return mbuf_; }
  services::MbufHead& head() const { return mbuf_->head(); }
  // Whether other threads may read this message's head: it is a UDF's
  // input (one mbuf may feed several consumers) or was output already (a
  // queue holds it). Such a head is never relabelled in place.
  bool shared() const { return shared_.load(std::memory_order_relaxed); }
  void MarkShared() { shared_.store(true, std::memory_order_relaxed); }

 private:
  // Tensor views are built on first use: a message that is only passed on
  // (most of them) never pays for them.
  void EnsureViews() const {
    if (!views_built_.load(std::memory_order_acquire)) BuildViews();
  }
  void BuildViews() const;

  services::MbufPtr mbuf_;
  std::atomic<bool> shared_{false};
  mutable std::atomic<bool> views_built_{false};
  // Serializes BuildViews. tensor_ and list_ are written once under it but
  // read without it after views_built_ (acquire) says they are published,
  // so they carry no GUARDED_BY: the analysis cannot express that.
  mutable util::Mutex views_mu_;
  mutable std::unique_ptr<MbufTensor> tensor_;
  mutable std::vector<std::unique_ptr<MbufTensor>> list_;
};

// TensorBytes of a size that does not fit in 64 bits.
inline constexpr uint64_t kTooLarge = ~0ull;

// Bytes of `count` elements of `dtype` (sub-byte types round up); kTooLarge
// on overflow.
uint64_t TensorBytes(FlowFunc::TensorDataType dtype, int64_t count);
// Element count of a shape; -1 for a negative dimension or on overflow.
int64_t ElementCount(const std::vector<int64_t>& shape);

// Whether a data part of `size` bytes holds everything `head` says lies
// in it (its tensor, each tensor of a list, a raw message's bytes), so
// that no view over it reads past its end: the check for a message that
// came from another process or host, whose head is its sender's word.
// kInvalidArgument saying what the head claims against what came.
Status CheckHeadFits(const services::MbufHead& head, uint64_t size);

// What a UDF's allocations may take and how long they wait for memory.
struct MsgLimits {
  std::string node;  // named in errors
  uint64_t max_bytes = ~uint64_t{0};
  int32_t wait_ms = 0;  // 0: fail at once when the pool is full
};

class MsgAllocator {
 public:
  // Where a block of `bytes` comes from when not from a memory group (an
  // hflow-worker's shared segment), waiting up to `wait_ms` for memory.
  using MbufSource = std::function<Status(uint64_t bytes, int32_t wait_ms,
                                          services::MbufPtr* out)>;

  MsgAllocator(services::ExchangeService* svc, int32_t device,
               std::string group, std::string member, MsgLimits limits = {});
  MsgAllocator(MbufSource source, int32_t device, MsgLimits limits = {});

  Status AllocTensorMsg(const std::vector<int64_t>& shape,
                        FlowFunc::TensorDataType dtype, uint32_t align,
                        std::shared_ptr<MbufFlowMsg>* out);
  Status AllocTensorListMsg(const std::vector<std::vector<int64_t>>& shapes,
                            const std::vector<FlowFunc::TensorDataType>& dtypes,
                            uint32_t align, std::shared_ptr<MbufFlowMsg>* out);
  Status AllocRawMsg(int64_t size, uint32_t align,
                     std::shared_ptr<MbufFlowMsg>* out);
  Status AllocEmptyMsg(FlowFunc::MsgType type,
                       std::shared_ptr<MbufFlowMsg>* out);
  // A new message on this device with `msg`'s head and data.
  Status Copy(const MbufFlowMsg& msg, std::shared_ptr<MbufFlowMsg>* out);
  // A new message on this device with `head` and the data part of `size`
  // bytes at `data`, host memory (a message that came from another host);
  // its payload re-aligned to head.align in the new block.
  Status FromHost(const services::MbufHead& head, const void* data,
                  uint64_t size, std::shared_ptr<MbufFlowMsg>* out);

  int32_t device() const { return device_; }

 private:
  Status AllocMbuf(uint64_t bytes, services::MbufPtr* out);

  services::ExchangeService* const svc_;  // null: source_ instead
  const MbufSource source_;
  const int32_t device_;
  const std::string group_;
  const std::string member_;
  const MsgLimits limits_;
};

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_MBUF_MSG_H_
