"""TVM: a tensor-program compiler and runtime, extended by backend wheels.

``import tvm`` loads libtvm_runtime and activates the installed backends (see
:mod:`tvm.backend`). The compiler (``tvm.compile``, ``tvm.script``, ``tvm.tir``) is imported on
first use so that importing tvm stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._version import __version__  # written by the build from versions.toml

from . import _lib  # noqa: E402  (loads libtvm_runtime before anything registers)
from . import backend, runtime, target  # noqa: E402
from .runtime import (  # noqa: E402
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
from . import _aliases, _cpu_backend  # noqa: E402

_LAZY_SUBMODULES = {
    "tir",
    "tirx",
    "script",
    "ir",
    "nd",
    "transform",
    "codegen",
    "driver",
    "error",
    "contrib",
    "support",
    "testing",
    "tune",
}
_LAZY_ATTRS = {
    "compile": ("tvm.driver", "compile"),
    "build": ("tvm.driver", "compile"),
    "IRModule": ("tvm.tir", "IRModule"),
    "device_from_target": ("tvm.target.target", "device_from_target"),
    "get_global_func": ("tvm_ffi", "get_global_func"),
    "register_global_func": ("tvm_ffi", "register_global_func"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY_ATTRS:
        module, attr = _LAZY_ATTRS[name]
        value = getattr(importlib.import_module(module), attr)
    elif name in _LAZY_SUBMODULES:
        value = importlib.import_module(f"tvm.{name}")
    else:
        raise AttributeError(f"module 'tvm' has no attribute '{name}'")
    globals()[name] = value
    return value


_aliases.install()
_cpu_backend.register()
backend._registry.autoload()

__all__ = [
    "Device",
    "backend",
    "compile",
    "cpu",
    "cuda",
    "device",
    "ext_dev",
    "hexagon",
    "metal",
    "opencl",
    "rocm",
    "runtime",
    "target",
    "vulkan",
    "webgpu",
]
