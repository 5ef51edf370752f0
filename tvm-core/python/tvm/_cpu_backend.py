"""The CPU backend lives in the core: target kind ``c`` (alias ``llvm``) on device ``cpu``."""

from __future__ import annotations

from .target.target import TargetKind, register_target_kind


def register() -> None:
    """Register the host target kind and the CPU target detector."""
    from .backend._ownership import CORE, claim
    from .target.detect_target import register_device_target_detector

    for what, keys in (("device type", (1,)), ("device name", ("cpu", "llvm", "c")), ("target kind", ("c", "llvm"))):
        for key in keys:
            claim(what, key, CORE, "tvm")
    register_target_kind(TargetKind("c", 1, "core", ("cpu",), {}), aliases=("llvm",))
    register_device_target_detector(1, _detect_cpu)


def _detect_cpu(dev) -> "Target":  # noqa: F821 - imported on call
    """The host target (``c``) with the number of cores."""
    from .target import Target

    return Target({"kind": "c", "num_cores": dev.multi_processor_count or 1})
