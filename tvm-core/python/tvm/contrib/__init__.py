"""Helpers around external tools (the system C compiler): ``tvm.contrib.cc`` and
``tvm.contrib.utils``, each imported when first named (``tvm.contrib.utils.tempdir()`` works
without its own import statement, as ``import tvm`` stays cheap)."""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("cc", "utils")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
