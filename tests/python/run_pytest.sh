#!/usr/bin/env bash
# Runs the Python package's tests (tests/python/test_*.py) with one
# interpreter, after sourcing the build tree's set_env.sh as a user would.
# pytest comes from Debian's python3-pytest: an interpreter that is not
# Debian's (e.g. a pyenv python3 first on PATH) reaches it through
# PYTHONPATH. Each test file runs in a process of its own (hflow's state is
# per process). Usage: run_pytest.sh BUILD_DIR SOURCE_DIR PYTHON
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
py=$(command -v "$3")
# shellcheck disable=SC1091
source "$build/sdk/set_env.sh"
export HFLOW_SDK_DIR="$build/sdk"
export HFLOW_BIN_DIR="$build/bin"  # the hflow CLI (test_ctxcheck.py)
if ! "$py" -c 'import pytest' 2>/dev/null; then
  export PYTHONPATH="$PYTHONPATH:/usr/lib/python3/dist-packages"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"  # UDF workspaces and builds land here
echo "run_pytest: $py ($("$py" --version 2>&1))"
status=0
for t in "$src"/tests/python/test_*.py; do
  "$py" -m pytest -q -p no:cacheprovider "$t" || status=1
done
exit $status
