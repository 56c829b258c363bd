#!/usr/bin/env bash
# `import numpy`, `import dataflow` and `import acl` work from a clean environment after
# sourcing set_env.sh, with the given interpreter: Debian's, or one that
# has no numpy of its own (set_env.sh then adds the numpy the package was
# built with). Without set_env.sh's numpy, importing dataflow alone still
# finds it (the package's fallback). The imported package must be this
# build's. Usage: import_check.sh SDK_DIR PYTHON
set -euo pipefail
sdk=$(cd "$1" && pwd)
py=$(command -v "$2")
env -i HOME="${HOME:-/tmp}" PATH="$PATH" bash -c '
  source "$1/set_env.sh"
  "$2" - "$1" <<"PY"
import sys
import numpy  # first, as user programs do
import dataflow
import acl  # the pyACL runtime calls, beside the package
where = dataflow.__file__
assert where.startswith(sys.argv[1]), f"imported {where}, not {sys.argv[1]}"
assert acl.__file__.startswith(sys.argv[1]), f"imported {acl.__file__}"
print("import_check:", sys.executable, "dataflow from", where,
      "numpy", numpy.__version__)
PY' _ "$sdk" "$py"
env -i HOME="${HOME:-/tmp}" PATH="$PATH" \
  PYTHONPATH="$sdk/python/site-packages" "$py" -c '
import dataflow, numpy, sys
print("import_check (package fallback):", sys.executable, numpy.__file__)'
