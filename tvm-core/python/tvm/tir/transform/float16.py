"""float16 arithmetic for targets that store float16 but do not compute in it.

``legalize_float16`` rewrites every float16 operation (arithmetic and math calls) into the
float32 operation on its operands, converted back to float16 by a cast: each result is rounded to
float16 as float16 hardware and NumPy's float16 round it. float32 carries more than twice
float16's precision, so the one rounding of a float32 sum, difference, product, quotient or
square root to float16 is the correctly rounded float16 result, bit for bit; the other math
functions are computed in float32 and rounded, as NumPy computes them.

After the pass an emitter needs no float16 arithmetic: float16 values are only loaded, stored,
bound to variables, selected and converted to and from float32. Usable as a target pass (the
lowering runs it on CPU functions: C has no float16 arithmetic).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.tir.expr import (
    EQ,
    GT,
    NE,
    And,
    BinaryOp,
    Call,
    Cast,
    CmpOp,
    FloatImm,
    IntImm,
    Let,
    PrimExpr,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator
from tvm.tir.op import bitwise_or, reinterpret, select

F16, F32 = "float16", "float32"

#: Calls that move or pick float16 values without computing with them (vector calls have vector
#: dtypes, never float16).
_NOT_ARITHMETIC = frozenset(("reinterpret", "if_then_else", "likely", "call_extern", "call_pure_extern"))


class _Widen(StmtExprMutator):
    def __init__(self, narrow: str) -> None:
        self.narrow = narrow

    def _widen(self, e: PrimExpr) -> PrimExpr:
        """narrow ``e`` as float32 (a constant folded to its narrow value)."""
        if e.dtype != self.narrow:
            return e
        if isinstance(e, FloatImm):
            return FloatImm(F32, e.dtype_value, e.span)
        return Cast(F32, e, getattr(e, "span", None))

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        out = super().visit_BinaryOp(e)
        narrow = self.narrow
        if out.dtype != narrow or isinstance(out, CmpOp):
            return out
        a, b = self._widen(out.a), self._widen(out.b)
        return Cast(narrow, type(out)(a, b, e.span), e.span)

    def visit_Call(self, e: Call) -> PrimExpr:
        out = super().visit_Call(e)
        op = str(out.op).removeprefix("tir.")
        if out.dtype != self.narrow or op in _NOT_ARITHMETIC:
            return out
        return Cast(self.narrow, Call(F32, out.op, tuple(self._widen(a) for a in out.args), e.span), e.span)


def per_operation_rounding(dtype: str) -> StmtExprMutator:
    """The rewriting that computes every operation of the 16-bit float ``dtype`` in float32 and
    converts its result back to ``dtype`` (see the module docstring; for bfloat16 as for
    float16): the rounding a printer that emulates ``dtype`` in float32 needs. A node without
    such an operation comes back as it is."""
    return _Widen(dtype)


def legalize_float16(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with its float16 arithmetic computed in float32 and rounded to float16 (see the
    module docstring); ``func`` itself when it has none."""
    body = per_operation_rounding(F16).visit_stmt(func.body)
    if body is func.body:
        return func
    return dataclasses.replace(func, body=body, buffer_map=dict(func.buffer_map))


__all__ = ["legalize_float16"]


class _ViaOddFloat32(StmtExprMutator):
    def visit_Cast(self, e: Cast) -> PrimExpr:
        out = super().visit_Cast(e)
        if not isinstance(out, Cast) or out.dtype != F16 or out.value.dtype != "float64":
            return out
        return Cast(F16, _round_to_odd_float32(out.value), e.span)


def _round_to_odd_float32(x: PrimExpr) -> PrimExpr:
    """float64 ``x`` as a float32 rounded to odd: toward zero, with the last bit set when that
    lost anything. A float16 rounded from it is ``x`` rounded once (float32 has more than
    float16's 11 + 2 bits), where float64 -> float32 -> float16 rounds twice."""
    f = Var("f32_of_f64", F32)
    back = Cast("float64", f)
    inexact = And(NE(back, x), EQ(x, x))  # a NaN stays the quiet NaN float32 made of it
    away = GT(Call("float64", "fabs", (back,)), Call("float64", "fabs", (x,)))
    bits = reinterpret("uint32", f)
    step = select(away, IntImm("uint32", 1), IntImm("uint32", 0))
    odd = bitwise_or(bits - step, IntImm("uint32", 1))
    return Let(f, Cast(F32, x), reinterpret(F32, select(inexact, odd, bits)), F32)


def exact_float16_conversions(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with each conversion of a float64 value to float16 rounded once, as NumPy's is
    (through a float32 rounded to odd, which every target has); ``func`` itself when it has none."""
    body = _ViaOddFloat32().visit_stmt(func.body)
    if body is func.body:
        return func
    return dataclasses.replace(func, body=body, buffer_map=dict(func.buffer_map))
