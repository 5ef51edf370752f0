"""ROCm backend for TVM: HIP C++ on the kit's CUDA/HIP dialect, compiled by clang into AMDGPU code
objects without a ROCm installation, and a runtime on the HIP library (``libamdhip64``, loaded at
run time).

The ``tvm.backends`` entry point ``rocm`` names :func:`activate`. Importing this package is
cheap: the printer and the compiler driver load on first compile.
"""

from __future__ import annotations

from ._version import __version__  # written by the build from versions.toml

#: DLPack device type of AMD GPUs (kDLROCM).
DEVICE_TYPE = 10
#: What to install when no HIP runtime is found.
INSTALL_HINT = "install ROCm (its libamdhip64.so), or set TVM_ROCM_LIBRARY to the HIP library"

#: What target ``rocm`` assumes: every AMD GPU since gfx9 (1024 threads, 64 KiB of LDS per block).
CAPABILITIES = {
    "max_num_threads": 1024,
    "max_shared_memory_per_block": 65536,
}


def activate(ctx: "tvm.backend.api.BackendContext") -> None:  # noqa: F821 - never evaluated
    """Register the ROCm device, its runtime, the target kind ``rocm`` and its detector.

    Without the HIP library the runtime stays unavailable and code generation still works,
    producing the fallback module (same bytes), which can be exported and run on an AMD GPU.
    """
    from tvm.backend.api import runtime_library_path

    ctx.register_device("rocm", DEVICE_TYPE)
    ctx.load_runtime(runtime_library_path(__file__, "tvm_runtime_rocm"), hint=INSTALL_HINT)
    ctx.register_target_kind(
        "rocm",
        DEVICE_TYPE,
        codegen="tvm_backend_rocm.codegen:build",
        keys=("gpu", "rocm"),
        default_attrs={"max_num_threads": 1024, "thread_warp_size": 64},
        capabilities=CAPABILITIES,
        # float16 stored, computed in float; log1p from log (ocml, which has it, is not linked)
        passes=("tvm.tir.transform:legalize_float16", "tvm.tir.transform:legalize_log1p"),
    )
    ctx.register_device_target_detector(DEVICE_TYPE, "tvm_backend_rocm.detect:detect")
    ctx.register_script_namespace("rocm", "tvm_backend_rocm.script")
    ctx.declare_module_kind("rocm")


__all__ = ["CAPABILITIES", "DEVICE_TYPE", "INSTALL_HINT", "activate"]
