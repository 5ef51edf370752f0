"""Target detection for Hexagon devices (the simulator's v66 with HVX)."""

from __future__ import annotations

from typing import Any


def detect(dev: Any):
    """The ``hexagon`` target with the device's limits."""
    from tvm.target import Target

    return Target(
        {
            "kind": "hexagon",
            "max_num_threads": dev.max_threads_per_block,
            "max_shared_memory_per_block": dev.max_shared_memory_per_block,
        }
    )
