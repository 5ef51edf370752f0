"""Helpers shared by the CUDA backend's tests (a uniquely named module, so the test suites of all
packages can run in one pytest session)."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

from tvm.testing import run_python

HERE = Path(__file__).resolve().parent
NO_GPU_REASON = "no CUDA device: libcuda.so.1 not found"


def has_libcuda() -> bool:
    """True when libcuda.so.1 (the NVIDIA driver, or a mock on LD_LIBRARY_PATH) can be loaded."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def gpu_skip_reason() -> str | None:
    """None when a real CUDA device is usable, else why not."""
    if os.environ.get("TVM_CUDA_MOCK_DRIVER"):
        return "running against the mock driver"
    if not has_libcuda():
        return NO_GPU_REASON
    import tvm

    if not tvm.cuda(0).exist:
        rec = tvm.backend._registry.get_record("cuda")
        return f"no CUDA device: {rec.reason if rec else 'cuda backend not installed'}"
    return None


def find_cxx() -> str | None:
    """The C++ compiler the tests build host code with ($CXX, c++ or g++), or None."""
    return shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")


def build_mock_driver(out_dir: str | Path) -> Path | None:
    """Build the mock libcuda.so.1 (tests/mock_driver/mock_libcuda.c) into ``out_dir``; None
    without a C compiler."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    lib = Path(out_dir) / "libcuda.so.1"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(HERE / "mock_driver" / "mock_libcuda.c"), "-ldl"],
        check=True,
    )
    return lib


def run_with_mock_driver(mock_driver_dir: str | Path, code: str, env: dict | None = None, timeout: int = 240) -> str:
    """Run ``code`` in a fresh interpreter whose libcuda.so.1 is the mock in ``mock_driver_dir``;
    its stdout (AssertionError with both streams when it fails)."""
    full = {"LD_LIBRARY_PATH": str(mock_driver_dir), "TVM_CUDA_MOCK_DRIVER": "1", **(env or {})}
    out = run_python(code, env=full, timeout=timeout)
    assert out.returncode == 0, f"stdout:\n{out.stdout}\nstderr:\n{out.stderr}"
    return out.stdout
