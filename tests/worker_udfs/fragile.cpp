// A UDF library for the worker-process tests (C++11, built by the test
// build as libhflow_test_fragile.so):
//
//   x ──[Fragile]── out   out = [2x, pid of the process running Proc]
//
// The string attr "mode" picks a fault, the int attr "at" the input value
// that triggers it (in Proc; 0: in Init):
//   pass   no fault           segv   a null write      abort  abort()
//   exit   exit(7)            kill   SIGKILL itself    hang   never returns
//   fail   returns FLOW_FUNC_FAILED (no death: an error code)
//   print  prints "fragile prints <x>" on stdout and "fragile warns <x>"
//          on stderr, then passes as usual
//   forward sends its input message itself on, unchanged (no new output)
//   raise  RaiseException(7700123, the input's transaction), then passes
//   thread sets its output from a thread of its own (outside Proc): Proc
//          starts one per input (joining the one before) and returns
//   switch binds device "at" (aclrtSetDevice) in every Proc and leaves
//          its thread there (hflow ctxcheck's context leak), then passes
// The string attr "pid_file", when given, gets the process id at Init.
// The string attr "once_file", when given, makes the fault happen once
// across processes (a restarted worker): only while that file does not
// exist; it is created just before the fault.
// The string attr "gate_file", when given, holds the Proc of input 1
// until that file exists (at most 20 s), so that the inputs behind it
// queue up.
// The string attr "meet_dir" and the int attr "meet_count", when given,
// make Init and the destructor each a meeting: each instance leaves a file
// in meet_dir/init (meet_dir/dtor) and waits until meet_count instances
// have (at most 5 s); those that met leave a "met-" file there too. Only
// instances whose Inits (destructors) run side by side all meet.
// The int attr "init_sleep_ms", when given, makes Init take that long.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

namespace {

// Both the pointer and the store are volatile: GCC under TSan dropped a
// plain store through a null pointer as undefined.
__attribute__((no_sanitize("undefined"))) void NullWrite() {
  volatile int* volatile p = nullptr;
  *p = 1;
}

int32_t Fault(const std::string& mode) {
  if (mode == "segv") NullWrite();
  if (mode == "abort") std::abort();
  if (mode == "exit") std::exit(7);
  if (mode == "kill") raise(SIGKILL);
  if (mode == "hang") {
    for (;;) {
      struct timespec ts = {1, 0};
      nanosleep(&ts, nullptr);
    }
  }
  if (mode == "fail") return FLOW_FUNC_FAILED;
  return FLOW_FUNC_SUCCESS;
}

void Print(int64_t v) {
  std::printf("fragile prints %lld\n", static_cast<long long>(v));
  std::fflush(stdout);
  std::fprintf(stderr, "fragile warns %lld\n", static_cast<long long>(v));
}

void WaitForFile(const std::string& path) {
  for (int i = 0; i < 20000 && access(path.c_str(), F_OK) != 0; ++i) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, nullptr);
  }
}

void Touch(const std::string& path) {
  const int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
  if (fd >= 0) close(fd);
}

int CountArrived(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d)) {
      if (std::string(e->d_name).compare(0, 8, "arrived-") == 0) ++n;
    }
    closedir(d);
  }
  return n;
}

// One party of a meeting of `count` in `dir` (see the top).
void Meet(const std::string& dir, int64_t count, const void* who) {
  char me[64];
  std::snprintf(me, sizeof me, "%d-%p", static_cast<int>(getpid()), who);
  Touch(dir + "/arrived-" + me);
  for (int i = 0; i < 5000; ++i) {
    if (CountArrived(dir) >= count) {
      Touch(dir + "/met-" + me);
      return;
    }
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, nullptr);
  }
}

class Fragile : public MetaFlowFunc {
 public:
  ~Fragile() override {
    if (emitter_.joinable()) emitter_.join();
    if (!meet_dir_.empty()) Meet(meet_dir_ + "/dtor", meet_count_, this);
  }

  int32_t Init() override {
    AscendString mode;
    if (context_->GetAttr("mode", mode) == FLOW_FUNC_SUCCESS) {
      mode_ = mode.GetString();
    }
    context_->GetAttr("at", at_);
    AscendString pid_file;
    if (context_->GetAttr("pid_file", pid_file) == FLOW_FUNC_SUCCESS) {
      if (FILE* f = std::fopen(pid_file.GetString(), "w")) {
        std::fprintf(f, "%d\n", static_cast<int>(getpid()));
        std::fclose(f);
      }
    }
    AscendString once;
    if (context_->GetAttr("once_file", once) == FLOW_FUNC_SUCCESS) {
      once_file_ = once.GetString();
    }
    AscendString gate;
    if (context_->GetAttr("gate_file", gate) == FLOW_FUNC_SUCCESS) {
      gate_file_ = gate.GetString();
    }
    int64_t sleep_ms = 0;
    if (context_->GetAttr("init_sleep_ms", sleep_ms) == FLOW_FUNC_SUCCESS &&
        sleep_ms > 0) {
      struct timespec ts = {static_cast<time_t>(sleep_ms / 1000),
                            static_cast<long>(sleep_ms % 1000) * 1000000};
      nanosleep(&ts, nullptr);
    }
    AscendString meet;
    if (context_->GetAttr("meet_dir", meet) == FLOW_FUNC_SUCCESS) {
      meet_dir_ = meet.GetString();
      context_->GetAttr("meet_count", meet_count_);
      Meet(meet_dir_ + "/init", meet_count_, this);
    }
    return at_ == 0 ? MaybeFault() : FLOW_FUNC_SUCCESS;
  }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 1 || !in[0] || in[0]->GetTensor() == nullptr) {
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    const int64_t v =
        *static_cast<const int64_t*>(in[0]->GetTensor()->GetData());
    if (v == 1 && !gate_file_.empty()) WaitForFile(gate_file_);
    if (mode_ == "print") Print(v);
    if (mode_ == "switch") {
      if (aclrtSetDevice(static_cast<int32_t>(at_)) != ACL_SUCCESS) {
        return FLOW_FUNC_FAILED;
      }
      return Emit(v, in[0]->GetTransactionId());
    }
    if (v == at_) {
      const int32_t rc = MaybeFault();
      if (rc != FLOW_FUNC_SUCCESS) return rc;
    }
    if (mode_ == "forward") return context_->SetOutput(0, in[0]);
    if (mode_ == "raise" && v == at_) {
      context_->RaiseException(7700123, in[0]->GetTransactionId());
    }
    if (mode_ == "thread") {
      if (emitter_.joinable()) emitter_.join();
      const uint64_t trans = in[0]->GetTransactionId();
      emitter_ = std::thread([this, v, trans] {
        if (Emit(v, trans) != FLOW_FUNC_SUCCESS) {
          std::fprintf(stderr, "fragile: an output from its thread failed\n");
        }
      });
      return FLOW_FUNC_SUCCESS;
    }
    return Emit(v, in[0]->GetTransactionId());
  }

 private:
  int32_t Emit(int64_t v, uint64_t trans) {
    std::shared_ptr<FlowMsg> out =
        context_->AllocTensorMsg({2}, TensorDataType::DT_INT64);
    if (!out) return FLOW_FUNC_FAILED;
    int64_t* o = static_cast<int64_t*>(out->GetTensor()->GetData());
    o[0] = 2 * v;
    o[1] = static_cast<int64_t>(getpid());
    out->SetTransactionId(trans);
    return context_->SetOutput(0, out);
  }

  // O_EXCL: of two processes racing, one faults.
  int32_t MaybeFault() {
    if (!once_file_.empty()) {
      const int fd =
          open(once_file_.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
      if (fd < 0) return FLOW_FUNC_SUCCESS;
      close(fd);
    }
    return Fault(mode_);
  }

  std::string mode_ = "pass";
  std::string once_file_;
  std::string gate_file_;
  std::string meet_dir_;
  int64_t meet_count_ = 0;
  int64_t at_ = -1;
  std::thread emitter_;  // mode "thread": the latest output's
};

}  // namespace

REGISTER_FLOW_FUNC("Fragile", Fragile);
