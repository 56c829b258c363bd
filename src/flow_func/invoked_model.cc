// The invoked-model loader registry (invoked_model.h).
//
// Thread-safety: one mutex around the loader.
#include "flow_func/invoked_model.h"

#include <mutex>
#include <utility>

namespace hflow {
namespace flow_func {
namespace {
std::mutex g_mu;
InvokedModelLoader& Loader() {
  static InvokedModelLoader* loader = new InvokedModelLoader;  // until exit
  return *loader;
}
}  // namespace

void SetInvokedModelLoader(InvokedModelLoader loader) {
  std::lock_guard<std::mutex> lock(g_mu);
  Loader() = std::move(loader);
}

Status LoadInvokedModel(const InvokedModelSpec& spec, int32_t device,
                        std::unique_ptr<InvokedModel>* out) {
  InvokedModelLoader loader;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    loader = Loader();
  }
  if (!loader) {
    return Status::NotSupported(
        "invoked model '" + spec.key +
        "': hflow's model library is not loaded in this process (an "
        "isolated UDF cannot invoke models yet)");
  }
  return loader(spec, device, out);
}

}  // namespace flow_func
}  // namespace hflow
