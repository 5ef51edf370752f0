"""Shared fixtures: GPU detection (tests marked ``gpu`` skip without one), the mock driver, and
running snippets in fresh interpreters."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

NO_GPU_REASON = "no CUDA device: libcuda.so.1 not found"


def _gpu_reason() -> str | None:
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


GPU_REASON = _gpu_reason()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a real NVIDIA GPU and driver")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if GPU_REASON is None:
        return
    skip = pytest.mark.skip(reason=GPU_REASON)
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_python(code: str, env: dict | None = None, timeout: int = 240) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (same sys.path as this one); never raises on failure."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    full.update(env or {})
    return subprocess.run([sys.executable, "-W", "ignore", "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def mock_driver_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the mock libcuda.so.1 built from tests/mock_driver (skips without a C compiler)."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the mock libcuda.so.1")
    out = tmp_path_factory.mktemp("mockcuda")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out / "libcuda.so.1"),
                    str(HERE / "mock_driver" / "mock_libcuda.c")], check=True)
    return out
