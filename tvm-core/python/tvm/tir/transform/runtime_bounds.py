"""Run-time bounds checks of indices known only when the function runs (CPU targets).

:func:`~tvm.tir.transform.bounds.check_constant_bounds` judges at compile time every index whose
range follows from constants and loop bounds. An index that depends on memory contents
(``A[idx[i]]``, a loop bound read from memory), on the result of an external call, or on a scalar
argument that sizes no buffer (``A[i + offset]``) has no such range: a bad value would read or
write outside the buffer. :func:`check_indices_at_run_time` guards every statement holding such an
access with the comparisons of those indices with the buffer's extents. When one fails, the
statement does not run and the function raises ``IndexError`` naming the function, the buffer,
the dimension, its extent and the index: the failure is the statement
``Evaluate(Call("int32", "tvm_index_out_of_bounds", (StringImm(where), index, extent)))``, which
code generators print as that error.

Indices are checked in the order they are computed (an index array's own index first). An access
under a condition inside the statement (``T.if_then_else``, ``T.Select``, the right side of
``and`` / ``or``) is checked only where the condition holds. Loops over symbolic extents that size
a buffer (``for i in range(n)`` over ``A: T.Buffer((n,))``) are not checked: the arguments' shapes
are checked when the function is called. A ``while`` loop whose condition needs checks becomes
``while (1) { checks; if (!condition) break; body }``.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from tvm.tir.analysis import any_node, free_vars
from tvm.tir.expr import (
    GE,
    LT,
    And,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Not,
    Or,
    PrimExpr,
    Select,
    StringImm,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, substitute
from tvm.tir.op import INTRINSICS
from tvm.tir.stmt import AssertStmt, Break, BufferStore, Evaluate, For, IfThenElse, LetStmt, Stmt, While, seq

#: The intrinsic of a failed run-time bounds check: ``(where, index, extent)``.
INDEX_OUT_OF_BOUNDS = "tvm_index_out_of_bounds"

Check = tuple[PrimExpr, Stmt]  # the condition that must hold, the failure when it does not


def _children(e: PrimExpr) -> tuple:
    """The operands of ``e`` (none for leaves)."""
    if isinstance(e, Cast):
        return (e.value,)
    if isinstance(e, Not):
        return (e.a,)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, BufferLoad):
        return e.indices
    a, b = getattr(e, "a", None), getattr(e, "b", None)
    return (a, b) if a is not None and b is not None else ()


def _bounded(e: PrimExpr) -> tuple[Optional[int], Optional[int]]:
    """Constant bounds of ``e`` whatever its variables hold (None: unbounded on that side):
    ``floormod(x, 8)`` is in [0, 7], ``min(x, 9)`` at most 9."""
    if isinstance(e, IntImm):
        return e.value, e.value
    if isinstance(e, Cast) and e.dtype.startswith(("int", "uint")):
        return _bounded(e.value)
    if isinstance(e, FloorMod) and isinstance(e.b, IntImm) and e.b.value > 0:
        return 0, e.b.value - 1
    if isinstance(e, (Min, Max)):
        (alo, ahi), (blo, bhi) = _bounded(e.a), _bounded(e.b)
        if isinstance(e, Min):
            his = [h for h in (ahi, bhi) if h is not None]
            return (min(alo, blo) if alo is not None and blo is not None else None), (min(his) if his else None)
        los = [lo for lo in (alo, blo) if lo is not None]
        return (max(los) if los else None), (max(ahi, bhi) if ahi is not None and bhi is not None else None)
    return None, None


class _IndexChecks(StmtExprMutator):
    def __init__(self, func: PrimFunc) -> None:
        self.name = func.global_symbol
        sized = {v for b in func.buffer_map.values() for v in _buffer_vars(b)}
        # scalar arguments that size no buffer: nothing bounds them when the function is called
        self.tainted: set[Var] = {p for p in func.params if p.dtype != "handle" and p not in sized}

    def _tainted(self, e: PrimExpr) -> bool:
        """Whether ``e`` depends on memory, an external call or a tainted variable."""
        return any_node(
            e,
            lambda n: (
                isinstance(n, BufferLoad)
                or (isinstance(n, Call) and n.op not in INTRINSICS)
                or (isinstance(n, Var) and n in self.tainted)
            ),
        )

    def _collect(self, e: PrimExpr, guard: Optional[PrimExpr], lets: dict, out: list[Check]) -> None:
        """The checks of the accesses in ``e`` (where ``guard`` holds), inner indices first."""
        if isinstance(e, Let):
            self._collect(e.value, guard, lets, out)
            self._collect(e.body, guard, {**lets, e.var: substitute(e.value, lets)}, out)
            return
        conditional = None
        if isinstance(e, Select) or (isinstance(e, Call) and e.op == "if_then_else"):
            cond, yes, no = (e.condition, e.true_value, e.false_value) if isinstance(e, Select) else e.args
            conditional = (cond, ((yes, cond), (no, Not(cond))))
        elif isinstance(e, (And, Or)):
            conditional = (e.a, ((e.b, e.a if isinstance(e, And) else Not(e.a)),))
        if conditional is not None:
            first, rest = conditional
            self._collect(first, guard, lets, out)
            for part, holds in rest:
                holds = substitute(holds, lets)
                self._collect(part, holds if guard is None else And(guard, holds), lets, out)
            return
        for child in _children(e):
            self._collect(child, guard, lets, out)
        if isinstance(e, BufferLoad):
            self._access(e.buffer, e.indices, guard, lets, out)

    def _access(self, buf: Buffer, indices: tuple, guard: Optional[PrimExpr], lets: dict, out: list[Check]) -> None:
        """The checks of the dimensions of one access whose index is known only at run time."""
        for dim, (index, extent) in enumerate(zip(indices, buf.shape)):
            index = substitute(index, lets) if lets else index
            if not self._tainted(index):
                continue
            lo, hi = _bounded(index)
            if lo is not None and hi is not None and isinstance(extent, IntImm) and 0 <= lo and hi < extent.value:
                continue
            i64, n64 = Cast("int64", index), Cast("int64", extent)
            holds = And(GE(i64, IntImm("int64", 0)), LT(i64, n64))
            where = StringImm(f"{self.name}: dimension {dim} of buffer '{buf.name}'")
            fail = Evaluate(Call("int32", INDEX_OUT_OF_BOUNDS, (where, i64, n64)))
            out.append((holds if guard is None else Or(Not(guard), holds), fail))

    def _guarded(self, s: Stmt, *exprs: PrimExpr, store: Optional[BufferStore] = None) -> Stmt:
        """``s`` run only when the accesses of ``exprs`` (and of ``store``) are in bounds."""
        checks: list[Check] = []
        for e in exprs:
            self._collect(e, None, {}, checks)
        if store is not None:
            self._access(store.buffer, store.indices, None, {}, checks)
        for holds, fail in reversed(checks):
            s = IfThenElse(holds, s, fail, s.span)
        return s

    def visit_BufferStore(self, s: BufferStore) -> Stmt:
        return self._guarded(s, *s.indices, s.value, store=s)

    def visit_Evaluate(self, s: Evaluate) -> Stmt:
        return self._guarded(s, s.value)

    def visit_AssertStmt(self, s: AssertStmt) -> Stmt:
        return self._guarded(super().visit_AssertStmt(s), s.condition)

    def visit_IfThenElse(self, s: IfThenElse) -> Stmt:
        return self._guarded(super().visit_IfThenElse(s), s.condition)

    def visit_LetStmt(self, s: LetStmt) -> Stmt:
        if self._tainted(s.value):
            self.tainted.add(s.var)
        return self._guarded(super().visit_LetStmt(s), s.value)

    def visit_While(self, s: While) -> Stmt:
        s = super().visit_While(s)
        checks: list[Check] = []
        self._collect(s.condition, None, {}, checks)
        if not checks:
            return s
        head = [IfThenElse(Not(holds), seq(fail, Break())) for holds, fail in checks]
        leave = IfThenElse(Not(s.condition), Break())
        return While(IntImm("bool", 1), seq(*head, leave, s.body), s.span)

    def visit_For(self, s: For) -> Stmt:
        if self._tainted(s.min) or self._tainted(s.extent):
            self.tainted.add(s.loop_var)
        return self._guarded(super().visit_For(s), s.min, s.extent)


def _buffer_vars(buf: Buffer) -> set[Var]:
    """The variables of a buffer's shape, strides and offset (bound from its argument)."""
    parts = [*buf.shape, *(getattr(buf, "strides", None) or ()), getattr(buf, "elem_offset", None)]
    return {v for p in parts if isinstance(p, PrimExpr) for v in free_vars(p)}


def check_indices_at_run_time(func: PrimFunc) -> PrimFunc:
    """``func`` with every statement that accesses a buffer at an index known only at run time
    guarded by the bounds of that index (see the module docstring); unchanged when it has none."""
    body = _IndexChecks(func).visit_stmt(func.body)
    return func if body is func.body else dataclasses.replace(func, body=body, buffer_map=dict(func.buffer_map))


__all__ = ["INDEX_OUT_OF_BOUNDS", "check_indices_at_run_time"]
