"""Vulkan backend for TVM: SPIR-V emitted from TIR and the Vulkan compute runtime.

The ``tvm.backends`` entry point ``vulkan`` names :func:`activate`. Importing this package is
cheap: the SPIR-V emitter (:mod:`.codegen`), the validator (:mod:`.validate`) and the target
detector (:mod:`.detect`) are imported on first use.
"""

from __future__ import annotations

from ._version import __version__  # written by the build from versions.toml

#: DLPack device type of Vulkan devices (kDLVulkan).
DEVICE_TYPE = 7
#: What to install when no Vulkan driver is found.
INSTALL_HINT = "apt-get install libvulkan1 mesa-vulkan-drivers (or your GPU vendor's Vulkan driver)"

#: What target ``vulkan`` assumes of a device: the limits of nearly every desktop GPU and of
#: lavapipe (the specification's minimums are 128 invocations and 16 KiB). A detected device's
#: target (``tvm.target.detect_target_from_device``) carries its own; the runtime checks the real
#: device's limits at launch either way.
CAPABILITIES = {
    "dynamic_shared_memory": "one_array",  # one shared buffer per kernel sized at launch (emitter.py)
    "max_num_threads": 256,
    "max_shared_memory_per_block": 32768,
    # private arrays of all invocations of a workgroup together: lavapipe's shader compiler
    # crashed the process on 256 KiB per invocation (a GPU would spill them to scratch memory)
    "max_local_memory_per_block": 4 * 1024 * 1024,
    "opaque_buffer_handles": True,
    "supports_float8": False,  # float8 buffers would need the SPIR-V emitter's 8-bit storage path
}


def activate(ctx: "tvm.backend.api.BackendContext") -> None:  # noqa: F821 - never evaluated
    """Register the Vulkan device, runtime, target kind ``vulkan`` (SPIR-V) and its detector.

    ``ctx`` is a :class:`tvm.backend.api.BackendContext`. Activation only loads libvulkan (no
    instance is created: devices are discovered on first use). Without libvulkan the runtime stays
    unavailable and code generation uses the fallback module, which has the same bytes.
    """
    ctx.register_device("vulkan", DEVICE_TYPE)
    from tvm.backend.api import runtime_library_path

    ctx.load_runtime(runtime_library_path(__file__, "tvm_runtime_vulkan"), hint=INSTALL_HINT)
    ctx.register_target_kind(
        "vulkan",
        DEVICE_TYPE,
        codegen="tvm_backend_vulkan.codegen:build",
        keys=("gpu", "vulkan"),
        capabilities=CAPABILITIES,
        # bfloat16 first: its float32 arithmetic is then legalized like any other
        passes=(
            "tvm.tir.transform:legalize_bfloat16",
            "tvm.tir.transform:legalize_arithmetic",
            "tvm.tir.transform:legalize_bool_storage",
        ),
    )
    ctx.register_device_target_detector(DEVICE_TYPE, "tvm_backend_vulkan.detect:detect")
    ctx.register_script_namespace("vulkan", "tvm_backend_vulkan.script")
    ctx.declare_module_kind("vulkan")


def unavailable_reason() -> str:
    """Why no Vulkan device can be used here ("" when one can); discovers devices if needed."""
    from tvm.backend.api import device_unavailable_reason

    return device_unavailable_reason("vulkan")


__all__ = ["CAPABILITIES", "DEVICE_TYPE", "INSTALL_HINT", "activate", "unavailable_reason"]
