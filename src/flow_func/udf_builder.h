// Building UDF workspaces the way GE does (docs/formats.md): when a compile
// config's binary is not prebuilt, run
//   cmake -S <dir of cmakelist> -B <build> -DTOOLCHAIN=<c++>
//         -DRELEASE_DIR=release -DRESOURCE_TYPE=X86 -DUDF_TARGET_LIB=<name>
// with ASCEND_HOME_PATH=<hflow SDK> in the environment, then build, and find
// the library in <build>/release (GE's CMakeLists write to
// ${PROJECT_BINARY_DIR}/${RELEASE_DIR}), else anywhere under <build>.
// Failures carry the tool's output.
//
// Thread-safety: functions are reentrant; concurrent builds of the same
// workspace are serialised by a process-wide lock and, across processes, by
// a lock file beside the build folder.
#ifndef HFLOW_FLOW_FUNC_UDF_BUILDER_H_
#define HFLOW_FLOW_FUNC_UDF_BUILDER_H_

#include <map>
#include <string>
#include <vector>

#include "flow_func/compile_config.h"
#include "hflow/status.h"

namespace hflow {
namespace flow_func {

struct UdfBuildOptions {
  std::string sdk_dir;     // ASCEND_HOME_PATH for the build; default SdkDir()
  std::string cxx;         // TOOLCHAIN; default $CXX, else "c++"
  std::string build_root;  // default $HFLOW_UDF_BUILD_DIR, else a temp dir
  int jobs = 2;
};

// The SDK hflow offers UDF builds (include/flow_func, devlib/...): the
// build tree's sdk/ or the install prefix, located from libhflow itself;
// $HFLOW_SDK_DIR overrides.
std::string SdkDir();

// The UDF library of `cfg`: its prebuilt binary when present, else built.
Status ResolveUdfBinary(const CompileConfig& cfg, const UdfBuildOptions& opts,
                        std::string* so_path);

// Builds `cfg`'s workspace unconditionally.
Status BuildUdf(const CompileConfig& cfg, const UdfBuildOptions& opts,
                std::string* so_path);

// Runs argv with extra environment variables; captures stdout+stderr.
Status RunCommand(const std::vector<std::string>& argv,
                  const std::map<std::string, std::string>& env,
                  std::string* output, int* exit_code);

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_UDF_BUILDER_H_
