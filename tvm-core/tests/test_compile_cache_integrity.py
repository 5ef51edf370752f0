"""The CPU compile cache never loads a damaged library: a cached shared library that was truncated,
bit-flipped or replaced is compiled again (before, a truncated one faulted with SIGBUS and others
failed on every run until the cache was deleted by hand)."""

from __future__ import annotations

import pytest

from tvm.testing import run_python

KERNEL = """
import numpy as np, tvm
from tvm.script import tir as T

@T.prim_func
def add3(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        B[i] = A[i] + T.float32(3)

mod = tvm.compile(add3, target="c")
a = np.arange(64, dtype="float32"); b = np.zeros(64, "float32")
mod["add3"](a, b)
assert (b == a + 3).all(), b
print("ran", mod._build_info.cache_hit, mod._build_info.lib_path)
"""


def run_kernel(tmp_path):
    script = tmp_path / "kernel.py"
    script.write_text(KERNEL)
    proc = run_python(f"import runpy; runpy.run_path({str(script)!r})", env={"TVM_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stdout + proc.stderr  # a fault would be a negative code
    _, hit, path = proc.stdout.split()[-3:]
    return hit == "True", path


@pytest.mark.parametrize("damage", ["truncate", "flip", "replace"])
def test_damaged_cached_library_is_rebuilt(tmp_path, damage):
    hit, path = run_kernel(tmp_path)
    assert not hit
    assert run_kernel(tmp_path)[0], "the second run must be a cache hit"
    from pathlib import Path

    lib = Path(path)
    data = lib.read_bytes()
    if damage == "truncate":
        lib.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        flipped = bytearray(data)
        flipped[len(data) // 3] ^= 0xFF
        lib.write_bytes(bytes(flipped))
    else:
        lib.write_bytes(b"\x7fELF not a library")
    hit, again = run_kernel(tmp_path)
    assert not hit and again == path, "a damaged entry must be compiled again, not loaded"
    assert lib.read_bytes() == data
