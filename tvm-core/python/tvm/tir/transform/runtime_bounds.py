"""Run-time bounds checks of the indices no proof keeps inside their buffers.

:func:`~tvm.tir.transform.bounds.check_constant_bounds` refuses at compile time an index whose
constant range leaves a constant shape. :func:`check_indices_at_run_time` then guards every
statement holding an access that :func:`~tvm.tir.transform.symbolic_bounds.in_bounds` cannot
prove inside its buffer (from the loop ranges, the conditions around it and sizes being
non-negative) with the comparisons of its indices with the buffer's extents: an index read from
memory (``A[idx[i]]``), a loop bound read from memory, a scalar argument that sizes no buffer
(``A[i + offset]``), a loop over one buffer's size that indexes another (``for i in range(n)``
over ``B: T.Buffer((m,))``). When one fails, the statement does not run and the function raises
``IndexError`` naming the function, the buffer, the dimension, its extent and the index. On a
CPU the failure is the statement ``Evaluate(Call("int32", "tvm_index_out_of_bounds", (where,
index, extent)))``, which the code generator prints as that error; in device kernels it is
recorded in a device buffer that the host reads after the kernels.

Indices are checked in the order they are computed (an index array's own index first). A call out
(an external function) in an index is made once, into a variable bound before the statement (under
the statement's conditions where it sits under one, see :class:`_IndexCalls`). An access
under a condition inside the statement (``T.if_then_else``, ``T.Select``, the right side of
``and`` / ``or``) is checked only where the condition holds. A ``while`` loop whose condition
needs checks becomes ``while (1) { checks; if (!condition) break; body }``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from tvm.tir import dtype as _dt
from tvm.tir.analysis import any_node, free_vars
from tvm.tir.expr import (
    GE,
    LE,
    LT,
    Add,
    And,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    StringImm,
    Sub,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, post_order_visit, substitute
from tvm.tir.op import INTRINSICS, address_element, is_barrier, is_convergent, is_reinterpret
from tvm.tir.stmt import (
    Allocate,
    AssertStmt,
    Break,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
    seq,
)

from .flatten import constant_extent, element_count, flat_index, needs_int64_indices
from .symbolic_bounds import Facts, computed_exactly, in_bounds
from .verify import TIRVerifyError, is_device_target, operands, tree_size, with_span

#: The intrinsic of a failed run-time bounds check on a CPU: ``(where, index, extent)``.
INDEX_OUT_OF_BOUNDS = "tvm_index_out_of_bounds"
#: The host statement after the kernels of a device function with checks, ``(buffer data, dtype,
#: kind, where, kind, where ...)``: reads the failures its kernels recorded and raises for the
#: first (IndexError for an index; an ``assert`` in a kernel, its kind with its message).
INDEX_ERRORS_RAISE = "tvm_index_errors_raise"
#: The kind of a failed bounds check's record (raised as IndexError with the access's message).
BOUNDS_KIND = "IndexError.bounds"

Check = tuple[PrimExpr, Stmt]  # the condition that must hold, the failure when it does not


#: the fields of statements that hold statements (``_holds_barrier``)
_STATEMENT_FIELDS = ("body", "then_case", "else_case")

#: the most nodes a let-expanded index may have for the proofs
_EXPANSION_LIMIT = 2000


def _bounded(e: PrimExpr) -> tuple[Optional[int], Optional[int]]:
    """Constant bounds of ``e`` whatever its variables hold (None: unbounded on that side):
    ``floormod(x, 8)`` is in [0, 7], ``min(x, 9)`` at most 9."""
    if isinstance(e, IntImm):
        return e.value, e.value
    if isinstance(e, Cast) and _dt.is_integer(e.dtype):
        lo, hi = _bounded(e.value)
        least, most = _dt.integer_range(e.dtype)
        fits = lo is not None and hi is not None and least <= lo and hi <= most
        return (lo, hi) if fits else (None, None)  # a value that does not fit wraps
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


def _memory_of(root: Buffer) -> tuple[PrimExpr, PrimExpr]:
    """The memory an argument or allocation ``root`` covers, as (the lowest element its indices
    reach, counted from its first one: below 0 only through a negative stride; the number of
    elements from there to the highest one), both int64. Its offset (``elem_offset``, a constant
    or a variable the host binds) is where it starts, whatever its value."""
    zero, one = IntImm("int64", 0), IntImm("int64", 1)
    if not root.strides:
        size: PrimExpr = one
        for d in root.shape:
            size = Mul(size, Cast("int64", d))
        return zero, size
    lowest, highest, size = zero, zero, one
    for d, st in zip(root.shape, root.strides):
        last = Max(Sub(Cast("int64", d), one), zero)
        lowest = Add(lowest, Mul(last, Min(Cast("int64", st), zero)))
        highest = Add(highest, Mul(last, Max(Cast("int64", st), zero)))
        size = Mul(size, Min(Cast("int64", d), one))  # 0 once a dimension is empty, at run time too
    return lowest, Mul(size, Add(Sub(highest, lowest), one))


class _IndexChecks(StmtExprMutator):
    """Guards statements (see the module docstring); ``failure(where, index, extent)`` is the
    statement run when a check fails. With ``in_kernels`` only statements inside thread-bound
    loops are guarded (a device function's host code reads no buffer)."""

    def __init__(self, func: PrimFunc, failure: Callable[[str, PrimExpr, PrimExpr], Stmt], in_kernels: bool) -> None:
        self.name = func.global_symbol
        self.failure = failure
        self.in_kernels = in_kernels
        self.kernel_depth = 0
        self._barriers: dict[Stmt, bool] = {}  # _holds_barrier's answers (statements hash by identity)
        # what holds where the statement being visited runs (symbolic_bounds.Facts): sizes of the
        # arguments are non-negative; scalar arguments that size no buffer are bounded by nothing
        self.facts = Facts(nonneg={v for b in func.buffer_map.values() for v in _buffer_vars(b)})
        self.lets: dict[Var, PrimExpr] = {}
        # the buffer that owns each data pointer (arguments, allocations): views of it are checked
        # against its memory too
        self.roots: dict[Var, Buffer] = {b.data: b for b in func.buffer_map.values()}
        # handles let-bound to the address of an element of such a buffer (``p = T.address_of(B[i, 0])``,
        # a called function's pointer parameter): the element each view over one starts at
        self.addresses: dict[Var, BufferLoad] = {}

    def _expand(self, e: PrimExpr) -> PrimExpr:
        """``e`` with the let-bound variables around the statement replaced by their values, as
        far as the result stays small: a chain of lets that each use the one before twice
        (``x2 = x1 + x1``) doubles the expression per let, and the proofs walk it whole (then
        the access is checked at run time, where the lets are computed once)."""
        for _ in range(16):
            inner = {v: self.lets[v] for v in free_vars(e) if v in self.lets}
            if not inner:
                break
            expanded = substitute(e, inner)
            if tree_size(expanded) > _EXPANSION_LIMIT:
                break
            e = expanded
        return e

    def _proven(self, index: PrimExpr, extent: PrimExpr, guard: Optional[PrimExpr]) -> bool:
        """Whether ``0 <= index < extent`` holds wherever the access runs (``guard``: the
        condition inside the statement it is under)."""
        lo, hi = _bounded(index)
        if lo is not None and hi is not None and isinstance(extent, IntImm) and 0 <= lo and hi < extent.value:
            return True
        inner = [] if guard is None or calls_out(guard) else [self._expand(guard)]  # one expression: no stores
        facts = Facts(loops=self.facts.loops, guards=self.facts.guards + inner, nonneg=self.facts.nonneg)
        index, extent = self._expand(index), self._expand(extent)
        return computed_exactly(index, extent, facts) and in_bounds(index, extent, facts)

    def _collect(self, e: PrimExpr, guard: Optional[PrimExpr], lets: dict, out: list[Check]) -> None:
        """The checks of the accesses in ``e`` (where ``guard`` holds), inner indices first."""
        if isinstance(e, Let):
            self._collect(e.value, guard, lets, out)
            self._collect(e.body, guard, {**lets, e.var: substitute(e.value, lets)}, out)
            return
        conditional = None
        # a Select's arms are checked only where its condition holds: code generators evaluate
        # the one arm chosen (C's ?:), so an arm that would index out of bounds is not reached
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
        address = address_element(e)
        if address is not None:  # an address, not an access: the end of an empty row is one
            for index in address.indices:
                self._collect(index, guard, lets, out)
            self._access(address.buffer, address.indices, guard, lets, out, past_end=1)
            return
        for child in operands(e):
            self._collect(child, guard, lets, out)
        if isinstance(e, BufferLoad):
            self._access(e.buffer, e.indices, guard, lets, out)

    def _access(
        self, buf: Buffer, indices: tuple, guard: Optional[PrimExpr], lets: dict, out: list[Check], past_end: int = 0
    ) -> None:
        """The checks of one access: each dimension against the buffer's extent and, for a view
        of another buffer's memory (a region's match_buffer, a decl_buffer over its data), the
        element it reaches against the memory under it. ``past_end`` 1: the address of an
        element (``T.address_of``), which may be where a dimension ends."""
        if lets:
            indices = tuple(substitute(i, lets) for i in indices)
        for dim, (index, extent) in enumerate(zip(indices, buf.shape)):
            where = f"{self.name}: dimension {dim} of buffer '{buf.name}'"
            if past_end:  # an address: up to the dimension's end, and up to the buffer's end in all
                where = f"{self.name}: the address in dimension {dim} of buffer '{buf.name}' (its extent, plus 1)"
                extent = Add(Cast("int64", extent), IntImm("int64", past_end))
            self._check(where, index, extent, guard, out)
        if past_end and not buf.strides and len(buf.shape) > 1:
            count = _memory_of(buf)[1]
            element = Cast("int64", flat_index(dataclasses.replace(buf, elem_offset=IntImm("int32", 0)), indices))
            where = f"{self.name}: the address of an element of buffer '{buf.name}' (its element count, plus 1)"
            self._check(where, element, Add(count, IntImm("int64", past_end)), guard, out)
        root, base = self.roots.get(buf.data), None
        address = self.addresses.get(buf.data)
        if root is None and address is not None:  # a view at an element: its memory is that buffer's
            root, base = self.roots[address.buffer.data], Cast("int64", flat_index(address.buffer, address.indices))
        if root is None or root is buf:
            return
        lowest, size = _memory_of(root)  # elements from the root's start, and how many from there
        view_bytes, root_bytes = _dt.nbytes(buf.dtype), _dt.nbytes(root.dtype)
        start_of = Cast("int64", flat_index(buf, indices))  # in view elements from the view's data
        if base is not None and view_bytes == root_bytes:
            start_of = Add(base, start_of)
        element = Sub(Sub(start_of, Cast("int64", root.elem_offset)), lowest)
        where = f"{self.name}: the memory of buffer '{root.name}' (through its view '{buf.name}')"
        if view_bytes != root_bytes:  # a view as another dtype: its element's first byte, in bytes
            start = Sub(
                Mul(start_of, IntImm("int64", view_bytes)),
                Mul(Add(Cast("int64", root.elem_offset), lowest), IntImm("int64", root_bytes)),
            )
            if base is not None:
                start = Add(start, Mul(base, IntImm("int64", root_bytes)))
            last_start = Sub(Mul(size, IntImm("int64", root_bytes)), IntImm("int64", view_bytes - 1))
            where = f"{where[:-1]}, as bytes)"
            element, size = start, last_start
        if past_end:
            size = Add(size, IntImm("int64", past_end))
        self._check(where, element, size, guard, out)

    def _check(
        self, where: str, index: PrimExpr, extent: PrimExpr, guard: Optional[PrimExpr], out: list[Check]
    ) -> None:
        """``0 <= index < extent`` as a check in ``out`` unless it is proven."""
        if self._proven(index, extent, guard):
            return
        dt = "int64" if max(_dt.bits(index.dtype), _dt.bits(extent.dtype)) > 32 else "int32"
        i, n = Cast(dt, index) if index.dtype != dt else index, Cast(dt, extent) if extent.dtype != dt else extent
        holds = And(GE(i, IntImm(dt, 0)), LT(i, n))
        out.append((holds if guard is None else Or(Not(guard), holds), self.failure(where, i, n)))

    def _checks(self, *exprs: PrimExpr, store: Optional[BufferStore] = None) -> list[Check]:
        """The checks of the accesses of ``exprs`` (and of ``store``); none in a device
        function's host code."""
        checks: list[Check] = []
        if self.in_kernels and self.kernel_depth == 0:
            return checks
        for e in exprs:
            self._collect(e, None, {}, checks)
        if store is not None:
            self._access(store.buffer, store.indices, None, {}, checks)
        return checks

    def _holds_barrier(self, s: Optional[Stmt]) -> bool:
        """Whether statement ``s`` holds a barrier, each statement judged once (asserts nest
        the rest of a kernel: asking of each assert's body anew was quadratic)."""
        if s is None:
            return False
        known = self._barriers.get(s)
        if known is None:
            if isinstance(s, Evaluate):
                known = any_node(s.value, is_barrier)
            else:
                parts = list(s.seq) if isinstance(s, SeqStmt) else [getattr(s, f, None) for f in _STATEMENT_FIELDS]
                known = any(self._holds_barrier(p) for p in parts if isinstance(p, Stmt))
            self._barriers[s] = known
        return known

    def _guarded(self, s: Stmt, *exprs: PrimExpr, store: Optional[BufferStore] = None) -> Stmt:
        """``s`` run only when the accesses of ``exprs`` (and of ``store``) are in bounds."""
        checks = self._checks(*exprs, store=store)
        if not checks:
            return s
        if self.in_kernels and self._holds_barrier(s):
            return self._recorded_around_barrier(s, checks)
        for holds, fail in reversed(checks):
            s = IfThenElse(holds, s, fail, s.span)
        return s

    def _recorded_around_barrier(self, s: Stmt, checks: list[Check]) -> Stmt:
        """A statement whose body holds a barrier cannot be skipped by one thread (the others
        would wait at the barrier for it): the failure is recorded and, for a let, the value
        is taken only where every check holds (0 elsewhere, its failure raised after the
        kernels); other statements around barriers keep their accesses unchecked."""
        if not isinstance(s, LetStmt):
            return s
        holds = checks[0][0]
        for h, _ in checks[1:]:
            holds = And(holds, h)  # in order: && evaluates an index only once those before hold
        record: Optional[Stmt] = None
        for h, fail in reversed(checks):
            record = IfThenElse(Not(h), fail, record)
        zero = IntImm(s.value.dtype, 0) if not _dt.is_float(s.value.dtype) else FloatImm(s.value.dtype, 0.0)
        safe = Select(holds, s.value, zero)
        return seq(record, LetStmt(s.var, safe, s.body, s.span))

    def visit_stmt(self, s: Stmt) -> Optional[Stmt]:
        bound = _IndexCalls().bind(s)  # an index's calls out evaluated once, before the statement
        return super().visit_stmt(s) if bound is s else super().visit_stmt(bound)

    def visit_BufferStore(self, s: BufferStore) -> Stmt:
        return self._guarded(s, *s.indices, s.value, store=s)

    def visit_Evaluate(self, s: Evaluate) -> Stmt:
        return self._guarded(s, s.value)

    def visit_AssertStmt(self, s: AssertStmt) -> Stmt:
        s = super().visit_AssertStmt(s)
        if self.in_kernels and self.kernel_depth > 0:  # a kernel cannot raise: the host does, after it
            record = self.failure.assertion(s.kind, s.message)
            if not self._holds_barrier(s.body):  # what it guards does not run, as on a CPU
                return self._guarded(IfThenElse(s.condition, s.body, record, s.span), s.condition)
            # the others wait at a barrier in it: the failing thread runs it too
            return seq(self._guarded(IfThenElse(Not(s.condition), record, None, s.span), s.condition), s.body)
        return self._guarded(s, s.condition)

    def _under(self, guard: PrimExpr, body: Optional[Stmt]) -> Optional[Stmt]:
        """``body`` visited knowing ``guard`` (unless it reads memory, which ``body`` may write)."""
        if body is None:
            return None
        self.facts.guards.append(IntImm("bool", 1) if _reads_memory(guard) else self._expand(guard))
        try:
            return self.visit_stmt(body)
        finally:
            self.facts.guards.pop()

    def visit_IfThenElse(self, s: IfThenElse) -> Stmt:
        then = self._body(self._under(s.condition, s.then_case))
        other = self._under(Not(s.condition), s.else_case)
        if then is not s.then_case or other is not s.else_case:
            s = IfThenElse(s.condition, then, other, s.span)
        return self._guarded(s, s.condition)

    def visit_LetStmt(self, s: LetStmt) -> Stmt:
        if not _reads_memory(s.value):  # else the variable keeps the value read then: an atom
            self.lets[s.var] = s.value
        address = _element_address(s.value)
        if address is not None and address.buffer.data in self.roots:
            self.addresses[s.var] = address  # views over it are views of that buffer's memory
        try:
            inner = super().visit_LetStmt(s)
        finally:
            self.lets.pop(s.var, None)
            self.addresses.pop(s.var, None)
        return self._guarded(inner, s.value)

    def visit_While(self, s: While) -> Stmt:
        s = super().visit_While(s)
        checks = self._checks(s.condition)
        if not checks:
            return s
        head = [IfThenElse(Not(holds), seq(fail, Break())) for holds, fail in checks]
        leave = IfThenElse(Not(s.condition), Break())
        return While(IntImm("bool", 1), seq(*head, leave, s.body), s.span)

    def visit_Allocate(self, s: Allocate) -> Stmt:
        self.roots[s.buffer.data] = s.buffer
        try:
            inner = super().visit_Allocate(s)
        finally:
            self.roots.pop(s.buffer.data, None)
        if self.kernel_depth == 0:  # the host allocates it: its size must fit its indices
            inner = _within_flat_indices(inner)
        return self._guarded(inner, *s.buffer.shape)

    def visit_For(self, s: For) -> Stmt:
        binds = s.kind is ForKind.THREAD_BINDING
        self.kernel_depth += binds
        known = not (_reads_memory(s.min) or _reads_memory(s.extent))  # else its variable has no range
        if known:  # the lets around the loop are those its bounds can use
            self.facts.loops.append((s.loop_var, self._expand(s.min), self._expand(s.extent)))
        try:
            inner = super().visit_For(s)
        finally:
            self.kernel_depth -= binds
            if known:
                self.facts.loops.pop()
        return self._guarded(inner, s.min, s.extent)


class _IndexCalls(StmtExprMutator):
    """Gives each call out (an external function: called again it may return another value) that
    an index makes a variable bound just before the statement, so that the checks and the access
    see one value. A call under a condition inside the statement (an arm of ``T.if_then_else`` or
    ``Select``, the right side of ``and`` / ``or``) is bound as ``if_then_else(condition, call,
    0)``: it runs exactly when it ran before. The value of a ``Let`` expression is bound the same
    way (its variable may become an index). Left where they are: calls that use a variable of a
    ``Let`` inside the statement, and calls under a condition that itself calls out."""

    def __init__(self) -> None:
        self.bound: list[tuple[Var, PrimExpr]] = []
        self.in_index = 0
        self.conditions: list[PrimExpr] = []  # what holds where the expression being visited runs
        self.inner: set[Var] = set()  # variables of the Let expressions around it

    def bind(self, s: Stmt) -> Stmt:
        """``s`` under the lets of the calls out its indices make (``s`` itself when none)."""
        self.bound = []
        out = self.visit_stmt(s)
        for var, call in reversed(self.bound):
            out = LetStmt(var, call, out, s.span)
        return out if self.bound else s

    def visit_stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, BufferStore):
            indices = self._in_index(lambda: self._exprs(s.indices))
            value = self.visit_expr(s.value)
            return BufferStore(s.buffer, value, indices, s.span)
        if isinstance(s, Evaluate):
            return Evaluate(self.visit_expr(s.value), s.span)
        if isinstance(s, LetStmt):
            return LetStmt(s.var, self.visit_expr(s.value), s.body, s.span)
        if isinstance(s, IfThenElse):
            return IfThenElse(self.visit_expr(s.condition), s.then_case, s.else_case, s.span)
        if isinstance(s, AssertStmt):
            return dataclasses.replace(s, condition=self.visit_expr(s.condition))
        return s

    def _in_index(self, visit: Callable[[], Any]) -> Any:
        self.in_index += 1
        try:
            return visit()
        finally:
            self.in_index -= 1

    def _where(self, holds: PrimExpr, e: PrimExpr) -> PrimExpr:
        """``e`` visited as a part that runs only where ``holds``."""
        if calls_out(holds) or self.inner.intersection(free_vars(holds)):
            return e  # the condition cannot be evaluated again before the statement
        self.conditions.append(holds)
        try:
            return self.visit_expr(e)
        finally:
            self.conditions.pop()

    def _bound(self, e: PrimExpr) -> PrimExpr:
        """A variable holding ``e``'s value, computed before the statement where ``e`` would run."""
        zero = _zero(e.dtype)
        if (self.conditions and zero is None) or self.inner.intersection(free_vars(e)):
            return e
        value = e
        if self.conditions:
            holds = self.conditions[0]
            for h in self.conditions[1:]:
                holds = And(holds, h)
            value = Call(e.dtype, "if_then_else", (holds, e, zero), e.span)
        var = Var(f"index_call_{len(self.bound)}", e.dtype)
        self.bound.append((var, value))
        return var

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        indices = self._in_index(lambda: self._exprs(e.indices))
        return e if indices is e.indices else BufferLoad(e.buffer, indices, e.dtype, e.span)

    def visit_Call(self, e: Call) -> PrimExpr:
        if e.op == "if_then_else":
            cond = self.visit_expr(e.args[0])
            yes, no = self._where(cond, e.args[1]), self._where(Not(cond), e.args[2])
            same = cond is e.args[0] and yes is e.args[1] and no is e.args[2]
            return e if same else Call(e.dtype, e.op, (cond, yes, no), e.span)
        e = super().visit_Call(e)
        if not self.in_index or e.op in INTRINSICS or _dt.lanes(e.dtype) != 1 or is_convergent(e):
            return e  # a warp collective is no call out, and bound under a condition it would diverge
        return self._bound(e)

    def visit_Select(self, e: Select) -> PrimExpr:
        cond = self.visit_expr(e.condition)
        yes, no = self._where(cond, e.true_value), self._where(Not(cond), e.false_value)
        same = cond is e.condition and yes is e.true_value and no is e.false_value
        return e if same else Select(cond, yes, no, e.dtype, e.span)

    def visit_BinaryOp(self, e: Any) -> PrimExpr:
        if isinstance(e, (And, Or)):  # the right side runs only when the left does not decide
            a = self.visit_expr(e.a)
            b = self._where(a if isinstance(e, And) else Not(a), e.b)
            return e if a is e.a and b is e.b else type(e)(a, b, e.span)
        return super().visit_BinaryOp(e)

    def visit_Let(self, e: Let) -> PrimExpr:
        value = self.visit_expr(e.value)
        if calls_out(value) and _dt.lanes(value.dtype) == 1 and not is_convergent(value):
            value = self._bound(value)
        self.inner.add(e.var)
        try:
            body = self.visit_expr(e.body)
        finally:
            self.inner.discard(e.var)
        return e if value is e.value and body is e.body else Let(e.var, value, body, e.span)


def _zero(dtype: str) -> Optional[PrimExpr]:
    """The zero of a scalar integer or float dtype (None for others)."""
    if _dt.is_float(dtype):
        return FloatImm(dtype, 0.0)
    return IntImm(dtype, 0) if _dt.is_int(dtype) or _dt.is_uint(dtype) else None


def _within_flat_indices(s: Allocate) -> Stmt:
    """``s`` behind an assert that its sizes are not negative and its element count fits its
    indices, when it has several sizes not all constant: flattened, the count is their product,
    which would wrap past 2**31 - 1 elements for 32-bit sizes (2**63 - 1 for 64-bit ones) into
    a small allocation that the indices then pass, and a product of negative sizes may be
    positive."""
    shape = s.buffer.shape
    if len(shape) < 2 or all(isinstance(d, IntImm) for d in shape):
        return s
    wide = any(_dt.bits(d.dtype) > 32 for d in shape)
    most = IntImm("int64", 2**63 - 1 if wide else 2**31 - 1)
    dims = [Cast("int64", d) for d in shape]
    checks: list[PrimExpr] = [GE(d, IntImm("int64", 0)) for d, size in zip(dims, shape) if not isinstance(size, IntImm)]
    count = dims[0]
    for d in dims[1:]:  # count * d <= most, asked without computing a product that could wrap
        checks.append(Or(LE(d, IntImm("int64", 0)), LE(count, FloorDiv(most, d))))
        count = Mul(count, d)
    fits = checks[0]
    for c in checks[1:]:
        fits = And(fits, c)
    if wide:
        message = f"buffer '{s.buffer.name}' has a negative size or more than {most.value} elements"
    else:
        message = (
            f"buffer '{s.buffer.name}' has a negative size or more than {most.value} elements, past what its "
            f"32-bit sizes index; declare its sizes with T.int64()"
        )
    return AssertStmt(fits, message, s, s.span, "ValueError")


def calls_out(e: PrimExpr) -> bool:
    """Whether ``e`` calls something that is not a pure intrinsic (it may differ when called again)."""
    return any_node(e, lambda n: isinstance(n, Call) and n.op not in INTRINSICS and not is_reinterpret(n))


def _element_address(e: PrimExpr) -> Optional[BufferLoad]:
    """The element of ``T.address_of(A[i, j])`` of indices that read no memory, else None."""
    load = address_element(e)
    return None if load is None or any(_reads_memory(i) for i in load.indices) else load


def _reads_memory(e: PrimExpr) -> bool:
    """Whether ``e`` reads a buffer or calls out: its value may change between statements."""
    return calls_out(e) or any_node(e, lambda n: isinstance(n, BufferLoad))


def _buffer_vars(buf: Buffer) -> set[Var]:
    """The variables of a buffer's shape, strides and offset (bound from its argument)."""
    parts = [*buf.shape, *(getattr(buf, "strides", None) or ()), getattr(buf, "elem_offset", None)]
    return {v for p in parts if isinstance(p, PrimExpr) for v in free_vars(p)}


def _raised(where: str, index: PrimExpr, extent: PrimExpr) -> Stmt:
    """The failure on a CPU: the code generator raises IndexError (or records it inside a
    parallel or vectorized loop and raises after the loop)."""
    return Evaluate(Call("int32", INDEX_OUT_OF_BOUNDS, (StringImm(where), Cast("int64", index), Cast("int64", extent))))


class _Recorded:
    """Failures in kernels: each check site (an index check, or an ``assert`` in a kernel) owns
    three elements of one device buffer (failed, the index, the extent), zeroed by a one-thread
    kernel before the function's kernels; the host reads the buffer after them and raises for the
    first site that failed (IndexError, or the assert's kind and message). Two threads failing
    at one site may mix their index and extent; each is a failing index of that site."""

    def __init__(self, func: PrimFunc, target: Any) -> None:
        wide = target.capability("supports_int64")
        self.buffer = Buffer(f"{func.global_symbol}_index_errors", (1,), "int64" if wide else "int32", scope="global")
        self.sites: list[tuple[str, str]] = []  # (exception kind, where or message)

    def __call__(self, where: str, index: PrimExpr, extent: PrimExpr, kind: str = BOUNDS_KIND) -> Stmt:
        k, dt = len(self.sites), self.buffer.dtype
        self.sites.append((kind, where))
        values = (IntImm(dt, 1), Cast(dt, index), Cast(dt, extent))
        return seq(*[BufferStore(self.buffer, v, (IntImm("int32", 3 * k + i),)) for i, v in enumerate(values)])

    def assertion(self, kind: str, message: str) -> Stmt:
        """The record of a failed ``assert`` in a kernel (raised as ``kind`` with ``message``)."""
        zero = IntImm("int32", 0)
        return self(message, zero, zero, kind)

    def around(self, body: Stmt) -> Stmt:
        """``body`` with the buffer allocated, zeroed before it and read after it."""
        n = 3 * len(self.sites)
        buf = self.buffer
        buf.shape = (IntImm("int32", n),)  # the stores made so far share this buffer object
        k = Var("k", "int32")
        zero = For(
            k, IntImm("int32", 0), IntImm("int32", n), ForKind.SERIAL, BufferStore(buf, IntImm(buf.dtype, 0), (k,))
        )
        one = Var("threadIdx.x", "int32")
        reset = For(one, IntImm("int32", 0), IntImm("int32", 1), ForKind.THREAD_BINDING, zero, "threadIdx.x")
        sites = tuple(StringImm(text) for site in self.sites for text in site)  # (kind, where) pairs
        check = Evaluate(Call("int32", INDEX_ERRORS_RAISE, (buf.data, StringImm(buf.dtype), *sites)))
        return Allocate(buf, seq(reset, body, check))


def _refuse_int64_indices(func: PrimFunc, target: Any) -> None:
    """A :class:`TIRVerifyError` for the first buffer whose constant shape needs ``int64``
    indices (:func:`~tvm.tir.transform.flatten.needs_int64_indices`) when ``target`` has no
    ``int64``: its flat index would be computed in 32 bits and wrap."""
    if target is None or target.capability("supports_int64"):
        return
    found: list = []
    spans: dict = {}

    def visit(node: Any) -> None:
        if isinstance(node, Allocate):
            spans.setdefault(node.buffer, node.span)
        buf = getattr(node, "buffer", None)
        if isinstance(node, (Allocate, BufferLoad, BufferStore)) and buf not in found and needs_int64_indices(buf):
            found.append(buf)
            spans.setdefault(buf, node.span)

    for buf in func.buffer_map.values():
        if needs_int64_indices(buf):
            found.append(buf)
    post_order_visit(func.body, visit)
    if not found:
        return
    buf = found[0]
    count = element_count(buf)
    lowest, highest = constant_extent(buf)
    if buf.strides:
        what = f"reaches element {highest if highest > _INT32_MAX else lowest} through its strides"
    else:
        what = f"has {count} elements"
    shape = ", ".join(str(d.value) for d in buf.shape)
    message = (
        f"{func.global_symbol}: buffer '{buf.name}' (shape ({shape})) {what}, past the {_INT32_MAX} "
        f"that 32-bit indices reach, and target '{target.kind.name}' has no int64 to index it: "
        f"split it into buffers of at most {_INT32_MAX} elements, or compile it for a target with int64"
    )
    span = spans.get(buf)
    raise TIRVerifyError(with_span(message, span), message, span)


_INT32_MAX = 2**31 - 1


def check_indices_at_run_time(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with every statement that accesses a buffer at an index known only at run time
    guarded by the bounds of that index (see the module docstring); unchanged when it has none.
    On a device ``target`` only statements in kernels are guarded, and their failures are
    recorded in a device buffer that the host reads after the kernels; the kernels' ``assert``
    statements become such records too (a kernel cannot raise). On a ``target`` without
    ``int64``, a buffer whose constant shape reaches past ``int32`` is refused by name (its
    indices, flattened, would need ``int64``)."""
    _refuse_int64_indices(func, target)
    if target is None or not is_device_target(target):
        body = _IndexChecks(func, _raised, in_kernels=False).visit_stmt(func.body)
    else:
        recorded = _Recorded(func, target)
        body = _IndexChecks(func, recorded, in_kernels=True).visit_stmt(func.body)
        if recorded.sites:  # (a body rewritten without a check site, such as a bound call, needs no buffer)
            body = recorded.around(body)
    return func if body is func.body else dataclasses.replace(func, body=body, buffer_map=dict(func.buffer_map))


__all__ = ["BOUNDS_KIND", "INDEX_ERRORS_RAISE", "INDEX_OUT_OF_BOUNDS", "check_indices_at_run_time"]
