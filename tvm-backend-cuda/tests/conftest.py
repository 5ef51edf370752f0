"""Fixtures of the CUDA backend's tests: GPU tests (marked ``gpu``) skip without a device, and
the mock libcuda.so.1 is built once per session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cuda_helpers import gpu_skip_reason  # noqa: E402

GPU_REASON = gpu_skip_reason()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gpu: needs a real GPU and its driver")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if GPU_REASON is None:
        return
    skip = pytest.mark.skip(reason=GPU_REASON)
    for item in items:
        # only this package's GPU tests: other backends decide about their own devices
        if "gpu" in item.keywords and Path(str(item.fspath)).resolve().is_relative_to(HERE):
            item.add_marker(skip)


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
