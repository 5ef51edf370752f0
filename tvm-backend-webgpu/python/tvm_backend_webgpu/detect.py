"""Target detection for WebGPU devices: ``tvm.target.detect_target_from_device(tvm.webgpu(0))``."""

from __future__ import annotations

from typing import Any


def detect(dev: Any) -> Any:
    """The ``webgpu`` target of ``dev``: its adapter's name, workgroup limits and whether it has
    ``shader-f16``. The code generator keeps to WebGPU's portable limits unless the target says
    more, so a detected target is for kernels meant for this adapter only."""
    from tvm.target import Target

    return Target(
        {
            "kind": "webgpu",
            "model": "_".join((dev.name or "unknown").split()),
            "max_num_threads": int(dev.max_threads_per_block or 256),
            "max_shared_memory_per_block": int(dev.max_shared_memory_per_block or 16384),
            "supports_float16": bool(dev.attr("supports_float16")),
        }
    )


__all__ = ["detect"]
