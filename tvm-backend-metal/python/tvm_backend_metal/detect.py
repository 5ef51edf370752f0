"""Target detection for Metal devices."""

from __future__ import annotations

from typing import Any


def detect(dev: Any):
    """The ``metal`` target with the device's limits."""
    from tvm.target import Target

    return Target(
        {
            "kind": "metal",
            "max_num_threads": dev.max_threads_per_block,
            "max_shared_memory_per_block": dev.max_shared_memory_per_block,
            "thread_warp_size": dev.warp_size,
        }
    )
