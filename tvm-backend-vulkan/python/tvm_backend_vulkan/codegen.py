"""SPIR-V code generation: the ``codegen`` of target kind ``vulkan``.

Every kernel of a program becomes an entry point of one SPIR-V 1.3 module, emitted directly from
TIR by :mod:`.emitter` (no GLSL in between), checked by SPIRV-Tools' validator on every build, and
wrapped in a ``vulkan`` device module (format ``spirv``) whose ``inspect_source`` is the assembly.
"""

from __future__ import annotations

from typing import Any

from tvm.codegen import device_module
from tvm.tir.function import PrimFunc

from . import validate
from .emitter import KernelEmitter, ModuleState, scalar_arg_type


def generate(kernels: list[PrimFunc]) -> tuple[bytes, str]:
    """The validated SPIR-V binary holding ``kernels``, and its assembly."""
    state = ModuleState()
    for kernel in kernels:
        KernelEmitter(state).emit_kernel(kernel)
    binary = state.module.to_bytes()
    validate.validate(binary, state.spans, ", ".join(k.global_symbol for k in kernels))
    return binary, validate.disassemble(binary)


def build(kernels: list[PrimFunc], target: Any) -> Any:
    """Target kind ``vulkan``'s codegen: SPIR-V for ``kernels`` in a ``vulkan`` device module (the
    real module when the runtime is loaded, else the fallback with the same bytes)."""
    binary, assembly = generate(list(kernels))
    return device_module.create_device_module("vulkan", "spirv", function_table(kernels), binary, [["spirv", assembly]])


def function_table(kernels: list[PrimFunc]) -> list[list]:
    """The module's function map: scalars narrower than 32 bits travel as 32-bit push constants."""
    return device_module.function_table(kernels, scalar_arg_type)


__all__ = ["build", "function_table", "generate"]
