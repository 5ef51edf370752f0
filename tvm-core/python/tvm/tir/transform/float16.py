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

from tvm.tir.expr import BinaryOp, Call, Cast, CmpOp, Div, FloatImm, FloorDiv, PrimExpr
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator

F16, F32 = "float16", "float32"

#: Calls that move or pick float16 values without computing with them (vector calls have vector
#: dtypes, never float16).
_NOT_ARITHMETIC = frozenset(("reinterpret", "if_then_else", "likely", "call_extern", "call_pure_extern"))


def _widen(e: PrimExpr) -> PrimExpr:
    """float16 ``e`` as float32 (a constant folded to its float16 value)."""
    if e.dtype != F16:
        return e
    if isinstance(e, FloatImm):
        return FloatImm(F32, e.dtype_value, e.span)
    return Cast(F32, e, getattr(e, "span", None))


class _Widen(StmtExprMutator):
    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        out = super().visit_BinaryOp(e)
        if out.dtype != F16 or isinstance(out, CmpOp):
            return out
        if isinstance(out, FloorDiv):  # floor of the float16 quotient (exact in float16 again)
            quotient = Cast(F16, Div(_widen(out.a), _widen(out.b), e.span), e.span)
            return Cast(F16, Call(F32, "floor", (Cast(F32, quotient),), e.span), e.span)
        return Cast(F16, type(out)(_widen(out.a), _widen(out.b), e.span), e.span)

    def visit_Call(self, e: Call) -> PrimExpr:
        out = super().visit_Call(e)
        op = str(out.op).removeprefix("tir.")
        if out.dtype != F16 or op in _NOT_ARITHMETIC:
            return out
        return Cast(F16, Call(F32, out.op, tuple(_widen(a) for a in out.args), e.span), e.span)


def legalize_float16(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with its float16 arithmetic computed in float32 and rounded to float16 (see the
    module docstring); ``func`` itself when it has none."""
    body = _Widen().visit_stmt(func.body)
    if body is func.body:
        return func
    return dataclasses.replace(func, body=body, buffer_map=dict(func.buffer_map))


__all__ = ["legalize_float16"]
