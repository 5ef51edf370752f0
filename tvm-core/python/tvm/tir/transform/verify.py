"""verify: well-formedness and type checks of a PrimFunc, with a target-specific scope check.

Checks (the first failure raises :class:`TIRVerifyError` naming the source line when known):

* every Var is defined before use (parameters, shape variables of parameter buffers, loop and let
  variables, allocation handles); no Var is defined twice (a loop or let re-binding a parameter or
  an outer variable, i.e. assigning to a parameter);
* dtypes: binary operands agree; comparison / logic operands; ``if`` / ``assert`` / ``Select``
  conditions are bool; buffer indices are integers and match the buffer's rank; a stored value
  has the buffer's dtype; loop bounds are integers; known intrinsics get their arity
  (:data:`tvm.tir.op.INTRINSICS`); ``Cast`` targets valid dtypes;
* scopes: buffers cannot be stored through a ``handle`` scalar; with a CPU target thread-bound
  loops and shared allocations are errors; with a device target ``shared``/``local`` allocations
  must be inside a thread-bound loop, thread tags may not be nested twice on one path, and
  ``tvm_storage_sync`` may only appear inside thread-bound loops.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from tvm.error import InternalError
from tvm.tir import dtype as _dt
from tvm.tir.expr import (
    And,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Mod,
    BinaryOp,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    Let,
    Not,
    Or,
    PrimExpr,
    Select,
    Var,
    is_per_thread,
)
from tvm.tir.analysis import free_vars, lanes_of
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprVisitor
from tvm.tir.op import INTRINSICS
from tvm.tir.printer import expr_text
from tvm.tir.stmt import (
    ASSERT_KINDS,
    THREAD_TAGS,
    Allocate,
    AssertStmt,
    Break,
    BufferStore,
    Continue,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    Stmt,
    While,
)

_DIVISIONS = (Div, Mod, FloorDiv, FloorMod)


def _shown(value: int) -> str:
    """``value`` in decimal, or its size in bits past what Python prints (4,300 digits)."""
    return (
        str(value) if value.bit_length() < 4096 else f"{'-' if value < 0 else ''}(a {value.bit_length()}-bit integer)"
    )


def _same_bools(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are both booleans of as many lanes: a comparison of vectors is
    typed ``bool`` with its operands' lanes, a name bound to one ``boolxN``."""
    return _dt.is_bool(a.dtype) and _dt.is_bool(b.dtype) and lanes_of(a) == lanes_of(b)


class TIRVerifyError(InternalError):
    """A PrimFunc is malformed (undefined variable, type error, scope misuse ...).
    ``reason`` is the bare message, ``span`` the source location when known."""

    def __init__(self, message: str, reason: str | None = None, span: Any = None):
        super().__init__(message)
        self.reason = reason if reason is not None else message
        self.span = span


def is_device_target(target: Any) -> bool:
    """True for a target whose kind has a device code generator (kernels are split off)."""
    return target is not None and getattr(target.kind, "codegen", None) is not None


def with_span(msg: str, span: Any) -> str:
    """``msg`` followed by the rendered source location of ``span`` (when there is one)."""
    if span is None:
        return msg
    render = getattr(span, "render_with_calls", None)
    return f"{msg}\n{render()}" if render else f"{msg} ({span})"


def is_thread_index_loop(s: Any) -> bool:
    """Whether ``s`` is a loop bound to a thread index (``threadIdx.x/y/z``)."""
    return isinstance(s, For) and s.kind is ForKind.THREAD_BINDING and (s.thread_tag or "").startswith("threadIdx")


def opens_block_less_kernel(s: Stmt) -> bool:
    """Whether ``s`` is a kernel without ``blockIdx`` loops (one block) with its shared and local
    allocations hoisted above its outermost thread loop: allocations down to a loop bound to
    ``threadIdx``. The allocations belong to that kernel's one block."""
    while isinstance(s, Allocate) and s.buffer.scope in ("shared", "shared.dyn", "local"):
        s = s.body
    return is_thread_index_loop(s)


class _Verifier(StmtExprVisitor):
    def __init__(self, func: PrimFunc, target: Any):
        self.func = func
        self.target = target
        self.device = is_device_target(target)
        self.cpu = target is not None and not self.device
        self.defined: set = set()
        self.stmt: Optional[Stmt] = None
        self.thread_tags: list[str] = []
        self.allocated: set = set()
        #: variables of argument layouts that appear only inside expressions (n in (n * 32,))
        self.inside_sizes: dict[Var, str] = {}
        self.checked: set = set()  # buffers whose declaration was checked
        self.loops: list[str] = []  # kinds of the enclosing loops, innermost last ("while" too)

    def fail(self, msg: str):
        span = getattr(self.stmt, "span", None) or getattr(self.func, "span", None)  # a signature's: the def
        reason = f"in function '{self.func.global_symbol}': {msg}"
        raise TIRVerifyError(with_span(reason, span), reason, span)

    def define(self, v: Var, what: str):
        if v in self.defined:
            self.fail(
                f"{what} '{v.name}' is defined twice (TIR variables, including parameters, cannot be re-assigned)"
            )
        self.defined.add(v)

    # ------------------------------------------------------------------ entry
    def run(self):
        f = self.func
        for p in f.params:
            if not isinstance(p, Var):
                self.fail(f"parameter {p!r} is not a Var")
            self.define(p, "parameter")
        symbol = f.attrs.get("global_symbol", f.name)
        if not isinstance(symbol, str) or not symbol:
            self.fail(f"the function's global_symbol must be a name (a string), got {symbol!r}")
        for p in f.params:
            if p not in f.buffer_map and p.dtype != "handle" and _dt.lanes(p.dtype) != 1:
                self.fail(f"scalar parameter '{p.name}' has the vector dtype {p.dtype}; pass a buffer instead")
        params = set(f.params)  # by identity: `in` a list would build an EQ per parameter
        for p, buf in f.buffer_map.items():
            if p not in params:
                self.fail(f"buffer_map key '{p.name}' is not a parameter")
            if p.dtype != "handle":
                self.fail(f"buffer parameter '{p.name}' must have dtype handle, got {p.dtype}")
            if buf.dtype == "handle":
                self.fail(
                    f"buffer parameter '{p.name}' has dtype handle: a tensor holds numbers (use uint64 for addresses)"
                )
            if buf.data is not None:
                self.defined.add(buf.data)  # the data pointer is bound from the argument
            for x in tuple(buf.shape) + tuple(buf.strides) + (buf.elem_offset,):
                if isinstance(x, Var) and x not in self.defined:
                    self.defined.add(x)  # shape variables are bound from the argument
                elif isinstance(x, PrimExpr):
                    for v in free_vars(x):  # bound only if it stands alone somewhere
                        self.inside_sizes.setdefault(v, f"{expr_text(x)} in the layout of buffer '{buf.name}'")
        self._check_parameter_buffers(f)
        self.visit_stmt(f.body)

    def _check_parameter_buffers(self, f: PrimFunc) -> None:
        """Each parameter's buffer its own, in global memory, of sizes that are not negative."""
        seen: dict[int, str] = {}
        for p, buf in f.buffer_map.items():
            if id(buf) in seen:
                self.fail(f"parameters '{seen[id(buf)]}' and '{p.name}' share buffer '{buf.name}': give each its own")
            seen[id(buf)] = p.name
            if buf.scope != "global":
                self.fail(f"buffer parameter '{p.name}' has scope {buf.scope!r}: an argument lives in global memory")
            for d in buf.shape:
                if isinstance(d, IntImm) and d.value < 0:
                    self.fail(f"buffer parameter '{p.name}' has the negative size {d.value}")
            self.check_buffer_decl(buf)

    def check_buffer_decl(self, buf: Buffer):
        self.checked.add(buf)
        try:
            _dt.parse(buf.dtype)
        except ValueError as e:
            self.fail(f"buffer '{buf.name}': {e}")
        for what, parts in (("dimension", buf.shape), ("stride", buf.strides), ("elem_offset", (buf.elem_offset,))):
            for x in parts:
                if not isinstance(x, PrimExpr) or not _dt.is_integer(x.dtype) or _dt.lanes(x.dtype) != 1:
                    shown = f"{expr_text(x)} ({x.dtype})" if isinstance(x, PrimExpr) else repr(x)
                    self.fail(f"buffer '{buf.name}' has a non-integer {what}: {shown}")
                self.visit_expr(x)

    # ------------------------------------------------------------------ statements
    def visit_stmt(self, s: Stmt) -> None:
        prev = self.stmt
        if getattr(s, "span", None) is not None or prev is None:
            self.stmt = s
        try:
            super().visit_stmt(s)
        finally:
            self.stmt = prev

    def visit_For(self, s: For) -> None:
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        for x, what in ((s.min, "start"), (s.extent, "extent")):
            if not _dt.is_integer(x.dtype):
                self.fail(f"loop {what} of '{s.loop_var.name}' must be an integer, got {x.dtype}")
        if not _dt.is_integer(s.loop_var.dtype):
            self.fail(f"loop variable '{s.loop_var.name}' must be an integer, got {s.loop_var.dtype}")
        self._check_loop_range(s)
        if s.kind is ForKind.THREAD_BINDING:
            if s.thread_tag not in THREAD_TAGS:
                self.fail(f"unknown thread tag {s.thread_tag!r}")
            if self.cpu:
                self.fail(
                    f"'{s.loop_var.name}' is bound to {s.thread_tag} (by T.thread_binding, T.launch_thread or a "
                    f"T.device_entry() region), which the CPU target (here '{self.target.kind.name}') cannot launch: "
                    f"compile for a device target, or write a T.parallel loop for the CPU"
                )
            if s.thread_tag in self.thread_tags:
                self.fail(f"{s.thread_tag} is bound twice on one loop nest path")
        elif s.thread_tag is not None:
            self.fail(f"loop '{s.loop_var.name}' has thread tag {s.thread_tag!r} but kind {s.kind.value}")
        self.define(s.loop_var, "loop variable")
        self.loops.append(s.kind.value)
        try:
            if s.kind is ForKind.THREAD_BINDING:
                self.thread_tags.append(s.thread_tag)
                try:
                    self.visit_stmt(s.body)
                finally:
                    self.thread_tags.pop()
            else:
                self.visit_stmt(s.body)
        finally:
            self.loops.pop()
        self.defined.discard(s.loop_var)

    def _check_loop_range(self, s: For) -> None:
        """The loop variable's dtype holds every value the loop takes: an int8 variable counting
        to 200 wrapped (a loop that never ended, indices before the buffer)."""
        var, lo, ext = s.loop_var, s.min, s.extent
        if isinstance(lo, IntImm) and isinstance(ext, IntImm):
            if ext.value > 0 and not (_dt.fits(lo.value, var.dtype) and _dt.fits(lo.value + ext.value - 1, var.dtype)):
                self.fail(
                    f"loop variable '{var.name}' of {var.dtype} cannot take the loop's values {lo.value} to "
                    f"{lo.value + ext.value - 1}: give it a dtype that holds them"
                )
            return
        for x, what in ((lo, "start"), (ext, "extent")):
            if not isinstance(x, IntImm) and not _dt.holds_every_value(var.dtype, x.dtype):
                self.fail(
                    f"loop variable '{var.name}' of {var.dtype} cannot hold every value of its {what} "
                    f"{expr_text(x)} ({x.dtype}): give the variable and its bounds one dtype"
                )

    def visit_While(self, s: While) -> None:
        self.visit_expr(s.condition)
        self.need_bool(s.condition, "while condition")
        self.loops.append("while")
        try:
            self.visit_stmt(s.body)
        finally:
            self.loops.pop()

    def _loop_exit(self, what: str) -> None:
        if not self.loops:
            self.fail(f"'{what}' outside a loop")
        if self.loops[-1] not in ("serial", "unroll", "while"):
            self.fail(f"'{what}' in a {self.loops[-1]} loop: only serial for loops and while loops can be left early")

    def _check_return(self, e: Call) -> None:
        if len(e.args) > 1:
            self.fail(f"intrinsic ret takes 0 or 1 argument(s), got {len(e.args)}")
        if self.thread_tags:
            self.fail(
                "'return' in device code (a thread-bound loop, or a device function's body without one, which runs "
                "as a kernel of one thread): a kernel cannot end the function or give it a value; return from the "
                "host code around the kernels"
            )
        kind = next((k for k in self.loops if k not in ("serial", "unroll", "while")), None)
        if kind is not None:
            self.fail(
                f"'return' in a {kind} loop: its iterations do not run one after another, so none can end the function"
            )

    def visit_Break(self, s: Break) -> None:
        self._loop_exit("break")

    def visit_Continue(self, s: Continue) -> None:
        self._loop_exit("continue")

    def visit_LetStmt(self, s: LetStmt) -> None:
        self.visit_expr(s.value)
        if s.value.dtype != s.var.dtype:
            self.fail(f"let '{s.var.name}' has dtype {s.var.dtype} but its value is {s.value.dtype}")
        self.define(s.var, "variable")
        self.visit_stmt(s.body)
        self.defined.discard(s.var)

    def visit_Allocate(self, s: Allocate) -> None:
        buf = s.buffer
        self.check_buffer_decl(buf)
        if buf.scope in ("shared", "shared.dyn"):
            if self.cpu:
                self.fail(
                    f"shared buffer '{buf.name}' on CPU target '{self.target.kind.name}'; use "
                    f'scope "local" or "global"'
                )
            in_launch = any(t.startswith("blockIdx") or t.startswith("threadIdx") for t in self.thread_tags)
            if self.device and not in_launch and not opens_block_less_kernel(s):
                self.fail(
                    f"shared buffer '{buf.name}' must be allocated inside a thread-bound loop "
                    f"(T.thread_binding) on a device target"
                )
        elif is_per_thread(buf.scope):
            if self.device and not self.thread_tags and not opens_block_less_kernel(s):
                self.fail(f"local buffer '{buf.name}' must be allocated inside a thread-bound loop on a device target")
        elif buf.scope == "global":
            if self.device and self.thread_tags:
                self.fail(
                    f'global buffer \'{buf.name}\' cannot be allocated inside a kernel; use scope "shared" or "local"'
                )
        else:
            self.fail(f"buffer '{buf.name}' has unknown scope {buf.scope!r}")
        if buf in self.allocated:
            self.fail(f"buffer '{buf.name}' is allocated twice: give each allocation a buffer of its own")
        self.define(buf.data, "buffer")
        self.allocated.add(buf)
        self.visit_stmt(s.body)
        self.defined.discard(buf.data)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self.check_access(s.buffer, s.indices)
        self.visit_expr(s.value)
        lanes = _dt.access_lanes(s.indices)  # a vector index stores lanes
        if s.value.dtype != _dt.with_lanes(s.buffer.dtype, lanes * _dt.lanes(s.buffer.dtype)):
            self.fail(f"storing a {s.value.dtype} value into {s.buffer.dtype} buffer '{s.buffer.name}' (insert a Cast)")

    def visit_IfThenElse(self, s: IfThenElse) -> None:
        self.visit_expr(s.condition)
        self.need_bool(s.condition, "if condition")
        self.visit_stmt(s.then_case)
        if s.else_case is not None:
            self.visit_stmt(s.else_case)

    def visit_AssertStmt(self, s: AssertStmt) -> None:
        self.visit_expr(s.condition)
        self.need_bool(s.condition, "assert condition")
        if getattr(s, "kind", "RuntimeError") not in ASSERT_KINDS:
            self.fail(f"assert: unknown error kind {s.kind!r}; expected one of {', '.join(ASSERT_KINDS)}")
        self.visit_stmt(s.body)

    # ------------------------------------------------------------------ expressions
    def need_bool(self, e: PrimExpr, what: str):
        if not _dt.is_bool(_dt.element_of(e.dtype)):
            self.fail(f"{what} must be bool, got {e.dtype}")

    def check_access(self, buf: Buffer, indices: tuple):
        if buf.data not in self.defined:
            self.fail(f"buffer '{buf.name}' is used but neither a parameter nor allocated here")
        if buf not in self.checked:  # a view (T.decl_buffer over another's data): its sizes are used here
            self.check_buffer_decl(buf)
        if len(indices) != len(buf.shape):
            self.fail(f"buffer '{buf.name}' has {len(buf.shape)} dimension(s), accessed with {len(indices)} index(es)")
        for i in indices:
            self.visit_expr(i)
            if not _dt.is_integer(i.dtype):
                self.fail(f"index of buffer '{buf.name}' must be an integer, got {i.dtype}")

    def visit_Var(self, e: Var) -> None:
        if e not in self.defined and e in self.inside_sizes:
            self.fail(
                f"variable '{e.name}' is used but not defined: it appears only inside {self.inside_sizes[e]}, "
                f"from which an argument cannot bind it; make it a dimension of its own somewhere, or a scalar "
                f"parameter"
            )
        if e not in self.defined:
            self.fail(f"variable '{e.name}' is used but not defined")

    def visit_IntImm(self, e: IntImm) -> None:
        if _dt.is_bool(e.dtype):
            if e.value not in (0, 1):
                self.fail(f"the bool constant {_shown(e.value)} is neither 0 nor 1 (use tvm.tir.const(True))")
        elif not _dt.is_integer(e.dtype):
            self.fail(f"the integer constant {_shown(e.value)} has the dtype {e.dtype}: use FloatImm or tvm.tir.const")
        elif not _dt.fits(e.value, e.dtype):
            self.fail(f"the constant {_shown(e.value)} does not fit its dtype {e.dtype}")

    def visit_FloatImm(self, e: FloatImm) -> None:
        if not _dt.is_float(e.dtype):
            self.fail(f"the float constant {e.value!r} has the dtype {e.dtype}: use IntImm or tvm.tir.const")
        elif not _dt.fits(e.value, e.dtype):
            self.fail(f"the constant {e.value!r} does not fit {e.dtype}: it rounds to infinity there")

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self.check_access(e.buffer, e.indices)

    def visit_BinaryOp(self, e: BinaryOp) -> None:
        self.visit_expr(e.a)
        self.visit_expr(e.b)
        op = type(e).__name__
        if e.a.dtype != e.b.dtype and not _same_bools(e.a, e.b):
            self.fail(f"operands of {op} have different dtypes {e.a.dtype} and {e.b.dtype}")
        if isinstance(e, (And, Or)):
            if not _dt.is_bool(e.a.dtype):
                self.fail(f"operands of {op} must be bool, got {e.a.dtype}")
        elif isinstance(e, CmpOp):
            pass
        elif _dt.is_bool(e.a.dtype) or e.a.dtype == "handle":
            self.fail(f"arithmetic {op} on {e.a.dtype} operands")
        elif isinstance(e, _DIVISIONS) and isinstance(e.b, IntImm) and e.b.value == 0:
            # a runtime zero keeps TIR's defined result (0); a constant one is a mistake
            self.fail(f"{op} by the constant zero")

    def visit_Not(self, e: Not) -> None:
        self.visit_expr(e.a)
        self.need_bool(e.a, "operand of not")

    def visit_Select(self, e: Select) -> None:
        super().visit_Select(e)
        self.need_bool(e.condition, "Select condition")
        if e.true_value.dtype != e.false_value.dtype:
            self.fail(f"Select branches have different dtypes {e.true_value.dtype} and {e.false_value.dtype}")
        self.need_condition_lanes(e.condition, e.true_value, "T.Select")

    def need_condition_lanes(self, condition: PrimExpr, value: PrimExpr, what: str) -> None:
        """A condition of one lane, or of as many lanes as the values it chooses between."""
        have, want = lanes_of(condition), lanes_of(value)
        if have not in (1, want):
            self.fail(f"{what}: a condition of {have} lanes cannot choose between values of {want} lanes")

    def visit_Cast(self, e: Cast) -> None:
        self.visit_expr(e.value)
        try:
            _dt.parse(e.dtype)
        except ValueError as err:
            self.fail(str(err))
            return
        have, want = lanes_of(e.value), _dt.lanes(e.dtype)
        if have not in (1, want):  # one lane is broadcast; other counts have no lane-by-lane meaning
            self.fail(f"T.Cast to {e.dtype} ({want} lanes) of a value of {have} lanes ({e.value.dtype})")
        kinds = {e.dtype, e.value.dtype}
        if "handle" in kinds and any(_dt.is_float(k) for k in kinds if k != "handle"):
            # C has no conversion between a pointer and a float
            self.fail(f"a cast between a pointer (handle) and {e.dtype if e.dtype != 'handle' else e.value.dtype}")

    def visit_Let(self, e: Let) -> None:
        self.visit_expr(e.value)
        if e.value.dtype != e.var.dtype:
            self.fail(f"let '{e.var.name}' has dtype {e.var.dtype} but its value is {e.value.dtype}")
        self.define(e.var, "variable")
        self.visit_expr(e.body)
        self.defined.discard(e.var)

    def need_shuffle_operands(self, e: Call) -> None:
        """A warp shuffle returns the dtype of the value it moves, one scalar, and takes its mask,
        lane, width and warp size as scalar integers."""
        value = e.args[1].dtype
        if e.dtype != value or _dt.lanes(value) != 1:
            self.fail(f"{e.op} moves a scalar {value} value, so it returns {value}, not {e.dtype}")
        for what, a in zip(("mask", "lane", "width", "warp size"), (e.args[0], *e.args[2:])):
            if not _dt.is_integer(a.dtype) or _dt.lanes(a.dtype) != 1:
                self.fail(f"{e.op}: the {what} must be a scalar integer, got {a.dtype}")

    def visit_Call(self, e: Call) -> None:
        for a in e.args:
            self.visit_expr(a)
        try:
            if e.dtype != "void":  # a call made for its effect (a barrier) has no value
                _dt.parse(e.dtype)
        except ValueError as err:
            self.fail(f"the result of {e.op}: {err}")
        entry = INTRINSICS.get(e.op)
        if entry is not None:
            n, rule = entry
            if n is not None and len(e.args) != n:
                self.fail(f"intrinsic {e.op} takes {n} argument(s), got {len(e.args)}")
            if rule == "float" and not _dt.is_float(e.args[0].dtype):
                self.fail(f"intrinsic {e.op} needs a float argument, got {e.args[0].dtype}")
            if rule == "arg1" and (e.args[1].dtype != e.args[2].dtype or e.dtype != e.args[1].dtype):
                self.fail(f"if_then_else branches/result disagree: {e.args[1].dtype}, {e.args[2].dtype}")
            if rule == "arg1" and len(e.args) == 3:
                self.need_condition_lanes(e.args[0], e.args[1], f"T.{e.op}")
            if rule == "arg1":
                self.need_bool(e.args[0], "if_then_else condition")
            if rule == "moved" and len(e.args) == n:
                self.need_shuffle_operands(e)
        if e.op == "call_function" and self.target is not None:
            self.fail(
                f"a call of {e.args[0].value if e.args else '?'}, another function of its @I.ir_module: compile "
                f"the module (tvm.compile(Module)), which links the calls"
            )
        if e.op == "call_packed" and self.device and self.thread_tags:
            self.fail("T.call_packed calls a host function: it cannot run inside a kernel (a thread-bound loop)")
        if e.op == "tvm_storage_sync" and self.device and not self.thread_tags:
            self.fail("tvm_storage_sync outside any thread-bound loop")
        if e.op == "ret":
            self._check_return(e)


def operands(e: PrimExpr) -> tuple:
    """The operands of expression ``e`` (none for leaves)."""
    if isinstance(e, Cast):
        return (e.value,)
    if isinstance(e, Not):
        return (e.a,)
    if isinstance(e, Call):
        return e.args
    if isinstance(e, BufferLoad):
        return e.indices
    if isinstance(e, Select):
        return (e.condition, e.true_value, e.false_value)
    if isinstance(e, Let):
        return (e.value, e.body)
    a, b = getattr(e, "a", None), getattr(e, "b", None)
    return (a, b) if a is not None and b is not None else ()


def tree_size(e: PrimExpr, memo: Optional[dict] = None) -> int:
    """How many nodes ``e`` has as a tree (a shared subexpression counted at each use), counted
    over its distinct nodes (``memo``: sizes already known, by node id)."""
    memo = {} if memo is None else memo

    def size(x: PrimExpr) -> int:
        n = memo.get(id(x))
        if n is None:
            n = memo[id(x)] = 1 + sum(size(k) for k in operands(x))
        return n

    return size(e)


#: The most nodes one expression may have written out as a tree when it reuses its parts: passes
#: walk it as a tree, and ``e = e + e`` twenty times (a million nodes written out, 41 distinct)
#: took minutes to compile.
TREE_LIMIT = 100_000
#: The most nodes a function's expressions may have written out in all when they reuse parts
#: (a reused expression below :data:`TREE_LIMIT` stored by a hundred statements: minutes too).
FUNCTION_TREE_LIMIT = 1_000_000


def check_tree_size(func: PrimFunc) -> None:
    """TIRVerifyError when an expression of ``func`` holds, written out as a tree, more than
    :data:`TREE_LIMIT` nodes, or its expressions more than :data:`FUNCTION_TREE_LIMIT` in all,
    each time eight times the distinct nodes (a part reused by many statements, a
    ``T.meta_var`` index, grows linearly and stays far below)."""
    stack, total, distinct = [func.body], 0, 0
    while stack:
        node = stack.pop()
        for f in dataclasses.fields(node) if dataclasses.is_dataclass(node) else ():
            value = getattr(node, f.name)
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, Stmt):
                    stack.append(item)
                elif isinstance(item, PrimExpr):
                    memo: dict[int, int] = {}
                    size = tree_size(item, memo)
                    total, distinct = total + size, distinct + len(memo)
                    if size > TREE_LIMIT and size > 8 * len(memo):
                        _too_large(func, f"an expression holds {size:,} operations ({len(memo):,} distinct)")
                    if total > FUNCTION_TREE_LIMIT and total > 8 * distinct:
                        _too_large(func, f"its expressions hold more than {FUNCTION_TREE_LIMIT:,} operations")


def _too_large(func: PrimFunc, what: str) -> None:
    raise TIRVerifyError(
        f"in function '{func.global_symbol}': expressions reuse their parts so much that written out {what}, "
        f"more than the passes walk in reasonable time (limit {TREE_LIMIT:,} per expression): bind a reused part "
        f"to a variable (a let: x = ... in TVMScript, tir.Let or tir.LetStmt by hand) so it is computed once"
    )


def verify(func: PrimFunc, target: Any = None) -> PrimFunc:
    """Check ``func`` (for ``target`` when given: a Target or target string); return it unchanged or
    raise :class:`TIRVerifyError`."""
    if isinstance(target, str):
        from tvm.target import Target

        target = Target(target)
    check_tree_size(func)
    _Verifier(func, target).run()
    return func


def well_formed(func: PrimFunc, target: Any = None) -> bool:
    """True when :func:`verify` accepts ``func``."""
    try:
        verify(func, target)
    except TIRVerifyError:
        return False
    return True
