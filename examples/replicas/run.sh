#!/usr/bin/env bash
# replicas: count batching (batch_size 4) in front of two nodes replicated on
# devices 2..5 ("0:0:2~5"); the cluster is --devices 2,3,4,5.
# Graph picture: examples/replicas/graph.txt
#
#   x ──[CountBatch 4]── stack (Identity) x4 ── double (stack + stack) x4 ── output 0
#
# 8 feeds of [1,2,3] make two batches (transactions 4 and 8). Expected stdout:
#   {"output":0,"trans_id":4,"ret_code":0,"dtype":"int32","shape":[4,3],"data":[2,4,6,2,4,6,2,4,6,2,4,6]}
#   {"output":0,"trans_id":8,"ret_code":0,"dtype":"int32","shape":[4,3],"data":[2,4,6,2,4,6,2,4,6,2,4,6]}
# `hflow run` sees that the graph batches: after the last feed it takes
# results until the graph stays quiet for 500 ms, then exits 0 (stderr:
# "2/8 transactions ok (fed 8, fetched 2, failed 0)").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HFLOW="${HFLOW:-$ROOT/build/bin/hflow}"
exec "$HFLOW" run "$ROOT/examples/replicas/graph.json" --devices 2,3,4,5 \
  --input x=int32:1,2,3 --repeat 8 "$@"
