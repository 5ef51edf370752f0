"""Example TVM backend: the template a vendor copies.

Activation (``activate``) is what ``import tvm`` runs for every installed backend. It must stay
cheap: import nothing heavy here; the code generator is named as ``"module:function"`` and
imported the first time something is compiled for the ``example`` target.
"""

from __future__ import annotations

from ._version import __version__  # written by the build from versions.toml

#: What to do when the runtime is unavailable (a real backend names its driver package).
INSTALL_HINT = "pip install --force-reinstall tvm-backend-example (unset TVM_EXAMPLE_SIMULATE_NO_DRIVER)"


def activate(ctx: "tvm.backend.api.BackendContext") -> None:  # noqa: F821 - never evaluated
    """Register the example device, runtime, target kind, detector and TVMScript namespace."""
    from tvm.backend.api import runtime_library_path

    # no device type given: the core hands out one no other backend uses
    device_type = ctx.register_device("example")
    ctx.load_runtime(runtime_library_path(__file__, "tvm_runtime_example"), hint=INSTALL_HINT)
    ctx.register_target_kind(
        "example",
        device_type,
        codegen="tvm_backend_example.codegen:build",
        keys=("gpu", "example"),
        default_attrs={"max_num_threads": 256},
        capabilities={"max_shared_memory_per_block": 48 * 1024},
        passes=("tvm.tir.transform:legalize_float16",),  # float16 stored, computed in float
    )
    ctx.register_device_target_detector(device_type, "tvm_backend_example.detect:detect")
    ctx.register_script_namespace("example", "tvm_backend_example.script")
    ctx.declare_module_kind("example")
