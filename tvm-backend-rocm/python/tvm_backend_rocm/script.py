"""``T.rocm``: AMD wavefront intrinsics in TVMScript.

Each function returns a ``tvm.tir.Call`` whose op is ``"rocm.<name>"``, printed by the ROCm code
generator as a small helper on ``__builtin_amdgcn_ds_bpermute``. ``width`` (a power of two, at
most the wavefront) splits the wavefront into segments as CUDA's ``width`` does; left out, it is
the whole wavefront of the architecture the code object is built for (64 on gfx9 such as gfx90a
and gfx942, 32 on RDNA such as gfx1100), so one kernel serves both.

.. code-block:: python

    s = T.rocm.warp_sum(v)              # sum over the wavefront, every lane gets it
    w = T.rocm.shfl_down(v, 1)          # v of the lane one above (own v past the segment)
    n = T.rocm.wavefront_size()         # 64 or 32
"""

from __future__ import annotations

from typing import Any

from tvm.tir.expr import Call, PrimExpr
from tvm.tir.op import convert, register_convergent

#: ``width`` standing for the architecture's whole wavefront.
WAVEFRONT = -1

register_convergent(
    *(f"rocm.{n}" for n in ("shfl", "shfl_down", "shfl_up", "shfl_xor", "warp_sum", "warp_max", "warp_min"))
)

__all__ = [
    "WAVEFRONT",
    "lane_id",
    "shfl",
    "shfl_down",
    "shfl_up",
    "shfl_xor",
    "warp_max",
    "warp_min",
    "warp_sum",
    "wavefront_size",
]


def _width(width: Any) -> PrimExpr:
    return convert(WAVEFRONT if width is None else width, "int32")


def _shuffle(name: str, value: Any, lane: Any, width: Any) -> Call:
    v = convert(value, "float32")
    return Call(v.dtype, f"rocm.{name}", (v, convert(lane, "int32"), _width(width)))


def shfl(value: Any, src_lane: Any, width: Any = None) -> Call:
    """``value`` of lane ``src_lane`` of this lane's segment."""
    return _shuffle("shfl", value, src_lane, width)


def shfl_down(value: Any, offset: Any, width: Any = None) -> Call:
    """``value`` of the lane ``offset`` above this one (this lane's own past the segment)."""
    return _shuffle("shfl_down", value, offset, width)


def shfl_up(value: Any, offset: Any, width: Any = None) -> Call:
    """``value`` of the lane ``offset`` below this one (this lane's own before the segment)."""
    return _shuffle("shfl_up", value, offset, width)


def shfl_xor(value: Any, lane_mask: Any, width: Any = None) -> Call:
    """``value`` of lane ``lane ^ lane_mask`` (within the segment)."""
    return _shuffle("shfl_xor", value, lane_mask, width)


def _reduce(name: str, value: Any, width: Any) -> Call:
    v = convert(value, "float32")
    return Call(v.dtype, f"rocm.{name}", (v, _width(width)))


def warp_sum(value: Any, width: Any = None) -> Call:
    """Sum of ``value`` over the segment (xor butterfly); every lane gets the result."""
    return _reduce("warp_sum", value, width)


def warp_max(value: Any, width: Any = None) -> Call:
    """Largest ``value`` of the segment; every lane gets it."""
    return _reduce("warp_max", value, width)


def warp_min(value: Any, width: Any = None) -> Call:
    """Smallest ``value`` of the segment; every lane gets it."""
    return _reduce("warp_min", value, width)


def lane_id() -> Call:
    """This thread's lane in its wavefront."""
    return Call("int32", "rocm.lane_id", ())


def wavefront_size() -> Call:
    """The wavefront size of the architecture the code object is built for (64 or 32)."""
    return Call("int32", "rocm.wavefront_size", ())
