#!/usr/bin/env bash
# multi_function: a multi-function UDF (procs Scale and Sum, one class) with
# node input/output mapping. hflow builds udf/ on first use (GE-style
# CMakeLists; set HFLOW_UDF_BUILD_DIR to choose where).
# Graph picture: examples/multi_function/graph.txt
#
#   x ── node in 1 ─> pp in 0 ─[Scale: x*10]─ pp out 0 ─> node out 1 ── output 1
#   y ── node in 0 ─> pp in 1 ─[Sum]──────── pp out 1 ─> node out 0 ── output 0
#
# Expected stdout (two JSON lines, one per graph output):
#   {"output":0,"trans_id":1,"ret_code":0,"dtype":"int32","shape":[1],"data":[15]}
#   {"output":1,"trans_id":1,"ret_code":0,"dtype":"int32","shape":[3],"data":[10,20,30]}
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HFLOW="${HFLOW:-$ROOT/build/bin/hflow}"
exec "$HFLOW" run "$ROOT/examples/multi_function/graph.json" \
  --input x=int32:1,2,3 --input y=int32:4,5,6 "$@"
