#!/usr/bin/env bash
# add_pipeline: a + b on device 0, twice the sum on device 1, built-ins only.
# Graph picture: examples/add_pipeline/graph.txt
#
#   a ─┐
#      ├─[add]── add:0 ──[twice = add:0 + add:0]── output 0
#   b ─┘ dev 0                 dev 1
#
# Expected stdout (one JSON line):
#   {"output":0,"trans_id":1,"ret_code":0,"dtype":"int32","shape":[3],"data":[22,44,66]}
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HFLOW="${HFLOW:-$ROOT/build/bin/hflow}"
exec "$HFLOW" run "$ROOT/examples/add_pipeline/graph.json" \
  --input a=int32:1,2,3 --input b=int32:10,20,30 "$@"
