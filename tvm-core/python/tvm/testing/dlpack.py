"""DLPack tensors made by hand, as a foreign or careless producer may hand them over: any data
address (NULL too), shape, device and byte offset. Tests use them to check what the runtime and
the kernels refuse."""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence


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


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

#: every structure handed out, alive as long as the process: views made of them have no deleter
_KEPT: list = []


class HandMadeTensor:
    """A DLPack producer of one tensor: ``data`` (an address, or None for NULL) holding ``shape``
    elements of float32 (``dtype``: DLPack's code, bits and lanes) on ``device`` (DLPack's device
    type and id), ``byte_offset`` bytes in; ``keep`` is held as long as the producer (the
    memory behind ``data``). ``ndim`` overrides the rank the capsule states (a careless
    producer's -1); ``strides`` (in elements) makes it a strided view."""

    def __init__(
        self,
        data: Optional[int],
        shape: Sequence[int],
        device: tuple[int, int] = (1, 0),
        byte_offset: int = 0,
        dtype: tuple[int, int, int] = (2, 32, 1),
        keep: Any = None,
        ndim: Optional[int] = None,
        strides: Optional[Sequence[int]] = None,
    ):
        self.data, self.shape, self.device = data, tuple(shape), device
        self.byte_offset, self.dtype, self.keep = byte_offset, dtype, keep
        self.ndim = len(self.shape) if ndim is None else ndim
        self.strides = None if strides is None else tuple(strides)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device

    def __dlpack__(self, stream: Any = None, **_: Any) -> Any:
        shape = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        strides = None if self.strides is None else (ctypes.c_int64 * max(len(self.strides), 1))(*self.strides)
        tensor = _DLTensor(
            self.data,
            _DLDevice(*self.device),
            self.ndim,
            _DLDataType(*self.dtype),
            ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
            None if strides is None else ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)),
            self.byte_offset,
        )
        managed = _DLManagedTensor(tensor, None, None)
        _KEPT.append((managed, shape, strides, self.keep))
        return _capsule_new(ctypes.addressof(managed), b"dltensor", None)
