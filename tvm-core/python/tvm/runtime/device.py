"""Devices: ``tvm.device(...)``, ``tvm.cpu()``, ``tvm.cuda(n)`` ... with ``.exist`` and attributes."""

from __future__ import annotations

import numbers
from typing import Any

import tvm_ffi
from tvm_ffi import core as _core

#: Device names: DLPack's names of its device types (dlpack.h) and the CPU's target names; a
#: backend adds its own names and aliases when it registers its device (``ctx.register_device``).
DEVICE_TYPES: dict[str, int] = {
    "cpu": 1,
    "llvm": 1,
    "c": 1,
    "cuda": 2,
    "cuda_host": 3,
    "opencl": 4,
    "vulkan": 7,
    "metal": 8,
    "rocm": 10,
    "ext_dev": 12,
    "hexagon": 16,
    "webgpu": 15,
}
DEVICE_NAMES: dict[int, str] = {
    1: "cpu",
    2: "cuda",
    3: "cuda_host",
    4: "opencl",
    7: "vulkan",
    8: "metal",
    10: "rocm",
    12: "ext_dev",
    15: "webgpu",
    16: "hexagon",
}


def register_device_name(name: str, device_type: int) -> None:
    """Let ``tvm.device(name)`` and targets named ``name`` mean ``device_type`` (used by backends)."""
    DEVICE_TYPES[name] = device_type
    DEVICE_NAMES.setdefault(device_type, name)


def _attr(dev: "Device", key: str) -> Any:
    from tvm.backend import _registry

    return _registry.device_attr(dev.dlpack_device_type(), dev.index, key)


class Device(tvm_ffi.Device):
    """A device (DLPack device type and index) with TVM's attribute accessors."""

    __slots__ = ()

    @property
    def device_type(self) -> int:
        """DLPack device type code."""
        return self.dlpack_device_type()

    @property
    def device_id(self) -> int:
        """Device index."""
        return self.index

    @property
    def exist(self) -> bool:
        """True when a runtime for this device type is loaded and the device is present."""
        return bool(_attr(self, "exist"))

    @property
    def name(self) -> str | None:
        """Device name as reported by its runtime."""
        return _attr(self, "name")

    @property
    def max_threads_per_block(self) -> int | None:
        """Maximum threads in one block / work-group."""
        return _attr(self, "max_threads_per_block")

    @property
    def warp_size(self) -> int | None:
        """Threads per warp / wavefront / sub-group."""
        return _attr(self, "warp_size")

    @property
    def max_shared_memory_per_block(self) -> int | None:
        """Bytes of shared (local) memory available to one block."""
        return _attr(self, "max_shared_memory_per_block")

    @property
    def compute_version(self) -> str | None:
        """Compute capability / architecture version, e.g. ``"9.0"``."""
        return _attr(self, "compute_version")

    @property
    def multi_processor_count(self) -> int | None:
        """Number of multiprocessors / compute units."""
        return _attr(self, "multi_processor_count")

    @property
    def max_clock_rate(self) -> int | None:
        """Maximum clock rate in kHz."""
        return _attr(self, "max_clock_rate")

    @property
    def total_global_memory(self) -> int | None:
        """Bytes of device memory."""
        return _attr(self, "total_global_memory")

    @property
    def max_thread_dimensions(self) -> Any:
        """Maximum block dimensions (x, y, z)."""
        return _attr(self, "max_thread_dimensions")

    def attr(self, key: str) -> Any:
        """Any attribute the device's runtime knows, by name."""
        return _attr(self, key)

    def sync(self) -> None:
        """Wait for all work queued on this device's current stream."""
        try:
            tvm_ffi.get_global_func("runtime.DeviceSync")(self)
        except RuntimeError as err:
            from tvm.backend import _registry

            raise _registry.explain_device_error(self, err) from err

    def __repr__(self) -> str:
        return f"{self.type_name}({self.index})"

    def __str__(self) -> str:
        return f"{self.type_name}:{self.index}"

    @property
    def type_name(self) -> str:
        """The device's name: the one its backend registered (``"example"``), else the DLPack
        name, else ``device_type_<n>`` (never raises)."""
        code = self.dlpack_device_type()
        return DEVICE_NAMES.get(code, f"device_type_{code}")


_core._set_class_device(Device)


def device(dev_type: "str | int | Device", dev_id: int | None = None) -> Device:
    """A device from a name (``"cuda"``, ``"cuda:1"``, ``"opencl"``), a DLPack type code or a
    Device, and an index of 0 or more (default: the name's, the Device's or 0; a negative one is
    a ValueError, as in ``"cpu:-1"``)."""
    if isinstance(dev_type, str):
        name = dev_type.strip()
        if ":" in name:
            name, _, idx = name.partition(":")
            if not (idx.strip().isascii() and idx.strip().isdigit()):
                what = "be 0 or more" if idx.strip().lstrip("-").isdigit() else "be a whole number of 0 or more"
                raise ValueError(f"device '{dev_type}': the index after ':' must {what}, as in 'opencl:1'")
            dev_id = int(idx)
        if not name.split():
            raise ValueError(f"device {dev_type!r} names no device: write a name such as 'cpu' or 'opencl:1'")
        name = name.split()[0]
        if name not in DEVICE_TYPES:
            raise _unknown_device(name, dev_type)
        code = DEVICE_TYPES[name]
    elif isinstance(dev_type, Device):
        if dev_id is None:
            return dev_type
        code = dev_type.dlpack_device_type()
    elif isinstance(dev_type, numbers.Integral) and not isinstance(dev_type, bool):
        code = int(dev_type)
        if not -(2**31) <= code < 2**31:
            raise ValueError(f"device type {code} is no DLPack device type code (they are small integers: cpu 1)")
    else:
        raise TypeError(
            f"a device is named by a string such as 'cuda' or 'cuda:1', or by its DLPack device type code, "
            f"got {type(dev_type).__name__}"
        )
    dev_id = 0 if dev_id is None else dev_id
    if isinstance(dev_id, bool) or not isinstance(dev_id, numbers.Integral):
        raise TypeError(f"device {dev_type!r}: the index is a whole number such as 0 or 1, got {type(dev_id).__name__}")
    if not 0 <= dev_id < 2**31:  # as "cpu:-1" is refused
        raise ValueError(
            f"device {dev_type!r}, index {dev_id}: the index must be 0 or more (and below 2**31), "
            "as in tvm.device('opencl', 1)"
        )
    return Device(code, int(dev_id))


def _unknown_device(name: str, spelled: str) -> Exception:
    """Why device ``name`` does not exist: a backend of that name that is installed but did not
    activate, or one the project publishes that is not installed (BackendError with the reason
    and the fix), else a ValueError listing the known names."""
    from tvm.backend import _registry
    from tvm.backend._ownership import PUBLISHED_BACKENDS

    record = _registry.get_record(name)
    if record is not None or name in PUBLISHED_BACKENDS:
        return _registry.explain_missing(f"device '{spelled}'", name, record, known=sorted(DEVICE_TYPES))
    suggestion = _registry.closest_names(name, sorted(DEVICE_TYPES))
    return ValueError(f"unknown device '{spelled}'.{suggestion} Known: {sorted(DEVICE_TYPES)}")


def cpu(dev_id: int = 0) -> Device:
    """The host CPU."""
    return Device(1, dev_id)


def cuda(dev_id: int = 0) -> Device:
    """An NVIDIA GPU."""
    return Device(2, dev_id)


def rocm(dev_id: int = 0) -> Device:
    """An AMD GPU."""
    return Device(10, dev_id)


def opencl(dev_id: int = 0) -> Device:
    """An OpenCL device."""
    return Device(4, dev_id)


def vulkan(dev_id: int = 0) -> Device:
    """A Vulkan device."""
    return Device(7, dev_id)


def metal(dev_id: int = 0) -> Device:
    """An Apple Metal device."""
    return Device(8, dev_id)


def hexagon(dev_id: int = 0) -> Device:
    """A Qualcomm Hexagon DSP."""
    return Device(16, dev_id)


def webgpu(dev_id: int = 0) -> Device:
    """A WebGPU adapter."""
    return Device(15, dev_id)


def ext_dev(dev_id: int = 0) -> Device:
    """A vendor extension device (DLPack kDLExtDev)."""
    return Device(12, dev_id)
