// ThreadPool tests: names, binding of each task's device on device sets
// without 0, unbound device-less tasks, errors and exceptions, no stray
// contexts, references released at shutdown.
#include "rt/thread_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "hflow/rt.h"
#include "test_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace rt {
namespace {

using ::hflow::testing::InstallSim;
using ::testing::HasSubstr;

class ThreadPoolTest : public ::testing::TestWithParam<std::vector<int32_t>> {};

TEST_P(ThreadPoolTest, EveryTaskRunsBoundToItsDevice) {
  const auto devices = GetParam();
  std::vector<int32_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  auto sim = InstallSim(all);
  sim->SetRecordCalls(true);
  {
    ThreadPool pool("deploy", 3);
    std::vector<std::pair<std::optional<int32_t>, ThreadPool::Task>> tasks;
    for (int rep = 0; rep < 8; ++rep) {
      for (int32_t d : devices) {
        tasks.emplace_back(d, [d]() -> Status {
          int32_t bound = -1;
          HFLOW_RETURN_IF_ERROR(rt::GetDevice(&bound));
          if (bound != d) return Status::Internal("wrong device");
          void* p = nullptr;
          HFLOW_RETURN_IF_ERROR(rt::Malloc(d, 64, &p));
          // Long enough that every worker picks up tasks.
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          return rt::Free(d, p);
        });
      }
    }
    ASSERT_TRUE(pool.RunAll(std::move(tasks)).ok());
  }
  std::set<std::string> threads;
  for (const auto& r : sim->CallLog()) {
    if (r.op == rt::Op::kMalloc || r.op == rt::Op::kFree) {
      EXPECT_EQ(r.bound_device, r.device) << r.thread;
      EXPECT_FALSE(r.implicit_binding);
      threads.insert(r.thread);
    }
  }
  EXPECT_GE(threads.size(), 2u);  // the pool really ran in parallel
  for (const auto& t : threads)
    EXPECT_THAT(t, ::testing::StartsWith("deploy-"));
  for (int32_t d : all) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    bool used = std::count(devices.begin(), devices.end(), d) > 0;
    EXPECT_EQ(st.contexts_created, used ? 1u : 0u) << "device " << d;
    EXPECT_EQ(st.implicit_bindings, 0u) << "device " << d;
    EXPECT_EQ(st.contexts_alive, 0u) << "device " << d;  // released at stop
    EXPECT_EQ(st.default_context_refs, 0) << "device " << d;
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, ThreadPoolTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1, 2, 3}));

TEST(ThreadPoolBasicsTest, DevicelessTasksRunUnbound) {
  InstallSim({2, 3, 4, 5});
  ThreadPool pool("svc", 1);
  ASSERT_TRUE(pool.Submit([] { return Status::OK(); }, 4).get().ok());
  // Same worker, next task without a device: it must not inherit device 4.
  Status s = pool.Submit([] {
                   if (rt::GetCurrentContext() != nullptr) {
                     return Status::Internal("inherited a binding");
                   }
                   void* p = nullptr;
                   return rt::Malloc(4, 8, &p);
                 })
                 .get();
  EXPECT_EQ(s.code(), StatusCode::kNoContext);
}

TEST(ThreadPoolBasicsTest, TaskThatRebindsDoesNotLeakIntoNextTask) {
  InstallSim({2, 3});
  ThreadPool pool("svc", 1);
  ASSERT_TRUE(pool.Submit([] { return rt::SetDevice(3); }, 2).get().ok());
  Status s =
      pool.Submit(
              [] {
                int32_t d = -1;
                HFLOW_RETURN_IF_ERROR(rt::GetDevice(&d));
                return d == 2
                           ? Status::OK()
                           : Status::Internal("still on " + std::to_string(d));
              },
              2)
          .get();
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(ThreadPoolBasicsTest, ThreadsAreNamed) {
  InstallSim({2});
  ThreadPool pool("loader", 2);
  std::string name;
  ASSERT_TRUE(pool.Submit([&] {
                    name = util::CurrentThreadName();
                    return Status::OK();
                  })
                  .get()
                  .ok());
  EXPECT_THAT(name, ::testing::MatchesRegex("loader-[01]"));
}

TEST(ThreadPoolBasicsTest, BindingErrorsAndExceptionsBecomeStatus) {
  auto sim = InstallSim({2, 3});
  ThreadPool pool("svc", 2);
  std::atomic<bool> ran{false};
  Status s = pool.Submit(
                     [&] {
                       ran = true;
                       return Status::OK();
                     },
                     9)
                 .get();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("binding device 9"));
  EXPECT_FALSE(ran);
  s = pool.Submit([]() -> Status { throw std::runtime_error("bad udf"); })
          .get();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("bad udf"));
  sim->MarkDeviceLost(3);
  s = pool.Submit([] { return Status::OK(); }, 3).get();
  EXPECT_EQ(s.code(), StatusCode::kDeviceLost);
}

TEST(ThreadPoolBasicsTest, RunAllReturnsFirstErrorAfterRunningAll) {
  InstallSim({2, 3});
  ThreadPool pool("svc", 2);
  std::atomic<int> runs{0};
  std::vector<std::pair<std::optional<int32_t>, ThreadPool::Task>> tasks;
  for (int i = 0; i < 6; ++i) {
    tasks.emplace_back(std::nullopt, [&, i] {
      ++runs;
      return i == 2   ? Status::NotFound("task 2")
             : i == 4 ? Status::Internal("task 4")
                      : Status::OK();
    });
  }
  Status s = pool.RunAll(std::move(tasks));
  EXPECT_EQ(runs, 6);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
}

TEST(ThreadPoolBasicsTest, SubmitAfterShutdownFails) {
  InstallSim({2});
  ThreadPool pool("svc", 1);
  pool.Shutdown();
  Status s = pool.Submit([] { return Status::OK(); }).get();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
}

// A task that never returns: RunAllWithin names it at the deadline, the
// others' results still count; Abandon lets the pool go without joining.
TEST(ThreadPoolBasicsTest, RunAllWithinNamesLateTasksAndAbandonDoesNotJoin) {
  InstallSim({3, 6, 7});
  // Kept for the process: the late task returns into the pool.
  static ThreadPool* pool;  // static: reachable, not a leak to LSan
  pool = new ThreadPool("deploy", 2);
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
  };
  static Gate* gate;  // outlives the test, as the late task may
  gate = new Gate();
  std::vector<std::pair<std::optional<int32_t>, ThreadPool::Task>> tasks;
  tasks.emplace_back(3, [] { return Status::OK(); });
  tasks.emplace_back(6, [] {
    std::unique_lock<std::mutex> lock(gate->mu);
    gate->cv.wait(lock, [] { return gate->open; });
    return Status::OK();
  });
  tasks.emplace_back(7, [] { return Status::NotFound("seven"); });
  std::vector<size_t> late;
  auto t0 = std::chrono::steady_clock::now();
  Status s = pool->RunAllWithin(std::move(tasks), 100, &late);
  auto spent = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(spent, std::chrono::milliseconds(100));
  EXPECT_LT(spent, std::chrono::milliseconds(2000));
  EXPECT_EQ(late, std::vector<size_t>{1});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  pool->Abandon();
  EXPECT_EQ(pool->size(), 0);
  EXPECT_EQ(pool->Submit([] { return Status::OK(); }).get().code(),
            StatusCode::kFailedPrecondition);
  {
    std::lock_guard<std::mutex> lock(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
}

}  // namespace
}  // namespace rt
}  // namespace hflow
