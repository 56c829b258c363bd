// Unit tests of libflow_func's registry, FlowFuncRegistrar, the registration
// macros, AscendString, AttrValue and the out-of-line API defaults. Function
// names are prefixed "ff_lib_test_" so they never collide with hflow's own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "flow_func/ascend_string.h"
#include "flow_func/attr_value.h"
#include "flow_func/lib/flow_func_internal.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/meta_params.h"

namespace FlowFunc {
namespace {

using internal::FunctionKind;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

// ---- Test UDFs, registered at static-init time like real ones. -------------

class SingleFunc : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>&) override {
    return 7;
  }
};

class SharedMulti : public MetaMultiFunc {
 public:
  static int instances;
  SharedMulti() { ++instances; }
  int32_t ProcA(const std::shared_ptr<MetaRunContext>&,
                const std::vector<std::shared_ptr<FlowMsg>>&) {
    return ++calls;
  }
  int32_t ProcB(const std::shared_ptr<MetaRunContext>&,
                const std::vector<std::shared_ptr<FlowMsg>>&) const {
    return 100 + calls;
  }
  int32_t ProcQ(const std::shared_ptr<MetaRunContext>&,
                const std::vector<std::shared_ptr<FlowMsgQueue>>& queues) {
    return static_cast<int32_t>(queues.size()) + 1000;
  }
  int calls = 0;
};
int SharedMulti::instances = 0;

class OtherMulti : public MetaMultiFunc {};

}  // namespace
}  // namespace FlowFunc

REGISTER_FLOW_FUNC("ff_lib_test_single", FlowFunc::SingleFunc);
REGISTER_FLOW_FUNC("ff_lib_test_single_again", FlowFunc::SingleFunc);

FLOW_FUNC_REGISTRAR(FlowFunc::SharedMulti)
    .RegProcFunc("ff_lib_test_a", &FlowFunc::SharedMulti::ProcA)
    .RegProcFunc("ff_lib_test_b", &FlowFunc::SharedMulti::ProcB)
    .RegProcFunc("ff_lib_test_q", &FlowFunc::SharedMulti::ProcQ);

namespace FlowFunc {
namespace {

FLOW_FUNC_CREATOR_FUNC MakeSingleCreator() {
  return [] {
    return std::shared_ptr<MetaFlowFunc>(std::make_shared<SingleFunc>());
  };
}

// ---- Registry --------------------------------------------------------------

TEST(FlowFuncRegistry, StaticRegistrationsAreVisible) {
  FLOW_FUNC_CREATOR_FUNC creator;
  ASSERT_TRUE(internal::LookupFlowFunc("ff_lib_test_single", &creator));
  std::shared_ptr<MetaFlowFunc> func = creator();
  ASSERT_NE(func, nullptr);
  EXPECT_EQ(func->Proc({}), 7);
  EXPECT_EQ(func->ResetFlowFuncState(), FLOW_FUNC_ERR_NOT_SUPPORT);
  EXPECT_TRUE(internal::LookupFlowFunc("ff_lib_test_single_again", nullptr));
  EXPECT_THAT(internal::RegisteredFunctionNames(), Contains("ff_lib_test_a"));
}

TEST(FlowFuncRegistry, LookupChecksTheKind) {
  FunctionKind kind;
  ASSERT_TRUE(internal::LookupKind("ff_lib_test_q", &kind));
  EXPECT_EQ(kind, FunctionKind::kMultiFuncWithQ);
  EXPECT_FALSE(internal::LookupMultiFunc("ff_lib_test_q", nullptr));
  EXPECT_TRUE(internal::LookupMultiFuncWithQ("ff_lib_test_q", nullptr));
  EXPECT_FALSE(internal::LookupFlowFunc("ff_lib_test_a", nullptr));
  EXPECT_FALSE(internal::LookupFlowFunc("ff_lib_test_unknown", nullptr));
  EXPECT_FALSE(internal::LookupFlowFunc(nullptr, nullptr));
  EXPECT_FALSE(internal::LookupKind("ff_lib_test_unknown", &kind));
}

TEST(FlowFuncRegistry, DuplicateKeepsTheFirstAcrossKinds) {
  ASSERT_TRUE(RegisterFlowFunc("ff_lib_test_dup", MakeSingleCreator()));
  bool second_called = false;
  EXPECT_FALSE(RegisterFlowFunc("ff_lib_test_dup", [&second_called] {
    second_called = true;
    return std::shared_ptr<MetaFlowFunc>();
  }));
  MULTI_FUNC_CREATOR_FUNC multi =
      [](std::shared_ptr<MetaMultiFunc>&,
         std::map<AscendString, PROC_FUNC_WITH_CONTEXT>&) { return 0; };
  EXPECT_FALSE(RegisterMultiFunc("ff_lib_test_dup", multi));
  FLOW_FUNC_CREATOR_FUNC creator;
  ASSERT_TRUE(internal::LookupFlowFunc("ff_lib_test_dup", &creator));
  EXPECT_NE(creator(), nullptr);
  EXPECT_FALSE(second_called);
}

// Two libraries may register one name; each library's node gets its own
// creator, the process's registration backs every library, and a lookup
// without a library is ambiguous when only libraries (several) have it.
TEST(FlowFuncRegistry, NamesArePerLibrary) {
  // Each creator records its tag: which registration a lookup found.
  int last = 0;
  auto creator_of = [&last](int tag) -> FLOW_FUNC_CREATOR_FUNC {
    return [&last, tag] {
      last = tag;
      return std::shared_ptr<MetaFlowFunc>();
    };
  };
  auto tag_of = [&last](const FLOW_FUNC_CREATOR_FUNC& c) {
    last = 0;
    c();
    return last;
  };
  const std::string lib_a = "/libs/ff_lib_test_a.so";
  const std::string lib_b = "/libs/ff_lib_test_b.so";
  EXPECT_EQ(internal::SetRegisteringLibrary(lib_a), "");
  ASSERT_TRUE(RegisterFlowFunc("ff_lib_test_shared", creator_of(1)));
  EXPECT_FALSE(RegisterFlowFunc("ff_lib_test_shared", creator_of(9)));
  ASSERT_TRUE(RegisterFlowFunc("ff_lib_test_only_a", creator_of(2)));
  EXPECT_EQ(internal::SetRegisteringLibrary(lib_b), lib_a);
  ASSERT_TRUE(RegisterFlowFunc("ff_lib_test_shared", creator_of(3)));
  EXPECT_EQ(internal::SetRegisteringLibrary(""), lib_b);
  ASSERT_TRUE(RegisterFlowFunc("ff_lib_test_in_process", creator_of(4)));

  FLOW_FUNC_CREATOR_FUNC c;
  ASSERT_TRUE(internal::LookupFlowFunc(lib_a, "ff_lib_test_shared", &c));
  EXPECT_EQ(tag_of(c), 1);
  ASSERT_TRUE(internal::LookupFlowFunc(lib_b, "ff_lib_test_shared", &c));
  EXPECT_EQ(tag_of(c), 3);
  // Only another library has it: not found for library b.
  EXPECT_FALSE(internal::LookupFlowFunc(lib_b, "ff_lib_test_only_a", &c));
  EXPECT_FALSE(internal::LookupKind(lib_b, "ff_lib_test_only_a", nullptr));
  // The process's registration serves every library.
  ASSERT_TRUE(internal::LookupFlowFunc(lib_b, "ff_lib_test_in_process", &c));
  EXPECT_EQ(tag_of(c), 4);
  // By name alone: the only library's, or ambiguous.
  ASSERT_TRUE(internal::LookupFlowFunc("ff_lib_test_only_a", &c));
  EXPECT_EQ(tag_of(c), 2);
  EXPECT_FALSE(internal::LookupFlowFunc("ff_lib_test_shared", &c));
  EXPECT_THAT(internal::LibrariesRegistering("ff_lib_test_shared"),
              ElementsAre(lib_a, lib_b));
  EXPECT_THAT(internal::NamesRegisteredBy(lib_a),
              ElementsAre("ff_lib_test_only_a", "ff_lib_test_shared"));
  EXPECT_TRUE(internal::UnregisterFunction("ff_lib_test_shared"));
  EXPECT_TRUE(internal::LibrariesRegistering("ff_lib_test_shared").empty());
}

TEST(FlowFuncRegistry, RejectsMissingNamesAndCreators) {
  EXPECT_FALSE(RegisterFlowFunc(nullptr, MakeSingleCreator()));
  EXPECT_FALSE(RegisterFlowFunc("", MakeSingleCreator()));
  EXPECT_FALSE(RegisterFlowFunc("ff_lib_test_empty", FLOW_FUNC_CREATOR_FUNC()));
  EXPECT_FALSE(
      RegisterMultiFunc("ff_lib_test_empty", MULTI_FUNC_CREATOR_FUNC()));
  EXPECT_FALSE(
      RegisterMultiFunc("ff_lib_test_empty", MULTI_FUNC_WITH_Q_CREATOR_FUNC()));
  EXPECT_FALSE(internal::LookupKind("ff_lib_test_empty", nullptr));
}

// A callable whose copies throw: storing it in the registry copies it.
struct ThrowOnCopy {
  ThrowOnCopy() = default;
  ThrowOnCopy(const ThrowOnCopy&) { throw std::runtime_error("copy refused"); }
  ThrowOnCopy(ThrowOnCopy&&) noexcept = default;
  std::shared_ptr<MetaFlowFunc> operator()() const { return nullptr; }
  int32_t operator()(std::shared_ptr<MetaMultiFunc>&,
                     std::map<AscendString, PROC_FUNC_WITH_CONTEXT>&) const {
    return 0;
  }
  int32_t operator()(std::shared_ptr<MetaMultiFunc>&,
                     std::map<AscendString, PROC_FUNC_WITH_CONTEXT_Q>&) const {
    return 0;
  }
};

TEST(FlowFuncRegistry, RegistrationNeverThrows) {
  static_assert(noexcept(RegisterFlowFunc("", FLOW_FUNC_CREATOR_FUNC())));
  static_assert(noexcept(RegisterMultiFunc("", MULTI_FUNC_CREATOR_FUNC())));
  static_assert(
      noexcept(RegisterMultiFunc("", MULTI_FUNC_WITH_Q_CREATOR_FUNC())));
  FLOW_FUNC_CREATOR_FUNC flow{ThrowOnCopy()};
  MULTI_FUNC_CREATOR_FUNC multi{ThrowOnCopy()};
  MULTI_FUNC_WITH_Q_CREATOR_FUNC multi_q{ThrowOnCopy()};
  EXPECT_FALSE(RegisterFlowFunc("ff_lib_test_throw_f", flow));
  EXPECT_FALSE(RegisterMultiFunc("ff_lib_test_throw_m", multi));
  EXPECT_FALSE(RegisterMultiFunc("ff_lib_test_throw_q", multi_q));
  EXPECT_FALSE(internal::LookupKind("ff_lib_test_throw_f", nullptr));
}

TEST(FlowFuncRegistry, GenerationObserverAndUnregister) {
  uint64_t before = internal::RegistryGeneration();
  std::vector<std::string> seen;
  std::thread::id observer_thread;
  int id = internal::AddRegistrationObserver(
      [&](const internal::RegistrationEvent& e) {
        seen.push_back(e.name + (e.accepted ? ":ok" : ":dup"));
        observer_thread = std::this_thread::get_id();
      });
  int throwing =
      internal::AddRegistrationObserver([](const internal::RegistrationEvent&) {
        throw std::runtime_error("observer");
      });
  EXPECT_TRUE(RegisterFlowFunc("ff_lib_test_gen", MakeSingleCreator()));
  EXPECT_FALSE(RegisterFlowFunc("ff_lib_test_gen", MakeSingleCreator()));
  internal::RemoveRegistrationObserver(id);
  internal::RemoveRegistrationObserver(throwing);
  EXPECT_TRUE(RegisterFlowFunc("ff_lib_test_gen2", MakeSingleCreator()));

  EXPECT_THAT(seen, ElementsAre("ff_lib_test_gen:ok", "ff_lib_test_gen:dup"));
  EXPECT_EQ(observer_thread, std::this_thread::get_id());
  EXPECT_EQ(internal::RegistryGeneration(), before + 2);
  EXPECT_THAT(internal::NamesRegisteredSince(before),
              ElementsAre("ff_lib_test_gen", "ff_lib_test_gen2"));

  EXPECT_TRUE(internal::UnregisterFunction("ff_lib_test_gen"));
  EXPECT_FALSE(internal::UnregisterFunction("ff_lib_test_gen"));
  EXPECT_THAT(internal::RegisteredFunctionNames(),
              Not(Contains("ff_lib_test_gen")));
  EXPECT_TRUE(
      RegisterFlowFunc("ff_lib_test_gen", MakeSingleCreator()));  // Free again.
}

TEST(FlowFuncRegistry, ConcurrentRegistrationsKeepExactlyOne) {
  std::vector<std::thread> threads;
  std::vector<int> wins(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &wins] {
      wins[t] =
          RegisterFlowFunc("ff_lib_test_race", MakeSingleCreator()) ? 1 : 0;
    });
  }
  for (std::thread& thread : threads) thread.join();
  int total = 0;
  for (int w : wins) total += w;
  EXPECT_EQ(total, 1);
}

// ---- FlowFuncRegistrar -----------------------------------------------------

TEST(FlowFuncRegistrar, CreatorsOfOneNodeShareOneInstance) {
  MULTI_FUNC_CREATOR_FUNC create_a;
  MULTI_FUNC_CREATOR_FUNC create_b;
  ASSERT_TRUE(internal::LookupMultiFunc("ff_lib_test_a", &create_a));
  ASSERT_TRUE(internal::LookupMultiFunc("ff_lib_test_b", &create_b));
  int before = SharedMulti::instances;

  std::shared_ptr<MetaMultiFunc> slot;
  std::map<AscendString, PROC_FUNC_WITH_CONTEXT> procs;
  ASSERT_EQ(create_a(slot, procs), FLOW_FUNC_SUCCESS);
  ASSERT_EQ(create_b(slot, procs), FLOW_FUNC_SUCCESS);
  EXPECT_EQ(SharedMulti::instances, before + 1);
  ASSERT_NE(dynamic_cast<SharedMulti*>(slot.get()), nullptr);
  ASSERT_EQ(procs.count("ff_lib_test_a"), 1u);
  ASSERT_EQ(procs.count("ff_lib_test_b"), 1u);
  EXPECT_EQ(procs.count("ff_lib_test_q"),
            0u);  // Queue procs go to their own map.

  EXPECT_EQ(procs["ff_lib_test_a"](nullptr, {}), 1);
  EXPECT_EQ(procs["ff_lib_test_a"](nullptr, {}), 2);
  EXPECT_EQ(procs["ff_lib_test_b"](nullptr, {}),
            102);  // Same object saw both calls.
  EXPECT_EQ(slot->Init(nullptr), FLOW_FUNC_SUCCESS);
  EXPECT_EQ(slot->ResetFlowFuncState(nullptr), FLOW_FUNC_ERR_NOT_SUPPORT);
}

TEST(FlowFuncRegistrar, QueueProcsShareTheInstanceToo) {
  MULTI_FUNC_CREATOR_FUNC create_a;
  MULTI_FUNC_WITH_Q_CREATOR_FUNC create_q;
  ASSERT_TRUE(internal::LookupMultiFunc("ff_lib_test_a", &create_a));
  ASSERT_TRUE(internal::LookupMultiFuncWithQ("ff_lib_test_q", &create_q));
  int before = SharedMulti::instances;
  std::shared_ptr<MetaMultiFunc> slot;
  std::map<AscendString, PROC_FUNC_WITH_CONTEXT> procs;
  std::map<AscendString, PROC_FUNC_WITH_CONTEXT_Q> queue_procs;
  ASSERT_EQ(create_q(slot, queue_procs), FLOW_FUNC_SUCCESS);
  ASSERT_EQ(create_a(slot, procs), FLOW_FUNC_SUCCESS);
  EXPECT_EQ(SharedMulti::instances, before + 1);
  ASSERT_EQ(queue_procs.size(), 1u);
  EXPECT_EQ(queue_procs["ff_lib_test_q"](nullptr, {nullptr, nullptr}), 1002);
}

TEST(FlowFuncRegistrar, RefusesASlotHoldingAnotherClass) {
  MULTI_FUNC_CREATOR_FUNC create_a;
  ASSERT_TRUE(internal::LookupMultiFunc("ff_lib_test_a", &create_a));
  std::shared_ptr<MetaMultiFunc> slot = std::make_shared<OtherMulti>();
  std::map<AscendString, PROC_FUNC_WITH_CONTEXT> procs;
  EXPECT_EQ(create_a(slot, procs), FLOW_FUNC_FAILED);
  EXPECT_TRUE(procs.empty());
}

// ---- AscendString ----------------------------------------------------------

TEST(AscendString, ConstructionAndAccess) {
  EXPECT_STREQ(AscendString().GetString(), "");
  EXPECT_EQ(AscendString().GetLength(), 0u);
  EXPECT_STREQ(AscendString(nullptr).GetString(), "");
  EXPECT_STREQ(AscendString(nullptr, 5).GetString(), "");
  AscendString hello("hello");
  EXPECT_STREQ(hello.GetString(), "hello");
  EXPECT_EQ(hello.GetLength(), 5u);
  AscendString part("hello", 3);
  EXPECT_STREQ(part.GetString(), "hel");
  AscendString with_nul("a\0b", 3);
  EXPECT_EQ(with_nul.GetLength(), 3u);
  EXPECT_EQ(std::string(with_nul.GetString(), 3), std::string("a\0b", 3));
  AscendString copy = hello;
  EXPECT_EQ(copy.GetString(), hello.GetString());  // Copies share the buffer.
}

TEST(AscendString, ComparisonsAreLexicographic) {
  AscendString a("abc"), b("abd"), prefix("ab"), a2("abc");
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(prefix < a);
  EXPECT_TRUE(b > a);
  EXPECT_TRUE(a <= a2);
  EXPECT_TRUE(a >= a2);
  EXPECT_TRUE(a == a2);
  EXPECT_TRUE(a != b);
  EXPECT_FALSE(a < a2);
  EXPECT_FALSE(b <= a);
  EXPECT_FALSE(a >= b);
  EXPECT_TRUE(AscendString("a\0a", 3) != AscendString("a\0b", 3));
  EXPECT_TRUE(AscendString("a", 1) < AscendString("a\0", 2));
  EXPECT_TRUE(AscendString() == AscendString(""));
}

TEST(AscendString, WorksAsMapKey) {
  std::map<AscendString, int> map;
  map["b"] = 2;
  map["a"] = 1;
  map[AscendString("c")] = 3;
  map["a"] = 10;
  ASSERT_EQ(map.size(), 3u);
  EXPECT_STREQ(map.begin()->first.GetString(), "a");
  EXPECT_EQ(map.at("a"), 10);
  EXPECT_EQ(map.count("zz"), 0u);
}

// ---- AttrValue and the GetAttr templates -----------------------------------

class IntAttr : public AttrValue {
 public:
  explicit IntAttr(int64_t v) : v_(v) {}
  int32_t GetVal(int64_t& value) const override {
    value = v_;
    return FLOW_FUNC_SUCCESS;
  }
  // Every other type is a mismatch: forward to the library's bodies.
  int32_t GetVal(AscendString& v) const override {
    return AttrValue::GetVal(v);
  }
  int32_t GetVal(std::vector<AscendString>& v) const override {
    return AttrValue::GetVal(v);
  }
  int32_t GetVal(std::vector<int64_t>& v) const override {
    return AttrValue::GetVal(v);
  }
  int32_t GetVal(std::vector<std::vector<int64_t>>& v) const override {
    return AttrValue::GetVal(v);
  }
  int32_t GetVal(float& v) const override { return AttrValue::GetVal(v); }
  int32_t GetVal(std::vector<float>& v) const override {
    return AttrValue::GetVal(v);
  }
  int32_t GetVal(bool& v) const override { return AttrValue::GetVal(v); }
  int32_t GetVal(std::vector<bool>& v) const override {
    return AttrValue::GetVal(v);
  }
  int32_t GetVal(TensorDataType& v) const override {
    return AttrValue::GetVal(v);
  }
  int32_t GetVal(std::vector<TensorDataType>& v) const override {
    return AttrValue::GetVal(v);
  }

 private:
  int64_t v_;
};

class FakeParams : public MetaParams {
 public:
  const char* GetName() const override { return "fake"; }
  std::shared_ptr<const AttrValue> GetAttr(const char* name) const override {
    return std::string(name) == "n" ? std::make_shared<IntAttr>(42) : nullptr;
  }
  using MetaParams::GetAttr;
  size_t GetInputNum() const override { return 1; }
  size_t GetOutputNum() const override { return 1; }
  const char* GetWorkPath() const override { return "/tmp"; }
  int32_t GetRunningDeviceId() const override { return 3; }
};

TEST(AttrValue, MismatchDefaultsAndGetAttrTemplate) {
  static_assert(!std::is_copy_constructible<AttrValue>::value);
  FakeParams params;
  int64_t n = 0;
  EXPECT_EQ(params.GetAttr("n", n), FLOW_FUNC_SUCCESS);
  EXPECT_EQ(n, 42);
  float f = 1.5F;
  EXPECT_EQ(params.GetAttr("n", f), FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  EXPECT_EQ(f, 1.5F);
  std::vector<bool> bools;
  EXPECT_EQ(params.GetAttr("n", bools), FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  TensorDataType dt;
  EXPECT_EQ(params.GetAttr("n", dt), FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  AscendString s;
  EXPECT_EQ(params.GetAttr("n", s), FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH);
  EXPECT_EQ(params.GetAttr("missing", n), FLOW_FUNC_ERR_ATTR_NOT_EXITS);
  EXPECT_EQ(params.GetRunningInstanceId(), 0);
  EXPECT_EQ(params.GetRunningInstanceNum(), 1);
}

}  // namespace
}  // namespace FlowFunc
