// The `hflow` command-line tool: one App with one subcommand per task
// (devices, validate, run, ctxcheck). Each Add*Command registers its
// options and callback; a failing callback throws CLI::RuntimeError(code)
// and that code becomes the exit status. Usage errors exit 2.
//
// Thread-safety: main thread only.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "tools/ctxcheck_command.h"
#include "tools/devices_command.h"
#ifdef HFLOW_HAVE_NET
#include "tools/hosts_command.h"
#endif
#include "tools/run_command.h"
#include "tools/validate_command.h"

namespace {

constexpr int kUsageError = 2;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hflow: heterogeneous dataflow runtime", "hflow"};
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "hflow: " + std::string(e.what()) +
           "\nRun 'hflow --help' (or 'hflow SUBCOMMAND --help') for usage.\n";
  });
  hflow::tools::AddDevicesCommand(&app);
  hflow::tools::AddValidateCommand(&app);
  hflow::tools::AddRunCommand(&app);
  hflow::tools::AddCtxCheckCommand(&app);
#ifdef HFLOW_HAVE_NET
  hflow::tools::AddHostsCommand(&app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // the command already reported its error
  } catch (const CLI::ParseError& e) {
    // Help and version requests are successes; everything else is usage.
    int code = app.exit(e);
    return code == 0 ? 0 : kUsageError;
  } catch (const std::exception& e) {
    std::cerr << "hflow: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
