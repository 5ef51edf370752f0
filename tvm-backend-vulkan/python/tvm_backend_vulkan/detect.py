"""Target detection for Vulkan devices: ``tvm.target.detect_target_from_device(tvm.vulkan(0))``."""

from __future__ import annotations

from typing import Any


def detect(dev: Any) -> Any:
    """The ``vulkan`` target describing ``dev``: its name, workgroup and shared-memory limits,
    subgroup size and the dtypes its shaders support."""
    from tvm.target import Target

    def flag(key: str) -> bool:
        return bool(dev.attr(key))

    attrs: dict[str, Any] = {
        "kind": "vulkan",
        "model": "_".join((dev.name or "unknown").split()),
        "max_num_threads": int(dev.max_threads_per_block or 128),
        "max_shared_memory_per_block": int(dev.max_shared_memory_per_block or 16384),
        "thread_warp_size": int(dev.warp_size or 1),
        "supports_float16": flag("supports_float16"),
        "supports_float64": flag("supports_float64"),
        "supports_int64": flag("supports_int64"),
    }
    return Target(attrs)


__all__ = ["detect"]
