"""``T.metal``: Metal's SIMD-group functions in TVMScript.

Each returns a ``tvm.tir.Call`` whose op is ``"metal.<name>"``, printed as the MSL function of the
same name (a SIMD group is 32 threads on Apple GPUs):

.. code-block:: python

    s = T.metal.simd_sum(v)                # sum over the SIMD group, every thread gets it
    w = T.metal.simd_shuffle_down(v, 1)    # v of the thread one lane above
"""

from __future__ import annotations

from typing import Any

from tvm.tir.expr import Call
from tvm.tir.op import convert, register_convergent

__all__ = [
    "simd_max",
    "simd_min",
    "simd_shuffle",
    "simd_shuffle_down",
    "simd_shuffle_up",
    "simd_shuffle_xor",
    "simd_sum",
]
register_convergent(*(f"metal.{n}" for n in __all__))  # every lane of a simdgroup reaches them together


def _reduce(name: str, value: Any) -> Call:
    v = convert(value, "float32")
    return Call(v.dtype, f"metal.{name}", (v,))


def _shuffle(name: str, value: Any, lane: Any) -> Call:
    v = convert(value, "float32")
    return Call(v.dtype, f"metal.{name}", (v, convert(lane, "uint32")))


def simd_sum(value: Any) -> Call:
    """Sum of ``value`` over the SIMD group (``simd_sum``)."""
    return _reduce("simd_sum", value)


def simd_max(value: Any) -> Call:
    """Largest ``value`` in the SIMD group (``simd_max``)."""
    return _reduce("simd_max", value)


def simd_min(value: Any) -> Call:
    """Smallest ``value`` in the SIMD group (``simd_min``)."""
    return _reduce("simd_min", value)


def simd_shuffle(value: Any, lane: Any) -> Call:
    """``value`` of lane ``lane`` (``simd_shuffle``)."""
    return _shuffle("simd_shuffle", value, lane)


def simd_shuffle_down(value: Any, delta: Any) -> Call:
    """``value`` of the lane ``delta`` above this one (``simd_shuffle_down``)."""
    return _shuffle("simd_shuffle_down", value, delta)


def simd_shuffle_up(value: Any, delta: Any) -> Call:
    """``value`` of the lane ``delta`` below this one (``simd_shuffle_up``)."""
    return _shuffle("simd_shuffle_up", value, delta)


def simd_shuffle_xor(value: Any, mask: Any) -> Call:
    """``value`` of lane ``this lane ^ mask`` (``simd_shuffle_xor``)."""
    return _shuffle("simd_shuffle_xor", value, mask)
