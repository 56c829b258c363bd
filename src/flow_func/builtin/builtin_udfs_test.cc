// Built-in UDF tests: Identity, Add over every numeric dtype, CountBatch
// (values, sliding, timeout with padding through the timer thread) and
// TimeBatch, each run as a UDF instance on a sim device without 0.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "flow_func/init_params.h"
#include "flow_func/udf_instance.h"
#include "udf_test_util.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::TensorDataType;
using testing::UdfHarness;

std::vector<FuncDesc> One(const char* func) {
  std::vector<FuncDesc> v(1);
  v[0].name = func;
  return v;
}

std::unique_ptr<UdfInstance> Make(UdfHarness& h, const char* func, size_t in,
                                  size_t out, const char* attrs = "{}") {
  AttrMap m;
  EXPECT_TRUE(AttrMapFromJson(nlohmann::json::parse(attrs), "attrs", &m).ok());
  std::unique_ptr<UdfInstance> inst;
  Status s =
      UdfInstance::Create(One(func), h.Env(func, in, out, std::move(m)), &inst);
  EXPECT_TRUE(s.ok()) << s.ToString();
  auto bound = h.Bind();
  if (inst) {
    s = inst->Init(*bound);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  return inst;
}

TEST(BuiltinUdfTest, IdentityPassesEveryInputOn) {
  UdfHarness h;
  auto inst = Make(h, "_BuiltIn_Identity", 2, 2);
  auto a = h.Tensor<int32_t>(TensorDataType::DT_INT32, {2}, {7, 8}, 11);
  auto b = h.Tensor<uint8_t>(TensorDataType::DT_UINT8, {1}, {9}, 12);
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {a, b}), 0);
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].second.get(), a.get());
  EXPECT_EQ(out[1].first, 1u);
  EXPECT_EQ(out[1].second->GetTransactionId(), 12u);
}

template <typename T>
void CheckAdd(UdfHarness& h, UdfInstance& inst, TensorDataType dt,
              std::vector<T> x, std::vector<T> y, std::vector<T> want) {
  h.ClearOutputs();
  auto bound = h.Bind();
  int64_t n = static_cast<int64_t>(x.size());
  ASSERT_EQ(
      inst.Proc(*bound, 0, {h.Tensor<T>(dt, {n}, x), h.Tensor<T>(dt, {n}, y)}),
      0)
      << static_cast<int>(dt);
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second->GetTensor()->GetDataType(), dt);
  EXPECT_EQ(UdfHarness::Values<T>(*out[0].second), want)
      << static_cast<int>(dt);
}

TEST(BuiltinUdfTest, AddEveryNumericDtype) {
  UdfHarness h({3, 6, 7}, 6);
  auto inst = Make(h, "_BuiltIn_Add", 2, 1);
  CheckAdd<int8_t>(h, *inst, TensorDataType::DT_INT8, {1, -2}, {3, -4},
                   {4, -6});
  CheckAdd<int16_t>(h, *inst, TensorDataType::DT_INT16, {300}, {400}, {700});
  CheckAdd<int32_t>(h, *inst, TensorDataType::DT_INT32, {1, 2}, {3, 4}, {4, 6});
  CheckAdd<int64_t>(h, *inst, TensorDataType::DT_INT64, {1ll << 40}, {1},
                    {(1ll << 40) + 1});
  CheckAdd<uint8_t>(h, *inst, TensorDataType::DT_UINT8, {200}, {50}, {250});
  CheckAdd<uint16_t>(h, *inst, TensorDataType::DT_UINT16, {60000}, {5},
                     {60005});
  CheckAdd<uint32_t>(h, *inst, TensorDataType::DT_UINT32, {4000000000u}, {1},
                     {4000000001u});
  CheckAdd<uint64_t>(h, *inst, TensorDataType::DT_UINT64, {1ull << 63}, {2},
                     {(1ull << 63) + 2});
  CheckAdd<float>(h, *inst, TensorDataType::DT_FLOAT, {0.5f, 1}, {0.25f, -1},
                  {0.75f, 0});
  CheckAdd<double>(h, *inst, TensorDataType::DT_DOUBLE, {1e300}, {1e300},
                   {2e300});
  // 1.5 + 2.25 = 3.75 in IEEE half (0x3E00 + 0x4080 = 0x4380).
  CheckAdd<uint16_t>(h, *inst, TensorDataType::DT_FLOAT16, {0x3E00}, {0x4080},
                     {0x4380});
  // bfloat16: 1.0 (0x3F80) + 2.0 (0x4000) = 3.0 (0x4040).
  CheckAdd<uint16_t>(h, *inst, TensorDataType::DT_BF16, {0x3F80}, {0x4000},
                     {0x4040});
}

TEST(BuiltinUdfTest, AddRejectsMismatchedInputs) {
  UdfHarness h;
  auto inst = Make(h, "_BuiltIn_Add", 2, 1);
  auto bound = h.Bind();
  auto a = h.Tensor<int32_t>(TensorDataType::DT_INT32, {2}, {1, 2});
  auto b = h.Tensor<float>(TensorDataType::DT_FLOAT, {2}, {1, 2});
  auto c = h.Tensor<int32_t>(TensorDataType::DT_INT32, {3}, {1, 2, 3});
  auto d = h.Tensor<uint8_t>(TensorDataType::DT_BOOL, {1}, {1});
  EXPECT_EQ(inst->Proc(*bound, 0, {a, b}),
            FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
  EXPECT_EQ(inst->Proc(*bound, 0, {a, c}),
            FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
  EXPECT_EQ(inst->Proc(*bound, 0, {d, d}),
            FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
  EXPECT_EQ(inst->Proc(*bound, 0, {a}), FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
  EXPECT_TRUE(h.outputs().empty());
}

TEST(BuiltinUdfTest, CountBatchStacksAndSlides) {
  UdfHarness h({2, 3, 4, 5}, 5);
  auto inst = Make(h, "_BuiltIn_CountBatch", 1, 1,
                   R"({"batch_size": 3, "slide_stride": 1})");
  auto bound = h.Bind();
  for (int32_t v = 1; v <= 5; ++v) {
    ASSERT_EQ(inst->Proc(*bound, 0,
                         {h.Tensor<int32_t>(TensorDataType::DT_INT32, {2},
                                            {v, 10 * v}, v)}),
              0);
  }
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 3u);  // windows [1..3], [2..4], [3..5]
  EXPECT_EQ(out[0].second->GetTensor()->GetShape(),
            (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(UdfHarness::Values<int32_t>(*out[0].second),
            (std::vector<int32_t>{1, 10, 2, 20, 3, 30}));
  EXPECT_EQ(UdfHarness::Values<int32_t>(*out[2].second),
            (std::vector<int32_t>{3, 30, 4, 40, 5, 50}));
  EXPECT_EQ(out[2].second->GetTransactionId(), 5u);
}

TEST(BuiltinUdfTest, CountBatchTimeoutEmitsPaddedBatchFromTimerThread) {
  UdfHarness h({3, 6, 7}, 3);
  auto inst = Make(h, "_BuiltIn_CountBatch", 1, 1,
                   R"({"batch_size": 4, "timeout": 30, "padding": true})");
  auto bound = h.Bind();
  auto t0 = std::chrono::steady_clock::now();
  for (int32_t v : {5, 6}) {
    ASSERT_EQ(
        inst->Proc(*bound, 0,
                   {h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {v})}),
        0);
  }
  EXPECT_TRUE(h.outputs().empty());
  ASSERT_TRUE(h.WaitOutputs(1, std::chrono::seconds(5)));
  EXPECT_GE(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(30));
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second->GetTensor()->GetShape(),
            (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(UdfHarness::Values<int32_t>(*out[0].second),
            (std::vector<int32_t>{5, 6, 0, 0}));
  EXPECT_EQ(out[0].second->mbuf()->device(), 3);
}

TEST(BuiltinUdfTest, CountBatchBadOptionsFailInit) {
  UdfHarness h;
  AttrMap m;
  ASSERT_TRUE(AttrMapFromJson(nlohmann::json::parse(
                                  R"({"batch_size": 2, "slide_stride": 5})"),
                              "attrs", &m)
                  .ok());
  std::unique_ptr<UdfInstance> inst;
  ASSERT_TRUE(UdfInstance::Create(One("_BuiltIn_CountBatch"),
                                  h.Env("cb", 1, 1, m), &inst)
                  .ok());
  auto bound = h.Bind();
  Status s = inst->Init(*bound);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("node 'cb'"), std::string::npos);
}

TEST(BuiltinUdfTest, TimeBatchGroupsByTimestamps) {
  UdfHarness h({2, 3, 4, 5}, 2);
  auto inst = Make(h, "_BuiltIn_TimeBatch", 1, 1, R"({"time_window": 10})");
  auto bound = h.Bind();
  for (int i = 0; i < 4; ++i) {
    auto m = h.Tensor<float>(TensorDataType::DT_FLOAT, {1}, {float(i)});
    m->SetStartTime(5 * i);
    m->SetEndTime(5 * i + 5);
    ASSERT_EQ(inst->Proc(*bound, 0, {m}), 0);
  }
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 2u);  // [0,10) and [10,20)
  EXPECT_EQ(UdfHarness::Values<float>(*out[0].second),
            (std::vector<float>{0, 1}));
  EXPECT_EQ(UdfHarness::Values<float>(*out[1].second),
            (std::vector<float>{2, 3}));
  EXPECT_EQ(out[1].second->GetStartTime(), 10u);
  EXPECT_EQ(out[1].second->GetEndTime(), 20u);
}

// bfloat16 batches like any other 2-byte type (the batcher once had its own
// dtype table that missed DT_BF16 and refused it as "unsupported dtype").
TEST(BuiltinUdfTest, CountBatchAndTimeBatchOnBf16) {
  UdfHarness h({3, 6, 7}, 6);
  const uint16_t kOne = 0x3F80, kTwo = 0x4000, kThree = 0x4040;  // bf16 bits
  auto count = Make(h, "_BuiltIn_CountBatch", 1, 1, R"({"batch_size": 2})");
  auto bound = h.Bind();
  ASSERT_EQ(count->Proc(*bound, 0,
                        {h.Tensor<uint16_t>(TensorDataType::DT_BF16, {2},
                                            {kOne, kTwo}, 1)}),
            0);
  ASSERT_EQ(count->Proc(*bound, 0,
                        {h.Tensor<uint16_t>(TensorDataType::DT_BF16, {2},
                                            {kThree, kOne}, 2)}),
            0);
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second->GetTensor()->GetDataType(), TensorDataType::DT_BF16);
  EXPECT_EQ(out[0].second->GetTensor()->GetShape(),
            (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(UdfHarness::Values<uint16_t>(*out[0].second),
            (std::vector<uint16_t>{kOne, kTwo, kThree, kOne}));

  h.ClearOutputs();
  auto time = Make(h, "_BuiltIn_TimeBatch", 1, 1, R"({"time_window": 10})");
  for (int i = 0; i < 4; ++i) {
    auto m = h.Tensor<uint16_t>(TensorDataType::DT_BF16, {1},
                                {static_cast<uint16_t>(kOne + i)});
    m->SetStartTime(5 * i);
    m->SetEndTime(5 * i + 5);
    ASSERT_EQ(time->Proc(*bound, 0, {m}), 0);
  }
  out = h.outputs();
  ASSERT_EQ(out.size(), 2u);  // [0,10) and [10,20)
  EXPECT_EQ(out[1].second->GetTensor()->GetDataType(), TensorDataType::DT_BF16);
  EXPECT_EQ(UdfHarness::Values<uint16_t>(*out[1].second),
            (std::vector<uint16_t>{kOne + 2, kOne + 3}));
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
