"""``T.vulkan``: subgroup operations in TVMScript.

Each function returns a ``tvm.tir.Call`` whose op is ``"vulkan.<name>"``; the SPIR-V emitter turns
it into the matching ``OpGroupNonUniform*`` instruction (subgroup scope) and declares the
capability it needs. A subgroup is the device's SIMD width (``tvm.vulkan(0).warp_size``; 8 on
lavapipe with AVX2, 32 on NVIDIA).

.. code-block:: python

    s = T.vulkan.subgroup_add(v)              # sum of v over the subgroup, in every invocation
    m = T.vulkan.subgroup_max(v)
    w = T.vulkan.subgroup_shuffle(v, lane)    # v of invocation `lane` of this subgroup
    x = T.vulkan.subgroup_shuffle_xor(v, 1)   # v of invocation (id ^ 1)
    i = T.vulkan.subgroup_invocation_id()     # this invocation's index in its subgroup
"""

from __future__ import annotations

from typing import Any

from tvm.tir.expr import Call, FloatImm, IntImm, PrimExpr
from tvm.tir.op import register_convergent


def _expr(x: Any, dtype: str) -> PrimExpr:
    if isinstance(x, PrimExpr):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return IntImm(dtype, x)
    if isinstance(x, float):
        return FloatImm("float32", x)
    raise TypeError(f"T.vulkan: expected an expression or a number, got {type(x).__name__}")


def subgroup_add(value: Any) -> Call:
    """Sum of ``value`` over the invocations of the subgroup (``OpGroupNonUniform*Add``)."""
    v = _expr(value, "int32")
    return Call(v.dtype, "vulkan.subgroup_add", (v,))


def subgroup_max(value: Any) -> Call:
    """Largest ``value`` of the subgroup (``OpGroupNonUniform*Max``)."""
    v = _expr(value, "int32")
    return Call(v.dtype, "vulkan.subgroup_max", (v,))


def subgroup_shuffle(value: Any, lane: Any) -> Call:
    """``value`` of invocation ``lane`` of this subgroup (``OpGroupNonUniformShuffle``)."""
    v = _expr(value, "int32")
    return Call(v.dtype, "vulkan.subgroup_shuffle", (v, _expr(lane, "int32")))


def subgroup_shuffle_xor(value: Any, mask: Any) -> Call:
    """``value`` of invocation ``id ^ mask`` (``OpGroupNonUniformShuffleXor``): butterflies."""
    v = _expr(value, "int32")
    return Call(v.dtype, "vulkan.subgroup_shuffle_xor", (v, _expr(mask, "int32")))


def subgroup_size() -> Call:
    """Invocations per subgroup, as int32."""
    return Call("int32", "vulkan.subgroup_size", ())


def subgroup_invocation_id() -> Call:
    """This invocation's index in its subgroup, as int32."""
    return Call("int32", "vulkan.subgroup_invocation_id", ())


register_convergent(
    *(f"vulkan.{n}" for n in ("subgroup_add", "subgroup_max", "subgroup_shuffle", "subgroup_shuffle_xor"))
)  # every lane reaches them together

__all__ = [
    "subgroup_add",
    "subgroup_invocation_id",
    "subgroup_max",
    "subgroup_shuffle",
    "subgroup_shuffle_xor",
    "subgroup_size",
]
