"""Tensors on any registered device: empty, from/to NumPy, copies, DLPack in and out."""

from __future__ import annotations

import ctypes
import functools
from typing import Any, Sequence

import numpy as np
import tvm_ffi
from tvm_ffi import core as _core

from .device import Device, cpu

_empty = tvm_ffi.get_global_func("runtime.TensorEmpty")
_copy = tvm_ffi.get_global_func("runtime.TensorCopyFromTo")  # (src, dst, bitcast, sync)


#: ml_dtypes' types that TVM tensors hold (NumPy cannot export them through DLPack)
_ML_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def _host_view(arr: np.ndarray) -> tvm_ffi.Tensor:
    """A zero-copy DLPack view of a C-contiguous NumPy array; dtypes NumPy cannot export
    (ml_dtypes' bfloat16 and float8) are viewed as the unsigned integer of the same width. NumPy exports a
    read-only array only through versioned DLPack (or, when it cannot, it is copied)."""
    if arr.dtype.kind == "V" or arr.dtype.name in _ML_DTYPES:
        arr = arr.view(f"uint{arr.dtype.itemsize * 8}")
    if not arr.flags.writeable:
        try:
            return tvm_ffi.from_dlpack(arr.__dlpack__(max_version=(1, 0)))
        except (TypeError, BufferError):
            arr = arr.copy()
    return tvm_ffi.from_dlpack(arr)


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype that holds a TVM dtype (bfloat16 and the float8 formats through ml_dtypes)."""
    if dtype in _ML_DTYPES:
        try:
            import ml_dtypes
        except ImportError as err:
            raise ImportError(f"{dtype} tensors need 'ml_dtypes' (pip install ml_dtypes)") from err
        return np.dtype(getattr(ml_dtypes, dtype))
    if dtype == "bool":
        return np.dtype("bool")
    return np.dtype(dtype)


def _rebuilt(values: np.ndarray, device_type: int, device_index: int) -> "Tensor":
    """A pickled tensor again (see ``Tensor.__reduce__``)."""
    return tensor(values, Device(device_type, device_index))


#: Python's own types as NumPy reads them for a dtype
_PYTHON_DTYPES = {bool: "bool", int: "int64", float: "float64"}


def _dtype_str(dtype: Any) -> str:
    if isinstance(dtype, type) and dtype in _PYTHON_DTYPES:
        return _PYTHON_DTYPES[dtype]
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        name = np.dtype(dtype).name
        return "bfloat16" if name == "bfloat16" else name
    return str(dtype)


class Tensor(tvm_ffi.Tensor):
    """A tvm-ffi tensor with TVM's conveniences (``numpy()``, ``copyfrom``, ``copyto``)."""

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # tvm-ffi makes tensors without calling this; a tensor made by calling the class holds
        # no memory and crashed the process on first use
        raise TypeError(
            "tvm.runtime.Tensor is not called directly: use tvm.runtime.tensor(data, device), "
            "tvm.runtime.empty(shape, dtype, device) or tvm.runtime.from_dlpack(obj)"
        )

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """The DLPack protocol: the tensor's memory, shared. A request tvm-ffi's legacy export
        would ignore (a copy, another device) is refused, as the versioned export refuses it."""
        if copy:
            raise BufferError("a tvm Tensor exports its memory shared; copy=True is not supported: copy it first")
        if dl_device is not None and tuple(dl_device) != tuple(self.__dlpack_device__()):
            raise BufferError(f"dl_device {tuple(dl_device)} differs from the tensor's {self.__dlpack_device__()}")
        if max_version is not None and max_version[0] < 1:
            max_version = None  # the consumer reads DLPack 0.x: the legacy export
        return super().__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __reduce__(self) -> tuple:
        """Pickled (and deep-copied) as its values and its device: unpickling copies them to that
        device, which must exist there."""
        dev = self.device
        return _rebuilt, (self.numpy(), dev.dlpack_device_type(), dev.index)

    def numpy(self) -> np.ndarray:
        """Copy the tensor into a new NumPy array (from any device); a vector dtype's lanes are
        the array's last dimension (``float32x4`` of shape ``(n,)``: float32 of ``(n, 4)``)."""
        if self.dtype.lanes > 1:
            host = self.copyto(cpu())  # alive while its view is copied
            return _lanes_view(host).copy()
        if self.device.dlpack_device_type() == _CPU and not self.is_contiguous():
            return _strided_host_copy(self)
        out = np.empty(tuple(self.shape), dtype=numpy_dtype(str(self.dtype)))
        _copy(self, _host_view(out), True, True)
        return out

    asnumpy = numpy

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """NumPy's conversion (``np.asarray(t)``, ``np.testing`` ...): a copy of the values, from
        any device (``copy=False`` cannot be honoured and is refused, as NumPy asks)."""
        if copy is False:
            raise ValueError("a tvm Tensor becomes a NumPy array by copying; copy=False cannot be honoured")
        out = self.numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def copyfrom(self, source: Any) -> "Tensor":
        """Copy from a NumPy array (converted to this dtype) or another tensor into this one."""
        if isinstance(source, tvm_ffi.Tensor):
            _copy(source, self, False, True)
            return self
        if self.dtype.lanes > 1:  # lanes as the last dimension, through a CPU tensor
            staging = empty(self.shape, str(self.dtype), cpu())
            lanes = _lanes_view(staging)
            arr = np.asarray(source, dtype=lanes.dtype)
            if arr.shape != lanes.shape:
                raise ValueError(
                    f"copyfrom: shape {arr.shape} does not match {lanes.shape} (the lanes of {self.dtype} last)"
                )
            lanes[...] = arr
            _copy(staging, self, False, True)
            return self
        arr = np.asarray(source, dtype=numpy_dtype(str(self.dtype)), order="C")  # 0-d stays 0-d
        if arr.shape != tuple(self.shape):
            raise ValueError(f"copyfrom: shape {arr.shape} does not match tensor shape {tuple(self.shape)}")
        _copy(_host_view(arr), self, True, True)
        return self

    def copyto(self, target: Any) -> Any:
        """Copy into another tensor, or into a new tensor on device ``target``."""
        if isinstance(target, tvm_ffi.Tensor):
            _copy(self, target, False, True)
            return target
        if not isinstance(target, tvm_ffi.Device):
            hint = " (into NumPy: .numpy())" if isinstance(target, np.ndarray) else ""
            raise TypeError(f"copyto takes a Tensor or a Device, got {type(target).__name__}{hint}")
        out = empty(self.shape, str(self.dtype), target)
        _copy(self, out, False, True)
        return out

    @property
    def device(self) -> Device:  # type: ignore[override]
        """The device holding the data."""
        d = tvm_ffi.Tensor.device.__get__(self)
        return Device(d.dlpack_device_type(), d.index)

    def __repr__(self) -> str:
        return f"<tvm.runtime.Tensor shape={tuple(self.shape)} dtype={self.dtype} device={self.device}>"


_core._set_class_tensor(Tensor)


_CPU = 1  # DLPack's kDLCPU


def _strided_host_copy(t: tvm_ffi.Tensor) -> np.ndarray:
    """A compact NumPy copy of strided CPU tensor ``t`` (any dtype NumPy or ml_dtypes holds, any
    strides, negative too), read through a NumPy view of its memory."""
    dtype = numpy_dtype(str(t.dtype))
    shape = tuple(t.shape)
    if 0 in shape:
        return np.empty(shape, dtype)
    strides = tuple(s * dtype.itemsize for s in t.strides)
    low = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + dtype.itemsize
    memory = (ctypes.c_char * (high - low)).from_address(t.data_ptr() + low)
    return np.ndarray(shape, dtype, buffer=memory, offset=-low, strides=strides).copy()


def _lanes_view(host: Tensor) -> np.ndarray:
    """A NumPy view of a compact CPU tensor of a vector dtype, its lanes the last dimension
    (NumPy has no vector dtypes, and DLPack exports no lanes to it)."""
    import ctypes

    element = numpy_dtype(str(host.dtype).rsplit("x", 1)[0])  # "float32x4" holds float32
    shape = (*tuple(host.shape), host.dtype.lanes)
    count = int(np.prod(shape))
    memory = (ctypes.c_char * (count * element.itemsize)).from_address(host.data_ptr()) if count else b""
    return np.frombuffer(memory, dtype=element, count=count).reshape(shape)


#: Element widths of each DLPack type code a tensor may hold (int, uint, float, bfloat, bool; the
#: codes from 7 on are the 8-bit float formats)
_TENSOR_BITS = {0: (8, 16, 32, 64), 1: (8, 16, 32, 64), 2: (16, 32, 64), 4: (16,), 6: (8,)}


def _tensor_dtype(dtype: Any) -> tvm_ffi.dtype:
    """``dtype`` as tvm-ffi's dtype; a ValueError for one no tensor holds (``float33``, ``int4``,
    ``handle``), which tvm-ffi parses but nothing can read back."""
    text = _dtype_str(dtype)
    try:
        dt = tvm_ffi.dtype(text)
    except (ValueError, TypeError, RuntimeError):
        dt = None
    bits = _TENSOR_BITS.get(dt.type_code, (8,) if dt.type_code >= 7 else ()) if dt is not None else ()
    if dt is None or dt.bits not in bits or dt.lanes < 1:
        raise ValueError(
            f"a tensor cannot hold dtype '{text}': use bool, int8/16/32/64, uint8/16/32/64, "
            f"float16/32/64, bfloat16 or an 8-bit float format (vectors of them too, e.g. float32x4)"
        )
    return dt


def empty(shape: Sequence[int] | int, dtype: Any = "float32", device: Device | None = None) -> Tensor:
    """An uninitialised tensor on ``device`` (default CPU)."""
    dims = _dimensions(shape)
    dev = device if device is not None else cpu()
    if isinstance(dev, str):
        from .device import device as _named

        dev = _named(dev)
    if not isinstance(dev, tvm_ffi.Device):
        raise TypeError(f"a tensor's device is a tvm.device(...), such as tvm.cpu(0), got {dev!r}")
    try:
        return _empty(tvm_ffi.Shape(dims), _tensor_dtype(dtype), dev)
    except RuntimeError as err:
        from tvm.backend import _registry

        raise _registry.explain_device_error(dev, err) from err


def _dimensions(shape: Any) -> tuple[int, ...]:
    """``shape`` (an integer or a sequence of them) as a tuple of ints; TypeError for a float,
    a string or a bool, ValueError for one past int64."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__") or getattr(shape, "ndim", None) == 0:
        shape = (shape,)  # an integer (a 0-d NumPy array too)
    dims = []
    for d in shape:
        whole = hasattr(type(d), "__index__") or type(d).__name__ == "IntImm"  # TIR's integer constants
        if isinstance(d, (bool, np.bool_)) or not whole:
            raise TypeError(f"a tensor's shape holds integers, got {d!r} in {shape!r}")
        d = int(d)
        if not -(2**63) <= d < 2**63:
            raise ValueError(f"dimension {d} of shape {shape!r} is past int64")
        dims.append(d)
    return tuple(dims)


def tensor(data: Any, device: Device | None = None, dtype: Any = None) -> Tensor:
    """A new tensor on ``device`` holding a copy of ``data`` (NumPy array, list, or DLPack tensor)."""
    if hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray):
        src = from_dlpack(data)
        if dtype is not None and _dtype_str(dtype) != str(src.dtype):
            raise ValueError(
                f"tensor: data of dtype {src.dtype} is copied as it is, not converted to {_dtype_str(dtype)}: "
                f"convert it first (its .numpy().astype(...)) or leave dtype out"
            )
        out = empty(src.shape, str(src.dtype), device)
        _copy(src, out, False, True)
        return out
    name = None if dtype is None else _dtype_str(dtype)
    element, _, lanes = (name or "").rpartition("x")
    if name is not None and element and lanes.isdigit():  # a vector dtype: its lanes the last dimension
        arr = np.asarray(data, dtype=numpy_dtype(element))
        if arr.ndim == 0 or arr.shape[-1] != int(lanes):
            raise ValueError(
                f"tensor: a {name} tensor takes data whose last dimension holds its {lanes} lanes, "
                f"got shape {arr.shape}"
            )
        return empty(arr.shape[:-1], name, device).copyfrom(arr)
    arr = np.asarray(data) if name is None else np.asarray(data, dtype=numpy_dtype(name))
    out = empty(arr.shape, _dtype_str(arr.dtype), device)
    out.copyfrom(arr)
    return out


def from_dlpack(obj: Any) -> Tensor:
    """Zero-copy view of any DLPack producer (NumPy, PyTorch, ...); ValueError when what it hands
    over cannot describe memory (a negative rank or dimension, elements without data), is
    read-only (TVM tensors are writable) or is a capsule used already."""
    if type(obj).__name__ != "PyCapsule" and _host_producer(obj):
        obj = _host_capsule(obj)  # looked at before tvm-ffi reads it (a negative rank corrupts its heap)
    problem = _capsule_problem(obj)
    if problem is not None:
        raise ValueError(f"from_dlpack: {problem}")
    try:
        view = tvm_ffi.from_dlpack(obj)
    except BufferError:
        if isinstance(obj, np.ndarray) and not obj.flags.writeable:
            raise ValueError(f"from_dlpack: {_read_only('the array')}") from None
        raise
    problem = _malformed(view)
    if problem is not None:
        raise ValueError(f"from_dlpack: the {type(obj).__name__} producer's tensor {problem}")
    return view


def _read_only(subject: str) -> str:
    """The refusal of read-only memory (``subject``: what holds it)."""
    return (
        f"{subject} is read-only, and a TVM tensor is writable memory: pass a writable copy "
        "(numpy.array(x)), or pass the array to a compiled function, which copies it"
    )


@functools.cache
def _capsule_api() -> tuple[Any, Any]:
    """PyCapsule_GetName and PyCapsule_GetPointer with prototypes of our own (ctypes.pythonapi's
    function objects are shared with other libraries), made once."""
    name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
    pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi)
    )
    return name, pointer


#: DLManagedTensorVersioned: version (2 x uint32), manager_ctx, deleter, the flags, the DLTensor
_FLAGS_OFFSET = 8 + 2 * ctypes.sizeof(ctypes.c_void_p)
_FLAG_READ_ONLY = 1
#: where each capsule's DLTensor starts, and its rank inside it (after data and device)
_TENSOR_OFFSET = {b"dltensor": 0, b"dltensor_versioned": _FLAGS_OFFSET + 8}
_NDIM_OFFSET = ctypes.sizeof(ctypes.c_void_p) + 8


def _host_producer(obj: Any) -> bool:
    """Whether ``obj`` is a DLPack producer of CPU memory that is no NumPy array (whose exports
    are well formed): its capsule is then taken here, where no stream is involved."""
    if isinstance(obj, (np.ndarray, tvm_ffi.Tensor)) or not hasattr(obj, "__dlpack__"):
        return False
    try:
        return tuple(obj.__dlpack_device__())[0] == 1  # kDLCPU
    except Exception:  # noqa: BLE001 - a producer without a usable device query: tvm-ffi decides
        return False


def _host_capsule(obj: Any) -> Any:
    """The DLPack capsule of a CPU producer (versioned where it offers one)."""
    try:
        return obj.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer of the older protocol
        return obj.__dlpack__()


def _capsule_problem(obj: Any) -> str | None:
    """Why a DLPack capsule cannot become a tensor (used already, read-only, a negative rank), or
    None; None for anything that is not a capsule."""
    if type(obj).__name__ != "PyCapsule":
        return None
    get_name, get_pointer = _capsule_api()
    name = get_name(obj)
    if name in (b"used_dltensor", b"used_dltensor_versioned"):
        return "the DLPack capsule was used already (a capsule gives its tensor once; ask the producer for another)"
    if name not in _TENSOR_OFFSET:
        return None  # not DLPack's: tvm-ffi names what it expected
    managed = get_pointer(obj, name)
    if not managed:
        return None
    if name == b"dltensor_versioned" and ctypes.c_uint64.from_address(managed + _FLAGS_OFFSET).value & _FLAG_READ_ONLY:
        return _read_only("the capsule's tensor")
    ndim = ctypes.c_int32.from_address(managed + _TENSOR_OFFSET[name] + _NDIM_OFFSET).value
    return f"the producer's tensor has {ndim} dimensions" if ndim < 0 else None


def _malformed(view: tvm_ffi.Tensor) -> str | None:
    """What makes a DLPack view describe no memory, or None."""
    if view.ndim < 0:
        return f"has {view.ndim} dimensions"
    shape = tuple(view.shape)
    if any(s < 0 for s in shape):
        return f"has a negative dimension: shape {shape}"
    if view.dtype.lanes < 1:
        return f"has dtype {view.dtype} with {view.dtype.lanes} lanes"
    if view.data_ptr() == 0 and all(shape):
        return f"has elements but no data (a NULL pointer): shape {shape}"
    return None
