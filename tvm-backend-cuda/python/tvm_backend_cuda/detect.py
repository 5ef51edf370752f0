"""Target detection for CUDA devices: ``tvm.target.detect_target_from_device(tvm.cuda(0))``."""

from __future__ import annotations

from typing import Any


def arch_from_compute_version(version: str) -> str:
    """``"9.0" -> "sm_90"``; raises ValueError on anything else."""
    major, dot, minor = str(version).partition(".")
    if not (dot and major.isdigit() and minor.isdigit()):
        raise ValueError(f"unexpected CUDA compute version {version!r}")
    return f"sm_{major}{minor}"


def detect(dev: Any) -> Any:
    """A ``cuda`` Target describing ``dev``: arch, thread and shared-memory limits, SM count."""
    from tvm.target import Target

    return Target(
        {
            "kind": "cuda",
            "arch": arch_from_compute_version(dev.compute_version),
            "max_num_threads": int(dev.max_threads_per_block),
            "max_shared_memory_per_block": int(dev.max_shared_memory_per_block),
            "max_dynamic_shared_memory_per_block": int(dev.attr("max_shared_memory_per_block_optin")),
            "thread_warp_size": int(dev.warp_size),
            "multi_processor_count": int(dev.multi_processor_count),
        }
    )
