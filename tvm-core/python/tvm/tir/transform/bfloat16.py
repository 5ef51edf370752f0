"""bfloat16 emulation in TIR: ``legalize_bfloat16`` computes every bfloat16 operation in float32
and rounds its result to bfloat16 (round to nearest even, NaN kept quiet), as NumPy's bfloat16
(ml_dtypes) does, with nothing but 32-bit integer and float operations.

After the pass the only bfloat16 values left are loads from and stores to bfloat16 buffers, and
``reinterpret`` between them and ``uint16``: an emitter stores bfloat16 as a 16-bit integer and
needs no bfloat16 arithmetic, conversions or constants of its own. Scalar bfloat16 parameters
become float32 parameters (their values are bfloat16 values already). Usable as a target pass.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

from tvm.tir.expr import (
    GT,
    Add,
    BinaryOp,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    FloatImm,
    IntImm,
    Let,
    PrimExpr,
    Select,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator
from tvm.tir.op import is_reinterpret
from tvm.tir.stmt import BufferStore, LetStmt, Stmt

from .legalize import _bind

BF16, F32, U32 = "bfloat16", "float32", "uint32"


def _u32(v: int) -> IntImm:
    return IntImm(U32, v)


def _call(dtype: str, op: str, *args: PrimExpr) -> Call:
    return Call(dtype, op, tuple(args))


def _rounded_bits(f: PrimExpr) -> PrimExpr:
    """The bfloat16 bit pattern (in a uint32) nearest to float32 ``f``: round to nearest even,
    a NaN stays a (quiet) NaN."""

    def pick(b: PrimExpr) -> PrimExpr:
        high = _call(U32, "shift_right", b, _u32(16))
        is_nan = GT(_call(U32, "bitwise_and", b, _u32(0x7FFFFFFF)), _u32(0x7F800000))
        bias = Add(_u32(0x7FFF), _call(U32, "bitwise_and", high, _u32(1)))
        nearest = _call(U32, "shift_right", Add(b, bias), _u32(16))
        return Select(is_nan, _call(U32, "bitwise_or", high, _u32(0x40)), nearest, U32)

    return _bind(_call(U32, "reinterpret", f), pick)


def round_to_bfloat16(f: PrimExpr) -> PrimExpr:
    """float32 ``f`` rounded to the nearest bfloat16, as a float32."""
    return _call(F32, "reinterpret", _call(U32, "shift_left", _rounded_bits(f), _u32(16)))


def to_bfloat16(f: PrimExpr) -> PrimExpr:
    """float32 ``f`` as a bfloat16 value (for a store)."""
    return _call(BF16, "reinterpret", Cast("uint16", _rounded_bits(f)))


def from_bfloat16(x: PrimExpr) -> PrimExpr:
    """bfloat16 ``x`` (a load) as the float32 of the same value."""
    bits = Cast(U32, _call("uint16", "reinterpret", x))
    return _call(F32, "reinterpret", _call(U32, "shift_left", bits, _u32(16)))


def _bfloat16_value(value: float) -> float:
    """``value`` rounded to bfloat16, as a Python float."""
    (b,) = struct.unpack("<I", struct.pack("<f", value))
    if (b & 0x7FFFFFFF) > 0x7F800000:
        return value
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]


class _Emulator(StmtExprMutator):
    """Every bfloat16 expression is rewritten to a float32 one holding a bfloat16 value."""

    def __init__(self, renamed: dict[Var, Var]):
        self.renamed = renamed

    def _f32_var(self, v: Var) -> Var:
        if v not in self.renamed:
            self.renamed[v] = Var(v.name, F32)
        return self.renamed[v]

    def visit_Var(self, e: Var) -> PrimExpr:
        return self._f32_var(e) if e.dtype == BF16 else e

    def visit_FloatImm(self, e: FloatImm) -> PrimExpr:
        return FloatImm(F32, _bfloat16_value(e.value), e.span) if e.dtype == BF16 else e

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        load = super().visit_BufferLoad(e)
        return from_bfloat16(load) if e.dtype == BF16 else load

    def visit_Cast(self, e: Cast) -> PrimExpr:
        v = self.visit_expr(e.value)
        if e.dtype == BF16:
            return round_to_bfloat16(v if v.dtype == F32 else Cast(F32, v))
        if e.value.dtype == BF16:
            return v if e.dtype == F32 else Cast(e.dtype, v, e.span)
        return e if v is e.value else Cast(e.dtype, v, e.span)

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        out = super().visit_BinaryOp(e)
        return round_to_bfloat16(out) if e.dtype == BF16 and not isinstance(e, CmpOp) else out

    def visit_Select(self, e: Select) -> PrimExpr:
        out = super().visit_Select(e)
        return Select(out.condition, out.true_value, out.false_value, F32, e.span) if e.dtype == BF16 else out

    def visit_Let(self, e: Let) -> PrimExpr:
        value = self.visit_expr(e.value)
        var = self._f32_var(e.var) if e.var.dtype == BF16 else e.var
        body = self.visit_expr(e.body)
        return Let(var, value, body, body.dtype, e.span)

    def visit_Call(self, e: Call) -> PrimExpr:
        if is_reinterpret(e) and BF16 in (e.dtype, e.args[0].dtype):
            src = e.args[0]
            if e.dtype == BF16:
                return from_bfloat16(_call(BF16, "reinterpret", self.visit_expr(src)))
            if isinstance(src, BufferLoad):  # the bits as stored: through float32 a signaling NaN turns quiet
                return _call(e.dtype, "reinterpret", super().visit_BufferLoad(src))
            return _call(e.dtype, "reinterpret", to_bfloat16(self.visit_expr(src)))
        args = tuple(self.visit_expr(a) for a in e.args)
        if e.dtype != BF16:
            return Call(e.dtype, e.op, args, e.span)
        out = Call(F32, e.op, args, e.span)
        return out if e.op in ("if_then_else", "tir.if_then_else") else round_to_bfloat16(out)

    def visit_BufferStore(self, s: BufferStore) -> Stmt:
        bits_given = s.buffer.dtype == BF16 and is_reinterpret(s.value) and s.value.args[0].dtype != BF16
        if bits_given:  # stored as given: through float32 a signaling NaN turns quiet
            out = super().visit_BufferStore(dataclasses.replace(s, value=s.value.args[0]))
            return BufferStore(out.buffer, _call(BF16, "reinterpret", out.value), out.indices, s.span)
        out = super().visit_BufferStore(s)
        if s.buffer.dtype != BF16:
            return out
        return BufferStore(out.buffer, to_bfloat16(out.value), out.indices, s.span)

    def visit_LetStmt(self, s: LetStmt) -> Stmt:
        out = super().visit_LetStmt(s)
        if s.var.dtype != BF16:
            return out
        return LetStmt(self._f32_var(s.var), out.value, out.body, s.span)


def legalize_bfloat16(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with bfloat16 arithmetic emulated in float32 (see the module docstring)."""
    renamed: dict[Var, Var] = {}
    body = _Emulator(renamed).visit_stmt(func.body)
    if body is func.body and not renamed:
        return func
    params = [renamed.get(p, p) for p in func.params]
    return dataclasses.replace(func, params=params, body=body, buffer_map=dict(func.buffer_map))


__all__ = ["from_bfloat16", "legalize_bfloat16", "round_to_bfloat16", "to_bfloat16"]
