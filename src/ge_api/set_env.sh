# hflow's environment for GE programs, as CANN's set_env.sh sets it: source
# it (`source <root>/set_env.sh`) from the folder it lies in, the build
# tree's sdk/ or an install prefix. GE's own CMakeLists and README steps
# then work unchanged against hflow.
_hflow_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"
export ASCEND_HOME_PATH="$_hflow_root"
export ASCEND_OPP_PATH="$_hflow_root/opp"
export LD_LIBRARY_PATH="$_hflow_root/lib64:$_hflow_root/lib:$_hflow_root/devlib/linux/x86_64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The Python dataflow package (import dataflow), and numpy for a python3
# that has none of its own (another CPython 3.11 first on PATH): the folder
# of the numpy the package was built with goes last on PYTHONPATH.
export PYTHONPATH="$_hflow_root/python/site-packages${PYTHONPATH:+:$PYTHONPATH}"
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import numpy' 2>/dev/null; then
  _hflow_numpy=$(sed -n 's/^NUMPY_DIR = "\(.*\)"$/\1/p' \
    "$_hflow_root/python/site-packages/dataflow/_build_info.py" 2>/dev/null || true)
  if [ -n "$_hflow_numpy" ]; then
    export PYTHONPATH="$PYTHONPATH:$_hflow_numpy"
  fi
  unset _hflow_numpy
fi
if [ -d "$_hflow_root/bin" ]; then
  export PATH="$_hflow_root/bin${PATH:+:$PATH}"
fi
unset _hflow_root
