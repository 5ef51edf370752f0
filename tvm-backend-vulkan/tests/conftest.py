"""Fixtures of the Vulkan test suites: every test runs under the Khronos validation layer (when
installed) and fails on any message it logs; the device, or a skip naming why there is none."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from vulkan_testing import enable_validation_layer, validation_messages, vulkan_unavailable_reason  # noqa: E402

_LOG = enable_validation_layer()


@pytest.fixture(autouse=True)
def no_validation_messages() -> Iterator[None]:
    """Fail the test when the validation layer logged anything while it ran."""
    before = len(validation_messages(_LOG))
    yield
    new = validation_messages(_LOG)[before:]
    assert not new, "the Vulkan validation layer reported:\n" + "\n".join(new[:5])


@pytest.fixture(scope="session")
def dev() -> Any:
    """vulkan(0), or skip with the reason Vulkan kernels cannot run here."""
    import tvm

    why = vulkan_unavailable_reason()
    if why:
        pytest.skip(why)
    return tvm.vulkan(0)


@pytest.fixture(scope="session")
def layer_log() -> Path | None:
    """The validation layer's log file (None when the layer is not installed)."""
    return _LOG
