"""Where a device function's shared and local buffers live.

TVMScript as Apache TVM writes it often allocates a kernel's shared and local buffers at the top
of the function (``A_shared = T.alloc_buffer(..., scope="shared")`` in the root block) and uses
them inside the thread-bound loops. A kernel can only hold them inside its launch, so
:func:`place_allocations` moves each such allocation down to where it is used:

* through thread-bound loops, sequences (when one statement of the sequence holds every use),
  ``if`` branches (when one branch does), let statements, asserts and other allocations;
* a ``shared`` buffer stops above the first loop bound to a thread (``threadIdx`` or a virtual
  thread): one copy per block; a ``local`` one may go below it (one copy per thread);
* never into a serial, parallel, vectorized or unrolled loop: a buffer allocated in a loop body
  would not keep its values from one iteration to the next.

An allocation that cannot reach a thread-bound loop this way (uses in several kernels, or in a
loop outside every thread binding) stays where it is, and the verifier says why. On a CPU target
shared buffers become ordinary (global) memory: the function's parallel loops are its threads,
and they all see it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from tvm.tir.expr import Buffer, BufferLoad, Var
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, StmtExprVisitor
from tvm.tir.stmt import Allocate, AssertStmt, BufferStore, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt

_MOVABLE_SCOPES = ("shared", "shared.dyn", "local")


class _Found(Exception):
    pass


class _UseFinder(StmtExprVisitor):
    """Raises :class:`_Found` at the first reference to ``data`` (the buffer's handle)."""

    def __init__(self, data: Var):
        self.data = data

    def visit_Var(self, e: Var) -> None:
        if e is self.data:
            raise _Found

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        if e.buffer.data is self.data:
            raise _Found
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        if s.buffer.data is self.data:
            raise _Found
        super().visit_BufferStore(s)


def _uses(node: Any, data: Var) -> bool:
    """Whether ``node`` (a statement or expression) refers to the buffer whose handle is ``data``."""
    if node is None:
        return False
    finder = _UseFinder(data)
    try:
        if isinstance(node, Stmt):
            finder.visit_stmt(node)
        else:
            finder.visit_expr(node)
    except _Found:
        return True
    return False


def _is_thread_loop(s: Stmt) -> bool:
    return isinstance(s, For) and s.kind is ForKind.THREAD_BINDING


def _place(s: Stmt, buf: Buffer, in_block: bool, in_thread: bool) -> tuple[Stmt, bool]:
    """``s`` with ``buf``'s allocation moved as far down as it may go, and whether the place found
    is inside the launch (a blockIdx loop for shared memory, any thread-bound loop for local)."""
    data = buf.data
    tag = (s.thread_tag or "") if isinstance(s, For) else ""
    if _is_thread_loop(s) and (buf.scope == "local" or tag.startswith("blockIdx")):
        if not (_uses(s.min, data) or _uses(s.extent, data)):
            body, ok = _place(s.body, buf, in_block or tag.startswith("blockIdx"), True)
            return _replace(s, body=body), ok
    elif isinstance(s, SeqStmt):
        users = [i for i, x in enumerate(s.seq) if _uses(x, data)]
        if len(users) == 1:
            (i,) = users
            inner, ok = _place(s.seq[i], buf, in_block, in_thread)
            return SeqStmt(s.seq[:i] + (inner,) + s.seq[i + 1 :], span=s.span), ok
    elif isinstance(s, (LetStmt, AssertStmt)):
        head = s.value if isinstance(s, LetStmt) else s.condition
        if not _uses(head, data):
            body, ok = _place(s.body, buf, in_block, in_thread)
            return _replace(s, body=body), ok
    elif isinstance(s, Allocate) and not any(_uses(x, data) for x in s.buffer.shape):
        body, ok = _place(s.body, buf, in_block, in_thread)
        return _replace(s, body=body), ok
    elif isinstance(s, IfThenElse) and not _uses(s.condition, data):
        then_use, else_use = _uses(s.then_case, data), _uses(s.else_case, data)
        if then_use != else_use:
            branch = s.then_case if then_use else s.else_case
            inner, ok = _place(branch, buf, in_block, in_thread)
            cases = {"then_case": inner} if then_use else {"else_case": inner}
            return _replace(s, **cases), ok
    placed = Allocate(buf, s, span=getattr(s, "span", None))
    return placed, (in_thread if buf.scope == "local" else in_block)


def _replace(s: Stmt, **fields: Any) -> Stmt:
    return dataclasses.replace(s, **fields)


class _Placer(StmtExprMutator):
    """Moves the movable allocations that sit outside every thread-bound loop."""

    def __init__(self, moved: Optional[set]) -> None:
        self.thread_depth = 0
        self.changed = False
        self.moved = moved

    def visit_For(self, s: For) -> Stmt:
        self.thread_depth += _is_thread_loop(s)
        try:
            return super().visit_For(s)
        finally:
            self.thread_depth -= _is_thread_loop(s)

    def visit_Allocate(self, s: Allocate) -> Stmt:
        body = self._body(self.visit_stmt(s.body))
        if self.thread_depth or s.buffer.scope not in _MOVABLE_SCOPES:
            return s if body is s.body else _replace(s, body=body)
        placed, ok = _place(body, s.buffer, False, False)
        if not ok:
            return s if body is s.body else _replace(s, body=body)
        self.changed = True
        if self.moved is not None:
            self.moved.add(s.buffer.data)
        return placed


class _SharedAsGlobal(StmtExprMutator):
    """Every shared buffer of a CPU function as an ordinary (global) one."""

    def __init__(self) -> None:
        self.renamed: dict[int, Buffer] = {}

    def mutate_buffer(self, b: Buffer) -> Buffer:
        if b.scope not in ("shared", "shared.dyn"):
            return b
        if id(b) not in self.renamed:
            self.renamed[id(b)] = dataclasses.replace(b, scope="global")
        return self.renamed[id(b)]


def place_allocations(func: PrimFunc, target: Any, moved: Optional[set] = None) -> PrimFunc:
    """``func`` with its shared and local allocations moved into the thread-bound loops that use
    them (see the module docstring); the handles of the buffers moved are added to ``moved``. On a
    CPU target, where the whole function is one block of threads (its parallel loops), shared
    memory is ordinary memory: shared buffers become global."""
    if getattr(getattr(target, "kind", None), "codegen", None) is None:
        mutator = _SharedAsGlobal()
        body = mutator.visit_stmt(func.body)
        return func if not mutator.renamed else dataclasses.replace(func, body=body)
    placer = _Placer(moved)
    body = placer.visit_stmt(func.body)
    if not placer.changed:
        return func
    return dataclasses.replace(func, body=body)
