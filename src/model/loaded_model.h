// LoadedModel: a parsed model with its weights in one block of its
// device's memory, shared by every instance of the same model on that
// device (replicas over a device range hold one copy per device).
//
// Note [Loading on the bound thread]
// Acquire runs inside the model UDF's Init, on the deploy pool thread that
// bound the instance's device (the seed's path: a model's submodels loaded
// by deploy threads). The weights' device memory is taken with rt::Malloc
// and filled with rt::Memcpy on the calling thread's binding; a thread
// that did not bind fails there on any device but the runtime's default
// one, as Ascend's runtime fails with EE1018. The block is given back
// (rt::Free) by the last instance's destructor, which the deployer's
// unload tasks run on a thread bound to the same device.
//
// Note [One parse per build]
// A build checks each model node's model on the host (the deployer, through
// hflow_model_check) and then loads it on each device (Acquire, in Init):
// two parses of the file, each a copy of all its weights, were most of a
// load's time. Check keeps the parsed model in a cache of weak references
// keyed by what the model is made from (file identity included), and the
// deployer holds the reference its check returned until its instances are
// loaded: every Acquire of that build finds the parse and uploads from it.
// Once the last holder lets go, the host copy of the weights is gone.
//
// Thread-safety: Acquire is thread-safe; loads of one model on one device
// are serialised (the second waits and shares), other loads run in
// parallel. A LoadedModel is immutable once made.
#ifndef HFLOW_MODEL_LOADED_MODEL_H_
#define HFLOW_MODEL_LOADED_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "model/executor.h"
#include "model/ir.h"

namespace hflow {
namespace model {

struct ModelSpec {
  std::string framework;
  std::string graph_file;
  std::map<std::string, std::string> load_params;
  std::string compile_config;  // path, or empty
};

class LoadedModel {
 public:
  ~LoadedModel();
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  // The model of `spec` on `device`, loaded now or shared with the
  // instances that hold it already.
  static Status Acquire(const ModelSpec& spec, int32_t device,
                        std::shared_ptr<const LoadedModel>* out);

  // Parses and checks `spec` (file, compile config, operators) without
  // touching a device: what a build checks before deploying. The parsed
  // model is shared with every Check and Acquire of the same spec while
  // `ir` lives (Note [One parse per build]).
  static Status Check(const ModelSpec& spec,
                      std::shared_ptr<const ModelIr>* ir);

  // The IR with the constants' bytes dropped (they live on the device).
  const ModelIr& ir() const { return ir_; }
  const std::vector<TensorView>& constants() const { return constants_; }
  int32_t device() const { return device_; }
  size_t weight_bytes() const { return bytes_; }

  // How many loads (not shares) this process made: tests of the sharing.
  static uint64_t LoadCount();

 private:
  LoadedModel() = default;
  // The weights of `parsed` into device memory; ir_ gets its structure.
  Status Upload(const ModelIr& parsed);

  int32_t device_ = -1;
  ModelIr ir_;
  void* block_ = nullptr;
  size_t bytes_ = 0;
  std::vector<TensorView> constants_;
};

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_LOADED_MODEL_H_
