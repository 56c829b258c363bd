// Fuzz target: hflowd's decoding of a driver's instance calls
// (src/daemon/instance_host.cc): the bytes are one call's request, a
// serialized hflow.worker.v1.HostMessage, as rpc Call delivers it to
// InstanceHost::Call, against a daemon on simulated devices 2 and 3 that
// hosts one Echo instance (fuzz/udfs/echo_udf.cpp, which copies every
// byte of its input) as instance 1. The payloads the request's Proc
// inputs point at come with it, each of the size its head claims, except
// that an odd-sized input drops the last one (a truncated call).
//
// Invariants: nothing crashes or reads past a payload (ASan); a request
// that is not a message is refused with kInvalidArgument; an accepted
// call's reply is a WorkerMessage, and a Proc's outputs point at payloads
// that came back, of their stated sizes. Loads naming any library but the
// echo one are skipped: the fuzzer must not make the daemon dlopen files.
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread); the
// daemon's instance thread is its own.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "daemon/instance_host.h"
#include "fuzz_check.h"
#include "hflow/cluster.h"
#include "hflow/rt.h"
#include "worker/proto/worker.pb.h"

#ifndef HFLOW_FUZZ_ECHO_UDF
#error "HFLOW_FUZZ_ECHO_UDF must name the built Echo UDF library"
#endif

namespace {

namespace v1 = hflow::worker::v1;

// Each input its own session: an ended session takes no new Loads.
std::string Session() {
  static uint64_t n = 0;
  return "fuzz:" + std::to_string(++n);
}

hflow::daemon::InstanceHost& Host() {
  static hflow::daemon::InstanceHost* host = [] {
    hflow::rt::RuntimeOptions ro;
    ro.cluster = hflow::MakeLocalCluster({2, 3});
    std::shared_ptr<hflow::rt::DeviceRuntime> runtime;
    hflow::Status s = hflow::rt::InitializeRuntime(ro, &runtime);
    FUZZ_CHECK(s.ok());
    return new hflow::daemon::InstanceHost(runtime, {2, 3},
                                           [](const std::string&) {});
  }();
  return *host;
}

// Loads the echo instance as instance `id` of `session`.
void LoadEcho(const std::string& session, uint64_t id) {
  v1::HostMessage m;
  v1::Load* load = m.mutable_load();
  load->set_node("echo");
  load->set_device(3);
  load->set_input_num(1);
  load->set_output_num(1);
  load->set_max_message_bytes(1 << 20);
  load->set_alloc_timeout_ms(100);
  v1::FuncDesc* f = load->add_funcs();
  f->set_name("Echo");
  f->add_inputs_index(0);
  f->add_outputs_index(0);
  f->set_library(HFLOW_FUZZ_ECHO_UDF);
  hflow::net::InstanceCall call;
  call.session = session;
  call.instance = id;
  call.request = m.SerializeAsString();
  hflow::net::InstanceReply reply;
  FUZZ_CHECK(Host().Call(&call, &reply).ok());
  v1::WorkerMessage w;
  FUZZ_CHECK(w.ParseFromString(reply.reply) && w.has_done() &&
             w.done().code() == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string request(reinterpret_cast<const char*>(data), size);
  v1::HostMessage m;
  const bool parsed = m.ParseFromString(request);
  if (parsed && m.has_load()) {
    for (const v1::FuncDesc& f : m.load().funcs()) {
      if (!f.library().empty() && f.library() != HFLOW_FUZZ_ECHO_UDF) return 0;
    }
  }
  hflow::daemon::InstanceHost& host = Host();
  const std::string session = Session();
  LoadEcho(session, 1);
  hflow::net::InstanceCall call;
  call.session = session;
  call.instance = parsed && m.has_load() ? 2 : 1;
  call.request = request;
  if (parsed && m.has_proc()) {
    uint64_t total = 0;  // no giant buffers: 4 MiB in all
    for (const v1::Msg& in : m.proc().inputs()) {
      total += in.size();
      if (in.size() > (1u << 20) || total > (4u << 20)) break;
      call.payloads.emplace_back(in.size(), '\x5a');
    }
    if (size % 2 == 1 && !call.payloads.empty()) call.payloads.pop_back();
  }
  hflow::net::InstanceReply reply;
  const hflow::Status s = host.Call(&call, &reply);
  if (!parsed) FUZZ_CHECK(!s.ok());
  if (s.ok()) {
    v1::WorkerMessage w;
    FUZZ_CHECK(w.ParseFromString(reply.reply));
    if (w.has_proc_done()) {
      for (const v1::Msg& out : w.proc_done().outputs()) {
        FUZZ_CHECK(out.offset() < reply.payloads.size());
        FUZZ_CHECK(reply.payloads[out.offset()].size() == out.size());
      }
    }
  }
  host.EndSession(session);
  return 0;
}
