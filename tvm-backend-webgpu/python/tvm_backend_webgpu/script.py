"""``T.webgpu``: WebGPU's subgroup operations in TVMScript.

Each function returns a ``tvm.tir.Call`` whose op is ``"webgpu.<name>"``, printed as the WGSL
built-in of the same meaning (``subgroupAdd``, ...) in a shader that says ``enable subgroups;``.
A subgroup is the adapter's SIMD width, which WebGPU does not fix (between the adapter's
``subgroup_min_size`` and ``subgroup_max_size`` attributes: 8 on lavapipe with AVX2, 32 on
NVIDIA); a kernel reads it with ``subgroup_size()``. The adapter must offer the WebGPU feature
``subgroups`` (``tvm.webgpu(0).attr("supports_subgroups")``); a launch elsewhere raises.

.. code-block:: python

    s = T.webgpu.subgroup_add(v)              # sum of v over the subgroup, in every invocation
    m = T.webgpu.subgroup_max(v)              # also subgroup_min
    w = T.webgpu.subgroup_shuffle(v, lane)    # v of invocation `lane` of this subgroup
    x = T.webgpu.subgroup_shuffle_xor(v, 1)   # v of invocation (id ^ 1): butterflies
    i = T.webgpu.subgroup_invocation_id()     # this invocation's index in its subgroup
"""

from __future__ import annotations

from typing import Any

from tvm.tir.expr import Call
from tvm.tir.op import convert, register_convergent


def _value(value: Any) -> Any:
    v = convert(value)
    if v.dtype not in ("int32", "uint32", "float32", "float16"):
        raise TypeError(f"T.webgpu: subgroup operations take int32, uint32, float32 or float16 values, got {v.dtype}")
    return v


def _reduce(name: str, value: Any) -> Call:
    v = _value(value)
    return Call(v.dtype, f"webgpu.{name}", (v,))


def _shuffle(name: str, value: Any, lane: Any) -> Call:
    v = _value(value)
    return Call(v.dtype, f"webgpu.{name}", (v, convert(lane, "int32")))


def subgroup_add(value: Any) -> Call:
    """Sum of ``value`` over the invocations of the subgroup (``subgroupAdd``)."""
    return _reduce("subgroup_add", value)


def subgroup_max(value: Any) -> Call:
    """Largest ``value`` of the subgroup (``subgroupMax``)."""
    return _reduce("subgroup_max", value)


def subgroup_min(value: Any) -> Call:
    """Smallest ``value`` of the subgroup (``subgroupMin``)."""
    return _reduce("subgroup_min", value)


def subgroup_shuffle(value: Any, lane: Any) -> Call:
    """``value`` of invocation ``lane`` of this subgroup (``subgroupShuffle``)."""
    return _shuffle("subgroup_shuffle", value, lane)


def subgroup_shuffle_xor(value: Any, mask: Any) -> Call:
    """``value`` of invocation ``id ^ mask`` of this subgroup (``subgroupShuffleXor``)."""
    return _shuffle("subgroup_shuffle_xor", value, mask)


def subgroup_size() -> Call:
    """Invocations per subgroup, as int32 (the ``subgroup_size`` built-in)."""
    return Call("int32", "webgpu.subgroup_size", ())


def subgroup_invocation_id() -> Call:
    """This invocation's index in its subgroup, as int32 (``subgroup_invocation_id``)."""
    return Call("int32", "webgpu.subgroup_invocation_id", ())


register_convergent(
    *(
        f"webgpu.{n}"
        for n in ("subgroup_add", "subgroup_max", "subgroup_min", "subgroup_shuffle", "subgroup_shuffle_xor")
    )
)  # every lane reaches them together

__all__ = [
    "subgroup_add",
    "subgroup_invocation_id",
    "subgroup_max",
    "subgroup_min",
    "subgroup_shuffle",
    "subgroup_shuffle_xor",
    "subgroup_size",
]
