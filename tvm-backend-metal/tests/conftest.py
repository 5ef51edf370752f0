"""Fixtures of the Metal backend's tests: clang for the MSL syntax check."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from msl_check import find_clangxx  # noqa: E402


@pytest.fixture(scope="session")
def clangxx() -> str:
    """clang++, or skip naming the package."""
    found = find_clangxx()
    if found is None:
        pytest.skip("clang++ not found for the MSL syntax check (apt-get install clang-19)")
    return found
