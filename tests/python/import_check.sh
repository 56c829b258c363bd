#!/usr/bin/env bash
# `import dataflow` (and numpy through it) works from a clean environment
# after sourcing set_env.sh, with the given interpreter: Debian's, or one
# that has no numpy of its own (the package finds the numpy it was built
# with). The imported package must be this build's.
# Usage: import_check.sh SDK_DIR PYTHON
set -euo pipefail
sdk=$(cd "$1" && pwd)
py=$(command -v "$2")
env -i HOME="${HOME:-/tmp}" PATH="$PATH" bash -c '
  source "$1/set_env.sh"
  "$2" - "$1" <<"PY"
import sys
import dataflow, numpy
where = dataflow.__file__
assert where.startswith(sys.argv[1]), f"imported {where}, not {sys.argv[1]}"
print("import_check:", sys.executable, "dataflow from", where,
      "numpy", numpy.__version__)
PY' _ "$sdk" "$py"
