"""TIR statements."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Dict, Optional, Tuple

from .expr import Buffer, PrimExpr, StringImm, Var, value_text, expr_field, index_fields


class ForKind(Enum):
    """How a loop runs."""

    SERIAL = "serial"
    PARALLEL = "parallel"  # CPU: OpenMP
    VECTORIZED = "vectorized"  # CPU: SIMD (inner loop, constant extent)
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"  # GPU: bound to ``thread_tag``

    @classmethod
    def of(cls, kind: Any) -> "ForKind":
        """``kind`` as a ForKind: a ForKind, its value (``"serial"``), or the number Apache
        TVM's ``ForKind`` enum has for it (``0`` is SERIAL ... ``4`` THREAD_BINDING)."""
        if isinstance(kind, cls):
            return kind
        if isinstance(kind, int) and not isinstance(kind, bool) and 0 <= kind < len(_APACHE_FOR_KINDS):
            return _APACHE_FOR_KINDS[int(kind)]
        if isinstance(kind, str) and kind in cls._value2member_map_:
            return cls(kind)
        choices = ", ".join(f"ForKind.{k.name}" for k in cls)
        raise TypeError(
            f"tir.For: kind must be a ForKind ({choices}), its value such as 'serial', or Apache TVM's "
            f"number for it (0 to {len(_APACHE_FOR_KINDS) - 1}), got {value_text(kind)}"
        )


#: Apache TVM's ``ForKind`` numbering (``ForKind.SERIAL == 0``).
_APACHE_FOR_KINDS = (
    ForKind.SERIAL,
    ForKind.PARALLEL,
    ForKind.VECTORIZED,
    ForKind.UNROLLED,
    ForKind.THREAD_BINDING,
)


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


def stmt_field(node: str, name: str, value: Any, optional: bool = False) -> Optional[Stmt]:
    """The statement field ``name`` of the node ``node``, checked where it is built: a Stmt (or
    None where ``optional``); anything else is a TypeError naming the field."""
    if isinstance(value, Stmt) or (optional and value is None):
        return value
    hint = "wrap an expression in tir.Evaluate(...)" if isinstance(value, PrimExpr) else "pass a statement"
    none = " or None" if optional else ""
    raise TypeError(
        f"tir.{node}: {name} must be a tir.Stmt{none}, got {value_text(value)}; {hint} "
        f"(tir.Evaluate(0) is a statement that does nothing)"
    )


def _checked(node: str, name: str, value: Any, kind: type, fix: str) -> Any:
    """``value`` when it is a ``kind``, else a TypeError naming the field and the fix."""
    if not isinstance(value, kind):
        raise TypeError(f"tir.{node}: {name} must be a tir.{kind.__name__}, got {value_text(value)}; {fix}")
    return value


_BUFFER_FIX = "declare one with tir.decl_buffer"
_VAR_FIX = "bind a Var (tir.Var('i', 'int32'))"


@dataclass(eq=False)
class BufferStore(Stmt):
    """``buffer[indices] = value``."""

    buffer: Buffer
    value: PrimExpr
    indices: Tuple[PrimExpr, ...]
    span: Any = None

    def __post_init__(self) -> None:
        self.buffer = _checked("BufferStore", "buffer", self.buffer, Buffer, _BUFFER_FIX)
        self.value = expr_field("BufferStore", "value", self.value, self.buffer)
        self.indices = index_fields("BufferStore", self.indices)


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

    def __post_init__(self) -> None:
        self.loop_var = _checked("For", "loop_var", self.loop_var, Var, _VAR_FIX)
        self.min = expr_field("For", "min", self.min, self.loop_var)
        self.extent = expr_field("For", "extent", self.extent, self.loop_var)
        self.kind = ForKind.of(self.kind)
        self.body = stmt_field("For", "body", self.body)


@dataclass(eq=False)
class IfThenElse(Stmt):
    """``if condition: then_case else: else_case``."""

    condition: PrimExpr
    then_case: Stmt
    else_case: Optional[Stmt] = None
    span: Any = None

    def __post_init__(self) -> None:
        self.condition = expr_field("IfThenElse", "condition", self.condition, "bool")
        self.then_case = stmt_field("IfThenElse", "then_case", self.then_case)
        self.else_case = stmt_field("IfThenElse", "else_case", self.else_case, optional=True)


@dataclass(eq=False)
class SeqStmt(Stmt):
    """Statements in order."""

    seq: Tuple[Stmt, ...]
    span: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.seq, (tuple, list)):
            raise TypeError(f"tir.SeqStmt: seq must be a list or tuple of statements, got {value_text(self.seq)}")
        self.seq = tuple(stmt_field("SeqStmt", f"seq[{k}]", s) for k, s in enumerate(self.seq))


@dataclass(eq=False)
class LetStmt(Stmt):
    """``var = value`` visible in ``body``."""

    var: Var
    value: PrimExpr
    body: Stmt
    span: Any = None

    def __post_init__(self) -> None:
        self.var = _checked("LetStmt", "var", self.var, Var, _VAR_FIX)
        self.value = expr_field("LetStmt", "value", self.value, self.var)
        self.body = stmt_field("LetStmt", "body", self.body)


@dataclass(eq=False)
class Allocate(Stmt):
    """Allocate ``buffer`` (scope ``local`` or ``shared``, or ``global`` for a host-side
    temporary) for the duration of ``body``."""

    buffer: Buffer
    body: Stmt
    span: Any = None

    def __post_init__(self) -> None:
        self.buffer = _checked("Allocate", "buffer", self.buffer, Buffer, _BUFFER_FIX)
        self.body = stmt_field("Allocate", "body", self.body)


@dataclass(eq=False)
class Evaluate(Stmt):
    """Evaluate an expression for its side effect (e.g. ``Call("void", "tvm_storage_sync", ...)``)."""

    value: PrimExpr
    span: Any = None

    def __post_init__(self) -> None:
        self.value = expr_field("Evaluate", "value", self.value)


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

    def __post_init__(self) -> None:
        self.condition = expr_field("AssertStmt", "condition", self.condition, "bool")
        if isinstance(self.message, StringImm):  # Apache TVM's message is a StringImm
            self.message = self.message.value
        if not isinstance(self.message, str):
            raise TypeError(
                f"tir.AssertStmt: message must be a str (or a tir.StringImm), got {value_text(self.message)}; "
                f"pass the text the failed assertion raises"
            )
        self.body = stmt_field("AssertStmt", "body", self.body)


@dataclass(eq=False)
class While(Stmt):
    """``while condition: body`` (the condition is evaluated before each iteration)."""

    condition: PrimExpr
    body: Stmt
    span: Any = None

    def __post_init__(self) -> None:
        self.condition = expr_field("While", "condition", self.condition, "bool")
        self.body = stmt_field("While", "body", self.body)


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
