"""simplify: local algebraic clean-up.

Rules (applied bottom-up until nothing changes locally):

* constant folding of arithmetic, min/max, comparisons, logic, casts, bitwise operations, shifts
  (by less than the width) and ``Select`` on constants, computed as the machine computes them
  at run time (integers wrap to their dtype's width; float32 results are rounded once per
  operation, float min/max are ``x < y ? x : y`` / ``x > y ? x : y``; float16/bfloat16 are not
  folded; division by zero is left alone);
* identities: ``x + 0``, ``0 + x`` (for floats only with -0.0: ``-0.0 + 0.0`` is ``0.0``),
  ``x - 0`` (for floats not with -0.0), ``x * 1``, ``1 * x``, ``x / 1``, integer ``x // 1``, integer ``x * 0``, integer
  ``x % 1``, ``x - x`` for integers, ``min(x, x)``, ``max(x, x)``,
  ``(x + c1) + c2`` and ``(x * c1) * c2`` constant reassociation for integers, integer
  ``(x * c1) // c2 -> x * (c1 // c2)`` and ``(x * c1) % c2 -> 0`` where ``c2`` divides ``c1``,
  ``true && x``, ``false || x``, ``not not x``, casts to the same dtype;
* statements: ``if`` on a constant condition keeps one branch; non-thread loops of extent 1 become
  their body with the loop variable replaced by ``min``; loops of extent 0 vanish.

Integer arithmetic wraps, so the division rules hold for values only where ``x * c1`` cannot
wrap; they are applied to 32- and 64-bit element indices and loop bounds (which are out of
bounds once they wrap) and, for ``%``, wherever ``c2`` is a power of two (which divides the
wrap-around too). :func:`simplify_expr` treats its expression as an index or a size.
"""

from __future__ import annotations

import math
from typing import Optional

from tvm.tir import dtype as _dt
from tvm.tir.analysis import leaves_loop_early, structural_equal
from tvm.tir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    Sub,
)
from tvm.tir.fold import constant as _const
from tvm.tir.fold import float_bits as _float_bits
from tvm.tir.fold import fold_float_call as _fold_float_call
from tvm.tir.fold import fold_int_call as _fold_int_call
from tvm.tir.fold import fold_binary as _fold
from tvm.tir.fold import int_as_float as _int_as_float
from tvm.tir.fold import value_of as _val
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, substitute
from tvm.tir.op import is_reinterpret
from tvm.tir.stmt import BufferStore, Evaluate, For, ForKind, IfThenElse, Stmt


def _is(x: PrimExpr, v) -> bool:
    return isinstance(x, (IntImm, FloatImm)) and _val(x) == v


def _divides(b: PrimExpr, a: PrimExpr) -> bool:
    """Whether ``a`` is ``x * c1`` and ``b`` a constant ``c2 != 0`` that divides ``c1``, of a
    signed integer dtype (an unsigned ``x * c1`` wraps around, and the identities fail then)."""
    return (
        _dt.is_int(a.dtype)
        and isinstance(b, IntImm)
        and b.value != 0
        and isinstance(a, Mul)
        and isinstance(a.b, IntImm)
        and a.b.value % b.value == 0
    )


def _additive_identity(x: PrimExpr) -> bool:
    """Whether ``y + x == y`` for every ``y``: integer 0, float -0.0 (``-0.0 + 0.0`` is ``0.0``)."""
    if isinstance(x, IntImm):
        return x.value == 0
    return isinstance(x, FloatImm) and x.dtype_value == 0 and math.copysign(1.0, x.dtype_value) < 0


def _power_of_two(b: PrimExpr) -> bool:
    return isinstance(b, IntImm) and b.value > 0 and b.value & (b.value - 1) == 0


def _scaled(e: PrimExpr) -> tuple[PrimExpr, int]:
    """``e`` as (x, k) with ``e == x * k`` for a constant ``k`` (1 when there is none)."""
    if isinstance(e, Mul) and isinstance(e.b, IntImm):
        return e.a, int(e.b.value)
    return e, 1


def _rejoined(a: PrimExpr, b: PrimExpr) -> Optional[PrimExpr]:
    """``(y // n) * (n * k) + (y % n) * k`` -> ``y * k`` (floor division; ``k`` a constant, 1
    when absent): an index split into a buffer's dimensions and flattened again."""
    (q, outer), (r, inner) = _scaled(a), _scaled(b)
    if not (isinstance(q, FloorDiv) and isinstance(r, FloorMod) and isinstance(q.b, IntImm)):
        return None
    n = q.b.value
    if not (isinstance(r.b, IntImm) and r.b.value == n and n > 0 and outer == n * inner):
        return None
    if not (q.a is r.a or structural_equal(q.a, r.a)):
        return None
    return q.a if inner == 1 else Mul(q.a, _const(q.a.dtype, inner))


class _Simplify(StmtExprMutator):
    def __init__(self, index: bool) -> None:
        super().__init__()
        self._index_depth = int(index)  # > 0 inside an element index or loop bounds

    def _as_index(self, e: PrimExpr) -> PrimExpr:
        self._index_depth += 1
        try:
            return self.visit_expr(e)
        finally:
            self._index_depth -= 1

    def _indices(self, es: tuple) -> tuple:
        out = tuple(self._as_index(e) for e in es)
        return es if all(x is y for x, y in zip(out, es)) else out

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        idx = self._indices(e.indices)
        return e if idx is e.indices else BufferLoad(e.buffer, idx, e.dtype, e.span)

    def visit_BufferStore(self, s: BufferStore) -> Optional[Stmt]:
        idx, val = self._indices(s.indices), self.visit_expr(s.value)
        return s if idx is s.indices and val is s.value else BufferStore(s.buffer, val, idx, s.span)

    def _exact_division(self, a: PrimExpr, b: PrimExpr, dtype: str) -> bool:
        """Whether ``a`` is ``x * c1`` with ``c2 = b`` dividing ``c1`` in a 32/64-bit index, where
        ``x * c1`` is taken not to wrap (``(x * c1) // c2 == x * (c1 // c2)``)."""
        return _divides(b, a) and self._index_depth > 0 and _dt.bits(dtype) >= 32

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        e = super().visit_BinaryOp(e)
        if not isinstance(e, BinaryOp) or e.a.dtype != e.b.dtype:
            return e
        r = _fold(e)
        if r is not None:
            return r
        t, a, b, d = type(e), e.a, e.b, e.a.dtype
        isint = _dt.is_integer(d)
        if isint and t in (Div, FloorDiv, Mod, FloorMod) and _is(b, 0):
            return IntImm(d, 0)  # TIR's result of a division by zero (a divisor folded to 0)
        if t is Add:
            if _additive_identity(b):
                return a
            if _additive_identity(a):
                return b
            # (x + c1) + c2 -> x + (c1 + c2)
            if isint and isinstance(b, IntImm) and isinstance(a, Add) and isinstance(a.b, IntImm):
                c = _const(d, a.b.value + b.value)
                return a.a if c.value == 0 else Add(a.a, c)
            rejoined = _rejoined(a, b) if isint else None
            if rejoined is not None:
                return rejoined
        elif t is Sub:
            if _is(b, 0) and not (isinstance(b, FloatImm) and math.copysign(1.0, b.dtype_value) < 0):
                return a  # x - 0.0 is x; x - (-0.0) is x + 0.0, which turns -0.0 into 0.0
            if isint and a is b:
                return IntImm(d, 0)
            if isint and isinstance(b, IntImm) and isinstance(a, Add) and isinstance(a.b, IntImm):
                c = _const(d, a.b.value - b.value)
                return a.a if c.value == 0 else Add(a.a, c)
        elif t is Mul:
            if _is(b, 1):
                return a
            if _is(a, 1):
                return b
            if isint and (_is(a, 0) or _is(b, 0)):
                return IntImm(d, 0)
            # (x * c1) * c2 -> x * (c1 * c2)
            if isint and isinstance(b, IntImm) and isinstance(a, Mul) and isinstance(a.b, IntImm):
                return Mul(a.a, _const(d, a.b.value * b.value))
        elif t in (Div, FloorDiv):
            if _is(b, 1) and (isint or t is Div):  # a float x // 1 is floor(x)
                return a
            # (x * c1) / c2 -> x * (c1 / c2) for integers when c2 divides c1 (exact, no rounding)
            if self._exact_division(a, b, d):
                k = a.b.value // b.value
                return a.a if k == 1 else Mul(a.a, _const(d, k))
        elif t in (Mod, FloorMod):
            if isint and _is(b, 1):
                return IntImm(d, 0)
            # (x * c1) % c2 -> 0 when c2 divides c1 (and the wrap-around, or x * c1 cannot wrap)
            if _divides(b, a) and (self._exact_division(a, b, d) or _power_of_two(b)):
                return IntImm(d, 0)
        elif t in (Min, Max):
            if a is b:
                return a
        elif t is And:
            if _is(a, 1):
                return b
            if _is(b, 1):
                return a
            if _is(a, 0) or _is(b, 0):
                return IntImm("bool", 0)
        elif t is Or:
            if _is(a, 0):
                return b
            if _is(b, 0):
                return a
            if _is(a, 1) or _is(b, 1):
                return IntImm("bool", 1)
        elif t in (EQ, LE, GE) and isint and a is b:
            return IntImm("bool", 1)
        elif t in (NE, LT, GT) and isint and a is b:
            return IntImm("bool", 0)
        return e

    def visit_Call(self, e: Call) -> PrimExpr:
        e = super().visit_Call(e)
        if isinstance(e, Call) and _dt.is_float(e.dtype):
            folded = _fold_float_call(e.op, e.dtype, e.args)
            return e if folded is None else folded
        if isinstance(e, Call) and is_reinterpret(e) and isinstance(e.args[0], FloatImm):
            bits = _float_bits(e.dtype, e.args[0])
            return e if bits is None else bits
        folded = _fold_int_call(e.op, e.dtype, e.args) if isinstance(e, Call) else None
        return e if folded is None else folded

    def visit_Not(self, e: Not) -> PrimExpr:
        e = super().visit_Not(e)
        if not isinstance(e, Not):
            return e
        if isinstance(e.a, IntImm):
            return IntImm("bool", 0 if e.a.value else 1)
        if isinstance(e.a, Not):
            return e.a.a
        return e

    def visit_Cast(self, e: Cast) -> PrimExpr:
        e = super().visit_Cast(e)
        if not isinstance(e, Cast):
            return e
        v = e.value
        if v.dtype == e.dtype:
            return v
        value = _val(v)
        if value is not None and _dt.lanes(e.dtype) == 1:
            if _dt.is_float(e.dtype):
                value = _int_as_float(int(value), e.dtype) if isinstance(v, IntImm) else float(value)
                r = _const(e.dtype, value)
                return r if r is not None else e
            if _dt.is_bool(e.dtype):
                return IntImm("bool", int(bool(value)))
            if isinstance(v, FloatImm):
                if not math.isfinite(value):
                    return e
                return _const(e.dtype, math.trunc(value))
            return _const(e.dtype, value)
        return e

    def visit_Let(self, e: Let) -> PrimExpr:
        value = self.visit_expr(e.value)
        if isinstance(value, (IntImm, FloatImm)):  # a constant: folded into the body
            return self.visit_expr(substitute(e.body, {e.var: value}))
        body = self.visit_expr(e.body)
        if value is e.value and body is e.body:
            return e
        return Let(e.var, value, body)

    def visit_Select(self, e: Select) -> PrimExpr:
        e = super().visit_Select(e)
        if isinstance(e, Select) and isinstance(e.condition, IntImm):
            return e.true_value if e.condition.value else e.false_value
        return e

    def visit_IfThenElse(self, s: IfThenElse) -> Optional[Stmt]:
        c = self.visit_expr(s.condition)
        if isinstance(c, IntImm):
            if c.value:
                return self.visit_stmt(s.then_case)
            return self.visit_stmt(s.else_case) if s.else_case is not None else None
        return self.rebuild_if(s, c)

    def visit_For(self, s: For) -> Optional[Stmt]:
        mn, ext = self._as_index(s.min), self._as_index(s.extent)
        if s.kind is not ForKind.THREAD_BINDING and isinstance(ext, IntImm):
            if ext.value <= 0:
                return None
            if ext.value == 1 and not leaves_loop_early(s.body):  # its break/continue needs the loop
                return self.visit_stmt(substitute(s.body, {s.loop_var: mn}))
        return self.rebuild_for(s, mn, ext)


def simplify_expr(e: PrimExpr) -> PrimExpr:
    """``e``, an index or a size, simplified by the rules of this module."""
    return _Simplify(index=True).visit_expr(e)


def simplify_stmt(s: Stmt) -> Stmt:
    """``s`` simplified by the rules of this module (an emptied statement becomes ``Evaluate(0)``)."""
    r = _Simplify(index=False).visit_stmt(s)
    return r if r is not None else Evaluate(IntImm("int32", 0))


def simplify(func: PrimFunc) -> PrimFunc:
    """``func`` with its body simplified (buffers and parameters unchanged)."""
    return func.with_body(simplify_stmt(func.body))
