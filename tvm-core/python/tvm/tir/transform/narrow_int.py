"""8- and 16-bit integers computed in 32 bits: ``legalize_narrow_integers`` rewrites every
``int8``, ``uint8``, ``int16`` and ``uint16`` value to an ``int32`` (signed) or ``uint32``
(unsigned) one and wraps the result of each operation back into the narrow range (sign-extended
for signed dtypes, zero-extended for unsigned ones), which gives the narrow dtype's own results:
``int8(127) + 1`` is -128, ``uint8(0) - 1`` is 255.

After the pass the only narrow values left are loads from and stores to ``global`` buffers of a
narrow dtype (``Cast(<32-bit>, load)`` and ``BufferStore(buf, Cast(<narrow>, value))``) and
``reinterpret`` between a 16-bit integer and a 16-bit float (``Cast(<32-bit>,
reinterpret(<narrow>, f))``, ``reinterpret(<float>, Cast(<narrow>, value))``), so an emitter whose
language has no 8- or 16-bit integers (WGSL) packs those buffers into 32-bit words and needs no
narrow arithmetic, variables or constants of its own. ``local`` and ``shared``
arrays of a narrow dtype become 32-bit arrays. Scalar parameters of a narrow dtype become 32-bit
parameters. Vector dtypes are left alone (``scalarize_vectors`` removes them first). Usable as a
target pass.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.tir import dtype as _dt
from tvm.tir.expr import BinaryOp, Buffer, BufferLoad, Call, Cast, CmpOp, IntImm, PrimExpr
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer, StmtExprMutator
from tvm.tir.stmt import BufferStore, Stmt

from .narrow import NarrowEmulator

NARROW_INTEGERS = ("int8", "uint8", "int16", "uint16")


def _call(dtype: str, op: str, *args: PrimExpr) -> Call:
    return Call(dtype, op, tuple(args))


def wrapped(dtype: str, x: PrimExpr) -> PrimExpr:
    """32-bit ``x`` brought into the range of narrow ``dtype``, as a 32-bit value: the low bits,
    sign-extended for a signed dtype (two shifts), zero-extended for an unsigned one (a mask)."""
    bits = _dt.bits(dtype)
    if dtype.startswith("u"):
        return _call("uint32", "bitwise_and", x, IntImm("uint32", (1 << bits) - 1))
    amount = IntImm("int32", 32 - bits)
    return _call("int32", "shift_right", _call("int32", "shift_left", x, amount), amount)


class _Widener(NarrowEmulator, BufferReplacer):
    def narrow(self, dtype: str) -> bool:
        return dtype in NARROW_INTEGERS

    def wide(self, dtype: str) -> str:
        return "uint32" if dtype.startswith("u") else "int32"

    def rounded(self, dtype: str, f: PrimExpr) -> PrimExpr:
        return wrapped(dtype, f)

    def replacement(self, b: Buffer) -> dict | None:
        # a register or workgroup array holds the wide values; memory keeps the narrow ones
        return {"dtype": self.wide(b.dtype)} if b.scope != "global" and self.narrow(b.dtype) else None

    def widen(self, original: BufferLoad, load: BufferLoad) -> PrimExpr:
        return load if load.dtype != original.dtype else Cast(self.wide(original.dtype), load, original.span)

    def store(self, s: BufferStore, out: BufferStore) -> Stmt:
        if out.buffer.dtype != s.buffer.dtype:  # a widened array
            return out
        return BufferStore(out.buffer, Cast(s.buffer.dtype, out.value, s.span), out.indices, s.span)

    def store_bits(self, s: BufferStore, out: BufferStore) -> Stmt:
        # a 16-bit float's bits stored as they are (the emitter extracts them)
        return dataclasses.replace(out, value=Call(s.buffer.dtype, s.value.op, (out.value,), s.value.span))

    def reinterpret(self, e: Call) -> PrimExpr:
        src = self.visit_expr(e.args[0])
        if self.narrow(e.dtype) and self.narrow(e.args[0].dtype):  # same width: the bits, wrapped
            return wrapped(e.dtype, Cast(self.wide(e.dtype), src))
        if self.narrow(e.dtype):  # a 16-bit float's bits: the emitter extends them to 32 bits
            return Cast(self.wide(e.dtype), Call(e.dtype, e.op, (src,), e.span))
        # an integer's bits as a 16-bit float: the emitter takes the low 16 bits of the wide value
        return Call(e.dtype, e.op, (Cast(e.args[0].dtype, src),), e.span)

    def _packed_load(self, e: PrimExpr) -> bool:
        """Whether ``e`` is a load of a global buffer of a narrow dtype."""
        return isinstance(e, BufferLoad) and e.buffer.scope == "global" and self.narrow(e.dtype)

    def visit_Cast(self, e: Cast) -> PrimExpr:
        if self._packed_load(e.value) and e.dtype == self.wide(e.value.dtype):  # legal already
            load = StmtExprMutator.visit_BufferLoad(self, e.value)
            return e if load is e.value else Cast(e.dtype, load, e.span)
        return super().visit_Cast(e)

    def visit_BufferStore(self, s: BufferStore) -> Stmt:
        v, dtype = s.value, s.buffer.dtype
        narrowed = isinstance(v, Cast) and v.dtype == dtype and v.value.dtype == self.wide(dtype)
        if self.narrow(dtype) and s.buffer.scope == "global" and narrowed:
            # the store keeps the low bits: a 32-bit value needs no wrapping first
            inner, indices = self.visit_expr(v.value), self._exprs(s.indices)
            if inner is v.value and indices is s.indices:
                return s
            return BufferStore(s.buffer, Cast(v.dtype, inner, v.span), indices, s.span)
        return super().visit_BufferStore(s)

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        out = super(NarrowEmulator, self).visit_BinaryOp(e)
        if not self.narrow(e.dtype) or isinstance(e, CmpOp):
            return out
        # exact in 32 bits, then wrapped: int8(-128) // -1 is -128, as the narrow dtype gives
        return self.rounded(e.dtype, type(out)(out.a, out.b, e.span))


def legalize_narrow_integers(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with its 8- and 16-bit integer arithmetic computed in 32 bits (see the module
    docstring); ``func`` itself when it has none."""
    return _Widener().legalize(func)


__all__ = ["NARROW_INTEGERS", "legalize_narrow_integers", "wrapped"]
