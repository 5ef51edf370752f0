"""Fixtures of the Hexagon test suites: the device, or a skip naming why there is none."""

from __future__ import annotations

from typing import Any

import pytest

INSTALL = "apt-get install qemu-user-static (the qemu-hexagon simulator)"


@pytest.fixture(scope="session")
def dev() -> Any:
    """hexagon(0), or skip with the reason Hexagon kernels cannot run here."""
    import tvm
    from tvm.testing.backend import unavailable_reason

    why = unavailable_reason("hexagon", fix=INSTALL)
    if why:
        pytest.skip(why)
    return tvm.device("hexagon", 0)
