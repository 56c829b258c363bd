#!/usr/bin/env bash
# Builds the GE host programs and examples (tests/ge_host/CMakeLists.txt, one
# GE-style CMake project) against hflow's GE SDK and runs each of them, as a
# GE user would: `source $ASCEND_HOME_PATH/set_env.sh`, cmake, run.
#   sdk:     ASCEND_HOME_PATH = BUILD_DIR/sdk (the build tree's SDK)
#   install: `cmake --install BUILD_DIR --prefix <tmp>`, and that prefix
# Every program runs on the default cluster (devices 0..3) and again with
# RESOURCE_CONFIG_PATH naming a cluster of devices 2,3,4,5 (GE's numa_config
# form); the context program also on 3,6,7 (compact form). Programs run from
# tests/ge_host (their compile configs' workspace "udf" is relative to the
# working directory, as in GE), the examples from their own folders.
# Prints one line per run with its seconds; exits non-zero when any fails.
# Usage: run_ge_host.sh BUILD_DIR SOURCE_DIR sdk|install
set -euo pipefail
if [ $# -ne 3 ] || { [ "$3" != sdk ] && [ "$3" != install ]; }; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR sdk|install" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
mode=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t0=$(date +%s.%N)

if [ "$mode" = sdk ]; then
  home=$build/sdk
else
  cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log" >&2; exit 1; }
  home=$tmp/prefix
fi
[ -f "$home/set_env.sh" ] || { echo "no set_env.sh in $home" >&2; exit 1; }
unset ASCEND_HOME_PATH RESOURCE_CONFIG_PATH
set +u  # set_env.sh extends variables that may be unset
# shellcheck disable=SC1091
source "$home/set_env.sh"
set -u
[ "$ASCEND_HOME_PATH" = "$home" ] \
  || { echo "set_env.sh set ASCEND_HOME_PATH=$ASCEND_HOME_PATH, not $home" >&2; exit 1; }
# UDF builds of this run stay in this run (sdk and install runs may run at
# once, and must each build against their own SDK).
export HFLOW_UDF_BUILD_DIR=$tmp/udf
export TMPDIR=$tmp

# model_node parses model files: the small ones of the model tests'
# generator (GE's add sample as .pb and .onnx, a model with unsupported
# operators), made with HFLOW_MODEL_PYTHON (CMake sets it where hflow has
# model nodes). Without it, model_node does not run, and says so.
programs="multi_function count_batch time_batch exception_catch flow_msg \
balance bad_input dflow_session context"
if [ -n "${HFLOW_MODEL_PYTHON:-}" ]; then
  "$HFLOW_MODEL_PYTHON" "$src/tests/models/make_onnx_models.py" \
    "$tmp/models" extras tf >"$tmp/models.log" 2>&1 \
    || { cat "$tmp/models.log" >&2; echo "making test models failed" >&2; exit 1; }
  export HFLOW_GE_MODEL_DIR=$tmp/models
  programs="$programs model_node"
else
  echo "SKIP model_node: hflow was built without model nodes (no HFLOW_MODEL_PYTHON)"
fi

cmake -S "$src/tests/ge_host" -B "$tmp/build" >"$tmp/cmake.log" 2>&1 \
  && cmake --build "$tmp/build" -j2 >>"$tmp/cmake.log" 2>&1 \
  || { cat "$tmp/cmake.log" >&2; echo "building tests/ge_host failed" >&2; exit 1; }
t1=$(date +%s.%N)
printf 'built tests/ge_host against %s in %.1f s\n' "$home" "$(echo "$t1 - $t0" | bc)"

cat >"$tmp/cluster_2345.json" <<'JSON'
{"cluster": [{"cluster_nodes": [{"node_id": 0, "is_local": true,
   "item_list": [{"item_id": 0, "device_id": 2, "item_type": "npu"},
                 {"item_id": 1, "device_id": 3, "item_type": "npu"},
                 {"item_id": 2, "device_id": 4, "item_type": "npu"},
                 {"item_id": 3, "device_id": 5, "item_type": "npu"}]}]}],
 "item_def": [{"item_type": "npu", "memory": "[DDR:16GB]"}]}
JSON
echo '{"devices": [3, 6, 7]}' >"$tmp/cluster_367.json"

failed=()
# run NAME DIR CLUSTER_FILE|- DEVICES COMMAND...
run() {
  local name=$1 dir=$2 cluster=$3 devices=$4
  shift 4
  local log="$tmp/$name.$devices.log" s e rc=0
  s=$(date +%s.%N)
  if [ ! -x "$1" ]; then
    local why="see the configure output"
    [ -f "$home/lib64/libascendcl.so" ] || why="$home/lib64/libascendcl.so is missing"
    printf 'FAIL %-16s devices %-8s not built: %s\n' "$name" "$devices" "$why"
    failed+=("$name@$devices")
    return
  fi
  if [ "$cluster" = - ]; then
    (cd "$dir" && timeout 120 "$@" "$devices") >"$log" 2>&1 || rc=$?
  else
    (cd "$dir" && RESOURCE_CONFIG_PATH=$cluster timeout 120 "$@" "$devices") \
      >"$log" 2>&1 || rc=$?
  fi
  e=$(date +%s.%N)
  if [ $rc -eq 0 ] && grep -q ": PASS" "$log"; then
    local checks
    checks=$(grep -c '^\[ ok \]' "$log" || true)
    printf 'PASS %-16s devices %-8s %5.1f s%s\n' "$name" "$devices" \
      "$(echo "$e - $s" | bc)" "$([ "$checks" -gt 0 ] && echo " ($checks checks)")"
  else
    printf 'FAIL %-16s devices %-8s exit %d\n' "$name" "$devices" "$rc"
    grep -v '^\[ ok \]' "$log" | tail -40 | sed 's/^/    /'
    failed+=("$name@$devices")
  fi
}

for p in $programs; do
  run "$p" "$src/tests/ge_host" - 0,1,2,3 "$tmp/build/$p"
  run "$p" "$src/tests/ge_host" "$tmp/cluster_2345.json" 2,3,4,5 "$tmp/build/$p"
done
run context "$src/tests/ge_host" "$tmp/cluster_367.json" 3,6,7 "$tmp/build/context"
for ex in add_two batch_sum; do
  run "$ex" "$src/examples/ge_host_api/$ex" - 0,1,2,3 \
    "$tmp/build/examples/$ex/$ex"
  run "$ex" "$src/examples/ge_host_api/$ex" "$tmp/cluster_2345.json" 2,3,4,5 \
    "$tmp/build/examples/$ex/$ex"
done

t2=$(date +%s.%N)
printf 'ran in %.1f s; total %.1f s\n' "$(echo "$t2 - $t1" | bc)" \
  "$(echo "$t2 - $t0" | bc)"
if [ ${#failed[@]} -ne 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
echo "ge_host ($mode): all programs passed"
