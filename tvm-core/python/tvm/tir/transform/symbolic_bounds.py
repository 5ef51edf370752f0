"""Proofs that an index stays inside its extent when sizes are symbolic.

:func:`in_bounds` decides ``0 <= index < extent`` for every iteration of the enclosing loops,
from three kinds of fact: the loops' ranges (``for i in range(n)`` keeps ``i`` in ``[0, n - 1]``),
the conditions around the access (``if i * 4 + j < n``) and sizes being non-negative. Expressions
are taken as linear combinations of atoms with rational coefficients; ``x // c`` and ``x % c`` with
a constant ``c > 0`` are bounded by ``x / c`` and ``[0, c - 1]``. Anything else (products of
variables, divisions by a variable, values read from memory) is an atom with no range, so an
access that depends on it is not proven: the run-time check stays (a proof is only ever a reason
to leave a check out).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from tvm.tir import dtype as _dt
from tvm.tir.analysis import expr_key, free_vars, linear_form
from tvm.tir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    Add,
    And,
    Call,
    Cast,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    Not,
    Or,
    PrimExpr,
    Sub,
    Var,
)
from tvm.tir.functor import StmtExprMutator, substitute

from .bounds import interval

Terms = dict  # atom key -> Fraction coefficient


@dataclass
class Facts:
    """What holds at an access: the enclosing loops (outermost first) as ``(var, min, extent)``,
    the conditions it runs under, and the variables known to be non-negative (sizes)."""

    loops: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    nonneg: set = field(default_factory=set)


class _Normalized(StmtExprMutator):
    """Integer arithmetic in the forms linear_form reads: widening casts dropped (they keep the
    value), shifts by constants as products and floor divisions, constant divisions folded."""

    def visit_Cast(self, e: Cast) -> PrimExpr:
        v = self.visit_expr(e.value)
        src, dst = e.value.dtype, e.dtype
        if _dt.is_integer(src) and _dt.is_integer(dst) and _dt.bits(dst) >= _dt.bits(src):
            if _dt.is_uint(src) == _dt.is_uint(dst):
                return v
        return e if v is e.value else Cast(dst, v, e.span)

    def visit_Call(self, e: Call) -> PrimExpr:
        # x >> c is x // 2**c exactly; x << c may wrap, so it stays an atom with no range
        if e.op == "shift_right" and isinstance(e.args[1], IntImm) and 0 <= e.args[1].value < 63:
            x = self.visit_expr(e.args[0])
            return self.visit_expr(FloorDiv(x, IntImm(x.dtype, 1 << e.args[1].value)))
        return super().visit_Call(e)

    def visit_BinaryOp(self, e: PrimExpr) -> PrimExpr:
        e = super().visit_BinaryOp(e)
        if isinstance(e, (FloorDiv, FloorMod)) and isinstance(e.b, IntImm) and e.b.value:
            terms, a = linear_form(e.a)
            if not terms:  # a constant: exact
                return IntImm(e.dtype, a // e.b.value if isinstance(e, FloorDiv) else a % e.b.value)
        return e


def _linear(e: PrimExpr, atoms: dict) -> tuple[Terms, Fraction]:
    """``e`` as ``({atom key: coefficient}, constant)`` (:func:`~tvm.tir.analysis.linear_form`
    of its normalized form); ``atoms`` receives each atom."""
    terms, const = linear_form(_Normalized().visit_expr(e), atoms)
    return {k: Fraction(c) for k, c in terms.items()}, Fraction(const)


def _add(terms: Terms, more: Terms, scale: Fraction) -> None:
    for k, c in more.items():
        terms[k] = terms.get(k, 0) + scale * c
        if not terms[k]:
            del terms[k]


def _nonneg(e: PrimExpr, facts: Facts) -> bool:
    """Whether ``e >= 0`` follows from sizes being non-negative and the bounds of ``//`` and
    ``%`` by positive constants (loop variables must be gone already)."""
    atoms: dict = {}
    terms, const = _linear(e, atoms)
    for _ in range(8):  # each pass replaces the // and % atoms by their linear bounds
        replaced = False
        for k, c in list(terms.items()):
            a = atoms[k]
            if isinstance(a, FloorMod) and not isinstance(a.b, IntImm) and _bounded_divisor(a.b, facts):
                del terms[k]  # in [0, b - 1] (b > 0 wherever it is evaluated)
                replaced = True
                if c < 0:
                    _add(terms, _linear(a.b, atoms)[0], c)
                    const += c * (_linear(a.b, atoms)[1] - 1)
                continue
            if not isinstance(a, (FloorDiv, FloorMod)) or not isinstance(a.b, IntImm) or a.b.value <= 0:
                continue
            if c > 0 and _atom_nonneg(a, facts):
                continue  # dropping it keeps a lower bound
            d = a.b.value
            del terms[k]
            replaced = True
            if isinstance(a, FloorMod):  # in [0, d - 1]
                const += c * (d - 1) if c < 0 else 0
                continue
            inner, inner_const = _linear(a.a, atoms)
            # x // d <= x / d, and x // d >= (x - d + 1) / d
            _add(terms, inner, c / d)
            const += c * (inner_const if c < 0 else inner_const - d + 1) / d
        if not replaced:
            break
    return const >= 0 and all(c > 0 and _atom_nonneg(atoms[k], facts) for k, c in terms.items())


def nonnegative(e: PrimExpr | int, nonneg_vars: set) -> bool:
    """Whether ``e`` (a Python int or an integer expression) is >= 0 given that the variables of
    ``nonneg_vars`` are (thread indices, loops counting up from such starts, sizes)."""
    return e >= 0 if isinstance(e, int) else _nonneg(e, Facts(nonneg=nonneg_vars))


def _bounded_divisor(b: PrimExpr, facts: Facts) -> bool:
    """Whether ``x % b`` is in ``[0, b - 1]``: ``b`` provably positive (``x % 0`` is 0 in the
    generated code, outside an empty buffer)."""
    return b.value > 0 if isinstance(b, IntImm) else _nonneg(Sub(b, IntImm(b.dtype, 1)), facts)


def _atom_nonneg(a: PrimExpr, facts: Facts) -> bool:
    """Whether an atom (a size, a product or quotient of non-negative values) is >= 0."""
    if isinstance(a, Var):
        return a in facts.nonneg
    if isinstance(a, Mul):
        return _nonneg(a.a, facts) and _nonneg(a.b, facts)
    if isinstance(a, FloorDiv) and isinstance(a.b, IntImm) and a.b.value > 0:
        return _nonneg(a.a, facts)
    if isinstance(a, FloorMod) and isinstance(a.b, IntImm) and a.b.value > 0:
        return True
    if isinstance(a, Cast) and _dt.is_integer(a.dtype) and _dt.is_integer(a.value.dtype):
        return _dt.bits(a.dtype) >= _dt.bits(a.value.dtype) and _nonneg(a.value, facts)
    return False


def _direction(e: PrimExpr, var: Var, facts: Facts) -> Optional[int]:
    """+1 when ``e`` grows with ``var``, -1 when it shrinks, 0 when it does not use it, None when
    unknown (the other factor of a product may be negative, ``%`` wraps)."""
    if var not in free_vars(e):
        return 0
    if e is var:
        return 1
    if isinstance(e, Cast) and _dt.is_integer(e.dtype) and _dt.is_integer(e.value.dtype):
        return _direction(e.value, var, facts) if _dt.bits(e.dtype) >= _dt.bits(e.value.dtype) else None
    if isinstance(e, (Add, Sub)):
        a, b = _direction(e.a, var, facts), _direction(e.b, var, facts)
        if a is None or b is None:
            return None
        b = -b if isinstance(e, Sub) else b
        return None if a and b and a != b else (a or b)
    if isinstance(e, Mul):
        for x, y in ((e.a, e.b), (e.b, e.a)):
            if var not in free_vars(y):
                d = _direction(x, var, facts)
                if d is None or isinstance(y, IntImm) and y.value == 0:
                    return None if d is None else 0
                if isinstance(y, IntImm):
                    return d if y.value > 0 else -d
                return d if _nonneg(y, facts) else None
        return None
    if isinstance(e, FloorDiv) and isinstance(e.b, IntImm) and e.b.value > 0:
        return _direction(e.a, var, facts)
    if isinstance(e, FloorMod) and var not in free_vars(e.b) and _bounded_divisor(e.b, facts):
        return 0  # only its range [0, b - 1] is used (_nonneg)
    if isinstance(e, Call) and e.op in ("shift_left", "shift_right") and var not in free_vars(e.args[0]):
        d = _direction(e.args[1], var, facts)  # a non-negative value shifted further
        if d is None or not _nonneg(e.args[0], facts):
            return None
        return d if e.op == "shift_left" else -d
    return None


def _extreme(e: PrimExpr, facts: Facts, largest: bool) -> Optional[PrimExpr]:
    """``e`` at its largest (or smallest) over the loops, or None where its direction in a loop
    variable is unknown."""
    for var, lo, extent in reversed(facts.loops):  # inner bounds may use outer variables
        atoms: dict = {}
        terms, _ = _linear(e, atoms)  # terms that cancel do not count
        d = 0
        for k, c in terms.items():
            da = _direction(atoms[k], var, facts)
            if da is None:
                return None
            da = da if c > 0 else -da
            if da and d and da != d:
                return None
            d = d or da
        if d:
            top = Sub(Add(_i64(lo), _i64(extent)), IntImm("int64", 1))
            e = substitute(e, {var: top if (d > 0) == largest else _i64(lo)})
    return e


def _comparisons(guard: PrimExpr) -> list[tuple[PrimExpr, PrimExpr, int]]:
    """The conjuncts of ``guard`` as ``(small, large, gap)``: ``small + gap <= large``."""
    if isinstance(guard, Call) and guard.op in ("likely", "unlikely"):
        return _comparisons(guard.args[0])
    if isinstance(guard, And):
        return _comparisons(guard.a) + _comparisons(guard.b)
    if isinstance(guard, (LT, LE)):
        return [(guard.a, guard.b, 1 if isinstance(guard, LT) else 0)]
    if isinstance(guard, (GT, GE)):
        return [(guard.b, guard.a, 1 if isinstance(guard, GT) else 0)]
    if isinstance(guard, EQ):
        return [(guard.a, guard.b, 0), (guard.b, guard.a, 0)]
    if isinstance(guard, Not) and isinstance(guard.a, (LT, LE, GT, GE)):
        flipped = {LT: GE, LE: GT, GT: LE, GE: LT}[type(guard.a)]
        return _comparisons(flipped(guard.a.a, guard.a.b))
    if isinstance(guard, Not) and isinstance(guard.a, Or):  # not (a or b) = not a and not b
        return _comparisons(Not(guard.a.a)) + _comparisons(Not(guard.a.b))
    return []


def _least_nonneg(e: PrimExpr, facts: Facts) -> bool:
    lowest = _extreme(e, facts, largest=False)
    return lowest is not None and _nonneg(lowest, facts)


def _i64(e: PrimExpr) -> PrimExpr:
    if isinstance(e, IntImm):
        return IntImm("int64", e.value)
    return e if e.dtype == "int64" else Cast("int64", e)


def _constant_in_bounds(index: PrimExpr, extent: PrimExpr, facts: Facts, comparisons: list) -> bool:
    """Over loops of constant bounds, each narrowed by the conditions linear in it alone
    (``ko + 2 < 3``), whether the index's interval stays inside a constant extent."""
    if not isinstance(extent, IntImm):
        return False
    ranges = {
        v: (lo.value, lo.value + n.value - 1)
        for v, lo, n in facts.loops
        if isinstance(lo, IntImm) and isinstance(n, IntImm) and n.value > 0
    }
    by_key = {expr_key(v): v for v in ranges}
    for small, large, gap in comparisons:  # large - small - gap >= 0
        terms, const = _linear(Sub(Sub(large, small), gap), {})
        if len(terms) != 1 or next(iter(terms)) not in by_key:
            continue
        key, k = next(iter(terms.items()))
        v = by_key[key]
        lo, hi = ranges[v]
        bound = -const / k  # k * v + const >= 0
        lo, hi = (max(lo, math.ceil(bound)), hi) if k > 0 else (lo, min(hi, math.floor(bound)))
        if lo > hi:
            return True  # the condition never holds: the access never runs
        ranges[v] = (lo, hi)
    span = interval(index, ranges)
    return span is not None and 0 <= span[0] and span[1] < extent.value


def _value_ranges(facts: Facts, exprs: list) -> dict:
    """A range for every variable of ``exprs``: a loop variable's from its bounds, evaluated with
    every other variable anywhere in its dtype (sizes from 0); None where none is known."""
    ranges: dict = {}

    def whole(v: Var) -> tuple[int, int]:
        least, most = _dt.integer_range(v.dtype) if _dt.is_integer(v.dtype) else (0, -1)
        return (max(least, 0), most) if v in facts.nonneg else (least, most)

    for var, lo, extent in facts.loops:  # outer first: inner bounds may name outer variables
        for x in (lo, extent):
            for v in free_vars(x):
                ranges.setdefault(v, whole(v))
        first, count = interval(lo, ranges), interval(extent, ranges)
        if first is not None and count is not None:
            ranges[var] = (first[0], first[1] + max(count[1], 1) - 1)
    for e in exprs:
        for v in free_vars(e):
            ranges.setdefault(v, whole(v))
    return ranges


def _computed_as_written(e: PrimExpr, ranges: dict) -> bool:
    """Whether no ``+ - *`` of integer ``e`` can leave its dtype over ``ranges``: then the value
    the code computes (which wraps) is the value a proof reasons about. A value read from memory
    or returned by a call may be anything its dtype holds."""
    return _span(e, ranges) is not None


def _span(e: PrimExpr, ranges: dict) -> Optional[tuple[int, int]]:
    """The values of ``e`` (anything its dtype holds where unknown), None when an arithmetic
    step may wrap."""
    whole = _dt.integer_range(e.dtype) if _dt.is_integer(e.dtype) else None
    if isinstance(e, IntImm):
        return (e.value, e.value)
    if isinstance(e, Var):
        return ranges.get(e, whole)
    if isinstance(e, (Add, Sub, Mul, Min, Max)) or (isinstance(e, (FloorDiv, FloorMod)) and isinstance(e.b, IntImm)):
        a, b = _span(e.a, ranges), _span(e.b, ranges)
        if a is None or b is None or whole is None:
            return None
        if isinstance(e, (FloorDiv, FloorMod)):
            d = e.b.value
            if d <= 0:
                return whole
            return (a[0] // d, a[1] // d) if isinstance(e, FloorDiv) else (0, d - 1)
        if isinstance(e, Add):
            lo, hi = a[0] + b[0], a[1] + b[1]
        elif isinstance(e, Sub):
            lo, hi = a[0] - b[1], a[1] - b[0]
        elif isinstance(e, Mul):
            products = [x * y for x in a for y in b]
            lo, hi = min(products), max(products)
        else:
            pick = min if isinstance(e, Min) else max
            lo, hi = pick(a[0], b[0]), pick(a[1], b[1])
        return (lo, hi) if whole[0] <= lo and hi <= whole[1] else None
    if isinstance(e, Call) and e.op == "shift_left":
        return None
    if isinstance(e, Cast) and _dt.is_integer(e.value.dtype) and whole is not None:
        if _dt.bits(e.dtype) < _dt.bits(e.value.dtype) or _dt.is_uint(e.dtype) != _dt.is_uint(e.value.dtype):
            return whole  # an atom of the proof: whatever value the code computes
        return _span(e.value, ranges)  # the proof looks through a widening cast: its operand must not wrap
    return whole


def computed_exactly(index: PrimExpr, extent: PrimExpr, facts: Facts) -> bool:
    """Whether the value the code computes for ``index`` (which wraps in its dtype) is the exact
    value a proof reasons about wherever that lies in ``[0, extent)``. ``+ - *`` wrap as ring
    operations, so they give the exact value when ``[0, extent)`` fits the dtype; any other step
    (a division, a widening cast) needs operands that cannot wrap. ``i * 400`` in int16 for
    ``i = 100`` is -25536, not 40000; for ``i < 12`` it cannot wrap."""
    if not _dt.is_integer(index.dtype):
        return True
    ranges = _value_ranges(facts, [index, extent])
    if _computed_as_written(index, ranges):
        return True  # no step can wrap
    top = _span(extent, ranges)
    if top is None or top[1] - 1 > _dt.integer_range(index.dtype)[1]:
        return False
    return _ring_of_atoms(index, ranges)


def _ring_of_atoms(e: PrimExpr, ranges: dict) -> bool:
    """Whether ``e`` is ``+ - *`` in its own dtype over atoms whose values are
    computed as written."""
    if isinstance(e, (Add, Sub, Mul)) and e.a.dtype == e.dtype == e.b.dtype:
        return _ring_of_atoms(e.a, ranges) and _ring_of_atoms(e.b, ranges)
    return isinstance(e, (IntImm, Var)) or _computed_as_written(e, ranges)


def in_bounds(index: PrimExpr, extent: PrimExpr, facts: Facts) -> bool:
    """Whether ``0 <= index < extent`` is proven wherever the access runs (see the module
    docstring); False means "not proven", not "out of bounds"."""
    # loop variables starting at a non-negative value are non-negative too (for products)
    nonneg = facts.nonneg | {v for v, lo, _ in facts.loops if _nonneg(lo, facts)}
    facts = Facts(facts.loops, facts.guards, nonneg)
    one = IntImm("int64", 1)
    index = _i64(index)
    room = Sub(Sub(_i64(extent), one), index)
    # a condition is a fact about the values the code computes: about the values the proof
    # reasons about only where neither side can wrap (`b * 8 < 64` holds for b = 2**28 in int32)
    compared = [
        (small, large, gap)
        for g in facts.guards
        for small, large, gap in _comparisons(g)
        if _dt.is_integer(small.dtype) and _dt.is_integer(large.dtype)
    ]
    ranges = _value_ranges(facts, [x for c in compared for x in c[:2]])
    comparisons = [
        (_i64(small), _i64(large), IntImm("int64", gap))
        for small, large, gap in compared
        if _computed_as_written(small, ranges) and _computed_as_written(large, ranges)
    ]
    if _constant_in_bounds(index, extent, facts, comparisons):
        return True
    # a condition that never holds over the loops (small + gap > large always): the access never runs
    if any(_least_nonneg(Sub(Sub(Add(small, gap), large), one), facts) for small, large, gap in comparisons):
        return True
    # `small + gap <= large` bounds the index from above when room - (large - small - gap) >= 0,
    # from below when index - large + small + gap >= 0
    upper = _least_nonneg(room, facts) or any(
        _least_nonneg(Sub(room, Sub(Sub(large, small), gap)), facts) for small, large, gap in comparisons
    )
    lower = _least_nonneg(index, facts) or any(
        _least_nonneg(Add(Sub(index, large), Add(small, gap)), facts) for small, large, gap in comparisons
    )
    return upper and lower


__all__ = ["Facts", "computed_exactly", "in_bounds"]
