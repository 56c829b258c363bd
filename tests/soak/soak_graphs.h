// The graphs hflow_soak runs and how their messages are made and checked.
// Every graph maps a message of value v (a tensor of n copies of v) to one
// output of n copies of 2v, so an output names the message it came from.
//
// Thread-safety: pure functions.
#ifndef HFLOW_TESTS_SOAK_SOAK_GRAPHS_H_
#define HFLOW_TESTS_SOAK_SOAK_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "test_graphs.h"

namespace hflow {
namespace soak {

inline constexpr int kGraphKinds = 3;

// 0: x ── a@2 ── b@3 ── c@4 ── add(c, c)@5
// 1: x ── id (replicas on 2~5) ── add(id, id)@3
// 2: a, b ── add@4
inline FlowGraph MakeGraph(int kind) {
  if (kind == 0) {
    return testing::DoublingChain("soak_chain", "_BuiltIn_Identity", "id_pp");
  }
  if (kind == 1) return testing::ReplicatedDoubler("soak_replicas");
  return testing::TwoInputAdd("soak_two_inputs", 4);
}

// The inputs of one message of value `v` with `n` elements per tensor.
inline std::vector<Tensor> MakeInputs(int kind, int64_t v, size_t n) {
  Tensor t = Tensor::From<int64_t>(DataType::kInt64, {int64_t(n)},
                                   std::vector<int64_t>(n, v));
  if (kind == 2) return {t, t};
  return {t};
}

// Empty when `out` is a well-formed output; sets *v to the message value.
inline std::string CheckOutput(const std::vector<Tensor>& out, int64_t* v) {
  if (out.size() != 1) return "expected one output tensor";
  std::vector<int64_t> d = out[0].As<int64_t>();
  if (d.empty() || d.size() > 64) return "bad output size";
  for (int64_t x : d) {
    if (x != d[0]) return "output elements differ (corrupted data)";
  }
  if (d[0] % 2 != 0) return "output is not twice an input";
  *v = d[0] / 2;
  return "";
}

}  // namespace soak
}  // namespace hflow

#endif  // HFLOW_TESTS_SOAK_SOAK_GRAPHS_H_
