"""TIR statements."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, Optional, Tuple

from .expr import Buffer, PrimExpr, Var


class ForKind(Enum):
    """How a loop runs."""

    SERIAL = "serial"
    PARALLEL = "parallel"  # CPU: OpenMP
    VECTORIZED = "vectorized"  # CPU: SIMD (inner loop, constant extent)
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"  # GPU: bound to ``thread_tag``


THREAD_TAGS = (
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "vthread",
)


class Stmt:
    """Base of all statements."""

    span: Any = None


@dataclass(eq=False)
class BufferStore(Stmt):
    """``buffer[indices] = value``."""

    buffer: Buffer
    value: PrimExpr
    indices: Tuple[PrimExpr, ...]
    span: Any = None


@dataclass(eq=False)
class For(Stmt):
    """``for loop_var in range(min, min + extent)`` of the given kind.
    ``thread_tag`` is set iff ``kind is THREAD_BINDING`` (one of :data:`THREAD_TAGS`)."""

    loop_var: Var
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_tag: Optional[str] = None
    annotations: Dict[str, Any] = field(default_factory=dict)
    span: Any = None


@dataclass(eq=False)
class IfThenElse(Stmt):
    """``if condition: then_case else: else_case``."""

    condition: PrimExpr
    then_case: Stmt
    else_case: Optional[Stmt] = None
    span: Any = None


@dataclass(eq=False)
class SeqStmt(Stmt):
    """Statements in order."""

    seq: Tuple[Stmt, ...]
    span: Any = None


@dataclass(eq=False)
class LetStmt(Stmt):
    """``var = value`` visible in ``body``."""

    var: Var
    value: PrimExpr
    body: Stmt
    span: Any = None


@dataclass(eq=False)
class Allocate(Stmt):
    """Allocate ``buffer`` (scope ``local`` or ``shared``, or ``global`` for a host-side
    temporary) for the duration of ``body``."""

    buffer: Buffer
    body: Stmt
    span: Any = None


@dataclass(eq=False)
class Evaluate(Stmt):
    """Evaluate an expression for its side effect (e.g. ``Call("void", "tvm_storage_sync", ...)``)."""

    value: PrimExpr
    span: Any = None


#: The Python exceptions an assert may raise (``assert c, ("ValueError", ["message"])``).
ASSERT_KINDS = (
    "RuntimeError",
    "ValueError",
    "TypeError",
    "IndexError",
    "KeyError",
    "AttributeError",
    "AssertionError",
    "MemoryError",
)


@dataclass(eq=False)
class AssertStmt(Stmt):
    """Runtime check: raise ``message`` as a ``kind`` (one of :data:`ASSERT_KINDS`) when
    ``condition`` is false, else run ``body``."""

    condition: PrimExpr
    message: str
    body: Stmt
    span: Any = None
    kind: str = "RuntimeError"


@dataclass(eq=False)
class While(Stmt):
    """``while condition: body`` (the condition is evaluated before each iteration)."""

    condition: PrimExpr
    body: Stmt
    span: Any = None


@dataclass(eq=False)
class Break(Stmt):
    """``break``: leave the innermost serial ``for`` or ``while`` loop."""

    span: Any = None


@dataclass(eq=False)
class Continue(Stmt):
    """``continue``: go to the next iteration of the innermost serial ``for`` or ``while`` loop."""

    span: Any = None


def statements(s: Stmt) -> list[Stmt]:
    """The statements of a sequence, or ``s`` alone."""
    return list(s.seq) if isinstance(s, SeqStmt) else [s]


def seq(*stmts: Stmt) -> Stmt:
    """A SeqStmt, flattening nested sequences; a single statement is returned as is."""
    flat = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif s is not None:
            flat.append(s)
    return flat[0] if len(flat) == 1 else SeqStmt(tuple(flat))
