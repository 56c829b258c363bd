# hflow's environment for GE programs, as CANN's set_env.sh sets it: source
# it (`source <root>/set_env.sh`) from the folder it lies in, the build
# tree's sdk/ or an install prefix. GE's own CMakeLists and README steps
# then work unchanged against hflow.
_hflow_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"
export ASCEND_HOME_PATH="$_hflow_root"
export ASCEND_OPP_PATH="$_hflow_root/opp"
export LD_LIBRARY_PATH="$_hflow_root/lib64:$_hflow_root/lib:$_hflow_root/devlib/linux/x86_64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The Python dataflow package (import dataflow).
export PYTHONPATH="$_hflow_root/python/site-packages${PYTHONPATH:+:$PYTHONPATH}"
if [ -d "$_hflow_root/bin" ]; then
  export PATH="$_hflow_root/bin${PATH:+:$PATH}"
fi
unset _hflow_root
