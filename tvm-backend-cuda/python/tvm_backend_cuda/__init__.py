"""CUDA backend for modular TVM.

Installed as a wheel, it is discovered through the ``tvm.backends`` entry point ``cuda`` and
activated by ``import tvm`` (or ``tvm.backend.load("cuda")``). Activation is cheap: it loads
``lib/libtvm_runtime_cuda.so`` (which dlopens the NVIDIA driver, ``libcuda.so.1``) and registers
names; NVRTC, the code generator and the TVMScript namespace are imported on first use.

Without a driver the runtime is recorded as unavailable, code generation still works, and
compiled modules become fallback modules whose functions explain what is missing.
"""

from __future__ import annotations

from typing import Any

from ._version import __version__  # written by the build from versions.toml

#: DLPack device type of CUDA GPUs.
DEVICE_TYPE = 2
#: Bytes of static shared memory every CUDA GPU since sm_20 gives a block; "shared.dyn" buffers
#: opt in to more, up to the most any GPU offers (227 KiB, sm_90).
STATIC_SHARED_MEMORY = 48 * 1024
MAX_SHARED_MEMORY = 227 * 1024
#: What a user without a usable GPU is told to do.
INSTALL_HINT = "install the NVIDIA driver (libcuda.so.1); code generation works without it"
#: Other names of the device (``gpu``, ``nvptx``) and of the target kind (``nvptx``): reserved for
#: this backend while it is installed, even before it is activated.
ALIASES = ("gpu", "nvptx")

__all__ = ["DEVICE_TYPE", "INSTALL_HINT", "MAX_SHARED_MEMORY", "STATIC_SHARED_MEMORY", "activate"]


def _nvrtc_compile_hook(source: str, arch: str) -> bytes:
    """Called by the C++ loader for "cu" payloads: compile for ``arch`` (cached on disk)."""
    from . import nvrtc

    return nvrtc.compile_for_loader(str(source), str(arch))


def _warp_fragments(target: Any) -> tuple[tuple[str, str], ...]:
    """The ``warp_fragments`` capability: the fragment dtype pairs the target's arch has
    instructions for (:func:`tvm_backend_cuda.wmma.native_pairs`)."""
    from .wmma import native_pairs

    return native_pairs(target)


def activate(ctx: "tvm.backend.api.BackendContext") -> None:  # noqa: F821 - never evaluated
    """The ``tvm.backends`` hook: register device, runtime, target kind, detector, TVMScript."""
    import tvm_ffi

    ctx.register_device("cuda", DEVICE_TYPE, aliases=ALIASES)
    # The loader of source-only ("cu") modules calls back into Python to run NVRTC.
    tvm_ffi.register_global_func("tvm_backend_cuda.nvrtc_compile", _nvrtc_compile_hook, override=True)
    from tvm.backend.api import runtime_library_path

    ctx.load_runtime(runtime_library_path(__file__, "tvm_runtime_cuda"), hint=INSTALL_HINT)
    ctx.register_target_kind(
        "cuda",
        DEVICE_TYPE,
        codegen="tvm_backend_cuda.codegen:build",
        keys=("gpu", "cuda"),
        default_attrs={"arch": None},
        aliases=("nvptx",),  # "gpu" is a target key, not a kind
        passes=("tvm.tir.transform:legalize_float16",),  # float16 stored, computed in float
        # a detected target carries the device's own limits, and the launch checks them
        capabilities={
            "max_num_threads": 1024,
            "max_shared_memory_per_block": STATIC_SHARED_MEMORY,
            "max_dynamic_shared_memory_per_block": MAX_SHARED_MEMORY,
            # wmma fragments the target's arch has instructions for, as PTX wmma (codegen: .wmma)
            "warp_fragments": _warp_fragments,
        },
    )
    ctx.register_device_target_detector(DEVICE_TYPE, "tvm_backend_cuda.detect:detect")
    ctx.register_script_namespace("cuda", "tvm_backend_cuda.script")
    ctx.register_script_namespace("ptx_legacy", "tvm_backend_cuda.ptx_legacy")  # Apache TVM's spellings
    ctx.register_script_namespace("ptx", "tvm_backend_cuda.ptx")
    ctx.register_script_namespace("s_tir", "tvm_backend_cuda.s_tir")  # its cp_async_raw
    ctx.declare_module_kind("cuda")
