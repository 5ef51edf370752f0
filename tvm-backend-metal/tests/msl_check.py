"""Syntax-checks generated MSL with clang as C++17 against the stand-in standard library in
``msl_shim/metal_stdlib`` (what that proves and misses is said there)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SHIM = Path(__file__).resolve().parent / "msl_shim"


def find_clangxx() -> str | None:
    """clang++ (Debian's clang-19 names it clang++-19), or None."""
    for name in ("clang++-19", "clang++", os.environ.get("CXX", "")):
        found = shutil.which(name) if name else None
        if found and "clang" in os.path.basename(found):
            return found
    return None


def check(source: str, tmp: Path, clangxx: str) -> str:
    """ "" when ``source`` passes, else clang's diagnostics."""
    path = tmp / "kernels.metal"
    path.write_text(source)
    proc = subprocess.run(
        [clangxx, "-fsyntax-only", "-std=c++17", "-x", "c++", f"-I{SHIM}", "-Wno-unknown-attributes", str(path)],
        capture_output=True,
        text=True,
    )
    return "" if proc.returncode == 0 else proc.stderr
