"""A PEP 517 build backend that wheels the already-built dataflow package.

`pip install <build>/sdk/python` calls build_wheel here. Nothing is
compiled: CMake has built `dataflow._core` and copied the Python sources
into site-packages/dataflow, so a wheel is that folder zipped with its
metadata. Why not setuptools: pip builds in an isolated environment whose
requirements it must download, so a setuptools backend would not install
offline without --no-build-isolation, and setuptools would tag a prebuilt
extension as a pure-Python wheel. This backend needs the standard library
only, so `requires = []` and an offline pip works.

The extension links the hflow libraries of the build tree it came from (by
absolute RPATH), so the installed package uses that build tree's libraries
and SDK: rebuild, and reinstall, together.

Thread-safety: a build backend runs once per pip process, single-threaded.
"""

import base64
import hashlib
import importlib.machinery
import os
import re
import sys
import sysconfig
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_PKG = os.path.join(_HERE, "site-packages", "dataflow")
_DIST = "hflow_dataflow"


def _version() -> str:
    info = os.path.join(_PKG, "_build_info.py")
    try:
        with open(info, encoding="utf-8") as f:
            m = re.search(r'^VERSION = "([^"]+)"', f.read(), re.M)
    except OSError:
        m = None
    if not m:
        raise RuntimeError(
            f"{info} has no VERSION: build hflow first (scripts/build) and "
            "install from the build tree's sdk/python"
        )
    return m.group(1)


def _extension() -> str:
    """The built _core's file name, checked against this interpreter."""
    names = [n for n in os.listdir(_PKG) if n.startswith("_core.")]
    if not names:
        raise RuntimeError(
            f"{_PKG} has no _core extension: build hflow with Python "
            "(scripts/build) before installing"
        )
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    for n in names:
        if any(n == "_core" + s for s in suffixes):
            return n
    raise RuntimeError(
        f"{names[0]} was built for another Python than {sys.executable} "
        f"(which loads {', '.join(suffixes)}): install with the python3 "
        "the package was built for"
    )


def _tag() -> str:
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{plat}"


def _metadata(version: str) -> str:
    return (
        "Metadata-Version: 2.1\n"
        f"Name: hflow-dataflow\nVersion: {version}\n"
        "Summary: CANN GE's DataFlow Python API (import dataflow) on hflow\n"
        "Requires-Python: ==3.11.*\n"
    )


def _package_files():
    for root, dirs, files in os.walk(_PKG):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(root, f)
            yield path, "dataflow/" + os.path.relpath(path, _PKG).replace(os.sep, "/")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{name},sha256={digest.decode()},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version, tag = _version(), _tag()
    _extension()
    info = f"{_DIST}-{version}.dist-info"
    wheel_name = f"{_DIST}-{version}-{tag}.whl"
    extra = {
        f"{info}/METADATA": _metadata(version).encode(),
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hflow_wheel\n"
            f"Root-Is-Purelib: false\nTag: {tag}\n"
        ).encode(),
        f"{info}/top_level.txt": b"dataflow\n",
    }
    record = []
    path = os.path.join(wheel_directory, wheel_name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as whl:
        for src, name in _package_files():
            with open(src, "rb") as f:
                data = f.read()
            whl.writestr(_zip_info(name, os.stat(src).st_mode), data)
            record.append(_record_line(name, data))
        for name, data in extra.items():
            whl.writestr(name, data)
            record.append(_record_line(name, data))
        record.append(f"{info}/RECORD,,")
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel_name


def _zip_info(name: str, mode: int) -> zipfile.ZipInfo:
    # Keeps the extension's executable bits; a fixed date keeps wheels of
    # the same build byte-identical.
    zi = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    zi.external_attr = (mode & 0o777 | 0o100000) << 16
    zi.compress_type = zipfile.ZIP_DEFLATED
    return zi
