"""Target detection for AMD GPUs."""

from __future__ import annotations

from typing import Any


def detect(dev: Any):
    """The ``rocm`` target with the device's limits (code objects for the default architectures:
    the runtime loads the one the device accepts)."""
    from tvm.target import Target

    return Target(
        {
            "kind": "rocm",
            "max_num_threads": dev.max_threads_per_block,
            "max_shared_memory_per_block": dev.max_shared_memory_per_block,
            "thread_warp_size": dev.warp_size,
        }
    )
