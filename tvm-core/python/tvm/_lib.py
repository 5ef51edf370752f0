"""Loads ``libtvm_runtime`` (RTLD_GLOBAL) so that backend DSOs resolve against this exact copy."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import tvm_ffi

LIB_DIR = Path(__file__).parent / "lib"
LIB_PATH = LIB_DIR / "libtvm_runtime.so"


def _load() -> ctypes.CDLL:
    if not LIB_PATH.exists():
        raise ImportError(
            f"libtvm_runtime.so is missing from {LIB_DIR}: the tvm package is incomplete; "
            "reinstall the 'tvm' wheel (see README: install from ./wheelhouse)"
        )
    return ctypes.CDLL(str(LIB_PATH), mode=ctypes.RTLD_GLOBAL | os.RTLD_NOW)


LIB = _load()
LIB.TVMRuntimeABIVersion.restype = ctypes.c_int
#: ABI version every backend DSO is checked against before it is used.
ABI_VERSION: int = LIB.TVMRuntimeABIVersion()

__all__ = ["LIB", "LIB_DIR", "LIB_PATH", "ABI_VERSION", "tvm_ffi"]
