"""``T.cuda``: CUDA warp intrinsics in TVMScript.

Each function returns a ``tvm.tir.Call`` whose op is ``"cuda.<name>"``; the CUDA code generator
prints it as the matching ``__*_sync`` builtin. Argument order in the Call is the order of the
Python signature (value first, then lane/offset, width, mask).

.. code-block:: python

    v = T.cuda.shfl_down(v, 16)          # __shfl_down_sync(0xffffffff, v, 16, 32)
    s = T.cuda.warp_sum(v)               # butterfly reduction over the 32 lanes
"""

from __future__ import annotations

from typing import Any

from tvm.tir.expr import Call, FloatImm, IntImm, PrimExpr

FULL_MASK = 0xFFFFFFFF

__all__ = ["FULL_MASK", "activemask", "ballot", "lane_id", "shfl_down", "shfl_sync", "shfl_up",
           "shfl_xor", "syncwarp", "warp_max", "warp_min", "warp_sum"]


def _expr(x: Any, dtype: str = "int32") -> PrimExpr:
    if isinstance(x, PrimExpr):
        return x
    if isinstance(x, bool):
        return IntImm("bool", int(x))
    if isinstance(x, int):
        return IntImm(dtype, x)
    if isinstance(x, float):
        return FloatImm("float32", x)
    raise TypeError(f"T.cuda: expected an expression or a number, got {type(x).__name__}")


def _mask(mask: Any) -> PrimExpr:
    return _expr(mask, "uint32")


def _shfl(name: str, value: Any, lane: Any, width: Any, mask: Any) -> Call:
    v = _expr(value, "float32")
    return Call(v.dtype, f"cuda.{name}", (v, _expr(lane), _expr(width), _mask(mask)))


def shfl_down(value: Any, offset: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """``value`` of the lane ``offset`` above this one (``__shfl_down_sync``)."""
    return _shfl("shfl_down", value, offset, width, mask)


def shfl_up(value: Any, offset: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """``value`` of the lane ``offset`` below this one (``__shfl_up_sync``)."""
    return _shfl("shfl_up", value, offset, width, mask)


def shfl_xor(value: Any, lane_mask: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """``value`` of lane ``lane_id ^ lane_mask`` (``__shfl_xor_sync``)."""
    return _shfl("shfl_xor", value, lane_mask, width, mask)


def shfl_sync(value: Any, src_lane: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """``value`` of lane ``src_lane`` (``__shfl_sync``)."""
    return _shfl("shfl_sync", value, src_lane, width, mask)


def ballot(predicate: Any, mask: Any = FULL_MASK) -> Call:
    """Bit i set when lane i's ``predicate`` is true (``__ballot_sync``), as uint32."""
    return Call("uint32", "cuda.ballot", (_expr(predicate, "bool"), _mask(mask)))


def activemask() -> Call:
    """Mask of the lanes currently executing (``__activemask``), as uint32."""
    return Call("uint32", "cuda.activemask", ())


def lane_id() -> Call:
    """This thread's lane in its warp (``threadIdx.x % 32`` for 1-D blocks), as int32."""
    return Call("int32", "cuda.lane_id", ())


def syncwarp(mask: Any = FULL_MASK) -> Call:
    """Barrier for the lanes in ``mask`` (``__syncwarp``)."""
    return Call("void", "cuda.syncwarp", (_mask(mask),))


def _warp_reduce(name: str, value: Any, width: Any, mask: Any) -> Call:
    v = _expr(value, "float32")
    return Call(v.dtype, f"cuda.{name}", (v, _expr(width), _mask(mask)))


def warp_sum(value: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """Sum of ``value`` over ``width`` lanes (xor butterfly); every lane gets the result."""
    return _warp_reduce("warp_sum", value, width, mask)


def warp_max(value: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """Maximum of ``value`` over ``width`` lanes; every lane gets the result."""
    return _warp_reduce("warp_max", value, width, mask)


def warp_min(value: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """Minimum of ``value`` over ``width`` lanes; every lane gets the result."""
    return _warp_reduce("warp_min", value, width, mask)
