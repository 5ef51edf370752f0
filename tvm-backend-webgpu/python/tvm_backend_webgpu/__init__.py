"""WebGPU backend for TVM: WGSL generated from TIR and a runtime on wgpu-native.

The ``tvm.backends`` entry point ``webgpu`` names :func:`activate`. Importing this package is
cheap: the WGSL printer (:mod:`.codegen`) and the detector (:mod:`.detect`) are imported on first
use, and ``wgpu`` (whose wgpu-native library the runtime loads) is located, never imported.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ._version import __version__  # written by the build from versions.toml

#: DLPack device type of WebGPU devices (kDLWebGPU).
DEVICE_TYPE = 15
#: The pip package whose wgpu-native library the runtime loads, at the version it was built for.
WGPU_REQUIREMENT = "wgpu==0.32.0"
#: What to install when no WebGPU adapter is found.
INSTALL_HINT = (
    f"pip install '{WGPU_REQUIREMENT}' and a Vulkan driver (apt-get install libvulkan1 mesa-vulkan-drivers "
    f"for the CPU), or set TVM_WEBGPU_LIBRARY to a libwgpu_native built from the same release"
)

#: What target ``webgpu`` assumes: WebGPU's default limits, which every adapter and browser
#: offers; no 64-bit types.
CAPABILITIES = {
    "dynamic_shared_memory": "one_array",  # one workgroup array per kernel sized at launch (wgsl.py)
    "max_num_threads": 256,
    "max_shared_memory_per_block": 16384,
    "opaque_buffer_handles": True,
    "supports_int64": False,
    "supports_float64": False,
    "supports_bfloat16": True,  # computed in float32, stored as 16-bit halves of u32 words
    "supports_float8": False,  # WGSL has no 8-bit storage
}


def wgpu_native_library() -> Path | None:
    """The wgpu-native library inside the installed ``wgpu`` package (found without importing
    it), or None when the package or the library is missing."""
    spec = importlib.util.find_spec("wgpu")
    if spec is None or not spec.submodule_search_locations:
        return None
    resources = Path(list(spec.submodule_search_locations)[0]) / "resources"
    found = sorted(resources.glob("libwgpu_native*.so")) + sorted(resources.glob("libwgpu_native*.dylib"))
    return found[0] if found else None


def activate(ctx: "tvm.backend.api.BackendContext") -> None:  # noqa: F821 - never evaluated
    """Register the WebGPU device, runtime, target kind ``webgpu`` (WGSL), its detector and the
    TVMScript namespace ``T.webgpu`` (subgroup operations).

    The runtime loads wgpu-native from the ``wgpu`` package by path (``TVM_WEBGPU_LIBRARY``
    overrides it); no adapter is requested until a device is used. Without the library the
    runtime stays unavailable and code generation uses the fallback module (same bytes).
    """
    ctx.register_device("webgpu", DEVICE_TYPE)
    from tvm.backend.api import runtime_library_path

    if not os.environ.get("TVM_WEBGPU_LIBRARY"):
        lib = wgpu_native_library()
        if lib is not None:
            # read by the runtime's driver loader (and inherited by child processes, harmlessly)
            os.environ["TVM_WEBGPU_LIBRARY"] = str(lib)
    ctx.load_runtime(runtime_library_path(__file__, "tvm_runtime_webgpu"), hint=INSTALL_HINT)
    ctx.register_target_kind(
        "webgpu",
        DEVICE_TYPE,
        codegen="tvm_backend_webgpu.codegen:build",
        keys=("gpu", "webgpu"),
        capabilities=CAPABILITIES,
        # int64 index arithmetic in 32 bits; bool, bfloat16 and 8/16-bit integer buffers packed
        # into words, their values computed in 32 bits
        passes=(
            "tvm.tir.transform:narrow_int64_indices",
            "tvm.tir.transform:legalize_bool_storage",
            "tvm.tir.transform:legalize_bfloat16_wide_arrays",
            "tvm.tir.transform:legalize_narrow_integers",
            "tvm.tir.transform:legalize_arithmetic",
        ),
    )
    ctx.register_device_target_detector(DEVICE_TYPE, "tvm_backend_webgpu.detect:detect")
    ctx.register_script_namespace("webgpu", "tvm_backend_webgpu.script")
    ctx.declare_module_kind("webgpu")


__all__ = [
    "CAPABILITIES",
    "DEVICE_TYPE",
    "INSTALL_HINT",
    "WGPU_REQUIREMENT",
    "activate",
    "wgpu_native_library",
]
