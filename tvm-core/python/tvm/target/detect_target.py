"""``detect_target_from_device`` and the per-device-type detector registry backends extend."""

from __future__ import annotations

from typing import Any, Callable

from .target import Target

_DETECTORS: dict[int, Callable[[Any], Target]] = {}


def register_device_target_detector(device_type: int | str, fn: Callable[[Any], Target]) -> None:
    """Make ``fn(device) -> Target`` the detector for ``device_type`` (a code or device name)."""
    from tvm.runtime.device import DEVICE_TYPES

    code = DEVICE_TYPES[device_type] if isinstance(device_type, str) else int(device_type)
    _DETECTORS[code] = fn


def unregister_device_target_detector(device_type: int) -> None:
    """Remove the detector for ``device_type``."""
    _DETECTORS.pop(device_type, None)


def detect_target_from_device(dev: Any) -> Target:
    """The target that describes ``dev`` (e.g. ``cuda -arch=sm_90`` for an H100)."""
    from tvm.runtime.device import DEVICE_NAMES, Device, device

    if isinstance(dev, str):
        dev = device(dev)
    if not hasattr(dev, "dlpack_device_type"):
        raise TypeError(f"detect_target_from_device takes a device such as tvm.cuda(0) or 'opencl', got {dev!r}")
    code = dev.dlpack_device_type()
    fn = _DETECTORS.get(code)
    if fn is None:
        from tvm.backend import _registry

        name = DEVICE_NAMES.get(code, str(code))
        raise _registry.explain_missing(f"detecting the target of {dev!r}", name, _registry._record_for_device(code))
    if not Device(code, dev.index).exist:
        raise ValueError(f"cannot detect the target of {dev!r}: the device does not exist on this machine")
    return fn(dev)
