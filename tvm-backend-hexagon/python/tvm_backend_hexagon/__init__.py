"""Hexagon backend for TVM: C with HVX for the Hexagon DSP, compiled by the clang that the pip
package ``ziglang`` ships, and kernels run under the ``qemu-hexagon`` simulator.

The ``tvm.backends`` entry point ``hexagon`` names :func:`activate`. Importing this package is
cheap: the printer and the toolchain (:mod:`.codegen`, :mod:`.toolchain`) load on first compile.
"""

from __future__ import annotations

from ._version import __version__  # written by the build from versions.toml

#: DLPack device type of Hexagon (kDLHexagon).
DEVICE_TYPE = 16
#: What to install when the simulator is missing (Debian's qemu-user-static or qemu-user).
INSTALL_HINT = (
    "apt-get install qemu-user-static (or qemu-user) for the qemu-hexagon simulator, "
    "or set TVM_HEXAGON_QEMU to a qemu-hexagon executable"
)

#: What target ``hexagon`` assumes: a v66 DSP with 128-byte HVX; a block's threads run as a team
#: of POSIX threads, so a block may have up to 1024 of them.
CAPABILITIES = {
    "dynamic_shared_memory": True,  # the server's per-launch buffer (codegen.py)
    "max_num_threads": 1024,
    "max_shared_memory_per_block": 256 * 1024,
    "max_kernel_args": 256,  # the simulator server's launch header (server.c, MAX_ARGS)
}


def activate(ctx: "tvm.backend.api.BackendContext") -> None:  # noqa: F821 - never evaluated
    """Register the Hexagon device, its runtime, the target kind ``hexagon`` and its detector.

    The runtime looks for the simulator (``TVM_HEXAGON_QEMU``, else ``qemu-hexagon`` or
    ``qemu-hexagon-static`` on PATH); without one it stays unavailable and code generation
    still works, producing the fallback module (same bytes, functions that say what to install).
    """
    from tvm.backend.api import runtime_library_path

    ctx.register_device("hexagon", DEVICE_TYPE)
    ctx.load_runtime(runtime_library_path(__file__, "tvm_runtime_hexagon"), hint=INSTALL_HINT)
    ctx.register_target_kind(
        "hexagon",
        DEVICE_TYPE,
        codegen="tvm_backend_hexagon.codegen:build",
        keys=("gpu", "hexagon"),
        default_attrs={"mcpu": "hexagonv66", "hvx": 128},
        capabilities=CAPABILITIES,
        passes=("tvm.tir.transform:legalize_float16",),  # float16 stored, computed in float
    )
    ctx.register_device_target_detector(DEVICE_TYPE, "tvm_backend_hexagon.detect:detect")
    ctx.declare_module_kind("hexagon")


__all__ = ["CAPABILITIES", "DEVICE_TYPE", "INSTALL_HINT", "activate"]
