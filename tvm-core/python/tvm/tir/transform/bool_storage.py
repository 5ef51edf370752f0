"""bool in memory as bytes: ``legalize_bool_storage`` retypes every ``global`` bool buffer to
``uint8`` holding 0 or 1, the layout NumPy, DLPack and every runtime give a bool tensor.

A load of such a buffer becomes ``load != 0`` and a stored value is converted to ``uint8`` (1 for
true), so an emitter whose language has a logical bool type that cannot live in device memory
(SPIR-V's ``OpTypeBool``, WGSL's ``bool``) never sees a bool buffer parameter. ``shared`` and
``local`` bool arrays keep their type: register and workgroup arrays of bool are valid in every
shader language. Runs after ``scalarize_vectors`` (no vector bool loads are left). Usable as a
target pass.
"""

from __future__ import annotations

from typing import Any, Optional

from tvm.tir.expr import NE, Buffer, BufferLoad, Call, Cast, IntImm, PrimExpr
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer
from tvm.tir.stmt import BufferStore, Stmt

BOOL, BYTE = "bool", "uint8"


def _in_memory(buf: Buffer) -> bool:
    return buf.dtype == BOOL and buf.scope == "global"


class _BytesForBool(BufferReplacer):
    def replacement(self, b: Buffer) -> Optional[dict]:
        return {"dtype": BYTE} if _in_memory(b) else None

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        out = super().visit_BufferLoad(e)
        return NE(out, IntImm(BYTE, 0), e.span) if _in_memory(e.buffer) else out

    def visit_BufferStore(self, s: BufferStore) -> Stmt:
        out = super().visit_BufferStore(s)
        if not _in_memory(s.buffer):
            return out
        return BufferStore(out.buffer, Cast(BYTE, out.value, s.span), out.indices, s.span)

    def visit_Call(self, e: Call) -> PrimExpr:
        if str(e.op).removeprefix("tir.") == "address_of" and isinstance(e.args[0], BufferLoad):
            load = e.args[0]  # the element's address, not its value
            buf = self.mutate_buffer(load.buffer)
            retyped = BufferLoad(buf, self._exprs(load.indices), buf.dtype, load.span)
            return Call(e.dtype, e.op, (retyped, *e.args[1:]), e.span)
        return super().visit_Call(e)


def legalize_bool_storage(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with its global bool buffers as ``uint8`` buffers of 0/1 (see the module
    docstring); ``func`` itself when it has none."""
    return _BytesForBool().rewrite(func)


__all__ = ["legalize_bool_storage"]
