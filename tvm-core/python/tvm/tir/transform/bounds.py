"""Compile-time bounds check of buffer accesses whose index range is known.

An index made of constants and of loop variables with constant bounds (serial, parallel,
unrolled, vectorized and thread-bound loops alike) has an interval; when that interval leaves a
constant dimension of the buffer, the access is out of bounds on some iteration, and
:func:`check_constant_bounds` raises :class:`TIRVerifyError` naming the buffer, the dimension,
the range and the extent. Accesses under a condition (``if``, ``T.Select``, ``T.if_then_else``)
are not judged: the condition may be what keeps them in bounds. Indices the interval arithmetic
cannot follow (symbolic sizes, let-bound values, loads) are left to the runtime checks.
"""

from __future__ import annotations

from typing import Optional

from tvm.tir.analysis import free_vars, leaves_loop_early
from tvm.tir.expr import (
    Add,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Select,
    Sub,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprVisitor
from tvm.tir.stmt import BufferStore, For, IfThenElse

from .verify import TIRVerifyError, with_span

Interval = tuple[int, int]


def _interval(e: PrimExpr, ranges: dict[Var, Interval]) -> Optional[Interval]:
    """The smallest and largest value ``e`` takes over ``ranges`` (None when unknown)."""
    if isinstance(e, IntImm):
        return (e.value, e.value)
    if isinstance(e, Var):
        return ranges.get(e)
    if isinstance(e, Cast):
        return _interval(e.value, ranges) if e.dtype.startswith(("int", "uint")) else None
    if not isinstance(e, (Add, Sub, Mul, FloorDiv, FloorMod, Min, Max)):
        return None
    a, b = _interval(e.a, ranges), _interval(e.b, ranges)
    if a is None or b is None:
        return None
    if isinstance(e, Add):
        return (a[0] + b[0], a[1] + b[1])
    if isinstance(e, Sub):
        return (a[0] - b[1], a[1] - b[0])
    if isinstance(e, Mul):
        products = [x * y for x in a for y in b]
        return (min(products), max(products))
    if isinstance(e, Min):
        return (min(a[0], b[0]), min(a[1], b[1]))
    if isinstance(e, Max):
        return (max(a[0], b[0]), max(a[1], b[1]))
    if b[0] != b[1] or b[0] <= 0:
        return None  # division by a range or by a non-positive constant: not followed
    if isinstance(e, FloorDiv):
        return (a[0] // b[0], a[1] // b[0])
    return (0, b[0] - 1) if a[1] - a[0] + 1 >= b[0] or a[0] // b[0] != a[1] // b[0] else (a[0] % b[0], a[1] % b[0])


class _BoundsChecker(StmtExprVisitor):
    def __init__(self, func: PrimFunc) -> None:
        self.func = func
        self.ranges: dict[Var, Interval] = {}
        self.loops: dict[Var, For] = {}
        self.guarded = 0

    def visit_For(self, s: For) -> None:
        lo, n = _interval(s.min, self.ranges), _interval(s.extent, self.ranges)
        known = lo is not None and lo[0] == lo[1] and n is not None and n[0] == n[1] and n[0] > 0
        known = known and not leaves_loop_early(s.body)  # after a break, later iterations never run
        if known:
            self.ranges[s.loop_var] = (lo[0], lo[0] + n[0] - 1)
            self.loops[s.loop_var] = s
        self.visit_stmt(s.body)
        self.ranges.pop(s.loop_var, None)
        self.loops.pop(s.loop_var, None)

    def _guarded(self, *parts) -> None:
        self.guarded += 1
        try:
            for p in parts:
                if p is None:
                    continue
                if isinstance(p, PrimExpr):
                    self.visit_expr(p)
                else:
                    self.visit_stmt(p)
        finally:
            self.guarded -= 1

    def visit_IfThenElse(self, s: IfThenElse) -> None:
        self.visit_expr(s.condition)
        self._guarded(s.then_case, s.else_case)

    def visit_Select(self, e: Select) -> None:
        self.visit_expr(e.condition)
        self._guarded(e.true_value, e.false_value)

    def visit_Call(self, e: Call) -> None:
        if e.op == "if_then_else":
            self.visit_expr(e.args[0])
            self._guarded(*e.args[1:])
        else:
            super().visit_Call(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self.check(s.buffer, s.indices, s)
        super().visit_BufferStore(s)

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self.check(e.buffer, e.indices, e)
        super().visit_BufferLoad(e)

    def check(self, buf: Buffer, indices: tuple, node: object) -> None:
        if self.guarded:
            return
        for dim, (index, extent) in enumerate(zip(indices, buf.shape)):
            if not isinstance(extent, IntImm):
                continue
            span = _interval(index, self.ranges)
            if span is None or (0 <= span[0] and span[1] < extent.value):
                continue
            used = set(free_vars(index))
            loops = [v for v in self.loops if v in used]
            got = f"index {span[0]}" if span[0] == span[1] else f"indices {span[0]} to {span[1]}"
            if loops:
                got += " (" + ", ".join(f"{v.name} in [{self.ranges[v][0]}, {self.ranges[v][1]}]" for v in loops) + ")"
            valid = f"[0, {extent.value - 1}]" if extent.value > 0 else "none"
            raise TIRVerifyError(
                with_span(
                    f"out-of-bounds access in {self.func.global_symbol}: dimension {dim} of buffer '{buf.name}' "
                    f"has extent {extent.value} (valid indices: {valid}), got {got}",
                    getattr(node, "span", None) or (self.loops[loops[0]].span if loops else None),
                )
            )


def check_constant_bounds(func: PrimFunc) -> PrimFunc:
    """Raise :class:`TIRVerifyError` when an unconditional access of ``func`` provably leaves its
    buffer (see the module docstring); return ``func`` unchanged otherwise."""
    _BoundsChecker(func).visit_stmt(func.body)
    return func
