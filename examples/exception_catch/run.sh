#!/usr/bin/env bash
# exception_catch: a UDF raising an exception (code 9900001) for negative
# input, with "exception_catch": true. hflow builds udf/ on first use.
# Graph picture: examples/exception_catch/graph.txt
#
#   x ──[check: CheckNonNegative]── output 0
#
# Runs twice. Expected stdout of the first run (exit status 0):
#   {"output":0,"trans_id":1,"ret_code":0,"dtype":"int32","shape":[3],"data":[1,2,3]}
# and of the second: one line with "trans_id":1 and "ret_code":9900001 (no
# data), exit status non-zero (a message came back with a non-zero ret code).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HFLOW="${HFLOW:-$ROOT/build/bin/hflow}"
GRAPH="$ROOT/examples/exception_catch/graph.json"
"$HFLOW" run "$GRAPH" --input x=int32:1,2,3 "$@" || exit $?
"$HFLOW" run "$GRAPH" --input x=int32:1,-2,3 "$@"
status=$?
echo "second run exited with $status (non-zero expected)" >&2
[ "$status" -ne 0 ]
