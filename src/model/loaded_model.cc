// LoadedModel (loaded_model.h).
//
// Thread-safety: see loaded_model.h. g_cache's map is guarded by its mutex;
// each entry's own mutex serialises the loads of that model on that
// device.
#include "model/loaded_model.h"

#include <sys/stat.h>

#include <atomic>
#include <mutex>

#include "hflow/rt.h"
#include "model/model_config.h"

namespace hflow {
namespace model {
namespace {

constexpr size_t kAlign = 64;  // each constant starts on a cache line

struct Entry {
  std::mutex mu;
  std::weak_ptr<const LoadedModel> model;  // under mu
};

struct Cache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Entry>> entries;  // under mu
  // Note [One parse per build]; entries of models no one holds are pruned
  // at each insertion.
  std::map<std::string, std::weak_ptr<const ModelIr>> parsed;  // under mu
};

Cache& TheCache() {
  static Cache* c = new Cache;  // never destroyed: used by late destructors
  return *c;
}

std::atomic<uint64_t> g_loads{0};

// The model's identity: what it is made from, and the file's size and
// modification time, so a file rewritten between builds loads anew;
// `device` -1 for the parse alone.
std::string KeyOf(const ModelSpec& s, int32_t device) {
  std::string key = std::to_string(device) + "\n" + s.framework + "\n" +
                    s.graph_file + "\n" + s.compile_config + "\n";
  for (const auto& [k, v] : s.load_params) key += k + "=" + v + "\n";
  struct stat st {};
  if (stat(s.graph_file.c_str(), &st) == 0) {
    key += std::to_string(st.st_size) + "@" +
           std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }
  return key;
}

}  // namespace

LoadedModel::~LoadedModel() {
  if (block_ != nullptr) (void)rt::Free(device_, block_);
}

uint64_t LoadedModel::LoadCount() { return g_loads.load(); }

namespace {

Status Parse(const ModelSpec& spec, ModelIr* ir) {
  HFLOW_RETURN_IF_ERROR(
      ParseModelFile(spec.framework, spec.graph_file, spec.load_params, ir));
  CompileConfig cfg;
  HFLOW_RETURN_IF_ERROR(LoadModelCompileConfig(spec.compile_config, &cfg));
  HFLOW_RETURN_IF_ERROR(
      ApplyCompileConfig(cfg, ir).WithContext(spec.compile_config + ": "));
  for (const IrValue& v : ir->inputs) {
    if (!Executor::Holds(v.dtype)) {
      return Status::NotSupported(ir->source + ": input '" + v.name + "' is " +
                                  DataTypeName(v.dtype) +
                                  ", which the model executor does not hold");
    }
  }
  for (const auto& [name, t] : ir->constants) {
    if (!Executor::Holds(t.dtype)) {
      return Status::NotSupported(ir->source + ": constant '" + name + "' is " +
                                  DataTypeName(t.dtype) +
                                  ", which the model executor does not hold");
    }
  }
  return Executor::CheckOps(*ir);
}

// Everything of `ir` but its constants' bytes.
ModelIr StructureOf(const ModelIr& ir) {
  ModelIr s;
  s.source = ir.source;
  s.inputs = ir.inputs;
  s.outputs = ir.outputs;
  s.nodes = ir.nodes;
  for (const auto& [name, t] : ir.constants) {
    IrTensor c;
    c.dtype = t.dtype;
    c.dims = t.dims;
    s.constants.emplace_back(name, std::move(c));
  }
  return s;
}

}  // namespace

Status LoadedModel::Check(const ModelSpec& spec,
                          std::shared_ptr<const ModelIr>* ir) {
  const std::string key = KeyOf(spec, -1);
  Cache& c = TheCache();
  {
    std::lock_guard<std::mutex> l(c.mu);
    auto it = c.parsed.find(key);
    if (it != c.parsed.end()) {
      if (auto held = it->second.lock()) {
        *ir = std::move(held);
        return Status::OK();
      }
    }
  }
  auto parsed = std::make_shared<ModelIr>();
  HFLOW_RETURN_IF_ERROR(Parse(spec, parsed.get()));
  std::lock_guard<std::mutex> l(c.mu);
  for (auto it = c.parsed.begin(); it != c.parsed.end();) {
    it = it->second.expired() ? c.parsed.erase(it) : std::next(it);
  }
  c.parsed[key] = parsed;
  *ir = std::move(parsed);
  return Status::OK();
}

Status LoadedModel::Upload(const ModelIr& parsed) {
  ir_ = StructureOf(parsed);
  std::vector<size_t> at;
  for (const auto& [name, t] : parsed.constants) {
    at.push_back(bytes_);
    bytes_ += (t.data().size() + kAlign - 1) / kAlign * kAlign;
  }
  if (bytes_ > 0) {
    Status s = rt::Malloc(device_, bytes_, &block_);
    if (!s.ok()) {
      block_ = nullptr;
      return s.WithContext(
          ir_.source + ": the weights (" + std::to_string(bytes_) +
          " bytes) do not fit on device " + std::to_string(device_) + ": ");
    }
  }
  for (size_t i = 0; i < parsed.constants.size(); ++i) {
    const IrTensor& t = parsed.constants[i].second;
    char* dst = static_cast<char*>(block_) + at[i];
    const std::string_view data = t.data();
    if (!data.empty()) {
      HFLOW_RETURN_IF_ERROR(rt::Memcpy(device_, dst, data.data(), data.size(),
                                       rt::MemcpyKind::kHostToDevice)
                                .WithContext(ir_.source + ": weights: "));
    }
    constants_.push_back(TensorView{t.dtype, t.dims, dst});
  }
  return Status::OK();
}

Status LoadedModel::Acquire(const ModelSpec& spec, int32_t device,
                            std::shared_ptr<const LoadedModel>* out) {
  std::shared_ptr<Entry> entry;
  {
    Cache& c = TheCache();
    std::lock_guard<std::mutex> l(c.mu);
    std::shared_ptr<Entry>& e = c.entries[KeyOf(spec, device)];
    if (!e) e = std::make_shared<Entry>();
    entry = e;
  }
  std::lock_guard<std::mutex> l(entry->mu);
  if (auto shared = entry->model.lock()) {
    *out = std::move(shared);
    return Status::OK();
  }
  std::shared_ptr<const ModelIr> parsed;
  HFLOW_RETURN_IF_ERROR(Check(spec, &parsed));
  std::shared_ptr<LoadedModel> m(new LoadedModel);
  m->device_ = device;
  HFLOW_RETURN_IF_ERROR(m->Upload(*parsed));  // on failure ~LoadedModel frees
  g_loads.fetch_add(1);
  entry->model = m;
  *out = std::move(m);
  return Status::OK();
}

}  // namespace model
}  // namespace hflow
