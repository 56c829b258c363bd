// Unit tests of libflow_func's logger (levels, environment, sink, macros,
// per-thread header), FlowBufferFactory with and without the runtime's
// allocator, DataTypeSize, OutOptions/BalanceConfig and the Tensor, FlowMsg
// and context defaults. Logger state is process-wide: the fixture restores it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg.h"
#include "flow_func/lib/flow_func_internal.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_run_context.h"
#include "flow_func/out_options.h"
#include "flow_msg_fakes.h"

namespace FlowFunc {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

// Captures log lines for one test and puts the logger back afterwards.
class FlowFuncLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    internal::SetLogSink(
        [this](FlowFuncLogLevel level, const std::string& line) {
          levels_.push_back(level);
          lines_.push_back(line);
        });
  }
  void TearDown() override {
    internal::SetLogSink(nullptr);
    internal::SetLogExtHeader(nullptr);
    internal::ReloadLogLevelFromEnvironment();
  }
  std::vector<FlowFuncLogLevel> levels_;
  std::vector<std::string> lines_;
};

int g_evaluated = 0;
int CountEvaluation() { return ++g_evaluated; }

TEST_F(FlowFuncLogTest, LevelsGateMessagesAndFormatting) {
  internal::SetLogLevel(FlowFuncLogLevel::WARN);
  FlowFuncLogger& logger =
      FlowFuncLogger::GetLogger(FlowFuncLogType::DEBUG_LOG);
  EXPECT_FALSE(logger.IsLogEnable(FlowFuncLogLevel::DEBUG));
  EXPECT_FALSE(logger.IsLogEnable(FlowFuncLogLevel::INFO));
  EXPECT_TRUE(logger.IsLogEnable(FlowFuncLogLevel::WARN));
  EXPECT_TRUE(logger.IsLogEnable(FlowFuncLogLevel::ERROR));
  g_evaluated = 0;
  FLOW_FUNC_LOG_DEBUG("debug %d", CountEvaluation());
  FLOW_FUNC_LOG_INFO("info %d", CountEvaluation());
  EXPECT_EQ(g_evaluated, 0);  // Disabled: arguments not even evaluated.
  EXPECT_TRUE(lines_.empty());
  FLOW_FUNC_LOG_WARN("warn %d", CountEvaluation());
  FLOW_FUNC_LOG_ERROR("no arguments");
  EXPECT_EQ(g_evaluated, 1);
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(levels_[0], FlowFuncLogLevel::WARN);
  EXPECT_THAT(lines_[0],
              MatchesRegex(R"(\[WARN\] .*flow_func_log_tensor_test\.cc:[0-9]+ )"
                           R"(TestBody: warn 1)"));
  EXPECT_THAT(lines_[1], StartsWith("[ERROR] "));
  EXPECT_THAT(lines_[1], HasSubstr(": no arguments"));

  internal::SetLogLevel(FlowFuncLogLevel::DEBUG);
  FLOW_FUNC_LOG_DEBUG("now %s", "on");
  FLOW_FUNC_RUN_LOG_INFO("run %d", 5);
  FLOW_FUNC_RUN_LOG_ERROR("run error");
  ASSERT_EQ(lines_.size(), 5u);
  EXPECT_THAT(lines_[2], StartsWith("[DEBUG] "));
  EXPECT_THAT(lines_[3], StartsWith("[INFO] "));
  EXPECT_THAT(lines_[4], StartsWith("[ERROR] "));
  internal::SetLogLevel(FlowFuncLogLevel::ERROR);
  EXPECT_FALSE(FlowFuncLogger::GetLogger(FlowFuncLogType::RUN_LOG)
                   .IsLogEnable(FlowFuncLogLevel::WARN));
}

TEST_F(FlowFuncLogTest, ExtHeaderIsPerThread) {
  EXPECT_STREQ(FlowFuncLogger::GetLogExtHeader(), "");
  internal::SetLogExtHeader("[node add] ");
  EXPECT_STREQ(FlowFuncLogger::GetLogExtHeader(), "[node add] ");
  std::string other;
  std::thread([&other] { other = FlowFuncLogger::GetLogExtHeader(); }).join();
  EXPECT_EQ(other, "");
  FLOW_FUNC_LOG_ERROR("x");
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_THAT(lines_[0], StartsWith("[ERROR] [node add] "));
}

TEST_F(FlowFuncLogTest, LongMessagesAreNotTruncated) {
  std::string big(3000, 'x');
  FLOW_FUNC_LOG_ERROR("%s|end", big.c_str());
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_THAT(lines_[0], HasSubstr(big + "|end"));
}

TEST_F(FlowFuncLogTest, DuplicateRegistrationIsLoggedAsError) {
  auto creator = [] { return std::shared_ptr<MetaFlowFunc>(); };
  ASSERT_TRUE(RegisterFlowFunc("ff_log_test_dup", creator));
  EXPECT_FALSE(RegisterFlowFunc("ff_log_test_dup", creator));
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(levels_[0], FlowFuncLogLevel::ERROR);
  EXPECT_THAT(lines_[0], HasSubstr("\"ff_log_test_dup\""));
}

// Sets or clears an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    value == nullptr ? unsetenv(name) : setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

FlowFuncLogLevel LowestEnabled() {
  FlowFuncLogger& logger =
      FlowFuncLogger::GetLogger(FlowFuncLogType::DEBUG_LOG);
  for (int l = 0; l <= 3; ++l) {
    if (logger.IsLogEnable(static_cast<FlowFuncLogLevel>(l)))
      return static_cast<FlowFuncLogLevel>(l);
  }
  return static_cast<FlowFuncLogLevel>(4);  // Off.
}

TEST_F(FlowFuncLogTest, LevelFromEnvironment) {
  {
    ScopedEnv hflow("HFLOW_FLOW_FUNC_LOG_LEVEL", nullptr);
    ScopedEnv ascend("ASCEND_GLOBAL_LOG_LEVEL", nullptr);
    internal::ReloadLogLevelFromEnvironment();
    EXPECT_EQ(LowestEnabled(), FlowFuncLogLevel::WARN);  // Default.
  }
  {
    ScopedEnv hflow("HFLOW_FLOW_FUNC_LOG_LEVEL", "Debug");
    ScopedEnv ascend("ASCEND_GLOBAL_LOG_LEVEL", "3");
    internal::ReloadLogLevelFromEnvironment();
    EXPECT_EQ(LowestEnabled(), FlowFuncLogLevel::DEBUG);  // hflow's wins.
  }
  {
    ScopedEnv hflow("HFLOW_FLOW_FUNC_LOG_LEVEL", "bogus");
    ScopedEnv ascend("ASCEND_GLOBAL_LOG_LEVEL", "1");
    internal::ReloadLogLevelFromEnvironment();
    EXPECT_EQ(LowestEnabled(), FlowFuncLogLevel::INFO);  // Fallback.
  }
  {
    ScopedEnv hflow("HFLOW_FLOW_FUNC_LOG_LEVEL", "error");
    internal::ReloadLogLevelFromEnvironment();
    EXPECT_EQ(LowestEnabled(), FlowFuncLogLevel::ERROR);
  }
  {
    ScopedEnv hflow("HFLOW_FLOW_FUNC_LOG_LEVEL", "off");
    internal::ReloadLogLevelFromEnvironment();
    EXPECT_EQ(static_cast<int>(LowestEnabled()), 4);
  }
}

// ---- Tensors ---------------------------------------------------------------

TEST(DataTypeSize, EveryType) {
  using T = TensorDataType;
  const std::vector<std::pair<T, int64_t>> expected = {
      {T::DT_FLOAT, 4},  {T::DT_FLOAT16, 2}, {T::DT_INT8, 1},
      {T::DT_INT32, 4},  {T::DT_UINT8, 1},   {T::DT_INT16, 2},
      {T::DT_UINT16, 2}, {T::DT_UINT32, 4},  {T::DT_INT64, 8},
      {T::DT_UINT64, 8}, {T::DT_DOUBLE, 8},  {T::DT_BOOL, 1},
      {T::DT_QINT8, 1},  {T::DT_QINT16, 2},  {T::DT_QINT32, 4},
      {T::DT_QUINT8, 1}, {T::DT_QUINT16, 2}, {T::DT_DUAL, 5},
      {T::DT_BF16, 2},   {T::DT_INT4, 1},    {T::DT_UINT1, 1},
      {T::DT_INT2, 1},   {T::DT_UINT2, 1},   {T::DT_UNDEFINED, -1}};
  for (const auto& [dtype, size] : expected) {
    EXPECT_EQ(internal::DataTypeSize(dtype), size) << static_cast<int>(dtype);
  }
  EXPECT_EQ(static_cast<int>(T::DT_UNDEFINED), 33);
  EXPECT_EQ(internal::DataTypeSize(static_cast<T>(5)),
            -1);  // A gap in the enum.
  EXPECT_EQ(internal::DataSizeBytes(T::DT_INT4, 3), 2);
  EXPECT_EQ(internal::DataSizeBytes(T::DT_UINT1, 9), 2);
  EXPECT_EQ(internal::DataSizeBytes(T::DT_INT2, 4), 1);
  EXPECT_EQ(internal::DataSizeBytes(T::DT_FLOAT, 6), 24);
  EXPECT_EQ(internal::DataSizeBytes(T::DT_FLOAT, -1), -1);
  EXPECT_EQ(internal::DataSizeBytes(T::DT_INT64, INT64_MAX / 4), -1);
}

TEST(FlowBufferFactory, HostFallback) {
  std::shared_ptr<Tensor> t =
      FlowBufferFactory::AllocTensor({2, 3}, TensorDataType::DT_FLOAT);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->GetShape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->GetDataType(), TensorDataType::DT_FLOAT);
  EXPECT_EQ(t->GetElementCnt(), 6);
  EXPECT_EQ(t->GetDataSize(), 24u);
  EXPECT_EQ(t->GetDataBufferSize(), 512u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->GetData()) % 512, 0u);
  EXPECT_EQ(static_cast<const float*>(t->GetData())[5], 0.0F);
  EXPECT_EQ(t->Reshape({3, 2}), FLOW_FUNC_SUCCESS);
  EXPECT_EQ(t->GetShape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t->Reshape({7}), FLOW_FUNC_ERR_PARAM_INVALID);
  EXPECT_EQ(t->Reshape({-6}), FLOW_FUNC_ERR_PARAM_INVALID);
  EXPECT_EQ(t->GetShape(), (std::vector<int64_t>{3, 2}));

  std::shared_ptr<Tensor> scalar =
      FlowBufferFactory::AllocTensor({}, TensorDataType::DT_INT64, 32);
  ASSERT_NE(scalar, nullptr);
  EXPECT_EQ(scalar->GetElementCnt(), 1);
  EXPECT_EQ(scalar->GetDataBufferSize(), 32u);
  std::shared_ptr<Tensor> empty =
      FlowBufferFactory::AllocTensor({0, 4}, TensorDataType::DT_INT8);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->GetDataSize(), 0u);
  EXPECT_NE(empty->GetData(), nullptr);
  std::shared_ptr<Tensor> packed =
      FlowBufferFactory::AllocTensor({3}, TensorDataType::DT_INT4);
  ASSERT_NE(packed, nullptr);
  EXPECT_EQ(packed->GetDataSize(), 2u);
}

TEST(FlowBufferFactory, RejectsInvalidRequests) {
  internal::SetLogSink([](FlowFuncLogLevel, const std::string&) {});  // Quiet.
  EXPECT_EQ(FlowBufferFactory::AllocTensor({-1, 2}, TensorDataType::DT_FLOAT),
            nullptr);
  EXPECT_EQ(FlowBufferFactory::AllocTensor({2}, TensorDataType::DT_UNDEFINED),
            nullptr);
  for (uint32_t align : {0u, 16u, 48u, 2048u}) {
    EXPECT_EQ(
        FlowBufferFactory::AllocTensor({2}, TensorDataType::DT_FLOAT, align),
        nullptr)
        << align;
  }
  EXPECT_EQ(
      FlowBufferFactory::AllocTensor({INT64_MAX, 4}, TensorDataType::DT_FLOAT),
      nullptr);
  internal::SetLogSink(nullptr);
}

TEST(FlowBufferFactory, UsesThisThreadsAllocator) {
  std::shared_ptr<Tensor> marker =
      FlowBufferFactory::AllocTensor({1}, TensorDataType::DT_INT8);
  std::vector<int64_t> seen_shape;
  uint32_t seen_align = 0;
  internal::TensorAllocator previous = internal::SetTensorAllocator(
      [&](const std::vector<int64_t>& shape, TensorDataType, uint32_t align) {
        seen_shape = shape;
        seen_align = align;
        return marker;
      });
  EXPECT_FALSE(previous);
  EXPECT_EQ(
      FlowBufferFactory::AllocTensor({4, 4}, TensorDataType::DT_INT32, 64),
      marker);
  EXPECT_EQ(seen_shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(seen_align, 64u);
  std::shared_ptr<Tensor> from_other;
  std::thread([&] {
    from_other = FlowBufferFactory::AllocTensor({4}, TensorDataType::DT_INT32);
  }).join();
  ASSERT_NE(from_other, nullptr);
  EXPECT_NE(from_other, marker);  // The hook is per thread.

  internal::SetTensorAllocator(
      [](const std::vector<int64_t>&, TensorDataType,
         uint32_t) -> std::shared_ptr<Tensor> { throw 1; });
  internal::SetLogSink([](FlowFuncLogLevel, const std::string&) {});
  EXPECT_EQ(FlowBufferFactory::AllocTensor({4}, TensorDataType::DT_INT32),
            nullptr);
  internal::SetLogSink(nullptr);
  EXPECT_TRUE(
      internal::SetTensorAllocator(nullptr));  // Returns the throwing one.
  EXPECT_NE(FlowBufferFactory::AllocTensor({4}, TensorDataType::DT_INT32),
            marker);
}

// ---- OutOptions ------------------------------------------------------------

TEST(OutOptions, BalanceConfigIsCreatedOnDemand) {
  static_assert(sizeof(BalanceWeight) == 16, "packed");
  OutOptions options;
  EXPECT_EQ(options.GetBalanceConfig(), nullptr);
  BalanceConfig* config = options.MutableBalanceConfig();
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(options.MutableBalanceConfig(), config);
  EXPECT_EQ(options.GetBalanceConfig(), config);
  EXPECT_EQ(config->GetAffinityPolicy(), AffinityPolicy::NO_AFFINITY);
  config->SetAffinityPolicy(AffinityPolicy::COL_AFFINITY);
  const int32_t matrix[] = {1, 2, 3, 4, 5, 6};
  BalanceWeight weight;
  weight.rowNum = 2;
  weight.colNum = 3;
  weight.matrix = matrix;
  config->SetBalanceWeight(weight);
  config->SetDataPos({{0, 1}, {1, 2}});
  const BalanceConfig* read = options.GetBalanceConfig();
  EXPECT_EQ(read->GetAffinityPolicy(), AffinityPolicy::COL_AFFINITY);
  // BalanceWeight is packed (GE's layout): copy members out before gtest
  // takes them by reference, or the reference would be misaligned.
  const BalanceWeight got = read->GetBalanceWeight();
  const int32_t cols = got.colNum;
  const int32_t* got_matrix = got.matrix;
  EXPECT_EQ(cols, 3);
  EXPECT_EQ(got_matrix, matrix);
  EXPECT_EQ(read->GetDataPos(),
            (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {1, 2}}));
}

// ---- Defaults of the abstract classes --------------------------------------

using ::hflow::testing::BareMsg;
using ::hflow::testing::BareTensor;

class BareRunContext : public MetaRunContext {
 public:
  std::shared_ptr<FlowMsg> AllocTensorMsg(const std::vector<int64_t>&,
                                          TensorDataType) override {
    return nullptr;
  }
  std::shared_ptr<FlowMsg> AllocEmptyDataMsg(MsgType) override {
    return nullptr;
  }
  int32_t SetOutput(uint32_t, std::shared_ptr<FlowMsg>) override { return 0; }
  int32_t RunFlowModel(const char*,
                       const std::vector<std::shared_ptr<FlowMsg>>&,
                       std::vector<std::shared_ptr<FlowMsg>>&,
                       int32_t) override {
    return 0;
  }
  int32_t GetUserData(void*, size_t, size_t) const override { return 0; }
  int32_t SetOutput(uint32_t, std::shared_ptr<FlowMsg>,
                    const OutOptions&) override {
    return 0;
  }
  int32_t SetMultiOutputs(uint32_t,
                          const std::vector<std::shared_ptr<FlowMsg>>&,
                          const OutOptions&) override {
    return 0;
  }
};

TEST(ApiDefaults, TensorFlowMsgAndRunContext) {
  BareMsg msg;
  EXPECT_EQ(msg.tensor_.Reshape({3, 3}), FLOW_FUNC_ERR_NOT_SUPPORT);
  EXPECT_EQ(msg.tensor_.GetDataBufferSize(), 9u);
  EXPECT_EQ(msg.GetTransactionId(), 0u);
  msg.SetTransactionId(5);
  msg.SetMsgType(MsgType::MSG_TYPE_RAW_MSG);
  EXPECT_EQ(msg.GetTensorList(), (std::vector<Tensor*>{&msg.tensor_}));
  void* data = &msg;
  uint64_t size = 1;
  EXPECT_EQ(msg.GetRawData(data, size), FLOW_FUNC_ERR_NOT_SUPPORT);
  EXPECT_EQ(data, nullptr);

  internal::SetLogSink([](FlowFuncLogLevel, const std::string&) {});
  BareRunContext ctx;
  EXPECT_EQ(ctx.AllocTensorMsgWithAlign({1}, TensorDataType::DT_INT8, 64),
            nullptr);
  EXPECT_EQ(ctx.AllocTensorListMsg({{1}}, {TensorDataType::DT_INT8}), nullptr);
  EXPECT_EQ(ctx.AllocRawDataMsg(8), nullptr);
  EXPECT_EQ(ctx.ToFlowMsg(nullptr), nullptr);
  ctx.RaiseException(1, 2);
  int32_t code = 0;
  uint64_t user_context = 0;
  EXPECT_FALSE(ctx.GetException(code, user_context));
  internal::SetLogSink(nullptr);
}

}  // namespace
}  // namespace FlowFunc
