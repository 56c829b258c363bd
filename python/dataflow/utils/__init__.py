"""Helpers shared by the dataflow package: exceptions, naming, message types, logging.

Thread-safety: see each submodule.
"""
from dataflow.utils.deploy_template import generate_deploy_template
from dataflow.utils.msg_type_register import MsgTypeRegister, msg_type_register
from dataflow.utils.name_scope import name_scope, reset_name_scope
from dataflow.utils.utils import (
    DfAbortException,
    DfException,
    get_running_device_id,
    get_running_instance_id,
    get_running_instance_num,
)
