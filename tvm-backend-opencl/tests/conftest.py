"""Fixtures of the OpenCL test suites: the device (or a skip naming why there is none)."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
import tvm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from opencl_testing import opencl_unavailable_reason  # noqa: E402


@pytest.fixture(scope="session")
def backend() -> Any:
    """The opencl backend record (activated)."""
    return tvm.backend.load("opencl")


@pytest.fixture(scope="session")
def dev() -> Any:
    """opencl(0), or skip with the reason OpenCL kernels cannot run here."""
    why = opencl_unavailable_reason()
    if why:
        pytest.skip(why)
    return tvm.opencl(0)


@pytest.fixture()
def no_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make sure TVM_COMPILE_FORCE_FALLBACK from the environment does not leak into a test."""
    monkeypatch.delenv("TVM_COMPILE_FORCE_FALLBACK", raising=False)
