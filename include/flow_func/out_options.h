// OutOptions: per-call options of SetOutput / SetMultiOutputs. A pimpl keeps
// the layout fixed while options grow. Copies share one state (the pointer
// is shared), like the API this mirrors; not thread-safe.
#ifndef HFLOW_FLOW_FUNC_OUT_OPTIONS_H_
#define HFLOW_FLOW_FUNC_OUT_OPTIONS_H_

#include <memory>

#include "balance_config.h"
#include "flow_func_defines.h"

namespace FlowFunc {

class OutOptionsImpl;

class FLOW_FUNC_VISIBILITY OutOptions {
 public:
  OutOptions();
  ~OutOptions();

  // Creates the balance config on first use; never null.
  BalanceConfig* MutableBalanceConfig();
  // Null until MutableBalanceConfig was called: no balancing requested.
  const BalanceConfig* GetBalanceConfig() const;

 private:
  std::shared_ptr<OutOptionsImpl> impl_;
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_OUT_OPTIONS_H_
