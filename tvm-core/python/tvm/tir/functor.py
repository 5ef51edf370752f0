"""Generic traversal of TIR: :class:`StmtExprVisitor` (read-only walk),
:class:`StmtExprMutator` (rebuilds only what changed) and :class:`ExprFunctor` (a value per
expression: the base of the C-family printer, whose values are C text, and of emitters that are
not C, whose values are, say, SSA ids).

Dispatch is by node class name: override ``visit_For(self, op)``, ``visit_BufferLoad(self, op)``,
``visit_Add(self, op)`` ... Binary nodes without their own method fall back to
``visit_BinaryOp``. Buffers reached from loads, stores and allocations go through
``visit_buffer`` (visitor) / ``mutate_buffer`` (mutator), so a pass can swap buffers in one place.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, Optional, TypeVar

from .expr import (
    BinaryOp,
    CmpOp,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    FloatImm,
    IntImm,
    Let,
    Not,
    PrimExpr,
    Select,
    StringImm,
    Var,
)
from .function import PrimFunc
from .stmt import (
    Allocate,
    AssertStmt,
    Break,
    BufferStore,
    Continue,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
    seq,
)


T = TypeVar("T")


class ExprFunctor(Generic[T]):
    """A value of type ``T`` per expression: :meth:`visit_expr` calls ``visit_<Class>(e)``; a
    comparison without its own method goes to ``visit_CmpOp``, other binary arithmetic to
    ``visit_BinaryOp`` (when defined); anything else to :meth:`unsupported_expr`."""

    def visit_expr(self, e: PrimExpr) -> T:
        """Dispatch on the expression's class."""
        fn = getattr(self, "visit_" + type(e).__name__, None)
        if fn is None and isinstance(e, CmpOp):
            fn = getattr(self, "visit_CmpOp", None)
        if fn is None and isinstance(e, BinaryOp):
            fn = getattr(self, "visit_BinaryOp", None)
        return fn(e) if fn is not None else self.unsupported_expr(e)

    def unsupported_expr(self, e: PrimExpr) -> T:
        """Called for an expression class without a method; raises TypeError by default."""
        raise TypeError(f"{type(self).__name__} cannot handle expression {type(e).__name__}")


class StmtExprVisitor:
    """Walks statements and expressions in evaluation order; override ``visit_<Node>``."""

    def visit_stmt(self, s: Stmt) -> None:
        """Dispatch on the statement's class."""
        getattr(self, "visit_" + type(s).__name__, self.generic_visit_stmt)(s)

    def visit_expr(self, e: PrimExpr) -> None:
        """Dispatch on the expression's class (binary ops fall back to ``visit_BinaryOp``)."""
        m = getattr(self, "visit_" + type(e).__name__, None)
        if m is None:
            m = self.visit_BinaryOp if isinstance(e, BinaryOp) else self.generic_visit_expr
        m(e)

    def generic_visit_stmt(self, s: Stmt) -> None:
        raise TypeError(f"unknown statement {type(s).__name__}")

    def generic_visit_expr(self, e: PrimExpr) -> None:
        raise TypeError(f"unknown expression {type(e).__name__}")

    def visit_buffer(self, b: Buffer) -> None:
        """Called for each buffer use; default does nothing."""

    # statements
    def visit_SeqStmt(self, s: SeqStmt) -> None:
        for x in s.seq:
            self.visit_stmt(x)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self.visit_buffer(s.buffer)
        for i in s.indices:
            self.visit_expr(i)
        self.visit_expr(s.value)

    def visit_For(self, s: For) -> None:
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        self.visit_stmt(s.body)

    def visit_IfThenElse(self, s: IfThenElse) -> None:
        self.visit_expr(s.condition)
        self.visit_stmt(s.then_case)
        if s.else_case is not None:
            self.visit_stmt(s.else_case)

    def visit_While(self, s: While) -> None:
        self.visit_expr(s.condition)
        self.visit_stmt(s.body)

    def visit_Break(self, s: Break) -> None:
        pass

    def visit_Continue(self, s: Continue) -> None:
        pass

    def visit_LetStmt(self, s: LetStmt) -> None:
        self.visit_expr(s.value)
        self.visit_stmt(s.body)

    def visit_Allocate(self, s: Allocate) -> None:
        self.visit_buffer(s.buffer)
        for x in s.buffer.shape:
            self.visit_expr(x)
        self.visit_stmt(s.body)

    def visit_Evaluate(self, s: Evaluate) -> None:
        self.visit_expr(s.value)

    def visit_AssertStmt(self, s: AssertStmt) -> None:
        self.visit_expr(s.condition)
        self.visit_stmt(s.body)

    # expressions
    def visit_Var(self, e: Var) -> None:
        pass

    def visit_IntImm(self, e: IntImm) -> None:
        pass

    def visit_FloatImm(self, e: FloatImm) -> None:
        pass

    def visit_StringImm(self, e: StringImm) -> None:
        pass

    def visit_Cast(self, e: Cast) -> None:
        self.visit_expr(e.value)

    def visit_BinaryOp(self, e: BinaryOp) -> None:
        self.visit_expr(e.a)
        self.visit_expr(e.b)

    def visit_Not(self, e: Not) -> None:
        self.visit_expr(e.a)

    def visit_Select(self, e: Select) -> None:
        self.visit_expr(e.condition)
        self.visit_expr(e.true_value)
        self.visit_expr(e.false_value)

    def visit_Let(self, e: Let) -> None:
        self.visit_expr(e.value)
        self.visit_expr(e.body)

    def visit_Call(self, e: Call) -> None:
        for a in e.args:
            self.visit_expr(a)

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self.visit_buffer(e.buffer)
        for i in e.indices:
            self.visit_expr(i)


def _same(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


class StmtExprMutator:
    """Rebuilds the tree bottom-up; a node whose children are unchanged is returned as is.

    Override ``visit_<Node>`` returning the replacement node (a statement may return None to be
    dropped from a sequence), and ``mutate_buffer`` to replace buffers everywhere.
    """

    def visit_stmt(self, s: Stmt) -> Optional[Stmt]:
        """Dispatch on the statement's class."""
        return getattr(self, "visit_" + type(s).__name__, self.generic_visit_stmt)(s)

    def visit_expr(self, e: PrimExpr) -> PrimExpr:
        """Dispatch on the expression's class (binary ops fall back to ``visit_BinaryOp``)."""
        m = getattr(self, "visit_" + type(e).__name__, None)
        if m is None:
            m = self.visit_BinaryOp if isinstance(e, BinaryOp) else self.generic_visit_expr
        return m(e)

    def generic_visit_stmt(self, s: Stmt) -> Stmt:
        raise TypeError(f"unknown statement {type(s).__name__}")

    def generic_visit_expr(self, e: PrimExpr) -> PrimExpr:
        raise TypeError(f"unknown expression {type(e).__name__}")

    def mutate_buffer(self, b: Buffer) -> Buffer:
        """The buffer to use in place of ``b``; default keeps it."""
        return b

    def _exprs(self, xs: tuple) -> tuple:
        out = tuple(self.visit_expr(x) for x in xs)
        return xs if _same(out, xs) else out

    @staticmethod
    def _body(s: Optional[Stmt]) -> Stmt:
        return s if s is not None else Evaluate(IntImm("int32", 0))

    # statements
    def visit_SeqStmt(self, s: SeqStmt) -> Optional[Stmt]:
        out = [self.visit_stmt(x) for x in s.seq]
        if _same(out, s.seq):
            return s
        kept = [x for x in out if x is not None]
        if not kept:
            return None
        r = seq(*kept)
        if isinstance(r, SeqStmt) and r.span is None:
            r.span = s.span
        return r

    def visit_BufferStore(self, s: BufferStore) -> Optional[Stmt]:
        buf = self.mutate_buffer(s.buffer)
        idx = self._exprs(s.indices)
        val = self.visit_expr(s.value)
        if buf is s.buffer and idx is s.indices and val is s.value:
            return s
        return BufferStore(buf, val, idx, s.span)

    def visit_For(self, s: For) -> Optional[Stmt]:
        return self.rebuild_for(s, self.visit_expr(s.min), self.visit_expr(s.extent))

    def rebuild_for(self, s: For, mn: PrimExpr, ext: PrimExpr) -> Optional[Stmt]:
        """``s`` with bounds already visited (``mn``, ``ext``) and its body visited."""
        body = self._body(self.visit_stmt(s.body))
        if mn is s.min and ext is s.extent and body is s.body:
            return s
        return For(s.loop_var, mn, ext, s.kind, body, s.thread_tag, dict(s.annotations), s.span)

    def visit_IfThenElse(self, s: IfThenElse) -> Optional[Stmt]:
        return self.rebuild_if(s, self.visit_expr(s.condition))

    def rebuild_if(self, s: IfThenElse, c: PrimExpr) -> Optional[Stmt]:
        """``s`` with its condition already visited (``c``) and its branches visited."""
        t = self._body(self.visit_stmt(s.then_case))
        e = self.visit_stmt(s.else_case) if s.else_case is not None else None
        if c is s.condition and t is s.then_case and e is s.else_case:
            return s
        return IfThenElse(c, t, e, s.span)

    def visit_While(self, s: While) -> Optional[Stmt]:
        c = self.visit_expr(s.condition)
        body = self._body(self.visit_stmt(s.body))
        if c is s.condition and body is s.body:
            return s
        return While(c, body, s.span)

    def visit_Break(self, s: Break) -> Optional[Stmt]:
        return s

    def visit_Continue(self, s: Continue) -> Optional[Stmt]:
        return s

    def visit_LetStmt(self, s: LetStmt) -> Optional[Stmt]:
        v = self.visit_expr(s.value)
        body = self._body(self.visit_stmt(s.body))
        if v is s.value and body is s.body:
            return s
        return LetStmt(s.var, v, body, s.span)

    def visit_Allocate(self, s: Allocate) -> Optional[Stmt]:
        buf = self.mutate_buffer(s.buffer)
        body = self._body(self.visit_stmt(s.body))
        if buf is s.buffer and body is s.body:
            return s
        return Allocate(buf, body, s.span)

    def visit_Evaluate(self, s: Evaluate) -> Optional[Stmt]:
        v = self.visit_expr(s.value)
        return s if v is s.value else Evaluate(v, s.span)

    def visit_AssertStmt(self, s: AssertStmt) -> Optional[Stmt]:
        c = self.visit_expr(s.condition)
        body = self._body(self.visit_stmt(s.body))
        if c is s.condition and body is s.body:
            return s
        return AssertStmt(c, s.message, body, s.span, s.kind)

    # expressions
    def visit_Var(self, e: Var) -> PrimExpr:
        return e

    def visit_IntImm(self, e: IntImm) -> PrimExpr:
        return e

    def visit_FloatImm(self, e: FloatImm) -> PrimExpr:
        return e

    def visit_StringImm(self, e: StringImm) -> PrimExpr:
        return e

    def visit_Cast(self, e: Cast) -> PrimExpr:
        v = self.visit_expr(e.value)
        return e if v is e.value else Cast(e.dtype, v, e.span)

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return e if (a is e.a and b is e.b) else type(e)(a, b, e.span)

    def visit_Not(self, e: Not) -> PrimExpr:
        a = self.visit_expr(e.a)
        return e if a is e.a else Not(a, span=e.span)

    def visit_Select(self, e: Select) -> PrimExpr:
        c, t, f = (self.visit_expr(x) for x in (e.condition, e.true_value, e.false_value))
        if c is e.condition and t is e.true_value and f is e.false_value:
            return e
        return Select(c, t, f, e.dtype, e.span)

    def visit_Let(self, e: Let) -> PrimExpr:
        v, b = self.visit_expr(e.value), self.visit_expr(e.body)
        return e if (v is e.value and b is e.body) else Let(e.var, v, b, e.dtype, e.span)

    def visit_Call(self, e: Call) -> PrimExpr:
        args = self._exprs(e.args)
        return e if args is e.args else Call(e.dtype, e.op, args, e.span)

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        buf = self.mutate_buffer(e.buffer)
        idx = self._exprs(e.indices)
        if buf is e.buffer and idx is e.indices:
            return e
        return BufferLoad(buf, idx, buf.dtype if buf.dtype != e.buffer.dtype else e.dtype, e.span)


class BufferReplacer(StmtExprMutator):
    """Replaces buffers everywhere they appear (parameters, allocations, loads, stores): each
    buffer for which :meth:`replacement` gives changed fields is replaced by one copy with them."""

    def __init__(self) -> None:
        self.replaced: dict[int, Buffer] = {}

    def replacement(self, b: Buffer) -> Optional[dict]:
        """The fields of ``b`` to change (``{"dtype": "uint8"}``), or None to keep it."""
        return None

    def mutate_buffer(self, b: Buffer) -> Buffer:
        new = self.replaced.get(id(b))
        if new is None:
            fields = self.replacement(b)
            if not fields:
                return b
            new = self.replaced[id(b)] = dataclasses.replace(b, **fields)
        return new

    def rewrite(self, func: PrimFunc) -> PrimFunc:
        """``func`` with its buffers replaced; ``func`` itself when nothing changed."""
        params = {p: self.mutate_buffer(b) for p, b in func.buffer_map.items()}
        body = self._body(self.visit_stmt(func.body))
        if not self.replaced and body is func.body:
            return func
        return dataclasses.replace(func, body=body, buffer_map=params)


def post_order_visit(node: Any, fn) -> None:
    """Call ``fn(node)`` on every statement and expression below ``node`` (children first)."""

    class _V(StmtExprVisitor):
        def visit_stmt(self, s):
            super().visit_stmt(s)
            fn(s)

        def visit_expr(self, e):
            super().visit_expr(e)
            fn(e)

    v = _V()
    if isinstance(node, Stmt):
        v.visit_stmt(node)
    else:
        v.visit_expr(node)


class Substitute(StmtExprMutator):
    """Replace Vars by expressions: ``Substitute({var: expr}).visit_stmt(s)``."""

    def __init__(self, vmap: dict):
        self.vmap = vmap

    def visit_Var(self, e: Var) -> PrimExpr:
        return self.vmap.get(e, e)


def substitute(node: Any, vmap: dict) -> Any:
    """``node`` (statement or expression) with each Var in ``vmap`` replaced."""
    if not vmap:
        return node
    m = Substitute(vmap)
    return m.visit_stmt(node) if isinstance(node, Stmt) else m.visit_expr(node)
