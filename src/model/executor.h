// Executor: runs a ModelIr op by op on ATen's kernels. Made once per model
// instance at load (each node's kernel made and its attributes checked;
// every unsupported operator named at once), then Run per input set:
// inputs and constants are wrapped in place (no copy on the way in); each
// intermediate tensor is dropped after its last use.
//
// The header is free of ATen, so the model UDF and tests that only feed
// and fetch compile without it.
//
// Thread-safety: Run may be called from several threads at once (kernels
// keep no state); Create and the accessors are reentrant.
#ifndef HFLOW_MODEL_EXECUTOR_H_
#define HFLOW_MODEL_EXECUTOR_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hflow/status.h"
#include "model/ir.h"

namespace hflow {
namespace model {

// A dense row-major tensor in memory someone else owns.
struct TensorView {
  DataType dtype = DataType::DT_FLOAT;
  std::vector<int64_t> dims;
  void* data = nullptr;
};

// A result: `data` stays valid as long as `keep` lives.
struct OutputTensor {
  DataType dtype = DataType::DT_FLOAT;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<void> keep;
};

class Executor {
 public:
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // `ir` passed CheckIr. `constants` are ir.constants' values, in order
  // (the IR's own bytes may be gone), where the caller keeps
  // them (device memory) for the executor's life. `intra_op_threads` (>= 1)
  // is how many threads each of ATen's kernels may use.
  static Status Create(const ModelIr& ir, std::vector<TensorView> constants,
                       int intra_op_threads, std::unique_ptr<Executor>* out);

  // Every operator of `ir` that the executor does not run, named with its
  // node, in one error (where the supported ones are listed), or OK.
  static Status CheckOps(const ModelIr& ir);

  // Runs the model on inputs given in the model's input order, whose dtypes
  // and dims the caller checked. A kernel's error comes back naming the
  // node and operator.
  Status Run(const std::vector<TensorView>& inputs,
             std::vector<OutputTensor>* outputs) const;

  // Whether the executor holds tensors of element type `t`.
  static bool Holds(DataType t);

  // (operator, group) of every supported operator, sorted by operator.
  static std::vector<std::pair<std::string, std::string>> SupportedOps();

 private:
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_EXECUTOR_H_
