"""Helpers shared by the CUDA backend's tests (a uniquely named module, so the test suites of all
packages can run in one pytest session)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
NO_GPU_REASON = "no CUDA device: libcuda.so.1 not found"


def gpu_skip_reason() -> str | None:
    """None when a real CUDA device is usable, else why not."""
    if os.environ.get("TVM_CUDA_MOCK_DRIVER"):
        return "running against the mock driver"
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return NO_GPU_REASON
    import tvm

    if not tvm.cuda(0).exist:
        rec = tvm.backend._registry.get_record("cuda")
        return f"no CUDA device: {rec.reason if rec else 'cuda backend not installed'}"
    return None


def run_python(code: str, env: dict | None = None, timeout: int = 240) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (same sys.path as this one); never raises on failure."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    full.update(env or {})
    return subprocess.run([sys.executable, "-W", "ignore", "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=timeout)
