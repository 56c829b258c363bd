// GE host program (i): GE calls leave the caller's device context alone.
// The program binds its own context with ACL (aclrtSetDevice on the first
// device, then aclrtCreateContext + aclrtSetCurrentContext on the last) and
// checks after every GE call (GEInitialize, Session constructor, AddGraph,
// BuildGraph, feeds, fetches, failing calls, RemoveGraph, Session
// destructor, GEFinalize) that aclrtGetCurrentContext still returns it. A
// second thread with no context feeds and fetches and must still have none.
//
//   a ─┐
//      ├─ node "add" (AddPair: a + b) ── out
//   b ─┘
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "flow_graph/data_flow.h"
#include "ge/ge_api.h"
#include "ge_check.h"

using namespace ge;
using namespace dflow;
using namespace ge_host;

namespace {

aclrtContext g_mine = nullptr;

// The calling thread's context is still the one the program set.
void Unchanged(const std::string& after) {
  aclrtContext now = nullptr;
  aclError rc = aclrtGetCurrentContext(&now);
  Check(rc == ACL_SUCCESS && now == g_mine,
        "context unchanged after " + after + " (rc " + Str(rc) + ")");
}

// On a thread without a context: still none.
void StillNone(const std::string& after) {
  aclrtContext now = nullptr;
  aclError rc = aclrtGetCurrentContext(&now);
  Check(rc != ACL_SUCCESS && now == nullptr,
        "no context after " + after + " (rc " + Str(rc) + ")");
}

FlowGraph AddGraph() {
  FlowData a("a", 0);
  FlowData b("b", 1);
  FunctionPp pp("add_pp");
  pp.SetCompileConfig("config/add_pair.json");
  FlowNode node("add", 2, 1);
  node.SetInput(0, a).SetInput(1, b).AddPp(pp);
  FlowGraph graph("context");
  graph.SetInputs({a, b}).SetOutputs({node});
  return graph;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  const int32_t first = devices.front();
  const int32_t last = devices.back();
  Eq(aclInit(nullptr), ACL_SUCCESS, "aclInit");
  Eq(aclrtSetDevice(first), ACL_SUCCESS, "aclrtSetDevice(" + Str(first) + ")");
  Eq(aclrtCreateContext(&g_mine, last), ACL_SUCCESS,
     "aclrtCreateContext on " + Str(last));
  Eq(aclrtSetCurrentContext(g_mine), ACL_SUCCESS, "aclrtSetCurrentContext");
  int32_t device = -1;
  Eq(aclrtGetDevice(&device), ACL_SUCCESS, "aclrtGetDevice");
  Eq(device, last, "the current device is the context's");

  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  Unchanged("GEInitialize");
  {
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);
    Unchanged("the Session constructor");
    FlowGraph graph = AddGraph();
    StatusIs(session->AddGraph(1, graph.ToGeGraph()), SUCCESS, "AddGraph");
    Unchanged("AddGraph");
    StatusIs(session->BuildGraph(1, std::vector<Tensor>()), SUCCESS,
             "BuildGraph");
    Unchanged("BuildGraph");
    DataFlowInfo info;
    StatusIs(session->FeedDataFlowGraph(
                 1, {Int32s({2}, {1, 2}), Int32s({2}, {10, 20})}, info, 3000),
             SUCCESS, "feed tensors");
    Unchanged("a tensor feed");
    std::vector<Tensor> out;
    DataFlowInfo out_info;
    StatusIs(session->FetchDataFlowGraph(1, out, out_info, 3000), SUCCESS,
             "fetch tensors");
    Unchanged("a tensor fetch");
    if (Eq(out.size(), static_cast<size_t>(1), "outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({11, 22}), "a + b");
    }
    FlowMsgPtr m0 = FlowBufferFactory::ToFlowMsg(Int32s({1}, {5}));
    FlowMsgPtr m1 = FlowBufferFactory::ToFlowMsg(Int32s({1}, {6}));
    StatusIs(session->FeedDataFlowGraph(1, {m0, m1}, 3000), SUCCESS,
             "feed messages");
    Unchanged("a message feed");
    std::vector<FlowMsgPtr> msgs;
    StatusIs(session->FetchDataFlowGraph(1, msgs, 3000), SUCCESS,
             "fetch messages");
    Unchanged("a message fetch");
    if (Eq(msgs.size(), static_cast<size_t>(1), "messages") && msgs[0] &&
        msgs[0]->GetTensor() != nullptr) {
      Eq(Values<int32_t>(*msgs[0]->GetTensor()), std::vector<int32_t>({11}),
         "message a + b");
    }
    Check(session->FetchDataFlowGraph(9, out, out_info, 10) != SUCCESS,
          "fetch of graph 9 fails");
    Unchanged("a failing fetch");
    Check(
        session->FeedDataFlowGraph(1, {Int32s({1}, {1})}, info, 10) != SUCCESS,
        "a feed with too few tensors fails");
    Unchanged("a failing feed");

    // A thread without a context: GE binds nothing on it either.
    std::thread other([&session]() {
      StillNone("thread start");
      DataFlowInfo thread_info;
      StatusIs(session->FeedDataFlowGraph(
                   1, {Int32s({1}, {2}), Int32s({1}, {3})}, thread_info, 3000),
               SUCCESS, "thread: feed");
      StillNone("a feed on the other thread");
      std::vector<Tensor> thread_out;
      DataFlowInfo thread_out_info;
      StatusIs(
          session->FetchDataFlowGraph(1, thread_out, thread_out_info, 3000),
          SUCCESS, "thread: fetch");
      StillNone("a fetch on the other thread");
      if (Eq(thread_out.size(), static_cast<size_t>(1), "thread: outputs")) {
        Eq(Values<int32_t>(thread_out[0]), std::vector<int32_t>({5}),
           "thread: a + b");
      }
    });
    other.join();
    Unchanged("the other thread's calls");

    StatusIs(session->RemoveGraph(1), SUCCESS, "RemoveGraph");
    Unchanged("RemoveGraph");
    StatusIs(session->AddGraph(2, graph.ToGeGraph()), SUCCESS, "AddGraph 2");
    StatusIs(session->BuildGraph(2, std::vector<Tensor>()), SUCCESS,
             "BuildGraph 2 (left for the destructor)");
    session.reset();
    Unchanged("the Session destructor");
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  Unchanged("GEFinalize");

  Eq(aclrtDestroyContext(g_mine), ACL_SUCCESS, "aclrtDestroyContext");
  Eq(aclrtResetDevice(first), ACL_SUCCESS, "aclrtResetDevice");
  Eq(aclFinalize(), ACL_SUCCESS, "aclFinalize");
  return Finish("context");
}
