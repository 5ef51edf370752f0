"""Fixtures of the WebGPU test suites: the device, or a skip naming why there is none."""

from __future__ import annotations

from typing import Any

import pytest

INSTALL = "pip install 'wgpu==0.32.0'; apt-get install libvulkan1 mesa-vulkan-drivers"


@pytest.fixture(scope="session")
def dev() -> Any:
    """webgpu(0), or skip with the reason WebGPU kernels cannot run here."""
    import tvm
    from tvm.testing.backend import unavailable_reason

    why = unavailable_reason("webgpu", fix=INSTALL)
    if why:
        pytest.skip(why)
    return tvm.webgpu(0)
