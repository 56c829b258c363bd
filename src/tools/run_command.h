// `hflow run` (FORMATS.md "Command line"). Placeholder until implemented.
#ifndef HFLOW_TOOLS_RUN_COMMAND_H_
#define HFLOW_TOOLS_RUN_COMMAND_H_

#include <CLI/CLI.hpp>

namespace hflow::tools {
void AddRunCommand(CLI::App* app);
}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RUN_COMMAND_H_
