"""DLPack views that claim to be hexagon memory at any address, as a foreign producer can hand
over (a uniquely named module, so that it cannot clash with other packages' test helpers when
every suite runs in one pytest session)."""

from __future__ import annotations

import ctypes
from typing import Any

HEXAGON = 16  # DLPack's kDLHexagon


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_KEEP: list = []  # the views' DLPack structs, alive as long as the process (no deleter frees them)


def hexagon_view(address: int, elements: int, byte_offset: int = 0) -> Any:
    """A tvm tensor of ``elements`` float32 at ``address`` + ``byte_offset`` that says it is on
    hexagon(0), whatever the address holds."""
    import tvm

    class Producer:
        def __dlpack_device__(self):
            return (HEXAGON, 0)

        def __dlpack__(self, stream=None, **kwargs):
            shape = (ctypes.c_int64 * 1)(elements)
            tensor = _DLTensor(address, _DLDevice(HEXAGON, 0), 1, _DLDataType(2, 32, 1), shape, None, byte_offset)
            m = _DLManagedTensor(tensor, None, None)
            _KEEP.append((m, shape))
            new = ctypes.pythonapi.PyCapsule_New
            new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            return new(ctypes.addressof(m), b"dltensor", None)

    return tvm.runtime.from_dlpack(Producer())
