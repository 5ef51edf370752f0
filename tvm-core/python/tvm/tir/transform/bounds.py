"""Compile-time bounds check of buffer accesses whose index range is known.

An index made of constants and of loop variables with constant bounds (serial, parallel,
unrolled, vectorized and thread-bound loops alike) has an interval; when that interval leaves a
constant dimension of the buffer, the access is out of bounds on some iteration, and
:func:`check_constant_bounds` raises :class:`TIRVerifyError` naming the buffer, the dimension,
the range and the extent. Let-bound values of known range are followed, and terms that cancel
(``vi - i * 16`` with ``vi = i * 16 + x``) are cancelled before an access is called out of
bounds. Accesses under an ``if`` whose condition compares variables of known range with
constants (``if i < 64``, ``i == 0``, also in ``T.likely``, negated, joined by ``and``) are
judged within the ranges it leaves, and those of its ``else`` branch within the ranges its
negation leaves; under any other condition (``if``, ``T.Select``, ``T.if_then_else``) only the
dimensions whose index shares no variable with the condition are judged (the condition may be
what keeps the others in bounds), except where the condition bounds a linear combination of
loop variables that takes every value in its range (``j * 8 + k < 60``) and the index is a
multiple of it plus other loop variables: then its range under the condition is known and
attained. Nothing is judged under a condition that reads memory. Indices the
interval arithmetic cannot follow (symbolic sizes, loads) are left to the checks of the
arguments' shapes at the call and, on CPU targets, to
:func:`~tvm.tir.transform.runtime_bounds.check_indices_at_run_time`.
"""

from __future__ import annotations

from typing import Optional

from tvm.tir import dtype as _dt
from tvm.tir.analysis import any_node, free_vars, leaves_loop_early, linear_form
from tvm.tir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
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
    Not,
    Or,
    PrimExpr,
    Select,
    Sub,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprVisitor, substitute
from tvm.tir.op import address_element
from tvm.tir.stmt import BufferStore, For, IfThenElse, LetStmt

from .verify import TIRVerifyError, with_span

Interval = tuple[int, int]


def _interval(
    e: PrimExpr, ranges: dict[Var, Interval], lets: Optional[dict] = None, memo: Optional[dict] = None
) -> Optional[Interval]:
    """The smallest and largest value ``e`` takes over ``ranges`` (None when unknown); a variable
    bound by a let in ``lets`` has the interval of its value over the same ranges (``memo``: each
    let's, found once, where a chain of lets uses each variable twice)."""
    if isinstance(e, IntImm):
        return (e.value, e.value)
    if isinstance(e, Var):
        if e in ranges:
            return ranges[e]
        if not lets or e not in lets:
            return None
        memo = {} if memo is None else memo
        if e not in memo:
            memo[e] = _interval(lets[e], ranges, lets, memo)
        return memo[e]
    if isinstance(e, Cast):
        inner = _interval(e.value, ranges, lets, memo) if e.dtype.startswith(("int", "uint")) else None
        if inner is None:
            return None
        least, most = _dt.integer_range(e.dtype)
        return inner if least <= inner[0] and inner[1] <= most else None  # else it wraps
    if isinstance(e, Call):
        return _call_interval(e, ranges, lets, memo)
    if not isinstance(e, (Add, Sub, Mul, FloorDiv, FloorMod, Min, Max)):
        return None
    a, b = _interval(e.a, ranges, lets, memo), _interval(e.b, ranges, lets, memo)
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


def _call_interval(
    e: Call, ranges: dict[Var, Interval], lets: Optional[dict], memo: Optional[dict] = None
) -> Optional[Interval]:
    """Shifts by a constant, and bitwise and / or / xor of non-negative values (swizzled
    shared-memory indices)."""
    if e.op in ("shift_left", "shift_right") and len(e.args) == 2 and isinstance(e.args[1], IntImm):
        a, c = _interval(e.args[0], ranges, lets, memo), e.args[1].value
        if a is None or not 0 <= c < 63:
            return None
        return (a[0] << c, a[1] << c) if e.op == "shift_left" else (a[0] >> c, a[1] >> c)
    if e.op not in ("bitwise_and", "bitwise_or", "bitwise_xor") or len(e.args) != 2:
        return None
    a, b = _interval(e.args[0], ranges, lets, memo), _interval(e.args[1], ranges, lets, memo)
    if a is None or b is None or a[0] < 0 or b[0] < 0:
        return None
    if e.op == "bitwise_and":
        return (0, min(a[1], b[1]))
    return (0, (1 << max(a[1], b[1]).bit_length()) - 1)


def interval(e: PrimExpr, ranges: dict[Var, Interval]) -> Optional[Interval]:
    """The smallest and largest value of ``e`` over the constant ``ranges`` of its variables
    (None when some part of it has no known range)."""
    return _interval(e, ranges)


def _cancelled_interval(e: PrimExpr, ranges: dict[Var, Interval], lets: dict) -> Optional[Interval]:
    """The interval of ``e`` with its let variables expanded and equal terms cancelled: ``vi - i *
    16`` where ``vi = i * 16 + x`` is ``x``'s range, not the difference of two ranges."""
    for _ in range(16):  # lets of lets (block iteration variables of nested blocks)
        inner = {v: lets[v] for v in free_vars(e) if v in lets}
        if not inner:
            break
        e = substitute(e, inner)
    exprs: dict = {}
    terms, lo = linear_form(e, exprs)
    hi = lo
    for key, coeff in terms.items():
        span = _interval(exprs[key], ranges, lets)
        if span is None:
            return None
        lo, hi = lo + min(span[0] * coeff, span[1] * coeff), hi + max(span[0] * coeff, span[1] * coeff)
    return lo, hi


_FLIPPED = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ, NE: NE}  # a op b == b flipped(op) a
_NEGATED = {LT: GE, LE: GT, GT: LE, GE: LT, EQ: NE, NE: EQ}


def _merge(a: dict[Var, Interval], b: dict[Var, Interval]) -> Optional[dict[Var, Interval]]:
    """Both sets of ranges at once (None when some variable has none left)."""
    merged = dict(a)
    for v, (lo, hi) in b.items():
        old = merged.get(v, (lo, hi))
        merged[v] = (max(lo, old[0]), min(hi, old[1]))
        if merged[v][0] > merged[v][1]:
            return None
    return merged


def _narrowed(
    cond: PrimExpr, ranges: dict[Var, Interval], lets: dict, negate: bool = False
) -> Optional[dict[Var, Interval]]:
    """The ranges of variables where ``cond`` holds (where it fails, with ``negate``: the
    ``else`` branch) when it is a conjunction of comparisons of a variable of known range with a
    constant (``i < 64``, ``i == 0``, ``T.likely(...)``, ``not``); None for any other condition,
    or one that leaves no value (then the branch is not judged)."""
    if isinstance(cond, Call) and cond.op in ("likely", "unlikely") and cond.args:
        return _narrowed(cond.args[0], ranges, lets, negate)
    if isinstance(cond, Not):
        return _narrowed(cond.a, ranges, lets, not negate)
    if isinstance(cond, And if not negate else Or):  # not (a or b) == not a and not b
        a, b = _narrowed(cond.a, ranges, lets, negate), _narrowed(cond.b, ranges, lets, negate)
        return None if a is None or b is None else _merge(a, b)
    op = type(cond)
    if op not in _NEGATED:
        return None
    var, const = cond.a, cond.b
    if isinstance(var, IntImm) and isinstance(const, Var):  # 64 > i
        var, const, op = const, var, _FLIPPED[op]
    known = _interval(var, ranges, lets) if isinstance(var, Var) else None
    if known is None or not isinstance(const, IntImm):
        return None
    op = _NEGATED[op] if negate else op
    lo, hi = known
    c = const.value
    if op is NE:  # an interval only when c is an end of the range (a hole inside is not one)
        if lo < c < hi:
            return None
        lo, hi = (lo + 1 if c == lo else lo), (hi - 1 if c == hi else hi)
    else:
        lo, hi = _compared(op, lo, hi, c)
    return {var: (lo, hi)} if lo <= hi else None


def _compared(op: type, lo: int, hi: int, c: int) -> Interval:
    """The part of ``[lo, hi]`` whose values ``x`` satisfy ``x op c`` (empty when lo > hi)."""
    return {
        LT: (lo, min(hi, c - 1)),
        LE: (lo, min(hi, c)),
        GT: (max(lo, c + 1), hi),
        GE: (max(lo, c), hi),
        EQ: (max(lo, c), min(hi, c)),
    }[op]


#: A condition ``e op C`` on a linear combination ``e`` of loop variables: its coefficients by
#: variable, the constant of ``e``, and the values of ``e`` the condition leaves (all attained).
LinearGuard = tuple[dict[Var, int], int, Interval]


def _linear_vars(e: PrimExpr, ranges: dict[Var, Interval]) -> Optional[tuple[dict[Var, int], int]]:
    """``e`` as ``{loop variable: coefficient}`` and a constant, when it is a linear combination
    of variables of known range; None otherwise."""
    exprs: dict = {}
    terms, const = linear_form(e, exprs)
    out: dict[Var, int] = {}
    for key, coeff in terms.items():
        v = exprs.get(key)
        if not isinstance(v, Var) or v not in ranges:
            return None
        out[v] = coeff
    return out, const


def _dense(coeffs: dict[Var, int], ranges: dict[Var, Interval]) -> bool:
    """Whether ``sum(c * v)`` takes every integer between its least and largest value (positive
    coefficients, each at most one more than what the smaller terms span)."""
    span = 0
    for v, c in sorted(coeffs.items(), key=lambda kv: kv[1]):
        if c <= 0 or c > span + 1:
            return False
        span += c * (ranges[v][1] - ranges[v][0])
    return True


def _linear_guard(cond: PrimExpr, ranges: dict[Var, Interval]) -> Optional[LinearGuard]:
    """``cond`` as a :data:`LinearGuard` when it compares a dense linear combination of loop
    variables with a constant (``j * 8 + k < 60``); None otherwise (or when nothing passes)."""
    op = type(cond)
    if op not in (LT, LE, GT, GE):
        return None
    e, c = cond.a, cond.b
    if isinstance(e, IntImm) and not isinstance(c, IntImm):
        e, c, op = c, e, _FLIPPED[op]
    form = _linear_vars(e, ranges) if isinstance(c, IntImm) else None
    if form is None or not form[0] or not _dense(form[0], ranges):
        return None
    coeffs, const = form
    lo = const + sum(k * ranges[v][0] for v, k in coeffs.items())
    hi = const + sum(k * ranges[v][1] for v, k in coeffs.items())
    lo, hi = _compared(op, lo, hi, c.value)
    return (coeffs, const, (lo, hi)) if lo <= hi else None


def _guarded_interval(index: PrimExpr, guard: LinearGuard, ranges: dict[Var, Interval]) -> Optional[Interval]:
    """The values ``index`` takes where ``guard`` holds, all attained, when it is ``q * e`` plus
    a linear combination of other loop variables (``e`` the guard's expression); else None."""
    form = _linear_vars(index, ranges)
    if form is None:
        return None
    coeffs, const = form
    gcoeffs, gconst, (elo, ehi) = guard
    shared = [v for v in coeffs if v in gcoeffs]
    if len(shared) != len(gcoeffs) or coeffs[shared[0]] % gcoeffs[shared[0]]:
        return None
    q = coeffs[shared[0]] // gcoeffs[shared[0]]
    if any(coeffs[v] != q * gcoeffs[v] for v in shared):
        return None
    lo = hi = const - q * gconst
    lo, hi = lo + min(q * elo, q * ehi), hi + max(q * elo, q * ehi)
    for v, k in coeffs.items():
        if v not in gcoeffs:
            lo, hi = lo + min(k * ranges[v][0], k * ranges[v][1]), hi + max(k * ranges[v][0], k * ranges[v][1])
    return lo, hi


class _BoundsChecker(StmtExprVisitor):
    def __init__(self, func: PrimFunc) -> None:
        self.func = func
        self.ranges: dict[Var, Interval] = {}
        self.lets: dict[Var, PrimExpr] = {}
        self.loops: dict[Var, For] = {}
        # the variables of each enclosing condition not judged by ranges; None: it reads memory
        self.guards: list[Optional[set[Var]]] = []
        self.linear_guards: list[Optional[LinearGuard]] = []  # beside each guard, when it is one
        self.store_span = None  # of the store whose value is being judged (loads have no span)

    def visit_For(self, s: For) -> None:
        lo, n = _interval(s.min, self.ranges, self.lets), _interval(s.extent, self.ranges, self.lets)
        known = lo is not None and lo[0] == lo[1] and n is not None and n[0] == n[1] and n[0] > 0
        known = known and not leaves_loop_early(s.body)  # after a break, later iterations never run
        if known:
            self.ranges[s.loop_var] = (lo[0], lo[0] + n[0] - 1)
            self.loops[s.loop_var] = s
        self.visit_stmt(s.body)
        self.ranges.pop(s.loop_var, None)
        self.loops.pop(s.loop_var, None)

    def _vars(self, e: PrimExpr) -> set[Var]:
        """The variables ``e`` depends on, through the values of let-bound ones."""
        out: set[Var] = set()
        for v in free_vars(e):
            out |= self._vars(self.lets[v]) if v in self.lets else {v}
        return out

    def _guarded(self, cond: PrimExpr, *parts, linear: Optional[LinearGuard] = None) -> None:
        reads = any_node(cond, lambda n: isinstance(n, (BufferLoad, Call)) and not _is_pure_hint(n))
        names = None if reads else self._vars(cond)
        self.guards.append(names or None)  # a constant condition may be false: what it guards, dead
        self.linear_guards.append(linear)
        try:
            for p in parts:
                if p is None:
                    continue
                if isinstance(p, PrimExpr):
                    self.visit_expr(p)
                else:
                    self.visit_stmt(p)
        finally:
            self.guards.pop()
            self.linear_guards.pop()

    def visit_LetStmt(self, s: LetStmt) -> None:
        self.visit_expr(s.value)
        self.lets[s.var] = s.value  # its uses are judged through its value, over the ranges there
        self.visit_stmt(s.body)
        self.lets.pop(s.var, None)

    def visit_IfThenElse(self, s: IfThenElse) -> None:
        self.visit_expr(s.condition)
        narrowed = _narrowed(s.condition, self.ranges, self.lets)
        if narrowed is None:
            self._guarded(s.condition, s.then_case, linear=_linear_guard(s.condition, self.ranges))
            self._guarded(s.condition, s.else_case)
            return
        self._within(narrowed, s.then_case)
        if s.else_case is not None:
            otherwise = _narrowed(s.condition, self.ranges, self.lets, negate=True)
            if otherwise is None:
                self._guarded(s.condition, s.else_case)
            else:
                self._within(otherwise, s.else_case)

    def _within(self, narrowed: dict[Var, Interval], body) -> None:
        """Judge ``body`` with the ranges a condition leaves (it only bounds variables)."""
        outer = dict(self.ranges)
        self.ranges.update(narrowed)
        self.visit_stmt(body)
        self.ranges = outer

    def visit_Select(self, e: Select) -> None:
        self.visit_expr(e.condition)
        self._guarded(e.condition, e.true_value, e.false_value)

    def visit_And(self, e: And) -> None:
        self._evaluated_when(e.a, e.b, holds=True)  # i < 8 and A[i] > 0: A[i] only where i < 8

    def visit_Or(self, e: Or) -> None:
        self._evaluated_when(e.a, e.b, holds=False)  # i >= 8 or A[i] > 0: A[i] only where i < 8

    def _evaluated_when(self, first: PrimExpr, second: PrimExpr, holds: bool) -> None:
        """Judge ``second``, which runs only where ``first`` holds (``and``) or fails (``or``)."""
        self.visit_expr(first)
        narrowed = _narrowed(first, self.ranges, self.lets, negate=not holds)
        if narrowed is None:
            self._guarded(first, second, linear=_linear_guard(first, self.ranges) if holds else None)
            return
        outer = dict(self.ranges)
        self.ranges.update(narrowed)
        try:
            self.visit_expr(second)
        finally:
            self.ranges = outer

    def visit_Call(self, e: Call) -> None:
        load = address_element(e)  # an address, not an access: one past a dimension's end is one
        if e.op == "if_then_else":
            self.visit_expr(e.args[0])
            self._guarded(e.args[0], *e.args[1:])
        elif load is not None:
            for index in load.indices:
                self.visit_expr(index)
            self.check(load.buffer, load.indices, load, past_end=1)
        else:
            super().visit_Call(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self.check(s.buffer, s.indices, s)
        outer, self.store_span = self.store_span, s.span or self.store_span
        try:
            super().visit_BufferStore(s)
        finally:
            self.store_span = outer

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self.check(e.buffer, e.indices, e)
        super().visit_BufferLoad(e)

    def check(self, buf: Buffer, indices: tuple, node: object, past_end: int = 0) -> None:
        """TIRVerifyError when an index of this access of ``buf`` provably leaves its extent
        (``past_end`` 1: an address, which may be where a dimension ends)."""
        if any(g is None for g in self.guards):
            return
        guard_vars = set().union(*self.guards) if self.guards else set()
        for dim, (index, extent) in enumerate(zip(indices, buf.shape)):
            if not isinstance(extent, IntImm):
                continue
            limit = extent.value + past_end
            used = self._vars(index)
            if guard_vars and used & guard_vars:
                span = self._under_linear_guard(index, used)
                if span is None or (0 <= span[0] and span[1] < limit):
                    continue  # a condition on the index's variables may be what keeps it in bounds
                self._out_of_bounds(buf, dim, extent, index, span, node)
            span = _interval(index, self.ranges, self.lets)
            if span is None or (0 <= span[0] and span[1] < limit):
                continue
            span = _cancelled_interval(index, self.ranges, self.lets) or span
            if 0 <= span[0] and span[1] < limit:
                continue
            self._out_of_bounds(buf, dim, extent, index, span, node)

    def _under_linear_guard(self, index: PrimExpr, used: set[Var]) -> Optional[Interval]:
        """The values ``index`` (of variables ``used``) takes when the one enclosing condition on
        its variables is a :data:`LinearGuard` it is a multiple of plus other loop variables (all
        attained)."""
        sharing = [i for i, g in enumerate(self.guards) if g and g & used]
        if len(sharing) != 1 or self.linear_guards[sharing[0]] is None or any(v in self.lets for v in free_vars(index)):
            return None
        return _guarded_interval(index, self.linear_guards[sharing[0]], self.ranges)

    def _out_of_bounds(self, buf: Buffer, dim: int, extent: IntImm, index: PrimExpr, span: Interval, node) -> None:
        """Raise the error for ``index`` (taking ``span``) in dimension ``dim`` of ``buf``."""
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
                getattr(node, "span", None) or self.store_span or (self.loops[loops[0]].span if loops else None),
            )
        )


def _is_pure_hint(n: object) -> bool:
    """``T.likely`` / ``T.unlikely``: a condition's hint, not a read."""
    return isinstance(n, Call) and n.op in ("likely", "unlikely")


def check_constant_bounds(func: PrimFunc) -> PrimFunc:
    """Raise :class:`TIRVerifyError` when an unconditional access of ``func`` provably leaves its
    buffer (see the module docstring); return ``func`` unchanged otherwise."""
    _BoundsChecker(func).visit_stmt(func.body)
    return func
