// UdfGil (py_core.h): the GIL on hflow's own threads, with one Python
// thread state per thread for the thread's life.
//
// Note [One thread state per hflow thread]
// pybind11's gil_scoped_acquire, on a thread Python has never seen, makes a
// PyThreadState and deletes it again on release. CPython 3.11 gives every
// new thread state a fresh frame stack chunk from mmap and unmaps it on
// delete, so each Python UDF call paid an mmap, its page faults and a
// munmap with a TLB shootdown across cores: ~100 us per call, measured with
// perf on a Python UDF chain (4 UDFs: 458 us a message before, 83 after).
// UdfGil instead keeps the first thread state an hflow thread gets (one
// extra PyGILState count). A thread Python made (the caller's, a Python
// thread), or one whose state pybind11 made, is never kept: that state is
// not ours.
//
// A kept state outlives its thread: at thread exit the thread-local reaper
// only files it as an orphan, without taking the GIL (a thread exiting
// while the interpreter finalizes would be stopped dead inside
// PyGILState_Ensure, and no hflow join may then hold the GIL). The next
// UdfGil deletes the orphans still in the interpreter's thread list;
// finalizing the interpreter deletes any left. If the interpreter is
// finalized and started again, a thread's kept state is gone with the old
// one and the thread keeps a new one.
//
// Thread-safety: per-thread state is thread-local; the orphans are under
// a mutex; the GIL orders the rest.
#include <Python.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "python/py_core.h"

namespace hflow {
namespace python {
namespace {

// Plain thread-local data (no destructor): valid at any point of a
// thread's life, also in other thread-locals' destructors.
thread_local PyThreadState* t_kept = nullptr;
thread_local bool t_exiting = false;

// Off only in the test that proves the regression test bites.
std::atomic<bool> g_keep{true};

// Kept states of exited threads. Leaked on purpose: threads may exit
// after static destructors ran.
std::mutex& OrphanMu() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::vector<PyThreadState*>& Orphans() {
  static auto* orphans = new std::vector<PyThreadState*>;
  return *orphans;
}
std::atomic<bool> g_have_orphans{false};
std::atomic<uint64_t> g_filed{0};   // orphans filed by exiting threads
std::atomic<uint64_t> g_reaped{0};  // orphans deleted by ReapOrphans

struct Reaper {
  ~Reaper() {
    t_exiting = true;
    if (t_kept == nullptr) return;
    std::lock_guard<std::mutex> lock(OrphanMu());
    Orphans().push_back(t_kept);
    t_kept = nullptr;
    g_have_orphans.store(true);
    g_filed.fetch_add(1);
  }
};
thread_local Reaper t_reaper;

bool InThreadList(PyThreadState* ts) {
  PyInterpreterState* interp = PyInterpreterState_Main();
  for (PyThreadState* t = PyInterpreterState_ThreadHead(interp); t != nullptr;
       t = PyThreadState_Next(t)) {
    if (t == ts) return true;
  }
  return false;
}

// With the GIL held: deletes the orphans the interpreter still lists (one
// that a finalize already deleted is not in the list any more).
void ReapOrphans() {
  if (!g_have_orphans.load(std::memory_order_relaxed)) return;
  std::vector<PyThreadState*> orphans;
  {
    std::lock_guard<std::mutex> lock(OrphanMu());
    orphans.swap(Orphans());
    g_have_orphans.store(false);
  }
  for (PyThreadState* ts : orphans) {
    if (!InThreadList(ts)) continue;
    PyThreadState_Clear(ts);
    PyThreadState_Delete(ts);
    g_reaped.fetch_add(1);
  }
}

}  // namespace

UdfGil::UdfGil() {
  // New to this interpreter: no state (never had one, or the one kept was
  // deleted with a finalized interpreter).
  const bool keep = g_keep.load(std::memory_order_relaxed) && !t_exiting &&
                    PyGILState_GetThisThreadState() == nullptr;
  state_ = PyGILState_Ensure();
  if (keep) {
    (void)PyGILState_Ensure();  // the kept count; the GIL is held already
    t_kept = PyGILState_GetThisThreadState();
    (void)&t_reaper;  // files the state as an orphan at this thread's exit
  }
  ReapOrphans();
}

UdfGil::~UdfGil() { PyGILState_Release(state_); }

void SetKeepThreadStates(bool keep) { g_keep.store(keep); }

ThreadStateCounts KeptThreadStates() {
  return {g_filed.load(), g_reaped.load()};
}

}  // namespace python
}  // namespace hflow
