"""Barriers between the threads of a block where shared memory needs them.

Apache TVM's schedules do not write barriers: its lowering adds ``__syncthreads()`` wherever one
thread may read (or overwrite) shared memory another thread wrote (or read) since the last one.
:func:`insert_barriers` does the same for every kernel of a device function, conservatively:

* in a sequence of statements all threads of the block run, a barrier goes before a statement
  that touches a shared buffer written since the last barrier, or writes one read since then;
* in a loop all threads run, one also goes at the end of the body when the accesses after its
  last barrier conflict with those before its first (the next iteration's);
* statements under a condition that depends on the thread index (or in a thread loop narrower
  than its tag's launch extent) are not run by every thread, so no barrier can go inside them;
  there, a conflict on an element whose index depends on the thread (one thread writes what
  another reads) cannot be ordered; each thread re-reading an element it wrote itself needs none.

Explicit ``T.tvm_storage_sync("shared")`` statements count as barriers. The lowering runs this
on kernels that use shared buffers allocated outside the launch (Apache TVM's schedules) and on
kernels that use shared memory without a single barrier (Apache TVM's blocks allocate theirs
inside the launch and leave the barriers to the compiler). A kernel that has barriers of its own
is written with them (pipelines that overlap copies and compute need exactly those) and is left
as written. In a kernel that uses a moved buffer, a conflict that cannot be ordered is an error
naming the buffer; in a barrier-less kernel it gets the barriers that can be placed and a
:class:`SharedMemoryRaceWarning` naming the buffer (such code, Apache TVM's scans among them,
counts on the threads of a warp running in lockstep, as an NVIDIA GPU runs them; an emulated
device runs them one after another and computes something else).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from tvm.tir.analysis import any_node, expr_key, free_vars
from tvm.tir.expr import GE, GT, LE, LT, And, BufferLoad, Call, IntImm, PrimExpr, StringImm, Var
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprVisitor, post_order_visit
from tvm.tir.op import is_barrier, tvm_storage_sync
from tvm.tir.stmt import (
    Allocate,
    AssertStmt,
    Break,
    BufferStore,
    Continue,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
    statements,
)
from tvm.tir.stmt import seq as sequence

from .bounds import interval
from .fragments import memory_accesses
from .verify import TIRVerifyError, is_device_target, is_thread_index_loop, with_span
from tvm._user_warning import warn_at_caller

_SHARED = ("shared", "shared.dyn")


class SharedMemoryRaceWarning(UserWarning):
    """Threads of a block write and read one shared buffer under a condition on the thread index,
    where no barrier can order them: the result depends on how the device schedules its threads."""


def _is_barrier(s: Stmt) -> bool:
    return isinstance(s, Evaluate) and is_barrier(s.value)


class _SharedAccesses(StmtExprVisitor):
    """The shared buffers (by handle) a statement reads and writes, those of them indexed by the
    thread (``by_thread``: an index uses a variable of ``dependent``), the indices each is
    accessed at (``indices``: keys of the index expressions), and whether it holds a barrier."""

    def __init__(self, dependent: Optional[Callable[[PrimExpr], bool]] = None) -> None:
        self.reads: set[Var] = set()
        self.writes: set[Var] = set()
        self.by_thread: set[Var] = set()
        self.indices: dict[Var, set] = {}
        self.dependent = dependent
        self.barrier = False

    def _note(self, buf: Any, indices: tuple, into: set) -> None:
        if buf.scope in _SHARED:
            into.add(buf.data)
            self.indices.setdefault(buf.data, set()).add(tuple(expr_key(i) for i in indices))
            if self.dependent is not None and any(self.dependent(i) for i in indices):
                self.by_thread.add(buf.data)

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self._note(e.buffer, e.indices, self.reads)
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self._note(s.buffer, s.indices, self.writes)
        super().visit_BufferStore(s)

    def visit_Evaluate(self, s: Evaluate) -> None:
        self.barrier = self.barrier or _is_barrier(s)
        tiles = memory_accesses(s.value) if isinstance(s.value, Call) else []
        for first, written in tiles:  # the lanes of a warp share the tile: as if indexed by thread
            if first.buffer.scope in _SHARED:
                (self.writes if written else self.reads).add(first.buffer.data)
                self.by_thread.add(first.buffer.data)
        if not tiles:
            super().visit_Evaluate(s)


def _accesses(s: Stmt, dependent: Optional[Callable[[PrimExpr], bool]] = None) -> _SharedAccesses:
    acc = _SharedAccesses(dependent)
    acc.visit_stmt(s)
    return acc


def _divergent_exit(s: Optional[Stmt], depends: Callable[[Any], bool], under: bool = False) -> bool:
    """Whether loop body ``s`` holds a ``break`` or ``continue`` of its own loop under a condition
    that depends on the thread: from there on, only some threads run the loop."""
    if isinstance(s, (Break, Continue)):
        return under
    if isinstance(s, IfThenElse):
        inner = under or depends(s.condition)
        return _divergent_exit(s.then_case, depends, inner) or _divergent_exit(s.else_case, depends, inner)
    if isinstance(s, SeqStmt):
        return any(_divergent_exit(x, depends, under) for x in s.seq)
    if isinstance(s, (LetStmt, Allocate, AssertStmt)):
        return _divergent_exit(s.body, depends, under)
    return False  # nothing, or a nested loop, whose break and continue are its own


class _ThreadDependence(StmtExprVisitor):
    """The let variables and per-thread buffers of a kernel whose values may differ between the
    threads of a block: computed from a thread index, from another such value, or stored under
    a condition (or in a loop) that depends on one. A flag set from ``tx % 2`` divides the
    threads as ``tx % 2`` itself does. The sets grow in program order (a buffer stored with a
    thread's value after a loop is uniform in the loop), loops whole before their bodies are
    walked (a value stored late in an iteration is read early in the next)."""

    def __init__(self, thread_vars: set) -> None:
        self.vars: set = set(thread_vars)
        self.buffers: set = set()  # handles of local buffers
        self._conditions: list[bool] = []

    def depends(self, e: Any) -> bool:
        """Whether the value of expression ``e`` may differ between the threads of a block."""
        if any(v in self.vars for v in free_vars(e)):
            return True
        return any_node(e, lambda n: isinstance(n, BufferLoad) and n.buffer.data in self.buffers)

    def run(self, kernel: Stmt) -> "_ThreadDependence":
        """Grow the sets until nothing changes (a value may depend on one stored later in a loop)."""
        while True:
            before = (len(self.vars), len(self.buffers))
            self.visit_stmt(kernel)
            if (len(self.vars), len(self.buffers)) == before:
                return self

    def _under(self, condition: bool, body: Optional[Stmt]) -> None:
        if body is not None:
            self._conditions.append(condition)
            self.visit_stmt(body)
            self._conditions.pop()

    def note_let(self, s: LetStmt) -> None:
        """Count ``s``'s variable as the threads' own when its value is."""
        if self.depends(s.value):
            self.vars.add(s.var)

    def visit_LetStmt(self, s: LetStmt) -> None:
        self.note_let(s)
        self.visit_stmt(s.body)

    def visit_BufferStore(self, s: BufferStore) -> None:
        if s.buffer.scope == "local" and (
            any(self._conditions) or self.depends(s.value) or any(self.depends(i) for i in s.indices)
        ):
            self.buffers.add(s.buffer.data)

    def visit_IfThenElse(self, s: IfThenElse) -> None:
        divergent = self.depends(s.condition)
        self._under(divergent, s.then_case)
        self._under(divergent, s.else_case)

    def visit_For(self, s: For) -> None:
        bounds = self.depends(s.min) or self.depends(s.extent)
        self._under(bounds or _divergent_exit(s.body, self.depends), s.body)

    def visit_While(self, s: While) -> None:
        self._under(self.depends(s.condition) or _divergent_exit(s.body, self.depends), s.body)


def _conflict(reads: set, writes: set, then_reads: set, then_writes: set) -> set:
    """Buffers that ``then_*`` accesses race with, after ``reads``/``writes`` without a barrier."""
    return (writes & (then_reads | then_writes)) | (reads & then_writes)


class _Barriers:
    """Rewrites one kernel (a top-level thread-bound nest)."""

    def __init__(self, nest: For, strict: bool = True):
        self.strict = strict  # an unorderable conflict raises; else it is noted in ``racing``
        self.racing: set[str] = set()  # the buffers of the conflicts no barrier could order
        self.thread_vars: set[Var] = set()
        self.widest: dict[str, int] = {}  # the launch extent of each threadIdx tag
        self.ranges: dict[Var, tuple[int, int]] = {}  # of the thread indices of constant extent
        self.names: dict[Var, str] = {}
        post_order_visit(nest, self._note)
        self.dependence = _ThreadDependence(self.thread_vars)  # grown as the walk goes

    def _note(self, n: Any) -> None:
        if is_thread_index_loop(n):
            self.thread_vars.add(n.loop_var)
            if isinstance(n.extent, IntImm):
                self.widest[n.thread_tag] = max(self.widest.get(n.thread_tag, 0), n.extent.value)
                if isinstance(n.min, IntImm):
                    self.ranges[n.loop_var] = (n.min.value, n.min.value + n.extent.value - 1)
        elif isinstance(n, Allocate):
            self.names[n.buffer.data] = n.buffer.name

    def _depends_on_thread(self, e: Any) -> bool:
        return self.dependence.depends(e)

    def _divergent(self, condition: PrimExpr) -> bool:
        """Whether threads of one block may take different branches on ``condition``."""
        return self._depends_on_thread(condition)

    def stmt(self, s: Stmt, uniform: bool) -> Stmt:
        if isinstance(s, SeqStmt):
            return SeqStmt(tuple(self.seq(list(s.seq), uniform)[0]), span=s.span)
        if isinstance(s, For):
            return self._loop(s, uniform)
        if isinstance(s, IfThenElse):
            inner = uniform and not self._divergent(s.condition)
            then = self.stmt(s.then_case, inner)
            other = self.stmt(s.else_case, inner) if s.else_case is not None else None
            return dataclasses.replace(s, then_case=then, else_case=other)
        if isinstance(s, LetStmt):
            self.dependence.note_let(s)
            # the value is read before the body runs: a barrier may be needed between them
            parts = self.seq([Evaluate(s.value), *statements(s.body)], uniform)[0]
            return dataclasses.replace(s, body=sequence(*parts[1:]))
        if isinstance(s, While):
            return self._while(s, uniform)
        if isinstance(s, (Allocate, AssertStmt)):
            return dataclasses.replace(s, body=self.stmt(s.body, uniform))
        return s

    def _runs_alike(self, s: Any) -> bool:
        """Whether every thread of a block runs loop ``s`` as often as the others: its bounds or
        condition are the same for all, and no thread leaves it early on its own."""
        self.dependence.run(s)  # the values an iteration stores for the next count there too
        if isinstance(s, While):
            head = self._divergent(s.condition)
        else:
            head = self._depends_on_thread(s.min) or self._depends_on_thread(s.extent)
        return not head and not _divergent_exit(s.body, self._depends_on_thread)

    def _while(self, s: While, uniform: bool) -> Stmt:
        inner = uniform and self._runs_alike(s)
        # the condition is read before each iteration's body: a first statement of its own
        parts, lead, trail = self.seq([Evaluate(s.condition), *statements(s.body)], inner)
        parts = parts[1:]
        if inner and _conflict(*trail, *lead):
            parts.append(Evaluate(tvm_storage_sync("shared")))  # before the next condition
        return dataclasses.replace(s, body=sequence(*parts) if parts else Evaluate(IntImm("int32", 0)))

    def _loop(self, s: For, uniform: bool) -> Stmt:
        if s.kind is ForKind.THREAD_BINDING:
            tag = s.thread_tag or ""
            narrow = isinstance(s.extent, IntImm) and s.extent.value < self.widest.get(tag, 0)
            return dataclasses.replace(s, body=self.stmt(s.body, uniform and not narrow))
        inner = uniform and self._runs_alike(s)
        parts, lead, trail = self.seq(statements(s.body), inner)
        if inner and _conflict(*trail, *lead):
            parts.append(Evaluate(tvm_storage_sync("shared")))  # before the next iteration
        return dataclasses.replace(s, body=sequence(*parts))

    def seq(self, stmts: list[Stmt], uniform: bool) -> tuple[list[Stmt], tuple[set, set], tuple[set, set]]:
        """``stmts`` with the barriers they need, and the shared (reads, writes) before their
        first barrier and after their last (what a loop's next iteration meets)."""
        out: list[Stmt] = []
        reads: set = set()
        writes: set = set()
        by_thread: set = set()
        indices: dict = {}  # of each buffer's accesses since the last barrier
        lead_reads: set = set()
        lead_writes: set = set()
        leading = True  # no barrier yet
        for child in stmts:
            child = self.stmt(child, uniform)
            self.dependence.run(child)  # its lets and stores count for what follows
            if _is_barrier(child):
                out.append(child)
                reads, writes, by_thread, indices, leading = set(), set(), set(), {}, False
                continue
            acc = _accesses(child, self._depends_on_thread)
            racing = _conflict(reads, writes, acc.reads, acc.writes)
            if not uniform:
                # where only some threads run, each one reads what it wrote itself unless an
                # index depends on the thread and another index of the buffer is used too
                racing &= by_thread | acc.by_thread
                racing = {b for b in racing if len(indices.get(b, set()) | acc.indices.get(b, set())) > 1}
            if racing and not uniform:
                names = {self.names.get(v, v.name) for v in racing}
                if self.strict:
                    raise TIRVerifyError(f"shared buffer {', '.join(sorted(names))} {_UNORDERED}")
                self.racing |= names
            elif racing:
                out.append(Evaluate(tvm_storage_sync("shared")))
                reads, writes, by_thread, indices, leading = set(), set(), set(), {}, False
            out.append(child)
            if leading:
                lead_reads |= acc.reads
                lead_writes |= acc.writes
                leading = not acc.barrier
            if acc.barrier:
                reads, writes = set(acc.reads), set(acc.writes)  # conservative: all of it may follow
                by_thread, indices = set(acc.by_thread), {b: set(k) for b, k in acc.indices.items()}
            else:
                reads |= acc.reads
                writes |= acc.writes
                by_thread |= acc.by_thread
                for b, keys in acc.indices.items():
                    indices.setdefault(b, set()).update(keys)
        return out, (lead_reads, lead_writes), (reads, writes)


_UNORDERED = (
    "is written and read by different threads under a condition that depends on the thread index; a "
    "barrier cannot go there: write the shared memory, then T.tvm_storage_sync('shared') outside the "
    "condition, then read it"
)


def _always(condition: PrimExpr, ranges: dict[Var, tuple[int, int]]) -> bool:
    """Whether the comparison ``condition`` holds for every value of the variables in ``ranges``."""
    if not isinstance(condition, (LT, LE, GT, GE)):
        return False
    a, b = interval(condition.a, ranges), interval(condition.b, ranges)
    if a is None or b is None:
        return False
    return {LT: a[1] < b[0], LE: a[1] <= b[0], GT: a[0] > b[1], GE: a[0] >= b[1]}[type(condition)]


class _DivergentBarriers(_Barriers):
    """Finds a block-wide barrier that not every thread of its block reaches: one under a condition
    on the thread index (that some thread may find false), in a loop whose bounds depend on it, or
    in a thread loop narrower than its tag's launch."""

    def _divergent(self, condition: PrimExpr) -> bool:
        if isinstance(condition, And):  # a part the same for every thread cannot divide them
            return self._divergent(condition.a) or self._divergent(condition.b)
        return self._depends_on_thread(condition) and not _always(condition, self.ranges)

    def stmt(self, s: Stmt, uniform: bool) -> Stmt:
        if not uniform and _is_barrier(s) and _scope_of(s.value) in _BLOCK_SCOPES:
            message = (
                f"T.tvm_storage_sync({_scope_of(s.value)!r}) is not reached by every thread of the block: it is "
                "under a condition on the thread index, in a loop whose bounds depend on it, or in a thread loop "
                "narrower than the launch; a barrier waits for all threads (the kernel would hang or crash), so "
                "move it out of the condition or loop"
            )
            raise TIRVerifyError(with_span(message, s.span), message, s.span)
        if isinstance(s, While):
            self.stmt(s.body, uniform and self._runs_alike(s))
            return s
        if isinstance(s, LetStmt):
            self.dependence.note_let(s)
            self.stmt(s.body, uniform)
            return s
        return super().stmt(s, uniform)

    def seq(self, stmts: list[Stmt], uniform: bool) -> tuple[list[Stmt], tuple[set, set], tuple[set, set]]:
        for child in stmts:
            self.stmt(child, uniform)
            self.dependence.run(child)
        return stmts, (set(), set()), (set(), set())


#: Scopes of barriers every thread of a block must reach (a "warp" barrier involves its warp only).
_BLOCK_SCOPES = ("shared", "shared.dyn", "global")


def _scope_of(barrier: Call) -> str:
    arg = barrier.args[0] if barrier.args else None
    return arg.value if isinstance(arg, StringImm) else "shared"


def _each_kernel(s: Optional[Stmt], rewrite: Callable[[For], Stmt]) -> Optional[Stmt]:
    """The host code ``s`` with each kernel (a top-level thread-bound loop) replaced by
    ``rewrite(kernel)``; ``s`` itself where nothing changed."""
    if isinstance(s, For) and s.kind is ForKind.THREAD_BINDING:
        return rewrite(s)
    if isinstance(s, SeqStmt):
        seq = tuple(_each_kernel(x, rewrite) for x in s.seq)
        return s if all(a is b for a, b in zip(seq, s.seq)) else SeqStmt(seq, span=s.span)
    if isinstance(s, (LetStmt, Allocate, AssertStmt, For)):
        body = _each_kernel(s.body, rewrite)
        return s if body is s.body else dataclasses.replace(s, body=body)
    if isinstance(s, IfThenElse):
        then, other = _each_kernel(s.then_case, rewrite), _each_kernel(s.else_case, rewrite)
        return (
            s
            if then is s.then_case and other is s.else_case
            else dataclasses.replace(s, then_case=then, else_case=other)
        )
    return s


def check_barriers_reach_every_thread(func: PrimFunc, target: Any) -> PrimFunc:
    """``func`` unchanged; a TIRVerifyError naming the barrier when a kernel has a block-wide
    barrier that some thread of its block does not reach (see :class:`_DivergentBarriers`)."""
    if is_device_target(target):
        _each_kernel(func.body, lambda nest: _DivergentBarriers(nest).stmt(nest, True))
    return func


def insert_barriers(func: PrimFunc, target: Any, only: Optional[set] = None) -> PrimFunc:
    """``func`` with a barrier wherever a kernel's threads would race on shared memory (see the
    module docstring); with ``only``, just in kernels that use a shared buffer whose handle is in
    it (those allocated outside the launch, as Apache TVM's schedules write them) and in kernels
    without any barrier of their own. Unchanged for CPU targets and kernels without shared
    memory."""
    if not is_device_target(target):
        return func

    def rewrite(nest: For) -> Stmt:
        acc = _accesses(nest)
        used = acc.reads | acc.writes
        moved = only is None or bool(used & only)
        if not used or (not moved and acc.barrier):
            return nest
        barriers = _Barriers(nest, strict=moved)
        out = barriers.stmt(nest, True)
        if barriers.racing:
            names = ", ".join(sorted(barriers.racing))
            warn_at_caller(
                f"device function '{func.global_symbol}': shared buffer {names} {_UNORDERED}; as written, its "
                "threads race (the result is right only where a warp's threads run in lockstep, as on an NVIDIA "
                "GPU, and the conflicting threads share a warp)",
                SharedMemoryRaceWarning,
            )
        return out

    body = _each_kernel(func.body, rewrite)
    return func if body is func.body else dataclasses.replace(func, body=body)
