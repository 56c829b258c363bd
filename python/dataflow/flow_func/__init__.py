"""Python UDFs for hflow (GE's ``dataflow.flow_func``).

hflow runs Python UDFs in this process, on its executor threads; nothing is generated in a
workspace directory. Thread-safety: see the submodules.
"""
from dataflow.flow_func.flow_func import (
    DEBUG, DEBUG_LOG, ERROR, FLOW_FLAG_EOS, FLOW_FLAG_SEG, FLOW_FUNC_ERR_ATTR_NOT_EXITS,
    FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH, FLOW_FUNC_ERR_DRV_ERROR, FLOW_FUNC_ERR_EVENT_ERROR,
    FLOW_FUNC_ERR_MEM_BUF_ERROR, FLOW_FUNC_ERR_NOT_SUPPORT, FLOW_FUNC_ERR_PARAM_INVALID,
    FLOW_FUNC_ERR_QUEUE_ERROR, FLOW_FUNC_ERR_TIME_OUT_ERROR, FLOW_FUNC_ERR_USER_DEFINE_END,
    FLOW_FUNC_ERR_USER_DEFINE_START, FLOW_FUNC_FAILED, FLOW_FUNC_STATUS_EXIT, FLOW_FUNC_STATUS_REDEPLOYING,
    FLOW_FUNC_SUCCESS, INFO, MSG_TYPE_PICKLED_MSG, MSG_TYPE_RAW_MSG, MSG_TYPE_TENSOR_DATA, MSG_TYPE_TENSOR_LIST,
    MSG_TYPE_USER_DEFINE_START, RUN_LOG, WARN, AffinityPolicy, BalanceConfig, FlowFuncLogger, FlowFuncLogLevel,
    FlowFuncLogType, FlowMsg, FlowMsgQueue, MetaRunContext, PyMetaParams, logger,
)
from dataflow.flow_func.func_register import FlowFuncInfos, FlowFuncRegister
from dataflow.flow_func.func_wrapper import init_wrapper, proc_wrapper
