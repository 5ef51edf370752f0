"""Targets and target detection."""

from . import detect_target
from .detect_target import detect_target_from_device, register_device_target_detector
from .target import Target, TargetKind, get_target_kind, list_target_kinds, register_target_kind

__all__ = [
    "Target",
    "TargetKind",
    "detect_target",
    "detect_target_from_device",
    "get_target_kind",
    "list_target_kinds",
    "register_device_target_detector",
    "register_target_kind",
]
