"""Shrink each shared and local allocation to the region its accesses touch.

Apache TVM's schedules allocate a shared or local buffer with the shape of the whole tensor it
caches (``A_shared = T.alloc_buffer((512, 4096), scope="shared")``) and index it with the
tensor's coordinates; each block only touches a tile of it. Once the allocation sits inside the
launch (:mod:`.placement` moves it there, or a block inside the launch allocated it),
:func:`compact_allocations` gives it the tile's shape, as Apache TVM's compaction does.

For every dimension, each access's index is split into a part fixed for the allocation's
lifetime (the variables bound outside it: block indices; for a local buffer also the thread
indices, since every thread has memory of its own) and a part that varies inside it (loop and
let variables of its body, with constant ranges; for a shared buffer also the thread indices
bound around it, since the block's threads share one copy). When the fixed part is the same at
every access (up to a constant, compared as a linear form, a thread's index spelled the same way
whichever loop binds it, and divisions of fixed parts split where the thread indices' ranges allow:
``(bx * 16 + tx) // 128`` is ``bx // 8`` for ``tx`` below 16) and the varying parts have constant
bounds, the dimension becomes ``max - min + 1`` long and each index ``varying - min``; a buffer
never grows. The serial loops around all its accesses count as fixed too when each of their
iterations writes the buffer before reading it (a tile loaded per step of a reduction loop): it
then holds one iteration's tile; when the accesses' fixed parts then differ (only some use such
a loop's variable), fewer of those loops count. On a CPU target the same holds with no thread
indices. A buffer whose handle is used other than by loads and stores, one of whose
elements is handed to a call that is not arithmetic (``T.address_of(S[i])``, a backend's matrix
load: the element may stand for its address), or whose accesses cannot be bounded, keeps its
shape.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Any, Optional

from tvm.tir.analysis import free_vars, linear_form, uses_handle
from tvm.tir.expr import (
    FRAGMENT_SCOPES,
    Add,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    PrimExpr,
    Sub,
    Var,
    is_per_thread,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, StmtExprVisitor, post_order_visit, substitute
from tvm.tir.op import INTRINSICS, binary, is_reinterpret
from tvm.tir.stmt import Allocate, BufferStore, Evaluate, For, ForKind, LetStmt, SeqStmt

from .bounds import interval
from .fragments import FRAGMENT_OPS, is_fragment_op, only_writes, reads_and_writes, tile_accesses
from .simplify import simplify_expr
from .verify import is_thread_index_loop

_SCOPES = ("shared", "shared.dyn", "local", *FRAGMENT_SCOPES)


@dataclass
class _Range:
    """An index as ``fixed + varying`` with ``varying`` in ``[lo, hi]`` (None: no such part)."""

    fixed: Optional[PrimExpr]
    varying: Optional[PrimExpr]
    lo: int
    hi: int


def _plus(a: Optional[PrimExpr], b: Optional[PrimExpr], op: str = "add") -> Optional[PrimExpr]:
    if b is None:
        return a
    if a is None:
        return b if op == "add" else binary("mul", b, -1)
    return binary(op, a, b)


def _single_value(s: For) -> Optional[IntImm]:
    """The one value of ``s``'s variable when it runs one iteration from a constant, else None."""
    one = isinstance(s.min, IntImm) and isinstance(s.extent, IntImm) and s.extent.value == 1
    return s.min if one else None


class _Bounds:
    """Ranges of index expressions inside an allocation: ``loops`` maps its body's loop
    variables to constant (lo, hi), ``lets`` its let variables to their values; variables in
    ``unbounded`` (loops of non-constant range) make an index unboundable; any other variable is
    fixed for the allocation's lifetime."""

    def __init__(self) -> None:
        self.loops: dict[Var, tuple[int, int]] = {}
        self.lets: dict[Var, PrimExpr] = {}
        self.unbounded: set[Var] = set()
        self.constants: dict[Var, IntImm] = {}  # variables of one-iteration loops

    def of(self, e: PrimExpr) -> Optional[_Range]:
        if self.constants and not isinstance(e, (Var, IntImm)):
            used = {v: self.constants[v] for v in free_vars(e) if v in self.constants}
            e = simplify_expr(substitute(e, used)) if used else e
        if isinstance(e, Var) and e in self.constants:
            e = self.constants[e]
        if isinstance(e, IntImm):
            return _Range(None, e, e.value, e.value)
        if isinstance(e, Var):
            if e in self.loops:
                lo, hi = self.loops[e]
                return _Range(None, e, lo, hi)
            if e in self.lets:
                return self.of(self.lets[e])
            return None if e in self.unbounded else _Range(e, None, 0, 0)
        if not any(v in self.loops or v in self.lets or v in self.unbounded for v in free_vars(e)):
            return _Range(e, None, 0, 0)  # fixed for the allocation's lifetime, whatever its form
        if isinstance(e, Cast):
            r = self.of(e.value)
            return _Range(None, e, r.lo, r.hi) if r is not None and r.fixed is None else None
        if isinstance(e, (Add, Sub)):
            return self._sum(e)
        if isinstance(e, Mul):
            return self._product(e)
        return self._varying_only(e)

    def _sum(self, e: PrimExpr) -> Optional[_Range]:
        a, b = self.of(e.a), self.of(e.b)
        if a is None or b is None:
            return None
        if isinstance(e, Add):
            return _Range(_plus(a.fixed, b.fixed), _plus(a.varying, b.varying), a.lo + b.lo, a.hi + b.hi)
        return _Range(_plus(a.fixed, b.fixed, "sub"), _plus(a.varying, b.varying, "sub"), a.lo - b.hi, a.hi - b.lo)

    def _product(self, e: Mul) -> Optional[_Range]:
        if isinstance(e.b, IntImm):
            const, other = e.b, e.a
        elif isinstance(e.a, IntImm):
            const, other = e.a, e.b
        else:
            return self._varying_only(e)
        r, k = self.of(other), const.value
        if r is None:
            return None
        lo, hi = sorted((r.lo * k, r.hi * k))
        scale = lambda x: None if x is None else binary("mul", x, k)  # noqa: E731
        return _Range(scale(r.fixed), scale(r.varying), lo, hi)

    def _varying_only(self, e: PrimExpr) -> Optional[_Range]:
        """Division, remainder, min and max: bounded when their operands have no fixed part
        (a remainder by a constant always is)."""
        if isinstance(e, (FloorDiv, FloorMod, Div, Mod)) and isinstance(e.b, IntImm) and e.b.value > 0:
            k, a = e.b.value, self.of(e.a)
            if isinstance(e, FloorMod) and (a is None or a.fixed is not None):
                return _Range(None, e, 0, k - 1)
            if isinstance(e, FloorDiv) and a is not None and a.fixed is not None:
                return _divided(a, k)
            if a is None or a.fixed is not None or (isinstance(e, (Div, Mod)) and a.lo < 0):
                return None
            if isinstance(e, (FloorDiv, Div)):
                return _Range(None, e, a.lo // k, a.hi // k)
            if a.lo // k == a.hi // k:
                return _Range(None, e, a.lo % k, a.hi % k)
            return _Range(None, e, 0, k - 1)
        if isinstance(e, Mul):
            a, b = self.of(e.a), self.of(e.b)
            if a is None or b is None or a.fixed is not None or b.fixed is not None:
                return None
            corners = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
            return _Range(None, e, min(corners), max(corners))
        if isinstance(e, (Min, Max)):
            a, b = self.of(e.a), self.of(e.b)
            if a is None or b is None or a.fixed is not None or b.fixed is not None:
                return None
            pick = min if isinstance(e, Min) else max
            return _Range(None, e, pick(a.lo, b.lo), pick(a.hi, b.hi))
        return None


def _divided(a: _Range, k: int) -> Optional[_Range]:
    """``(fixed + varying) // k`` when every coefficient of the fixed part is a multiple of ``k``:
    ``fixed / k + varying // k`` (``(bx * 64 + ty * 16 + i) // 16`` is ``bx * 4 + ty + i // 16``)."""
    exprs: dict = {}
    terms, const = linear_form(a.fixed, exprs)
    if const % k or any(c % k for c in terms.values()):
        return None
    fixed: PrimExpr = IntImm(a.fixed.dtype, const // k)
    for key, c in terms.items():
        fixed = binary("add", fixed, binary("mul", exprs[key], c // k))
    varying = binary("floordiv", a.varying, k) if a.varying is not None else None
    return _Range(fixed, varying, a.lo // k, a.hi // k)


class _Accesses(StmtExprVisitor):
    """Every access of ``buf`` in an allocation's body (its indices and the serial loops around
    it), the ranges of the body's loops and lets, and whether the handle escapes or another view
    of the memory is used (then ``ok`` is False)."""

    def __init__(self, buf: Buffer):
        self.buf, self.bounds, self.ok = buf, _Bounds(), True
        self.accesses: list[tuple[tuple, tuple]] = []  # (indices, enclosing serial loops)
        self.writes: list[bool] = []  # per access: a store (else a load)
        self.fragment_writes = False  # inside a fragment operation that writes the buffer
        self.serial: list[For] = []
        self.thread_vars: set[Var] = set()  # threadIdx loops of the body: fixed for a local buffer
        self.tag_vars: dict[str, Var] = {}
        self.same_thread: dict[Var, Var] = {}

    def visit_For(self, s: For) -> None:
        single = _single_value(s)
        if single is not None and s.kind is not ForKind.THREAD_BINDING:
            self.bounds.constants[s.loop_var] = single
        elif isinstance(s.min, IntImm) and isinstance(s.extent, IntImm) and s.extent.value > 0:
            self.bounds.loops[s.loop_var] = (s.min.value, s.min.value + s.extent.value - 1)
        else:
            self.bounds.unbounded.add(s.loop_var)
        if is_thread_index_loop(s):
            self.thread_vars.add(s.loop_var)  # every thread runs the kernel: local memory is its own
            # sibling loops bound to one tag are the same hardware index; a tag of extent 1 is 0
            first = self.tag_vars.setdefault(s.thread_tag, s.loop_var)
            self.same_thread[s.loop_var] = single if single is not None else first
        serial = s.kind in (ForKind.SERIAL, ForKind.UNROLLED)
        self.serial += [s] if serial else []
        try:
            super().visit_For(s)
        finally:
            del self.serial[len(self.serial) - serial :]

    def visit_LetStmt(self, s: LetStmt) -> None:
        self.bounds.lets[s.var] = s.value
        super().visit_LetStmt(s)

    def _access(self, buf: Buffer, indices: tuple, write: bool) -> None:
        if buf.data is self.buf.data:
            self.ok = self.ok and buf is self.buf  # another view of the same memory: leave it
            self.accesses.append((indices, tuple(self.serial)))
            self.writes.append(write)

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self._access(e.buffer, e.indices, self.fragment_writes)  # a tile's first or last element
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self._access(s.buffer, s.indices, True)
        super().visit_BufferStore(s)

    def visit_Var(self, e: Var) -> None:
        if e is self.buf.data:
            self.ok = False  # the handle itself escapes (an extern call, a pointer ...)

    def visit_Call(self, e: Call) -> None:
        if e.op in FRAGMENT_OPS:
            outer = self.fragment_writes
            self.fragment_writes = any(w for first, _, w in tile_accesses(e) if first.buffer.data is self.buf.data)
            try:
                super().visit_Call(e)
            finally:
                self.fragment_writes = outer
            return
        if str(e.op).removeprefix("tir.") not in INTRINSICS and not is_reinterpret(e):
            # (fragment operations name each tile by its first and last element: accesses as any other)
            # an element handed to anything but arithmetic may stand for its address (address_of,
            # a backend's matrix loads): the callee may touch the elements after it
            if any(isinstance(a, BufferLoad) and a.buffer.data is self.buf.data for a in e.args):
                self.ok = False
        super().visit_Call(e)


def _written_before_read(loop: For, buf: Buffer) -> bool:
    """Whether every iteration of ``loop`` writes ``buf`` before reading it: the first statement
    of its body that touches ``buf`` only writes it (or is a loop of constant, non-zero extent
    of which this holds), and no store of ``buf`` reads ``buf`` (an accumulator, which carries
    values from one iteration to the next, does)."""
    body = loop.body
    stmts = body.seq if isinstance(body, SeqStmt) else (body,)
    rmw: list = []
    post_order_visit(
        body,
        lambda n: (
            rmw.append(n)
            if isinstance(n, BufferStore)
            and n.buffer.data is buf.data
            and uses_handle(n.value, buf.data, loads_only=True)
            or is_fragment_op(n)
            and reads_and_writes(n, buf.data)
            else None
        ),
    )
    if rmw:
        return False
    first = next((st for st in stmts if uses_handle(st, buf.data)), None)
    if first is None:
        return False
    if isinstance(first, Evaluate) and is_fragment_op(first.value):
        return only_writes(first.value, buf.data)
    if not uses_handle(first, buf.data, loads_only=True):
        return True
    # a loop that runs at least once and writes the buffer before reading it in every iteration
    runs = isinstance(first, For) and isinstance(first.extent, IntImm) and first.extent.value > 0
    return runs and _written_before_read(first, buf)


def _fixed_loops(buf: Buffer, accesses: list[tuple[tuple, tuple]]) -> list:
    """The variables of the serial loops around every access of ``buf`` whose iterations each
    write it before reading it, innermost first: they may count as fixed, so the buffer shrinks
    to one iteration's region (no iteration reads what another wrote; and shared memory is one
    static region per block in every GPU language, so where the allocation is written does not
    change where it lives)."""
    if not accesses:
        return []
    common = list(accesses[0][1])
    for _, loops in accesses[1:]:
        n = 0
        while n < min(len(common), len(loops)) and common[n] is loops[n]:
            n += 1
        del common[n:]
    fixed = []
    for loop in reversed(common):  # innermost first; an outer loop counts only with the inner ones
        if isinstance(loop.extent, IntImm) and loop.extent.value == 1:
            continue  # one iteration: its variable is a constant
        if not _written_before_read(loop, buf):
            break
        fixed.append(loop.loop_var)
    return fixed


def _fixed_form(r: _Range, canonical: dict, ranges: Optional[dict] = None) -> tuple[dict, int]:
    """The linear form of ``r``'s fixed part, each thread index in its canonical spelling and
    its divisions split where ``ranges`` (of thread indices) allow (:class:`_SplitDivisions`)."""
    if r.fixed is None:
        return {}, 0
    fixed = simplify_expr(substitute(r.fixed, canonical)) if canonical else r.fixed
    return linear_form(_SplitDivisions(ranges).visit_expr(fixed) if ranges else fixed)


class _SplitDivisions(StmtExprMutator):
    """``(c * a + b) // (c * m)`` as ``a // m`` and ``(c * a + b) % (c * m)`` as
    ``c * (a % m) + b`` where ``b`` (terms over variables of ``ranges``) stays in ``[0, c)``:
    ``(bx * 16 + tx) // 128`` is ``bx // 8`` for ``tx`` below 16, so two spellings of one
    thread's element compare equal."""

    def __init__(self, ranges: dict) -> None:
        super().__init__()
        self.ranges = ranges

    def _split(self, e: PrimExpr) -> Optional[tuple[PrimExpr, PrimExpr, int]]:
        """``e`` as ``c * a + b`` with ``b`` in ``[0, c)``: (a, b, c), or None."""
        exprs: dict = {}
        terms, const = linear_form(e, exprs)
        low = {k: v for k, v in terms.items() if all(x in self.ranges for x in free_vars(exprs[k]))}
        high = {k: v for k, v in terms.items() if k not in low}
        c = math.gcd(*high.values()) if high else 0
        if c <= 1 or const % c:
            return None
        zero = IntImm(e.dtype, 0)
        b = zero
        for k, v in low.items():
            b = binary("add", b, binary("mul", exprs[k], v))
        span = interval(b, self.ranges)
        if span is None or span[0] < 0 or span[1] >= c:
            return None
        a = IntImm(e.dtype, const // c)
        for k, v in high.items():
            a = binary("add", a, binary("mul", exprs[k], v // c))
        return simplify_expr(a), b, c

    def visit_BinaryOp(self, e: Any) -> PrimExpr:
        if not isinstance(e, (FloorDiv, FloorMod)) or not isinstance(e.b, IntImm):
            return super().visit_BinaryOp(e)
        parts = self._split(self.visit_expr(e.a))
        if parts is None or e.b.value % parts[2]:
            return super().visit_BinaryOp(e)
        a, b, c = parts
        if isinstance(e, FloorDiv):
            return binary("floordiv", a, e.b.value // c)
        return binary("add", binary("mul", binary("floormod", a, e.b.value // c), c), b)


@dataclass
class _Plan:
    """A compacted buffer: its ``shape``, each dimension's smallest index (``mins``) and how its
    indices are split and compared (``bounds``; thread indices by ``canonical`` spelling, divided
    over their ``ranges``)."""

    shape: tuple[int, ...]
    mins: list[int]
    bounds: "_Bounds"
    canonical: dict
    ranges: dict


def _plan(buf: Buffer, body: Any, outer: dict, threads: dict) -> Optional[_Plan]:
    """How ``buf`` is compacted (:class:`_Plan`), or None. ``outer``: the variables of one-iteration loops around the
    allocation, with their values; ``threads``: the thread indices bound around it, with their
    ranges (a shared buffer is one per block, so they vary over its lifetime)."""
    finder = _Accesses(buf)
    finder.bounds.constants.update(outer)
    if buf.scope in ("shared", "shared.dyn"):
        finder.bounds.loops.update(threads)
    finder.visit_stmt(body)
    if not finder.ok or buf.strides or not finder.accesses:
        return None
    fixed = _fixed_loops(buf, finder.accesses)
    # the most loops fixed first; fewer when the accesses' fixed parts then differ (a copy that
    # does not use a loop's variable beside a compute that does)
    for n in range(len(fixed), -1, -1):
        plan = _plan_with(buf, finder, set(fixed[:n]))
        if plan is not None:
            return plan
    return None


def _plan_with(buf: Buffer, finder: _Accesses, fixed: set) -> Optional[_Plan]:
    """:func:`_plan` with the variables in ``fixed`` counted as fixed for the allocation's
    lifetime."""
    bounds = copy.copy(finder.bounds)
    bounds.loops = dict(finder.bounds.loops)
    thread_ranges = {}  # of the thread indices a per-thread buffer counts as fixed, by canonical name
    for var in fixed | (finder.thread_vars if is_per_thread(buf.scope) else set()):
        span = bounds.loops.pop(var, None)
        if span is not None and var in finder.thread_vars:
            thread_ranges[finder.same_thread.get(var, var)] = span
    per_dim: list[list[_Range]] = [[] for _ in buf.shape]
    spans: list[list[tuple[int, int]]] = []  # per dimension: each access's interval
    for indices, _ in finder.accesses:
        for dim, index in enumerate(indices):
            r = bounds.of(index)
            if r is None:
                return None
            per_dim[dim].append(r)
    shape, mins, shifted = [], [], False
    canonical = finder.same_thread if is_per_thread(buf.scope) else {}
    for ranges in per_dim:
        parts = [_fixed_form(r, canonical, thread_ranges) for r in ranges]
        if any(terms != parts[0][0] for terms, _ in parts[1:]):
            return None
        # a write covers its interval only where it writes every element of it
        spans.append([(r.lo + const, r.hi + const, _dense(r)) for r, (_, const) in zip(ranges, parts)])
        lo = min(r.lo + const for r, (_, const) in zip(ranges, parts))
        hi = max(r.hi + const for r, (_, const) in zip(ranges, parts))
        shape.append(hi - lo + 1)
        mins.append(lo)
        shifted = shifted or lo != 0 or bool(parts[0][0])
    if fixed and not _reads_what_it_writes(spans, finder.writes):
        return None
    old = [s.value if isinstance(s, IntImm) else None for s in buf.shape]
    # never grow a buffer; one of the same size is still rewritten when its indices move (a
    # declared extent of 1 indexed by a loop fixed for the allocation's lifetime is the region
    # the block touches, as Apache TVM's compaction defines it)
    if None not in old and (math.prod(shape) > math.prod(old) or (shape == old and not shifted)):
        return None
    return _Plan(tuple(shape), mins, bounds, canonical, thread_ranges)


def _reads_what_it_writes(spans: list, writes: list) -> bool:
    """Whether every read of an iteration of the fixed loops lies inside what the iteration's
    writes cover (``spans``: per dimension, each access's interval): a read of ``C[k - 1]`` beside
    a write of ``C[k]`` reads what the previous iteration wrote, so the buffer cannot shrink to
    one iteration's region. The writes' boxes are merged where they touch along one dimension
    (``C[2 * k]`` and ``C[2 * k + 1]`` cover ``C[2 * k:2 * k + 2]``); each read must lie in one."""
    boxes = [tuple(dim[i][:2] for dim in spans) for i in range(len(writes))]
    dense = [all(dim[i][2] for dim in spans) for i in range(len(writes))]
    covered = _merged([box for box, write, full in zip(boxes, writes, dense) if write and full])
    return all(
        any(all(lo <= a and b <= hi for (a, b), (lo, hi) in zip(box, cover)) for cover in covered)
        for box, write in zip(boxes, writes)
        if not write
    )


def _dense(r: _Range) -> bool:
    """Whether an access over ``r`` touches every element of ``[lo, hi]`` (a loop variable with
    coefficient 1 or -1, or one element); ``C[k + 4 * j]`` touches every fourth."""
    if r.varying is None or r.lo == r.hi:
        return True
    terms, _ = linear_form(r.varying)
    return len(terms) == 1 and abs(next(iter(terms.values()))) == 1


def _merged(boxes: list) -> list:
    """``boxes`` with any two whose union is a box (:func:`_union`) replaced by it, until none are."""
    boxes = list(dict.fromkeys(boxes))
    merging = True
    while merging:
        merging = False
        for i, j in itertools.combinations(range(len(boxes)), 2):
            union = _union(boxes[i], boxes[j])
            if union is not None:
                boxes[i] = union
                del boxes[j]
                merging = True
                break
    return boxes


def _union(a: tuple, b: tuple) -> Optional[tuple]:
    """The box covering exactly ``a`` and ``b`` when they differ in one dimension at most, where
    their intervals overlap or touch; else None."""
    differ = [d for d in range(len(a)) if a[d] != b[d]]
    if not differ:
        return a
    if len(differ) > 1:
        return None
    d = differ[0]
    (alo, ahi), (blo, bhi) = a[d], b[d]
    if alo > bhi + 1 or blo > ahi + 1:
        return None
    return (*a[:d], (min(alo, blo), max(ahi, bhi)), *a[d + 1 :])


class _Rewrite(StmtExprMutator):
    """Accesses of ``old`` become accesses of ``new`` at ``varying - min`` per dimension."""

    def __init__(self, old: Buffer, new: Buffer, plan: _Plan) -> None:
        self.old, self.new, self.plan = old, new, plan

    def _indices(self, indices: tuple) -> tuple:
        out = []
        for index, lo in zip(indices, self.plan.mins):
            r = self.plan.bounds.of(index)
            shift = _fixed_form(r, self.plan.canonical, self.plan.ranges)[1] - lo
            out.append(binary("add", r.varying, shift) if r.varying is not None else IntImm("int32", shift))
        return tuple(out)

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        if e.buffer is not self.old:
            return super().visit_BufferLoad(e)
        return BufferLoad(self.new, self._indices(tuple(self.visit_expr(i) for i in e.indices)), e.dtype, e.span)

    def visit_BufferStore(self, s: BufferStore) -> BufferStore:
        if s.buffer is not self.old:
            return super().visit_BufferStore(s)
        idx = self._indices(tuple(self.visit_expr(i) for i in s.indices))
        return BufferStore(self.new, self.visit_expr(s.value), idx, s.span)


class _Compactor(StmtExprMutator):
    def __init__(self) -> None:
        self.changed = False
        self.outer: dict[Var, IntImm] = {}  # one-iteration loops around the current statement
        self.threads: dict[Var, tuple[int, int]] = {}  # threadIdx loops around it, with their ranges

    def visit_For(self, s: For) -> For:
        single = _single_value(s)
        if single is not None:
            self.outer[s.loop_var] = single
        elif is_thread_index_loop(s) and isinstance(s.min, IntImm) and isinstance(s.extent, IntImm):
            self.threads[s.loop_var] = (s.min.value, s.min.value + s.extent.value - 1)
        try:
            return super().visit_For(s)
        finally:
            self.outer.pop(s.loop_var, None)
            self.threads.pop(s.loop_var, None)

    def visit_Allocate(self, s: Allocate) -> Allocate:
        body = self._body(self.visit_stmt(s.body))
        buf = s.buffer
        plan = _plan(buf, body, self.outer, self.threads) if buf.scope in _SCOPES else None
        if plan is None:
            return s if body is s.body else Allocate(buf, body, s.span)
        new = dataclasses.replace(buf, shape=tuple(IntImm("int32", x) for x in plan.shape))
        self.changed = True
        return Allocate(new, _Rewrite(buf, new, plan).visit_stmt(body), s.span)


def compact_allocations(func: PrimFunc, target: Any) -> PrimFunc:
    """``func`` with each shared and local allocation shrunk to the region its accesses touch
    (see the module docstring). On a CPU target there are no thread indices: a function's
    parallel loops inside an allocation vary like any other loop of its body."""
    compactor = _Compactor()
    body = compactor.visit_stmt(func.body)
    return dataclasses.replace(func, body=body) if compactor.changed else func
