// GE host program (e): message feeds and fetches (FlowMsg), and FeedRawData.
//
//   x ── node "echo" (MsgEcho: tensor + 1; raw or user type: bytes reversed;
//        empty: passed on) ── out
//
// Each kind of message FlowBufferFactory makes is fed and fetched as a
// FlowMsg, with its type, data, flow info (times, transaction id) and an
// empty EOS message; FeedRawData joins its pieces into one raw message;
// a raw message fetched as tensors is one uint8 tensor.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "flow_graph/data_flow.h"
#include "ge/ge_api.h"
#include "ge_check.h"

using namespace ge;
using namespace dflow;
using namespace ge_host;

namespace {

std::string RawString(const FlowMsgPtr& msg) {
  void* data = nullptr;
  uint64_t size = 0;
  if (!msg || msg->GetRawData(data, size) != SUCCESS) return "<no raw data>";
  return std::string(static_cast<const char*>(data), size);
}

// Fetches one message; null on failure (reported).
FlowMsgPtr FetchOne(Session& session, const std::string& what) {
  std::vector<FlowMsgPtr> out;
  if (!StatusIs(session.FetchDataFlowGraph(1, out, 3000), SUCCESS,
                "fetch " + what)) {
    return nullptr;
  }
  if (!Eq(out.size(), static_cast<size_t>(1), what + ": messages")) {
    return nullptr;
  }
  return out[0];
}

FlowMsgPtr RawMsg(const std::string& bytes) {
  FlowMsgPtr msg = FlowBufferFactory::AllocRawDataMsg(bytes.size());
  void* data = nullptr;
  uint64_t size = 0;
  if (msg && msg->GetRawData(data, size) == SUCCESS && size == bytes.size()) {
    std::memcpy(data, bytes.data(), bytes.size());
  }
  return msg;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  {
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);

    FlowData x("x", 0);
    FunctionPp pp("echo_pp");
    pp.SetCompileConfig("config/msg_echo.json");
    FlowNode node("echo", 1, 1);
    node.SetInput(0, x).AddPp(pp);
    FlowGraph graph("flow_msg");
    graph.SetInputs({x}).SetOutputs({node});
    StatusIs(session->AddGraph(1, graph.ToGeGraph()), SUCCESS, "AddGraph");

    // A tensor message with its own times and transaction id.
    FlowMsgPtr tensor_msg = FlowBufferFactory::AllocTensorMsg({3}, DT_INT32);
    if (Check(tensor_msg && tensor_msg->GetTensor() != nullptr,
              "AllocTensorMsg({3}, DT_INT32)")) {
      const int32_t v[3] = {1, 2, 3};
      std::memcpy(tensor_msg->GetTensor()->GetData(), v, sizeof(v));
      Eq(static_cast<int>(tensor_msg->GetMsgType()),
         static_cast<int>(MsgType::MSG_TYPE_TENSOR_DATA), "its type");
      tensor_msg->SetStartTime(11);
      tensor_msg->SetEndTime(22);
      tensor_msg->SetTransactionId(50);
      StatusIs(session->FeedDataFlowGraph(1, {tensor_msg}, 3000), SUCCESS,
               "feed the tensor message");
      FlowMsgPtr got = FetchOne(*session, "the tensor message");
      if (got) {
        Eq(static_cast<int>(got->GetMsgType()),
           static_cast<int>(MsgType::MSG_TYPE_TENSOR_DATA), "tensor: type");
        Check(got->GetTensor() != nullptr, "tensor: has a tensor");
        if (got->GetTensor() != nullptr) {
          Eq(Values<int32_t>(*got->GetTensor()),
             std::vector<int32_t>({2, 3, 4}), "tensor: data + 1");
        }
        Eq(got->GetRetCode(), 0, "tensor: ret code");
        Eq(got->GetTransactionId(), static_cast<uint64_t>(50),
           "tensor: transaction id");
        Eq(got->GetStartTime(), static_cast<uint64_t>(11), "tensor: start");
        Eq(got->GetEndTime(), static_cast<uint64_t>(22), "tensor: end");
      }
    }

    // A raw-data message.
    StatusIs(session->FeedDataFlowGraph(1, {RawMsg("hello")}, 3000), SUCCESS,
             "feed a raw message");
    FlowMsgPtr got = FetchOne(*session, "the raw message");
    if (got) {
      Eq(static_cast<int>(got->GetMsgType()),
         static_cast<int>(MsgType::MSG_TYPE_RAW_MSG), "raw: type");
      Eq(RawString(got), std::string("olleh"), "raw: bytes reversed");
      Check(got->GetTensor() == nullptr, "raw: no tensor");
    }

    // A user-defined message type (raw bytes with GE's user type range).
    const MsgType user_type = static_cast<MsgType>(
        static_cast<uint16_t>(MsgType::MSG_TYPE_USER_DEFINE_START) + 7);
    FlowMsgPtr user_msg = RawMsg("abc");
    if (user_msg) user_msg->SetMsgType(user_type);
    StatusIs(session->FeedDataFlowGraph(1, {user_msg}, 3000), SUCCESS,
             "feed a user-defined message (type 1031)");
    got = FetchOne(*session, "the user-defined message");
    if (got) {
      Eq(static_cast<int>(got->GetMsgType()), 1031, "user: type");
      Eq(RawString(got), std::string("cba"), "user: bytes reversed");
    }

    // FeedRawData: the pieces as one raw message.
    DataFlowInfo raw_info;
    std::vector<RawData> pieces = {{"ab", 2}, {"cde", 3}};
    StatusIs(session->FeedRawData(1, pieces, 0, raw_info, 3000), SUCCESS,
             "FeedRawData {\"ab\", \"cde\"}");
    got = FetchOne(*session, "the raw feed");
    if (got) {
      Eq(RawString(got), std::string("edcba"), "raw feed: joined, reversed");
    }

    // A raw message fetched as tensors: one uint8 tensor of its bytes.
    StatusIs(session->FeedRawData(1, {{"xyz", 3}}, 0, raw_info, 3000), SUCCESS,
             "FeedRawData {\"xyz\"}");
    std::vector<Tensor> tensors;
    DataFlowInfo info;
    StatusIs(session->FetchDataFlowGraph(1, tensors, info, 3000), SUCCESS,
             "fetch a raw message as tensors");
    if (Eq(tensors.size(), static_cast<size_t>(1), "raw as tensor: outputs")) {
      std::vector<uint8_t> bytes = Values<uint8_t>(tensors[0]);
      Eq(std::string(bytes.begin(), bytes.end()), std::string("zyx"),
         "raw as tensor: bytes");
      Eq(static_cast<int>(tensors[0].GetTensorDesc().GetDataType()),
         static_cast<int>(DT_UINT8), "raw as tensor: dtype uint8");
    }

    // ToFlowMsg over a ge::Tensor.
    FlowMsgPtr from_tensor = FlowBufferFactory::ToFlowMsg(Int32s({2}, {7, 8}));
    StatusIs(session->FeedDataFlowGraph(1, {from_tensor}, 3000), SUCCESS,
             "feed ToFlowMsg(tensor)");
    got = FetchOne(*session, "the ToFlowMsg message");
    if (got && got->GetTensor() != nullptr) {
      Eq(Values<int32_t>(*got->GetTensor()), std::vector<int32_t>({8, 9}),
         "ToFlowMsg: data + 1");
    }

    // An empty message with EOS ends the stream; the fetcher sees the flag.
    const uint32_t eos =
        static_cast<uint32_t>(DataFlowFlag::DATA_FLOW_FLAG_EOS);
    FlowMsgPtr end =
        FlowBufferFactory::AllocEmptyDataMsg(MsgType::MSG_TYPE_TENSOR_DATA);
    if (Check(end != nullptr, "AllocEmptyDataMsg")) {
      end->SetFlowFlags(eos);
      StatusIs(session->FeedDataFlowGraph(1, {end}, 3000), SUCCESS,
               "feed the empty EOS message");
      // GE's executor reports an end-of-sequence output as END_OF_SEQUENCE,
      // which its FlowMsg fetch returns as FAILED, the message delivered.
      std::vector<FlowMsgPtr> out;
      Status s = session->FetchDataFlowGraph(1, out, 3000);
      StatusIs(s, FAILED, "fetch the EOS message: FAILED, as GE");
      if (Eq(out.size(), static_cast<size_t>(1), "EOS: messages") && out[0]) {
        Check((out[0]->GetFlowFlags() & eos) != 0,
              "EOS: flags " + Str(out[0]->GetFlowFlags()));
        Check(out[0]->GetTensor() == nullptr ||
                  out[0]->GetTensor()->GetSize() == 0,
              "EOS: no data");
      }
    }
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  return Finish("flow_msg");
}
