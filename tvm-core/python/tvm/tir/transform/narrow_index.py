"""Index arithmetic in 32 bits for targets without int64: ``narrow_int64_indices`` rewrites a
kernel's ``int64`` scalars (parameters, loop, thread and let variables, constants, the arithmetic
over them, and casts of bools and of 32-bit or narrower signed integers to ``int64``) to ``int32``, as Apache
TVM's WebGPU code generator does, so the kernels that Apache TVM's schedules write with ``int64``
shapes (``T.int64(0)`` grids, ``n = T.int64()``) run on WebGPU.

The kernel keeps its meaning as long as every such value fits in 32 bits: a scalar argument is
checked when the kernel is launched (a ``ValueError`` for one outside ``int32``), and an index
inside a buffer of fewer than 2**31 elements fits. A kernel that holds ``int64`` in memory (a
buffer of ``int64``), converts a float or an unsigned value to ``int64``, reinterprets bits as
``int64``, uses ``uint64`` or a constant beyond ``int32`` is left as it is, and the capability
check refuses it by name. Usable as a target pass; ``func`` itself on a target with int64.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.tir import dtype as _dt
from tvm.tir.expr import BinaryOp, Buffer, BufferLoad, Call, Cast, IntImm, Let, PrimExpr, Var
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer, StmtExprMutator, StmtExprVisitor, post_order_visit
from tvm.tir.op import is_reinterpret
from tvm.tir.stmt import Allocate, BufferStore, For, LetStmt, Stmt

from .narrow import NarrowEmulator

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class _NotNarrowable(StmtExprVisitor):
    """Finds what narrowing cannot keep exact (module docstring); ``found`` stays False if none.

    A value read from memory and widened to ``int64`` is exact in 32 bits as it is, so it may be
    compared, converted and used in an index (``A[T.Cast("int64", idx[i]) * m + j]``: an index
    inside its buffer fits); arithmetic on it anywhere else could need 64 bits and keeps ``int64``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.found = False
        self.in_index = 0
        self.from_memory: set = set()  # let variables of int64 bound to values read from memory

    def _buffer(self, b: Buffer) -> None:
        self.found = self.found or _dt.element_of(b.dtype) in ("int64", "uint64")

    def _reads_memory(self, e: PrimExpr) -> bool:
        hits = []
        post_order_visit(e, lambda x: hits.append(x) if isinstance(x, BufferLoad) or x in self.from_memory else None)
        return bool(hits)

    def _indices(self, indices: Any) -> None:
        self.in_index += 1
        for i in indices:
            self.visit_expr(i)
        self.in_index -= 1

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self._buffer(e.buffer)
        self._indices(e.indices)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self._buffer(s.buffer)
        self._indices(s.indices)
        self.visit_expr(s.value)

    def visit_Allocate(self, s: Allocate) -> None:
        self._buffer(s.buffer)
        super().visit_Allocate(s)

    def _bound(self, var: Var, value: PrimExpr) -> None:
        """A let's value: one read from memory decides where its variable may be used."""
        if var.dtype == "int64" and self._reads_memory(value):
            self.from_memory.add(var)
            self._indices((value,))
        else:
            self.visit_expr(value)

    def visit_LetStmt(self, s: LetStmt) -> None:
        self._bound(s.var, s.value)
        self.visit_stmt(s.body)

    def visit_Let(self, e: Let) -> None:
        self._bound(e.var, e.value)
        self.visit_expr(e.body)

    def visit_IntImm(self, e: IntImm) -> None:
        self.found = self.found or (e.dtype == "int64" and not _INT32_MIN <= e.value <= _INT32_MAX)

    def visit_BinaryOp(self, e: BinaryOp) -> None:
        if e.dtype == "int64" and not self.in_index:
            self.found = self.found or self._reads_memory(e.a) or self._reads_memory(e.b)
        super().visit_BinaryOp(e)

    def visit_Cast(self, e: Cast) -> None:
        source = e.value.dtype
        widening = _dt.is_bool(source) or (_dt.is_int(source) and _dt.bits(source) <= 32)
        self.found = self.found or (e.dtype == "int64" and source != "int64" and not widening)
        super().visit_Cast(e)

    def visit_Call(self, e: Call) -> None:
        if is_reinterpret(e) and "int64" in (e.dtype, e.args[0].dtype):
            self.found = True
        super().visit_Call(e)

    def visit_expr(self, e: Any) -> None:
        if not self.found:
            if getattr(e, "dtype", None) == "uint64":
                self.found = True
            else:
                super().visit_expr(e)


class _Int32Indices(NarrowEmulator, BufferReplacer):
    """``int64`` computed as ``int32`` with no rounding: every value is taken to fit."""

    def narrow(self, dtype: str) -> bool:
        return dtype == "int64"

    def wide(self, dtype: str) -> str:
        return "int32"

    def rounded(self, dtype: str, f: PrimExpr) -> PrimExpr:
        return f

    def replacement(self, b: Buffer) -> dict | None:
        fields = {}
        for name in ("shape", "strides"):
            old = tuple(getattr(b, name))
            new = tuple(self.visit_expr(x) for x in old)
            if any(n is not o for n, o in zip(new, old)):
                fields[name] = new
        if b.elem_offset is not None:
            offset = self.visit_expr(b.elem_offset)
            if offset is not b.elem_offset:
                fields["elem_offset"] = offset
        return fields or None

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        return StmtExprMutator.visit_BinaryOp(self, e)

    def visit_For(self, s: For) -> Stmt:
        out = super().visit_For(s)
        if not self.narrow(s.loop_var.dtype):
            return out
        return dataclasses.replace(out, loop_var=self._wide_var(s.loop_var))

    def legalize(self, func: PrimFunc) -> PrimFunc:
        for p in func.params:  # before the buffers, whose shapes name them
            if self.narrow(p.dtype):
                self._wide_var(p)
        buffer_map = {self.renamed.get(p, p): self.mutate_buffer(b) for p, b in func.buffer_map.items()}
        body = self._body(self.visit_stmt(func.body))
        if body is func.body and not self.renamed and not self.replaced:
            return func
        attrs = {key: self._attr(value) for key, value in func.attrs.items()}  # (launch bounds)
        params = [self.renamed.get(p, p) for p in func.params]
        return dataclasses.replace(func, params=params, body=body, buffer_map=buffer_map, attrs=attrs)

    def _attr(self, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return type(value)(self._attr(x) for x in value)
        return self.visit_expr(value) if isinstance(value, PrimExpr) else value


def narrow_int64_indices(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with its ``int64`` index arithmetic in ``int32`` (see the module docstring);
    ``func`` itself when it has none, when ``target`` supports int64, or when narrowing could
    change a value held in memory (then the capability check names what needs int64)."""
    if target is not None and target.capability("supports_int64"):
        return func
    check = _NotNarrowable()
    for b in func.buffer_map.values():
        check._buffer(b)
    check.visit_stmt(func.body)
    return func if check.found else _Int32Indices().legalize(func)


__all__ = ["narrow_int64_indices"]
