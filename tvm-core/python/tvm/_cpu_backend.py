"""The CPU backend lives in the core: target kind ``c`` (alias ``llvm``) on device ``cpu``."""

from __future__ import annotations

from .target.target import TargetKind, register_target_kind


def register() -> None:
    """Register the host target kinds."""
    register_target_kind(TargetKind("c", 1, "core", ("cpu",), {}), aliases=("llvm",))
