// Helpers shared by the MbufFlowMsg tests (mbuf_msg_*_test.cc): the
// harness's allocator, tensor message allocation, whether a range lies inside
// an mbuf's data, and filling and checking a tensor's bytes.
//
// Thread-safety: reentrant.
#ifndef HFLOW_FLOW_FUNC_MBUF_MSG_TEST_UTIL_H_
#define HFLOW_FLOW_FUNC_MBUF_MSG_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "udf_test_util.h"

namespace hflow {
namespace flow_func {
namespace mbuf_msg_test {

using FlowFunc::TensorDataType;
using testing::UdfHarness;

inline constexpr int32_t kOk = FlowFunc::FLOW_FUNC_SUCCESS;
inline constexpr int32_t kParamInvalid = FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;

inline std::shared_ptr<MsgAllocator> AllocatorOf(UdfHarness& h) {
  return h.Env("alloc", 0, 0).allocator;
}

inline std::shared_ptr<MbufFlowMsg> TensorMsg(MsgAllocator& a,
                                              const std::vector<int64_t>& shape,
                                              TensorDataType dt,
                                              uint32_t align = 512) {
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = a.AllocTensorMsg(shape, dt, align, &msg);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return msg;
}

inline uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// [p, p + n) lies inside the mbuf's data part.
inline bool InsideMbuf(const services::Mbuf& m, const void* p, uint64_t n) {
  uintptr_t lo = Addr(m.data());
  uintptr_t hi = lo + m.size();
  return Addr(p) >= lo && Addr(p) + n <= hi;
}

inline void Fill(FlowFunc::Tensor* t, uint8_t byte) {
  std::memset(t->GetData(), byte, t->GetDataSize());
}

inline bool AllBytes(const FlowFunc::Tensor* t, uint8_t byte) {
  const auto* p = static_cast<const uint8_t*>(t->GetData());
  for (uint64_t i = 0; i < t->GetDataSize(); ++i) {
    if (p[i] != byte) return false;
  }
  return true;
}

}  // namespace mbuf_msg_test
}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_MBUF_MSG_TEST_UTIL_H_
