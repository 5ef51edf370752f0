"""Loads ``libtvm_runtime`` (RTLD_GLOBAL) so that backend DSOs resolve against this exact copy."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import tvm_ffi

#: The platform's suffix for the shared libraries our wheels ship.
SHARED_LIBRARY_SUFFIX = ".dylib" if sys.platform == "darwin" else ".so"


def shared_library_path(directory: str | os.PathLike[str], stem: str) -> Path:
    """``directory/lib<stem>.so`` (``.dylib`` on macOS)."""
    return Path(directory) / f"lib{stem}{SHARED_LIBRARY_SUFFIX}"


LIB_DIR = Path(__file__).parent / "lib"
LIB_PATH = shared_library_path(LIB_DIR, "tvm_runtime")


def _load() -> ctypes.CDLL:
    if not LIB_PATH.exists():
        raise ImportError(
            f"{LIB_PATH.name} is missing from {LIB_DIR}: the tvm package is incomplete; "
            "reinstall the 'tvm' wheel (see README: install from ./wheelhouse)"
        )
    return ctypes.CDLL(str(LIB_PATH), mode=ctypes.RTLD_GLOBAL | os.RTLD_NOW)


LIB = _load()
# Ctrl-C or sys.exit() inside a Python callback that compiled code calls (T.call_packed) reaches the
# caller as itself, not as the RuntimeError tvm-ffi makes of an unregistered exception.
for _exit in (KeyboardInterrupt, SystemExit, GeneratorExit):
    tvm_ffi.register_error(_exit.__name__, _exit)
del _exit
LIB.TVMRuntimeABIVersion.restype = ctypes.c_int
#: ABI version every backend DSO is checked against before it is used.
ABI_VERSION: int = LIB.TVMRuntimeABIVersion()

__all__ = ["LIB", "LIB_DIR", "LIB_PATH", "ABI_VERSION", "SHARED_LIBRARY_SUFFIX", "shared_library_path", "tvm_ffi"]
