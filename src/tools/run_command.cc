// `hflow run` placeholder (being written).
#include "tools/run_command.h"

namespace hflow::tools {
void AddRunCommand(CLI::App* app) { (void)app; }
}  // namespace hflow::tools
