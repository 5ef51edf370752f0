"""bfloat16 emulation in TIR: ``legalize_bfloat16`` computes every bfloat16 operation in float32
and rounds its result to bfloat16 (round to nearest even, NaN kept quiet), as NumPy's bfloat16
(ml_dtypes) does, with nothing but 32-bit integer and float operations.

After the pass the only bfloat16 values left are loads from and stores to bfloat16 buffers, and
``reinterpret`` between them and ``uint16``: an emitter stores bfloat16 as a 16-bit integer and
needs no bfloat16 arithmetic, conversions or constants of its own. Scalar bfloat16 parameters
become float32 parameters (their values are bfloat16 values already). Usable as a target pass.
"""

from __future__ import annotations

from typing import Any

from tvm.tir.expr import (
    GT,
    Add,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    IntImm,
    PrimExpr,
    Select,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer, StmtExprMutator
from tvm.tir.stmt import BufferStore, Stmt

from .legalize import _bind
from .narrow import NarrowEmulator

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


class _Emulator(NarrowEmulator):
    """Every bfloat16 expression is rewritten to a float32 one holding a bfloat16 value."""

    def narrow(self, dtype: str) -> bool:
        return dtype == BF16

    def rounded(self, dtype: str, f: PrimExpr) -> PrimExpr:
        return round_to_bfloat16(f)

    def widen(self, original: BufferLoad, load: BufferLoad) -> PrimExpr:
        return from_bfloat16(load)

    def store(self, s: BufferStore, out: BufferStore) -> Stmt:
        return BufferStore(out.buffer, to_bfloat16(out.value), out.indices, s.span)

    def store_bits(self, s: BufferStore, out: BufferStore) -> Stmt:
        # through float32 a signaling NaN would turn quiet
        return BufferStore(out.buffer, _call(BF16, "reinterpret", out.value), out.indices, s.span)

    def reinterpret(self, e: Call) -> PrimExpr:
        src = e.args[0]
        if e.dtype == BF16:
            return from_bfloat16(_call(BF16, "reinterpret", self.visit_expr(src)))
        if isinstance(src, BufferLoad):  # the bits as stored: through float32 a signaling NaN turns quiet
            return _call(e.dtype, "reinterpret", StmtExprMutator.visit_BufferLoad(self, src))
        return _call(e.dtype, "reinterpret", to_bfloat16(self.visit_expr(src)))


class _WideArrays(_Emulator, BufferReplacer):
    """As _Emulator, and bfloat16 arrays in local or shared memory hold their values as float32
    (exactly: every bfloat16 is a float32), for languages without 16-bit arrays."""

    def replacement(self, b: Buffer) -> dict | None:
        return {"dtype": F32} if b.scope != "global" and b.dtype == BF16 else None

    def widen(self, original: BufferLoad, load: BufferLoad) -> PrimExpr:
        return load if load.dtype == F32 else super().widen(original, load)

    def store(self, s: BufferStore, out: BufferStore) -> Stmt:
        return out if out.buffer.dtype == F32 else super().store(s, out)

    def store_bits(self, s: BufferStore, out: BufferStore) -> Stmt:
        if out.buffer.dtype != F32:
            return super().store_bits(s, out)
        bits = Cast(U32, Cast("uint16", out.value))  # the float32 whose high half they are
        return BufferStore(
            out.buffer, _call(F32, "reinterpret", _call(U32, "shift_left", bits, _u32(16))), out.indices, s.span
        )

    def reinterpret(self, e: Call) -> PrimExpr:
        src = e.args[0]
        if e.dtype != BF16 and isinstance(src, BufferLoad) and self.replacement(src.buffer) is not None:
            high = _call(U32, "shift_right", _call(U32, "reinterpret", self.visit_expr(src)), _u32(16))
            return Cast(e.dtype, Cast("uint16", high))  # the bits of a bfloat16 held as float32
        return super().reinterpret(e)


def legalize_bfloat16(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with bfloat16 arithmetic emulated in float32 (see the module docstring)."""
    return _Emulator().legalize(func)


def legalize_bfloat16_wide_arrays(func: PrimFunc, target: Any = None) -> PrimFunc:
    """:func:`legalize_bfloat16`, and local and shared bfloat16 arrays (the compiler's own
    reduction scratch too) become float32 arrays holding bfloat16 values, for a language that has
    no 16-bit arrays (WGSL); device buffers stay bfloat16. Usable as a target pass."""
    return _WideArrays().legalize(func)


__all__ = ["from_bfloat16", "legalize_bfloat16", "legalize_bfloat16_wide_arrays", "round_to_bfloat16", "to_bfloat16"]
