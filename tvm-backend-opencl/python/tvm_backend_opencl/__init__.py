"""OpenCL backend for TVM: OpenCL C code generation and the OpenCL runtime.

The ``tvm.backends`` entry point ``opencl`` names :func:`activate`. Importing this package is
cheap: the code generator (:mod:`.codegen`) and the target detector (:mod:`.detect`) are
imported on first use.
"""

from __future__ import annotations


from ._version import __version__  # written by the build from versions.toml

#: DLPack device type of OpenCL devices (kDLOpenCL).
DEVICE_TYPE = 4
#: What to install when no OpenCL runtime is found.
INSTALL_HINT = "apt-get install pocl-opencl-icd ocl-icd-libopencl1 (or your vendor's OpenCL ICD)"
#: Other names of the device and the target kind: reserved for this backend while it is
#: installed, even before it is activated.
ALIASES = ("cl",)

#: What target ``opencl`` assumes: a CPU device (PoCL) keeps the private memory of a whole
#: work-group on one thread's stack (8 MiB), and a kernel past it crashes the process, so a
#: block's threads may hold 4 MiB of local memory together.
CAPABILITIES = {"max_local_memory_per_block": 4 * 1024 * 1024}


def activate(ctx: "tvm.backend.api.BackendContext") -> None:  # noqa: F821 - never evaluated
    """Register the OpenCL device, runtime, target kind ``opencl`` (alias ``cl``) and detector.

    ``ctx`` is a :class:`tvm.backend.api.BackendContext`. Activation only loads libOpenCL (no
    platform or device is queried: that happens on first use, see :func:`discovered`). When
    libOpenCL is missing, the runtime stays unavailable and code generation uses the fallback
    module; when it is present but has no platform, the backend is active, no ``opencl`` device
    exists, and launching a kernel raises an error naming the reason and what to install.
    """
    ctx.register_device("opencl", DEVICE_TYPE, aliases=ALIASES)
    from tvm.backend.api import runtime_library_path

    ctx.load_runtime(runtime_library_path(__file__, "tvm_runtime_opencl"), hint=INSTALL_HINT)
    ctx.register_target_kind(
        "opencl",
        DEVICE_TYPE,
        codegen="tvm_backend_opencl.codegen:build",
        keys=("gpu", "opencl"),
        aliases=ALIASES,
        capabilities=CAPABILITIES,
        # float16 without cl_khr_fp16 is storage only: compute in float, round per operation
        passes=("tvm_backend_opencl.codegen:legalize_half",),
    )
    ctx.register_device_target_detector(DEVICE_TYPE, "tvm_backend_opencl.detect:detect")
    ctx.declare_module_kind("opencl")


def discovered() -> bool:
    """Whether the runtime has enumerated OpenCL platforms and devices in this process.

    Discovery runs once, on the first use of an ``opencl`` device or kernel, never at activation
    (it costs ~20 ms with PoCL). False when the runtime is not loaded.
    """
    import tvm_ffi

    func = tvm_ffi.get_global_func("opencl.Discovered", allow_missing=True)
    return bool(func()) if func is not None else False


def unavailable_reason() -> str:
    """Why no OpenCL device can be used here ("" when one can); discovers devices if needed."""
    from tvm.backend.api import device_unavailable_reason

    return device_unavailable_reason("opencl")


__all__ = ["CAPABILITIES", "DEVICE_TYPE", "INSTALL_HINT", "activate", "discovered", "unavailable_reason"]
