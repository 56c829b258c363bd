// GE's option keys (the `ge.*` strings GEInitialize, Session and AddGraph
// take) as named constants, and the small types of ge_api.h's signatures.
// The user guide's "GE options" table says what hflow does with each key.
//
// Thread-safety: constants and plain types.
#ifndef HFLOW_GE_GE_API_TYPES_H_
#define HFLOW_GE_GE_API_TYPES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ge/ge_api_error_codes.h"
#include "graph/tensor.h"
#include "graph/types.h"

namespace ge {
const char* const OPTION_EXEC_DEVICE_ID = "ge.exec.deviceId";
const char* const OPTION_EXEC_LOGICAL_DEVICE_ID = "ge.exec.logicalDeviceId";
const char* const OPTION_EXEC_LOGICAL_DEVICE_CLUSTER_DEPLOY_MODE =
    "ge.exec.logicalDeviceClusterDeployMode";
const char* const OPTION_GRAPH_RUN_MODE = "ge.graphRunMode";
const char* const OPTION_DATA_FLOW_DEPLOY_INFO_PATH =
    "ge.experiment.data_flow_deploy_info_path";
const char* const OPTION_GRAPH_KEY = "ge.graph_key";
const char* const OPTION_RESOURCE_CONFIG_PATH = "ge.resourceConfigPath";
const char* const SOC_VERSION = "ge.socVersion";

// The parsers' option keys (parser/*_parser.h), as GE names them.
namespace ir_option {
static const char* const INPUT_FORMAT = "input_format";
static const char* const INPUT_SHAPE = "input_shape";
static const char* const OUTPUT = "output";
static const char* const OUT_NODES = "ge.outputNodeName";
static const char* const INPUT_FP16_NODES = "ge.INPUT_NODES_SET_FP16";
static const char* const INPUT_DATA_NAMES = "input_data_names";
static const char* const OP_NAME_MAP = "op_name_map";
static const char* const IS_DYNAMIC_INPUT = "is_dynamic_input";
static const char* const LOG_LEVEL = "log";
}  // namespace ir_option

// BuildGraph's input description (GE's; hflow reads no shapes from it).
struct InputTensorInfo {
  uint32_t data_type;
  std::vector<int64_t> dims;
  void* data;
  int64_t length;
};

using RunAsyncCallback = std::function<void(Status, std::vector<ge::Tensor>&)>;
}  // namespace ge

#endif  // HFLOW_GE_GE_API_TYPES_H_
