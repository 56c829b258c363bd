"""Makes numpy importable for whichever python3 imports dataflow.

The package is built against Debian's python3 and its numpy
(python3-numpy). Another CPython 3.11 first on PATH (a pyenv build, say)
loads the same extension module but has no numpy of its own; for it, the
folder holding the numpy the package was built with (recorded at build time
in _build_info.py) is appended to sys.path, after the interpreter's own
folders, so a numpy the interpreter has always wins.

Thread-safety: runs once, at the package's import (under the import lock).
"""

import sys


def _ensure_numpy() -> None:
    try:
        import numpy  # noqa: F401
        return
    except ImportError:
        pass
    from dataflow import _build_info

    if _build_info.NUMPY_DIR and _build_info.NUMPY_DIR not in sys.path:
        sys.path.append(_build_info.NUMPY_DIR)
    try:
        import numpy  # noqa: F401,F811
    except ImportError as e:
        raise ImportError(
            f"dataflow needs numpy: {sys.executable} has none and the one the "
            f"package was built with ({_build_info.NUMPY_DIR or 'unknown'}) "
            f"does not import ({e}); install python3-numpy "
            "(scripts/install-deps) or numpy for this interpreter"
        ) from e


_ensure_numpy()
