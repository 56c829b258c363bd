// Uses the installed host API: picks the sim runtime on devices 2..5.
#include <iostream>

#include "hflow/rt.h"

int main() {
  hflow::rt::RuntimeOptions opts;
  opts.cluster = hflow::MakeLocalCluster({2, 3, 4, 5});
  hflow::Status s = hflow::rt::InitializeRuntime(opts);
  if (!s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  std::cout << "devices:";
  for (int32_t d : hflow::rt::CurrentRuntime()->DeviceIds())
    std::cout << " " << d;
  std::cout << "\n";
  return 0;
}
