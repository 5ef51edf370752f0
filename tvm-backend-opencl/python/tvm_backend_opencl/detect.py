"""Target detection for OpenCL devices: ``tvm.target.detect_target_from_device(tvm.opencl(0))``."""

from __future__ import annotations

from typing import Any


def _has_extension(extensions: str, name: str) -> bool:
    return name in (extensions or "").split()


def detect(dev: Any) -> Any:
    """The ``opencl`` target describing ``dev``: device name, work-group and local-memory limits,
    OpenCL version, and whether float16/float64 arithmetic is supported."""
    from tvm.target import Target

    extensions = dev.attr("device_extensions") or ""
    attrs: dict[str, Any] = {
        "kind": "opencl",
        "device": dev.attr("device_kind") or "gpu",
        "model": "_".join((dev.name or "unknown").split()),
        "max_num_threads": int(dev.max_threads_per_block or 256),
        "max_shared_memory_per_block": int(dev.max_shared_memory_per_block or 16384),
        "thread_warp_size": int(dev.warp_size or 1),
        "opencl_version": dev.compute_version or "1.2",
        "supports_float16": _has_extension(extensions, "cl_khr_fp16"),
        "supports_float64": _has_extension(extensions, "cl_khr_fp64"),
    }
    return Target(attrs)


__all__ = ["detect"]
