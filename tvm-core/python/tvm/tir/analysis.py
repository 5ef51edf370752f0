"""Analyses over TIR: structural equality, free variables, used buffers.

:func:`structural_equal` compares two functions/statements/expressions up to renaming of the
variables and buffers they define (loop variables, let variables, parameters, allocations).
Free variables (defined outside the compared nodes) must be the same objects unless
``map_free_vars=True``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional

from tvm._recursion import with_room

from . import dtype as _dt
from .expr import (
    Add,
    And,
    BinaryOp,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    FloatImm,
    IntImm,
    Let,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    StringImm,
    Sub,
    Var,
)
from .function import IRModule, PrimFunc
from .functor import StmtExprVisitor, post_order_visit
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
)


class _NotEqual(Exception):
    pass


class _Eq:
    def __init__(self, map_free_vars: bool):
        self.map_free = map_free_vars
        self.vars: dict = {}
        self.rvars: dict = {}
        self.bufs: dict = {}
        self.rbufs: dict = {}
        self.in_shape = False  # a buffer's shape, strides or offset defines the variables it names
        # a parameter buffer's data Var of its own -> its parameter, per side (see param_data)
        self.data_alias: tuple[dict, dict] = ({}, {})

    def fail(self):
        raise _NotEqual()

    def check(self, cond: bool):
        if not cond:
            raise _NotEqual()

    def define(self, a: Var, b: Var):
        self.check(a.dtype == b.dtype)
        self.vars[a] = b
        self.rvars[b] = a

    def param_data(self, side: int, param: Var, buf: Buffer) -> None:
        """A parameter's buffer points at the parameter's memory: its data is the parameter itself
        (as TVMScript declares it) or a Var of its own (``decl_buffer`` + ``buffer_map``); either
        stands for the parameter, so a function built by hand equals its parsed script."""
        if buf.data is not None and buf.data is not param and buf.data.dtype == param.dtype:
            self.data_alias[side][buf.data] = param

    def var(self, a: Var, b: Var):
        self.check(isinstance(b, Var) and a.dtype == b.dtype)
        a, b = self.data_alias[0].get(a, a), self.data_alias[1].get(b, b)
        if a in self.vars or b in self.rvars:
            self.check(self.vars.get(a) is b)
            return
        if a is b:
            return
        self.check(self.map_free or self.in_shape)
        self.define(a, b)

    def buffer(self, a: Buffer, b: Buffer, define: bool = False):
        if a in self.bufs or b in self.rbufs:
            self.check(self.bufs.get(a) is b)
            return
        if a is b and not define:
            return
        data_a, data_b = self.data_alias[0].get(a.data, a.data), self.data_alias[1].get(b.data, b.data)
        # a buffer used where the compared code does not define it is the same memory on both
        # sides (A[i] and B[i] differ however alike A and B are), unless free names may be mapped
        self.check(define or self.map_free or data_a is data_b or self.vars.get(data_a) is data_b)
        self.check(
            a.dtype == b.dtype
            and a.scope == b.scope
            and len(a.shape) == len(b.shape)
            and len(a.strides) == len(b.strides)
        )
        self.bufs[a] = b
        self.rbufs[b] = a
        if data_a is not None and data_b is not None:
            if data_a in self.vars or data_b in self.rvars:
                self.check(self.vars.get(data_a) is data_b)
            else:
                self.define(data_a, data_b)
        for x, y in zip(a.shape, b.shape):
            self.shape_expr(x, y)
        for x, y in zip(a.strides, b.strides):
            self.shape_expr(x, y)
        self.shape_expr(a.elem_offset, b.elem_offset)

    def shape_expr(self, x: PrimExpr, y: PrimExpr):
        # symbolic shape variables are defined by their first appearance in a buffer shape,
        # whole (n) or inside an expression (n + 1)
        outer, self.in_shape = self.in_shape, True
        try:
            self.expr(x, y)
        finally:
            self.in_shape = outer

    def exprs(self, xs, ys):
        self.check(len(xs) == len(ys))
        for x, y in zip(xs, ys):
            self.expr(x, y)

    def expr(self, a: PrimExpr, b: PrimExpr):
        if a is b and not self.vars:
            return
        self.check(type(a) is type(b) and a.dtype == b.dtype)
        if isinstance(a, Var):
            self.var(a, b)
        elif isinstance(a, IntImm):
            self.check(a.value == b.value)
        elif isinstance(a, FloatImm):
            self.check(a.value == b.value or (math.isnan(a.value) and math.isnan(b.value)))
        elif isinstance(a, StringImm):
            self.check(a.value == b.value)
        elif isinstance(a, Cast):
            self.expr(a.value, b.value)
        elif isinstance(a, BinaryOp):
            self.expr(a.a, b.a)
            self.expr(a.b, b.b)
        elif isinstance(a, Not):
            self.expr(a.a, b.a)
        elif isinstance(a, Select):
            self.exprs((a.condition, a.true_value, a.false_value), (b.condition, b.true_value, b.false_value))
        elif isinstance(a, Let):
            self.expr(a.value, b.value)
            self.define(a.var, b.var)
            self.expr(a.body, b.body)
        elif isinstance(a, Call):
            self.check(a.op == b.op)
            self.exprs(a.args, b.args)
        elif isinstance(a, BufferLoad):
            self.buffer(a.buffer, b.buffer)
            self.exprs(a.indices, b.indices)
        else:
            self.fail()

    def stmt(self, a: Optional[Stmt], b: Optional[Stmt]):
        if a is None or b is None:
            self.check(a is None and b is None)
            return
        self.check(type(a) is type(b))
        if isinstance(a, SeqStmt):
            self.check(len(a.seq) == len(b.seq))
            for x, y in zip(a.seq, b.seq):
                self.stmt(x, y)
        elif isinstance(a, BufferStore):
            self.buffer(a.buffer, b.buffer)
            self.exprs(a.indices, b.indices)
            self.expr(a.value, b.value)
        elif isinstance(a, For):
            self.check(a.kind == b.kind and a.thread_tag == b.thread_tag)
            self.expr(a.min, b.min)
            self.expr(a.extent, b.extent)
            self.define(a.loop_var, b.loop_var)
            self.attr_value(dict(a.annotations or {}), dict(b.annotations or {}))  # n + 1, NaN: by value
            self.stmt(a.body, b.body)
        elif isinstance(a, IfThenElse):
            self.expr(a.condition, b.condition)
            self.stmt(a.then_case, b.then_case)
            self.stmt(a.else_case, b.else_case)
        elif isinstance(a, LetStmt):
            self.expr(a.value, b.value)
            self.define(a.var, b.var)
            self.stmt(a.body, b.body)
        elif isinstance(a, Allocate):
            self.buffer(a.buffer, b.buffer, define=True)
            self.stmt(a.body, b.body)
        elif isinstance(a, Evaluate):
            self.expr(a.value, b.value)
        elif isinstance(a, AssertStmt):
            self.check(a.message == b.message)
            self.expr(a.condition, b.condition)
            self.stmt(a.body, b.body)
        elif isinstance(a, While):
            self.expr(a.condition, b.condition)
            self.stmt(a.body, b.body)
        elif not isinstance(a, (Break, Continue)):  # those two have no fields
            self.fail()

    def func(self, a: PrimFunc, b: PrimFunc):
        self.check(len(a.params) == len(b.params))
        for x, y in zip(a.params, b.params):
            self.define(x, y)
            if x in a.buffer_map and y in b.buffer_map:
                self.param_data(0, x, a.buffer_map[x])
                self.param_data(1, y, b.buffer_map[y])
        self.attr_value(a.attrs, b.attrs)  # after the parameters: a kernel's bounds name them
        for x, y in zip(a.params, b.params):
            self.check((x in a.buffer_map) == (y in b.buffer_map))
            if x in a.buffer_map:
                self.buffer(a.buffer_map[x], b.buffer_map[y], define=True)
        self.stmt(a.body, b.body)

    def attr_value(self, a: Any, b: Any):
        """Attribute values: expressions compared as expressions (over the mapped variables),
        containers element by element, anything else by ``_attr_key``."""
        if isinstance(a, PrimExpr) or isinstance(b, PrimExpr):
            self.check(isinstance(a, PrimExpr) and isinstance(b, PrimExpr))
            self.expr(a, b)
        elif isinstance(a, dict) and isinstance(b, dict):
            self.check(set(a) == set(b))
            for k in a:
                self.attr_value(a[k], b[k])
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            self.check(type(a) is type(b) and len(a) == len(b))
            for x, y in zip(a, b):
                self.attr_value(x, y)
        else:
            self.check(_attr_key(a) == _attr_key(b))


def _attr_key(v: Any) -> Any:
    """An attribute value in a form ``==`` compares: an expression as its TVMScript text, a
    float as its repr (a NaN equals a NaN)."""
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, dict):
        return tuple(sorted((str(k), _attr_key(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_attr_key(x) for x in v))
    if isinstance(v, PrimExpr):
        from .printer import expr_text

        return ("expr", expr_text(v))
    return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)


def _attrs_eq(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(_attr_key(a[k]) == _attr_key(b[k]) for k in a)


@with_room("comparing IR")
def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """True when ``a`` and ``b`` (IRModules, PrimFuncs, statements or expressions) have the same
    structure and dtypes, up to consistent renaming of the variables and buffers they define; two
    modules hold equal functions under the same names and equal attributes."""
    if isinstance(a, IRModule) or isinstance(b, IRModule):
        if not (isinstance(a, IRModule) and isinstance(b, IRModule)):
            return False
        if set(a.functions) != set(b.functions) or not _attrs_eq(a.attrs, b.attrs):
            return False
        return all(structural_equal(f, b.functions[name], map_free_vars) for name, f in a.functions.items())
    eq = _Eq(map_free_vars)
    try:
        if isinstance(a, PrimFunc):
            eq.check(isinstance(b, PrimFunc))
            eq.func(a, b)
        elif isinstance(a, Stmt):
            eq.check(isinstance(b, Stmt))
            eq.stmt(a, b)
        elif isinstance(a, PrimExpr):
            eq.check(isinstance(b, PrimExpr))
            eq.expr(a, b)
        elif isinstance(a, Buffer):
            eq.check(isinstance(b, Buffer))
            eq.buffer(a, b, define=True)  # two buffers compared as declarations
        else:
            return a == b
    except _NotEqual:
        return False
    return True


def assert_structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> None:
    """Raise ValueError showing both sides when they are not structurally equal."""
    if not structural_equal(a, b, map_free_vars):

        def show(x):
            return x.script() if isinstance(x, (PrimFunc, IRModule)) else repr(x)

        raise ValueError(f"not structurally equal:\n--- lhs\n{show(a)}\n--- rhs\n{show(b)}")


class _FreeVars(StmtExprVisitor):
    def __init__(self, defined=()):
        self.bound: set = set(defined)
        self.order: list = []
        self.seen: set = set()
        self.buffers: list = []
        self.buf_seen: set = set()
        self.allocated: set = set()

    def use(self, v: Var):
        if v not in self.bound and v not in self.seen:
            self.seen.add(v)
            self.order.append(v)

    def visit_Var(self, e: Var) -> None:
        self.use(e)

    def visit_buffer(self, b: Buffer) -> None:
        # a view of an allocation in scope (T.decl_buffer(..., data=X.data)) is not free either
        if b not in self.allocated and b.data not in self.bound and b not in self.buf_seen:
            self.buf_seen.add(b)
            self.buffers.append(b)

    def visit_For(self, s: For) -> None:
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        attr_exprs_mapped(dict(s.annotations or {}), self.visit_expr)  # a hint may name a parameter
        self.bound.add(s.loop_var)
        self.visit_stmt(s.body)

    def visit_LetStmt(self, s: LetStmt) -> None:
        self.visit_expr(s.value)
        self.bound.add(s.var)
        self.visit_stmt(s.body)

    def visit_Let(self, e: Let) -> None:
        self.visit_expr(e.value)
        self.bound.add(e.var)
        self.visit_expr(e.body)

    def visit_Allocate(self, s: Allocate) -> None:
        self.allocated.add(s.buffer)
        self.bound.add(s.buffer.data)
        for x in s.buffer.shape:
            self.visit_expr(x)
        self.visit_stmt(s.body)


def attr_exprs_mapped(value: Any, fn: Any) -> Any:
    """An attribute's value (an expression, or lists, tuples and dicts of them and of other
    values) with ``fn`` applied to each expression in it."""
    if isinstance(value, (list, tuple)):
        return type(value)(attr_exprs_mapped(x, fn) for x in value)
    if isinstance(value, dict):
        return {k: attr_exprs_mapped(x, fn) for k, x in value.items()}
    return fn(value) if isinstance(value, PrimExpr) else value


def leaves_loop_early(body: Optional[Stmt]) -> bool:
    """Whether a loop ``body`` holds a ``break`` or ``continue`` of its own loop (those of inner
    loops leave only the inner loop): then not every iteration runs to its end."""
    if isinstance(body, (Break, Continue)):
        return True
    if body is None or isinstance(body, (For, While)):
        return False
    if isinstance(body, SeqStmt):
        return any(leaves_loop_early(x) for x in body.seq)
    if isinstance(body, IfThenElse):
        return leaves_loop_early(body.then_case) or leaves_loop_early(body.else_case)
    return leaves_loop_early(getattr(body, "body", None))


def size_upper_bound(e: PrimExpr) -> Optional[int]:
    """A constant no smaller than the size ``e`` (an allocation's extent, whose factors are
    non-negative), or None: ``T.min(n, 64) * 2`` is at most 128 whatever ``n`` is."""
    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, Cast) and _dt.is_integer(e.dtype):
        return size_upper_bound(e.value)
    if isinstance(e, Select):
        a, b = size_upper_bound(e.true_value), size_upper_bound(e.false_value)
        return None if a is None or b is None else max(a, b)
    if not isinstance(e, BinaryOp):
        return None
    a, b = size_upper_bound(e.a), size_upper_bound(e.b)
    kind = type(e).__name__
    if kind == "Min":
        return b if a is None else a if b is None else min(a, b)
    if a is None or b is None:
        return None
    if kind in ("Add", "Max"):
        return a + b if kind == "Add" else max(a, b)
    if kind == "Mul":
        return a * b
    if kind == "FloorDiv" and isinstance(e.b, IntImm) and e.b.value > 0:
        return a // e.b.value
    return None


def free_vars(node: Any, defined=()) -> list[Var]:
    """Vars used in ``node`` (statement or expression) but not defined inside it, in order of first
    use. Buffer data handles are not included (see :func:`used_buffers`); ``defined`` lists vars to
    treat as already bound."""
    v = _FreeVars(defined)
    if isinstance(node, Stmt):
        v.visit_stmt(node)
    else:
        v.visit_expr(node)
    return v.order


def used_buffers(node: Stmt) -> list[Buffer]:
    """Buffers loaded or stored in ``node`` that are not allocated inside it, in order of first use."""
    return free_vars_and_buffers(node)[1]


def free_vars_and_buffers(node: Stmt) -> tuple[list[Var], list[Buffer]]:
    """:func:`free_vars` and :func:`used_buffers` of ``node`` from one walk."""
    v = _FreeVars()
    v.visit_stmt(node)
    return v.order, v.buffers


def buffers_touched(node: Any) -> list[Buffer]:
    """The buffers the expression or statement reads or writes, in order of use."""
    found = []

    class _V(StmtExprVisitor):
        def visit_buffer(self, b):
            found.append(b)

    _V().visit_stmt(node) if isinstance(node, Stmt) else _V().visit_expr(node)
    return found


def expr_uses_buffer(node: Any) -> bool:
    """True when the expression or statement reads or writes any buffer."""
    return bool(buffers_touched(node))


class _Found(Exception):
    pass


class _HandleUse(StmtExprVisitor):
    """Raises :class:`_Found` at the first use of the handle ``data`` (loads and stores of a
    buffer over it count; with ``loads_only``, nothing else does)."""

    def __init__(self, data: Var, loads_only: bool):
        self.data, self.loads_only = data, loads_only

    def visit_Var(self, e: Var) -> None:
        if e is self.data and not self.loads_only:
            raise _Found

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        if e.buffer.data is self.data:
            raise _Found
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        if s.buffer.data is self.data and not self.loads_only:
            raise _Found
        super().visit_BufferStore(s)


def any_node(node: Any, predicate) -> bool:
    """Whether ``predicate`` holds for ``node`` (a statement or an expression) or any node below
    it; stops at the first."""

    def visit(n: Any) -> None:
        if predicate(n):
            raise _Found

    try:
        post_order_visit(node, visit)
    except _Found:
        return True
    return False


def uses_handle(node: Any, data: Var, loads_only: bool = False) -> bool:
    """Whether ``node`` (a statement, an expression or None) uses the buffer memory whose handle
    is ``data``: loads or stores through any buffer over it, or the handle itself (only loads
    with ``loads_only``). Stops at the first use."""
    if node is None:
        return False
    finder = _HandleUse(data, loads_only)
    try:
        finder.visit_stmt(node) if isinstance(node, Stmt) else finder.visit_expr(node)
    except _Found:
        return True
    return False


# A polynomial with non-negative coefficients (integers, or fractions where an extent is divided by
# a constant) over scalar parameters: {sorted tuple of parameter positions (a monomial; () is the
# constant term): coefficient}.
Polynomial = dict


def _poly_add(a: Polynomial, b: Polynomial) -> Polynomial:
    out = dict(a)
    for mono, c in b.items():
        out[mono] = out.get(mono, 0) + c
    return out


def _poly_mul(a: Polynomial, b: Polynomial) -> Polynomial:
    out: Polynomial = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            mono = tuple(sorted(ma + mb))
            out[mono] = out.get(mono, 0) + ca * cb
    return out


def _const(value: int) -> Polynomial:
    return {(): max(int(value), 0)}


class _NoBound(Exception):
    pass


class _IterationBound(StmtExprVisitor):
    """Sums, over every loop a thread runs, its passes (extent + 1: the pass that leaves it
    counts) times the iterations of the loops around it; each value is replaced by an upper
    bound over the parameters (see :func:`serial_iteration_bound`)."""

    def __init__(self, params: dict):
        self.env: dict = {p: {(i,): 1} for p, i in params.items()}
        self.scale: Polynomial = _const(1)
        self.total: Polynomial = {}
        self.counters: set = set()  # loop variables of loops that start at a constant >= 0

    def nonnegative(self, e: PrimExpr) -> bool:
        """Whether ``e`` is known to be >= 0 (a constant or a counting loop's variable): a
        subtrahend that is may be dropped from an upper bound."""
        if isinstance(e, Cast):
            return self.nonnegative(e.value)
        return (isinstance(e, IntImm) and e.value >= 0) or (isinstance(e, Var) and e in self.counters)

    def upper(self, e: PrimExpr) -> Polynomial:  # noqa: C901 - one case per expression kind
        """An upper bound of ``e`` assuming every variable is non-negative."""
        if isinstance(e, IntImm):
            return _const(e.value)
        if isinstance(e, Var):
            if e not in self.env:
                raise _NoBound
            return self.env[e]
        if isinstance(e, Cast):
            return self.upper(e.value)
        if isinstance(e, Let):
            self.env[e.var] = self.upper(e.value)
            return self.upper(e.body)
        if isinstance(e, Select):
            return _poly_add(self.upper(e.true_value), self.upper(e.false_value))
        op = e.op.removeprefix("tir.") if isinstance(e, Call) else ""
        if op == "if_then_else":
            return _poly_add(self.upper(e.args[1]), self.upper(e.args[2]))
        kind = type(e).__name__ if isinstance(e, BinaryOp) else op
        args = (e.a, e.b) if isinstance(e, BinaryOp) else getattr(e, "args", ())
        if kind in ("Add", "Max"):
            return _poly_add(self.upper(args[0]), self.upper(args[1]))
        if kind == "Mul":
            return _poly_mul(self.upper(args[0]), self.upper(args[1]))
        if kind == "Sub" and self.nonnegative(args[1]):
            return self.upper(args[0])
        if kind in ("Div", "FloorDiv") and isinstance(args[1], IntImm) and args[1].value > 0:
            return {mono: Fraction(c) / args[1].value for mono, c in self.upper(args[0]).items()}
        if kind == "shift_right":  # by a constant k: a division by 2**k
            shift = args[1].value if isinstance(args[1], IntImm) and 0 <= args[1].value < 63 else 0
            return {mono: Fraction(c) / (1 << shift) for mono, c in self.upper(args[0]).items()}
        if kind in ("Mod", "FloorMod", "bitwise_and", "Min"):
            limit = args[1]
            if isinstance(limit, IntImm) and limit.value > 0:
                return _const(limit.value - (0 if kind in ("bitwise_and", "Min") else 1))
            return self.upper(args[0])
        raise _NoBound

    def visit_For(self, s: For) -> None:
        extent = self.upper(s.extent)
        self.env[s.loop_var] = _poly_add(self.upper(s.min), extent)
        if isinstance(s.min, IntImm) and s.min.value >= 0:
            self.counters.add(s.loop_var)
        if s.kind.name == "THREAD_BINDING":
            self.visit_stmt(s.body)
            return
        outer = self.scale
        # each entry of the loop runs its body `extent` times plus the pass that leaves it
        self.total = _poly_add(self.total, _poly_mul(outer, _poly_add(extent, _const(1))))
        self.scale = _poly_mul(outer, extent)
        self.visit_stmt(s.body)
        self.scale = outer

    def visit_LetStmt(self, s: LetStmt) -> None:
        try:
            self.env[s.var] = self.upper(s.value)
        except _NoBound:
            pass  # only an error if a loop extent depends on it
        self.visit_stmt(s.body)

    def visit_While(self, s: While) -> None:
        raise _NoBound

    def visit_expr(self, e: PrimExpr) -> None:
        pass  # expressions hold no loops


def serial_iteration_bound(func: PrimFunc) -> Optional[Polynomial]:
    """An upper bound on the loop passes one thread of kernel ``func`` makes: the sum over its
    loops (serial, unrolled or vectorized: a device runs each as a loop; loops bound to threads
    do not count) of each loop's extent plus one (the pass that leaves it) times the iterations of
    the loops around it, as a :data:`Polynomial` over the positions of ``func``'s integer scalar
    parameters (assumed non-negative, as sizes are). None when an extent depends on anything else
    (a value loaded from memory, a ``while`` loop) or cannot be bounded so (a parameter
    subtracted, which may be negative; a division by a parameter, which may be large)."""
    params = {p: i for i, p in enumerate(func.params) if p not in func.buffer_map and _dt.is_integer(p.dtype)}
    bound = _IterationBound(params)
    try:
        bound.visit_stmt(func.body)
    except _NoBound:
        return None
    return {mono: c for mono, c in bound.total.items() if c}


def expr_key(e: Any) -> tuple:
    """A hashable key, equal for the same expression over the same variables (``x + 1`` twice)."""
    return (repr(e), tuple(id(v) for v in free_vars(e)))


def lanes_of(e: PrimExpr) -> int:
    """The lanes of ``e``'s value (a comparison of vectors has as many as its operands)."""
    if isinstance(e, (CmpOp, And, Or)):
        return max(lanes_of(e.a), lanes_of(e.b))
    if isinstance(e, Not):
        return lanes_of(e.a)
    return 1 if e.dtype == "void" else _dt.lanes(e.dtype)


def linear_form(e: PrimExpr, terms_of: Optional[dict] = None) -> tuple[dict, int]:
    """``e`` as a sum of terms times constant coefficients plus a constant: ``({term key:
    coefficient}, constant)``, so that ``x * 32 * 2`` and ``x * 64 + 1 - 1`` compare equal.
    ``terms_of``, when given, receives each term key's expression."""
    if isinstance(e, IntImm):
        return {}, e.value
    if isinstance(e, (Add, Sub)):
        (ta, ca), (tb, cb) = linear_form(e.a, terms_of), linear_form(e.b, terms_of)
        sign = 1 if isinstance(e, Add) else -1
        terms = dict(ta)
        for key, coeff in tb.items():
            terms[key] = terms.get(key, 0) + sign * coeff
        return {k: v for k, v in terms.items() if v}, ca + sign * cb
    if isinstance(e, Mul) and (isinstance(e.a, IntImm) or isinstance(e.b, IntImm)):
        k, other = (e.a.value, e.b) if isinstance(e.a, IntImm) else (e.b.value, e.a)
        terms, const = linear_form(other, terms_of)
        return {key: coeff * k for key, coeff in terms.items() if coeff * k}, const * k
    key = expr_key(e)
    if terms_of is not None:
        terms_of[key] = e
    return {key: 1}, 0


class _IndexUses(StmtExprVisitor):
    """Finds a use of ``var`` outside element indices and loop bounds."""

    def __init__(self, var: Var, memo: dict) -> None:
        self.var, self.memo = var, memo
        self.index_depth = 0
        self.as_value = False

    def _in_index(self, exprs) -> None:
        self.index_depth += 1
        for e in exprs:
            self.visit_expr(e)
        self.index_depth -= 1

    def visit_Var(self, e: Var) -> None:
        if e is self.var and self.index_depth == 0:
            self.as_value = True

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self._in_index(e.indices)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self._in_index(s.indices)
        self.visit_expr(s.value)

    def visit_For(self, s: For) -> None:
        self._in_index((s.min, s.extent))
        self.visit_stmt(s.body)

    def visit_LetStmt(self, s: LetStmt) -> None:
        if used_only_as_index(s.var, s.body, self.memo):  # a value that is itself only an index
            self._in_index((s.value,))
        else:
            self.visit_expr(s.value)
        self.visit_stmt(s.body)


def used_only_as_index(var: Var, body: Stmt, memo: Optional[dict] = None) -> bool:
    """Whether ``var`` appears in ``body`` only inside element indices and loop bounds (directly,
    or through Let variables that do): arithmetic that computes it is index arithmetic. ``memo``
    (a dict kept across calls on one function) answers each let of a chain once."""
    memo = {} if memo is None else memo
    key = (var, body)
    if key not in memo:
        uses = _IndexUses(var, memo)
        uses.visit_stmt(body)
        memo[key] = not uses.as_value
    return memo[key]
