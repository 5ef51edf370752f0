"""``local`` buffers that only one ``T.parallel`` loop uses are private to its iterations.

TVMScript allocates a ``local`` buffer where it is written (``L = T.alloc_buffer(...,
scope="local")`` at the top of the function), and a name assigned again (``acc = acc + x``)
becomes a one-element ``local`` buffer declared before its first assignment. When every use of
such a buffer lies inside one parallel loop, the iterations of that loop, which run at once on
the CPU's threads, would share it: a race. A parallel loop declares its iterations independent,
so none may carry a value in the buffer to another: :func:`private_to_parallel_iterations`
allocates the buffer inside the loop's body instead, one copy per iteration (per thread), as
the loop's meaning needs. Buffers used outside the loop too, inside a loop around it (which
could carry values from one run of the parallel loop to the next), or whose handle escapes, stay.
"""

from __future__ import annotations

from typing import Any, Optional

from tvm.tir.expr import BufferLoad, Var
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, StmtExprVisitor
from tvm.tir.stmt import Allocate, BufferStore, For, ForKind, Stmt


class _ParallelUses(StmtExprVisitor):
    """For each access of the memory ``data``: the loops around it (in ``body``), outermost first."""

    def __init__(self, data: Var) -> None:
        super().__init__()
        self.data, self.loops, self.uses, self.escapes = data, [], [], False

    def visit_For(self, s: For) -> None:
        self.loops.append(s)
        super().visit_For(s)
        self.loops.pop()

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        if e.buffer.data is self.data:
            self.uses.append(tuple(self.loops))
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        if s.buffer.data is self.data:
            self.uses.append(tuple(self.loops))
        super().visit_BufferStore(s)

    def visit_Var(self, e: Var) -> None:
        self.escapes = self.escapes or e is self.data  # the handle itself (an address, an extern call)


def _only_parallel_loop(body: Stmt, data: Var) -> Optional[For]:
    """The parallel loop around every use of ``data`` in ``body`` when it is the outermost loop
    there: a loop around it could carry values in the buffer from one of its runs to the next."""
    finder = _ParallelUses(data)
    finder.visit_stmt(body)
    if finder.escapes or not finder.uses:
        return None
    outermost = {use[0] if use else None for use in finder.uses}
    loop = outermost.pop() if len(outermost) == 1 else None
    return loop if loop is not None and loop.kind is ForKind.PARALLEL else None


class _AllocateIn(StmtExprMutator):
    """``loop`` with ``allocation``'s buffer allocated around its body."""

    def __init__(self, loop: For, allocation: Allocate) -> None:
        self.loop, self.allocation = loop, allocation

    def visit_For(self, s: For) -> Optional[Stmt]:
        if s is not self.loop:
            return super().visit_For(s)
        body = Allocate(self.allocation.buffer, s.body, self.allocation.span)
        return For(s.loop_var, s.min, s.extent, s.kind, body, s.thread_tag, dict(s.annotations), s.span)


class _Privatizer(StmtExprMutator):
    def visit_Allocate(self, s: Allocate) -> Optional[Stmt]:
        body = self._body(self.visit_stmt(s.body))
        loop = _only_parallel_loop(body, s.buffer.data) if s.buffer.scope == "local" else None
        if loop is not None:
            return _AllocateIn(loop, s).visit_stmt(body)
        return s if body is s.body else Allocate(s.buffer, body, s.span)


def private_to_parallel_iterations(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with each ``local`` buffer that only one parallel loop uses allocated inside that
    loop's body (see the module docstring); ``func`` itself when there is none."""
    body = _Privatizer().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


__all__ = ["private_to_parallel_iterations"]
