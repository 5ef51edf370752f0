"""Fixtures of the ROCm backend's tests: llvm-readelf and the mock HIP library."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from rocm_helpers import READELF_HINT, build_mock_hip, find_readelf  # noqa: E402


@pytest.fixture(scope="session")
def readelf_path() -> str:
    """llvm-readelf, or skip naming the package."""
    path = find_readelf()
    if path is None:
        pytest.skip(f"llvm-readelf not found ({READELF_HINT})")
    return path


@pytest.fixture(scope="session")
def mock_hip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mock libamdhip64.so built from tests/mock_hip (skips without a C compiler)."""
    lib = build_mock_hip(tmp_path_factory.mktemp("mockhip"))
    if lib is None:
        pytest.skip("no C compiler to build the mock libamdhip64.so")
    return lib
