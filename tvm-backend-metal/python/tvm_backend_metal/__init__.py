"""Metal backend for TVM: Metal Shading Language generated from TIR; on macOS a runtime on
Metal (``libtvm_runtime_metal.dylib``, Objective-C++), elsewhere code generation and the fallback
module, whose exported libraries carry the MSL to a Mac.

The ``tvm.backends`` entry point ``metal`` names :func:`activate`.
"""

from __future__ import annotations

import sys

from ._version import __version__  # written by the build from versions.toml

#: DLPack device type of Metal devices (kDLMetal).
DEVICE_TYPE = 8
#: What to do when the runtime is unavailable.
INSTALL_HINT = (
    "Metal runs only on macOS: export the library here and load it on a Mac with tvm-backend-metal installed"
    if sys.platform != "darwin"
    else "pip install --force-reinstall tvm-backend-metal (the macOS wheel holds the Metal runtime)"
)

#: What target ``metal`` assumes: Apple GPUs (1024 threads and 32 KiB of threadgroup memory per
#: threadgroup; no double precision).
CAPABILITIES = {
    "dynamic_shared_memory": False,
    "max_num_threads": 1024,
    "max_shared_memory_per_block": 32768,
    "supports_float64": False,
    "max_kernel_args": 64,
}


def activate(ctx: "tvm.backend.api.BackendContext") -> None:  # noqa: F821 - never evaluated
    """Register the Metal device, its runtime (on macOS), the target kind ``metal``, its detector
    and the ``T.metal`` namespace. Elsewhere the runtime reports that Metal needs macOS, and code
    generation produces the fallback module (same bytes)."""
    from tvm.backend.api import runtime_library_path

    ctx.register_device("metal", DEVICE_TYPE)
    ctx.load_runtime(runtime_library_path(__file__, "tvm_runtime_metal"), hint=INSTALL_HINT)
    ctx.register_target_kind(
        "metal",
        DEVICE_TYPE,
        codegen="tvm_backend_metal.codegen:build",
        keys=("gpu", "metal"),
        default_attrs={"max_num_threads": 1024, "thread_warp_size": 32},
        capabilities=CAPABILITIES,
        passes=("tvm.tir.transform:legalize_log1p",),  # the Metal standard library has no log1p
    )
    ctx.register_device_target_detector(DEVICE_TYPE, "tvm_backend_metal.detect:detect")
    ctx.register_script_namespace("metal", "tvm_backend_metal.script")
    ctx.declare_module_kind("metal")


__all__ = ["CAPABILITIES", "DEVICE_TYPE", "INSTALL_HINT", "activate"]
