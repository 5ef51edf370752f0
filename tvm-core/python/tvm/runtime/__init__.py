"""The runtime: devices, tensors and modules."""

from .device import (
    Device,
    cpu,
    cuda,
    device,
    ext_dev,
    hexagon,
    metal,
    opencl,
    rocm,
    vulkan,
    webgpu,
)
from .tensor import Tensor, empty, from_dlpack, numpy_dtype, tensor
from .module import Module, load_module

__all__ = [
    "Device",
    "Module",
    "Tensor",
    "cpu",
    "cuda",
    "device",
    "empty",
    "ext_dev",
    "from_dlpack",
    "hexagon",
    "load_module",
    "metal",
    "numpy_dtype",
    "opencl",
    "rocm",
    "tensor",
    "vulkan",
    "webgpu",
]
