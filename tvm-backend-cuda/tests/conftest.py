"""Fixtures of the CUDA backend's tests: GPU tests (marked ``gpu``) skip without a device, and
the mock libcuda.so.1 is built once per session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from cuda_helpers import build_mock_driver, find_cxx, gpu_skip_reason  # noqa: E402

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
    out = tmp_path_factory.mktemp("mockcuda")
    if build_mock_driver(out) is None:
        pytest.skip("no C compiler to build the mock libcuda.so.1")
    return out


@pytest.fixture(scope="session")
def device_api_shim(mock_driver_dir: Path) -> Path:
    """tests/mock_driver/device_api_shim.cc built against the installed tvm and tvm_ffi headers
    (tvm's from the repository's tvm-core/include when tvm is imported from its sources): lets a
    test call DeviceAPI::StreamSync with any handle (skips without a C++ compiler)."""
    import importlib.util

    cxx = find_cxx()
    if cxx is None:
        pytest.skip("no C++ compiler to build the DeviceAPI test shim")
    incs = []
    for package in ("tvm", "tvm_ffi"):
        root = Path(list(importlib.util.find_spec(package).submodule_search_locations)[0])
        headers = root / "include"
        incs.append(str(headers if headers.is_dir() else root.parent.parent / "include"))
    out = mock_driver_dir / "libdevice_api_shim.so"
    subprocess.run(
        [
            cxx,
            "-std=c++17",
            "-shared",
            "-fPIC",
            "-O0",
            *[f"-I{i}" for i in incs],
            "-o",
            str(out),
            str(HERE / "mock_driver" / "device_api_shim.cc"),
        ],
        check=True,
    )
    return out
