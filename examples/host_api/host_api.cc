// host_api: a graph built in C++ with hflow's graph API and run through a
// Session, with no graph file and no command line. Two graph inputs go to a
// built-in Add on the cluster's first device; its sum goes to a second Add
// on the second device that doubles it. Both the sum and the doubled sum
// are graph outputs:
//
//   a ─┐                                         ┌─ output 0: a + b
//      ├─[sum: _BuiltIn_Add]── sum:0 ─┬──────────┘
//   b ─┘   first device               └─[twice: sum:0 + sum:0]── output 1
//                                        second device
//
// Usage: host_api [--devices LIST]   (LIST as "3,6,7" or "2~5"; default:
// the simulated devices 0,1,2,3). Feeds three transactions, prints one line
// per fetched transaction, checks every value, that no device was bound
// implicitly, and that the caller's thread context is as it was; exits 0
// only when all of that holds.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "hflow/hflow.h"

namespace {

// Prints `what` and the status when it failed; true when it is ok.
bool Ok(const hflow::Status& s, const char* what) {
  if (!s.ok()) std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  return s.ok();
}

std::string Join(const std::vector<int32_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    out += (i ? "," : "") + std::to_string(v[i]);
  }
  return out + "]";
}

hflow::Tensor Int32s(const std::vector<int32_t>& v) {
  return hflow::Tensor::From<int32_t>(hflow::DataType::kInt32,
                                      {static_cast<int64_t>(v.size())}, v);
}

// The graph of the picture, its two nodes placed on devices d0 and d1.
hflow::FlowGraph MakeGraph(int32_t d0, int32_t d1) {
  hflow::FlowData a("a", 0);
  hflow::FlowData b("b", 1);
  hflow::FunctionPp add_pp("add_pp");
  add_pp.SetFunction("_BuiltIn_Add");
  hflow::FunctionPp twice_pp("twice_pp");
  twice_pp.SetFunction("_BuiltIn_Add");

  hflow::FlowNode sum("sum", 2, 1);
  sum.SetInput(0, a).SetInput(1, b).AddPp(add_pp);
  hflow::FlowNode twice("twice", 2, 1);
  twice.SetInput(0, sum, 0).SetInput(1, sum, 0).AddPp(twice_pp);

  // Placement is GE deploy info: "cluster:node:device" per flow node.
  const std::string deploy =
      R"({"deploy_info": [)"
      R"({"flow_node_name": "sum", "logic_device_id": "0:0:)" +
      std::to_string(d0) +
      R"("},)"
      R"({"flow_node_name": "twice", "logic_device_id": "0:0:)" +
      std::to_string(d1) + R"("}]})";
  hflow::FlowGraph graph("host_api");
  graph.SetInputs({a, b})
      .SetOutputs({{sum, 0u}, {twice, 0u}})
      .SetDeployInfo(deploy);
  return graph;
}

}  // namespace

int main(int argc, char** argv) {
  hflow::Options options;  // the simulated backend, devices 0,1,2,3
  if (argc == 3 && std::strcmp(argv[1], "--devices") == 0) {
    if (!Ok(hflow::ParseDeviceList(argv[2], &options.cluster), "--devices")) {
      return 2;
    }
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--devices LIST]\n", argv[0]);
    return 2;
  }
  const std::vector<int32_t> ids = options.cluster.LocalDeviceIds();
  if (ids.size() < 2) {
    std::fprintf(stderr, "host_api needs at least two devices\n");
    return 2;
  }
  if (!Ok(hflow::Initialize(options), "Initialize")) return 1;
  hflow::rt::Context* const caller_context = hflow::rt::GetCurrentContext();

  bool good = true;
  {
    hflow::Session session;  // its destructor removes its graphs
    const uint32_t kGraph = 1;
    good =
        Ok(session.AddGraph(kGraph, MakeGraph(ids[0], ids[1])), "AddGraph") &&
        Ok(session.BuildGraph(kGraph), "BuildGraph");

    const std::vector<std::vector<int32_t>> as = {{1, 2, 3}, {-4, 0, 4}, {7}};
    const std::vector<std::vector<int32_t>> bs = {
        {10, 20, 30}, {4, 5, 6}, {-7}};
    for (size_t i = 0; good && i < as.size(); ++i) {
      hflow::FlowInfo info;  // transaction id 0: the session numbers 1, 2, 3
      good = Ok(session.FeedData(kGraph, {Int32s(as[i]), Int32s(bs[i])}, info,
                                 /*timeout_ms=*/5000),
                "FeedData");
    }
    for (size_t i = 0; good && i < as.size(); ++i) {
      std::vector<hflow::Tensor> outputs;
      hflow::FlowInfo info;
      good = Ok(session.FetchData(kGraph, &outputs, &info, 10000), "FetchData");
      if (!good) break;
      // Transactions of one graph come back in feed order here (no replicas).
      std::vector<int32_t> want_sum, want_twice;
      for (size_t k = 0; k < as[i].size(); ++k) {
        want_sum.push_back(as[i][k] + bs[i][k]);
        want_twice.push_back(2 * (as[i][k] + bs[i][k]));
      }
      const bool right = info.ret_code == 0 && outputs.size() == 2 &&
                         info.transaction_id == i + 1 &&
                         outputs[0].As<int32_t>() == want_sum &&
                         outputs[1].As<int32_t>() == want_twice;
      std::printf(
          "trans %llu: sum %s twice %s%s\n",
          static_cast<unsigned long long>(info.transaction_id),
          outputs.size() > 0 ? Join(outputs[0].As<int32_t>()).c_str() : "-",
          outputs.size() > 1 ? Join(outputs[1].As<int32_t>()).c_str() : "-",
          right ? "" : "  (WRONG)");
      good = right;
    }

    // One submodel on each of the two devices; no device of the cluster
    // was bound implicitly (every hflow thread bound its device itself).
    std::vector<hflow::DeviceReport> reports;
    good = good && Ok(session.DeviceReports(kGraph, &reports), "DeviceReports");
    for (const hflow::DeviceReport& r : reports) {
      const uint64_t want = (r.id == ids[0] || r.id == ids[1]) ? 1 : 0;
      if (r.submodels != want || r.implicit_bindings != 0) {
        std::fprintf(stderr,
                     "device %d: %llu submodels, %llu implicit bindings\n",
                     r.id, static_cast<unsigned long long>(r.submodels),
                     static_cast<unsigned long long>(r.implicit_bindings));
        good = false;
      }
    }
    good = Ok(session.RemoveGraph(kGraph), "RemoveGraph") && good;
  }
  if (hflow::rt::GetCurrentContext() != caller_context) {
    std::fprintf(stderr, "the caller's context changed\n");
    good = false;
  }
  good = Ok(hflow::Finalize(), "Finalize") && good;
  std::printf("%s on devices %d and %d\n", good ? "ok" : "FAILED", ids[0],
              ids[1]);
  return good ? 0 : 1;
}
