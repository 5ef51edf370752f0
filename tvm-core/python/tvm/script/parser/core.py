"""The TVMScript parser: interprets the Python AST of a ``@T.prim_func`` (never executes it).

Expressions are evaluated by walking the AST: names resolve to parser-scope values (loop and let
variables, buffers), then to the function's closure and globals (so ``T``, module constants and
helper functions work). Statements become TIR statements:

``for i in range(n)`` / ``T.serial`` / ``T.parallel`` / ``T.vectorized`` / ``T.unroll`` /
``T.thread_binding`` / ``T.grid``   -> ``For``
``A[i, j] = v`` / ``A[i] += v``     -> ``BufferStore`` (see implicit casts below)
``x = expr`` / ``x: T.float32 = e`` -> ``LetStmt`` over the rest of the block (re-binding a name is an error)
``B = T.alloc_buffer(...)``          -> ``Allocate`` over the rest of the block
``n = T.int32()``                   -> declares symbolic variable ``n`` (usable in parameter annotations)
``if cond:``                        -> ``IfThenElse`` (a Python-valued condition is resolved statically)
``assert cond, "msg"``              -> ``AssertStmt``
``T.func_attr({...})``              -> function attributes
any other expression statement       -> ``Evaluate``

Implicit casts when storing ``value`` into a buffer of dtype ``D``: a Python number becomes a
``D`` constant (a non-integral float into an integer buffer is an error); an expression of another
dtype in the same family (int/uint with int/uint, float with float) gets a ``Cast`` to ``D``; any
other mismatch (float into int, int into float, anything into bool) is an error asking for
``T.Cast``. Binary operators promote as documented in :mod:`tvm.tir.op`.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import dataclasses
import builtins
import inspect
import itertools
import linecache
import os
import re
import math
import textwrap
import warnings
from typing import Any, Callable, NamedTuple, Optional

from tvm._recursion import with_room
from tvm.tir import dtype as _dt
from tvm.tir import op as _op
from tvm.tir.analysis import any_node, free_vars, linear_form, structural_equal
from tvm.tir.transform.runtime_bounds import calls_out
from tvm.tir.transform.symbolic_bounds import nonnegative
from tvm.tir.expr import (
    INTEGER_TRUE_DIVISION,
    python_number,
    Add,
    Buffer,
    BufferLoad,
    Call,
    FloatImm,
    IntImm,
    Let,
    PrimExpr,
    StringImm,
    Var,
)
from tvm.tir.function import IRModule, PrimFunc
from tvm.backend import BackendError
from tvm.tir.printer import expr_text
from tvm.tir.stmt import (
    THREAD_TAGS,
    Allocate,
    ASSERT_KINDS,
    AssertStmt,
    Break,
    BufferStore,
    Continue,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    Stmt,
    While,
    seq,
)

from tvm.tir.transform.flatten import flat_index, unravel_index
from tvm.tir.transform.vectors import lanes_of, masked_store

from .. import fragments
from .. import tir as T
from ..diagnostics import Span, TVMScriptError, TVMScriptWarning
from .cross_thread import (
    INIT_GUARDS,
    PARALLEL,
    WHERE_GUARDS,
    CrossThreadError,
    ThreadLoop,
    allreduce,
    lower_block_reduction,
)
from .device_region import DeviceRegion, ScopeIdError
from .module_calls import ModuleFunctions, enclosing_class
from . import macros
from .source import FunctionSource, closure_values, find_def, function_names, read_function_source

_PASSTHROUGH = (TVMScriptError,)


def _guarded(condition: Optional[PrimExpr], body: Stmt, span: Span) -> Stmt:
    """``body`` under ``if condition`` (``body`` itself for no condition)."""
    return body if condition is None else IfThenElse(condition, body, None, span)


def _shown(e: PrimExpr) -> str:
    """A constant as its value, anything else as its repr (for messages)."""
    return str(e.value) if isinstance(e, IntImm) else repr(e)


def _where_guard(cond: PrimExpr, body: Stmt, span: Any) -> IfThenElse:
    """``T.where(cond)`` around the rest of a block, marked for the cross-thread lowering."""
    guard = IfThenElse(cond, body, None, span)
    WHERE_GUARDS.add(guard)
    return guard


def _truth(value: Any) -> Any:
    """An integer TIR value as a condition means ``!= 0``, as in Python (``if i:``, ``not i``)."""
    if isinstance(value, PrimExpr) and _dt.is_integer(value.dtype) and not _dt.is_bool(value.dtype):
        return _op.binary("ne", value, 0)
    return value


def _kind(value: Any) -> str:
    """What ``value`` is, in a message: a parser object's own description, else its type."""
    return getattr(value, "DESCRIBED", type(value).__name__)


def _a(kind: str) -> str:
    """``kind`` with an article where it has none ("a tuple", "a buffer region ...")."""
    return kind if kind.startswith(("a ", "an ", "T.")) else f"a {kind}"


@dataclasses.dataclass
class _OpenBlock:
    """A block being parsed: its reduction axes (variable, first value, binding) and the
    bindings of its spatial axes."""

    reductions: list = dataclasses.field(default_factory=list)
    spatial: list = dataclasses.field(default_factory=list)


class _Region:
    """``A[i, 0:4]``: a region of a buffer (its start per dimension, which dimensions are slices
    and, where known, each dimension's extent: 1 for an index, None for a slice of unknown
    length), usable only where a region is meant (``T.match_buffer(A[...], shape)``)."""

    #: what messages call it
    DESCRIBED = "a buffer region (such as A[0:4]), which is no value here: index one element"

    def __repr__(self) -> str:
        return self.DESCRIBED

    def __init__(self, buffer: Buffer, starts: list, sliced: list[bool], extents: list[Optional[int]]):
        self.buffer, self.starts, self.sliced, self.extents = buffer, starts, sliced, extents


def _is_plain_value(value: Any) -> bool:
    """An expression or a Python value (not a buffer, thread or other specification)."""
    if isinstance(value, (tuple, list)):
        return all(_is_plain_value(v) for v in value)
    return isinstance(value, (PrimExpr, int, float, str))


class _Wrap:
    """A statement that scopes over the rest of its block (LetStmt, Allocate, AssertStmt)."""

    def __init__(self, build: Callable[[Stmt], Stmt]):
        self.build = build


class _MutableScalar:
    """A name assigned again after its first value (``i = i + 1`` in a while loop): a one-element
    ``local`` buffer that each assignment stores into and each use reads."""

    def __init__(self, buffer: Buffer, literal: Any = None):
        self.buffer = buffer
        self.index = (IntImm("int32", 0),)
        self.literal = literal  # the Python number of its first assignment (which chose the dtype)

    def load(self) -> BufferLoad:
        return BufferLoad(self.buffer, self.index)

    def store(self, value: PrimExpr) -> BufferStore:
        return BufferStore(self.buffer, value, self.index)


def _assigned_name(st: ast.stmt) -> Optional[str]:
    """The name a statement assigns (``x = ...``, ``x: T.int32 = ...``, ``x += ...``), if any."""
    target = None
    if isinstance(st, ast.Assign) and len(st.targets) == 1:
        target = st.targets[0]
    elif isinstance(st, (ast.AnnAssign, ast.AugAssign)):
        target = st.target
    return target.id if isinstance(target, ast.Name) else None


def _assigned_names(body: list[ast.stmt]) -> dict[str, int]:
    """The names ``body`` assigns anywhere (loop targets included, nested macro definitions not),
    with the line of the first: Python takes each as the function's own name throughout."""
    out: dict[str, int] = {}
    todo = list(body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # its own names
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.setdefault(node.id, getattr(node, "lineno", 0))
        todo.extend(ast.iter_child_nodes(node))
    return out


def _reassigned_names(body: list[ast.stmt]) -> set[str]:
    """Names assigned by a statement and assigned again by a later statement of the same body
    (or inside one): those hold a value that changes, as in Python."""
    out: set[str] = set()
    later: set[str] = set()  # names assigned by the statements after the current one, or in them
    for st in reversed(body):
        name = _assigned_name(st)
        if name is not None and name in later:
            out.add(name)
        later |= {n for n in map(_assigned_name, (x for x in ast.walk(st) if isinstance(x, ast.stmt))) if n}
    for st in body:
        for field in ("body", "orelse"):
            nested = getattr(st, field, None)
            if isinstance(nested, list) and nested and isinstance(nested[0], ast.stmt):
                out |= _reassigned_names(nested)
    return out


def _leaves_loop(body: list[ast.stmt]) -> bool:
    """Whether ``body`` (of a loop) has a ``break`` of that loop, or a ``return``."""
    for st in body:
        if isinstance(st, (ast.Break, ast.Return)):
            return True
        if isinstance(st, (ast.For, ast.While)):
            if any(isinstance(n, ast.Return) for n in ast.walk(st)):
                return True
        elif any(_leaves_loop(getattr(st, f, None) or []) for f in ("body", "orelse")):
            return True
    return False


def _bounds_dtype(dtypes: list[str]) -> str:
    """The dtype of a loop over bounds of ``dtypes`` (Python ints take any): int32 without typed
    bounds, else one that holds every bound's values (int8 and int32 -> int32; uint32 and int32
    -> int64; uint8 and uint16 -> uint16)."""
    if not dtypes:
        return "int32"
    if len(set(dtypes)) == 1:
        return dtypes[0]
    signed = [_dt.bits(d) for d in dtypes if not _dt.is_uint(d)]
    unsigned = [_dt.bits(d) for d in dtypes if _dt.is_uint(d)]
    if not signed:
        return f"uint{max(unsigned)}"
    bits = max(signed + [2 * b for b in unsigned])
    return f"int{min(max(bits, 8), 64)}"


def _is_zero(x: Any) -> bool:
    return (isinstance(x, int) and not isinstance(x, bool) and x == 0) or (isinstance(x, IntImm) and x.value == 0)


class Parser:
    """Parses one function definition. ``lines`` are the file's lines (for error carets),
    ``line_offset``/``col_offset`` map AST positions back to the file."""

    def __init__(
        self,
        tree: ast.FunctionDef,
        filename: str,
        lines: list[str],
        line_offset: int,
        col_offset: int,
        env: dict[str, Any],
        private: bool = False,
    ):
        self.tree = tree
        self.filename = filename
        self.lines = lines
        self.line_offset = line_offset
        self.col_offset = col_offset
        self.env = env
        self.private = private
        self.scopes: list[dict[str, Any]] = [{}]
        self.attrs: dict[str, Any] = {}
        self.predeclared: set[int] = set()
        self.declared_vars: set[int] = set()  # ids of the Vars bare declarations (n = T.int32()) made
        self.matched: dict[Var, Buffer] = {}
        self.depth = 0
        self.env_threads: dict[Var, str] = {}  # T.env_thread variables and their tags
        self.loop_starts: dict[Var, PrimExpr] = {}  # each loop variable's first value
        self.nonnegative_vars: set[Var] = set()  # thread indices and loops counting up from >= 0
        # the blocks being parsed, outermost first
        self.blocks: list[_OpenBlock] = []
        self.device_region: Optional[DeviceRegion] = None  # after T.device_entry()
        self.ended_names: dict[str, Any] = {}  # names of blocks that ended, for a message
        self.let_names: set[str] = set()  # names an assignment gave a value (x = expr)
        # handles bound to T.address_of(A[i, j]) of indices that read no memory: a view declared
        # over one (T.decl_buffer(..., data=p)) is a view of A's memory at that element
        self.element_addresses: dict[Var, Call] = {}
        self.assigned_names: dict[str, int] = {}  # names the body assigns anywhere, with a line
        self.thread_loops: list[ThreadLoop] = []  # the enclosing thread-bound loops, outermost first
        self.reducer: Optional[T.CommReducerSpec] = None  # of the last T.attr(..., "reduce_scope", ...)
        self.allreduce_blocks: set[int] = set()  # depths of open blocks holding a T.tvm_thread_allreduce
        self.statement: Optional[ast.stmt] = None  # the statement being parsed (a macro's call site)
        self.statement_call: Optional[ast.expr] = None  # an expression statement's call (a macro may be it)
        self.assigned_call: Optional[ast.expr] = None  # the value of an assignment to a name
        self.scope_floor = 0  # the first of self.scopes that the body being parsed binds names in
        self.emitted: Optional[list[Stmt]] = None  # what macros called while a statement is parsed gave
        self._bound_names: dict[int, set] = {}  # of each function or macro body (its tree's id)
        self.macro_calls: list[macros.Macro] = []  # the macros being expanded, outermost first
        self.macro_notes: tuple[str, ...] = ()  # their calls, innermost first (spans carry them)
        self.block_floor = 0  # how many enclosing blocks the macro being expanded did not open
        # while an expression whose value is used later or only on a condition is parsed (a while
        # loop's condition, an arm of ``x if c else y``): why a macro expanded then is refused
        self.macro_refusal: Optional[_MacroRefusal] = None
        self.calling: Optional[ast.Call] = None  # the call being evaluated (a helper may run a macro)

    # ------------------------------------------------------------------ diagnostics
    def span(self, node: ast.AST) -> Span:
        line = getattr(node, "lineno", 1) + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return Span(self.filename, line, col, text.rstrip("\n"), self.macro_notes)

    def error(self, node: ast.AST, msg: str) -> TVMScriptError:
        return TVMScriptError(msg, self.span(node))

    # ------------------------------------------------------------------ scopes
    def lookup(self, name: str, node: ast.AST) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        # a name the function assigns is its own throughout, as Python has it: never a global
        if name in self.ended_names:
            raise self._ended_name_error(name, node)
        if name in self.assigned_names and (name in self.env or hasattr(builtins, name)):
            raise self.error(
                node,
                f"name '{name}' has no value here: the function assigns it (line "
                f"{self.assigned_names[name] + self.line_offset}), so in Python it is the function's own name "
                f"throughout, not the global one; assign it before this line",
            )
        if name in self.env:
            return self.env[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.error(node, f"name '{name}' is not defined")

    def _ended_name_error(self, name: str, node: ast.AST) -> TVMScriptError:
        """The error for ``name``, bound only in a block that ended before ``node``."""
        ended = self.ended_names[name]
        if isinstance(ended, Buffer):
            advice = "allocate it before that block to use it after"
        elif isinstance(ended, _MutableScalar) or name in self.let_names:
            advice = f"assign it before that block ({name} = 0), then in it"
        else:
            advice = "its value belongs to that block"
        return self.error(
            node,
            f"name '{name}' is not defined here: it is defined only inside a block that ended before this "
            f"line (an if, else, loop or block body); {advice}",
        )

    def is_bound(self, name: str) -> bool:
        return any(name in s for s in self.scopes)

    def _is_macro_parameter(self, name: str) -> bool:
        """Whether ``name`` is a parameter of the macro being expanded (not assigned in its body)."""
        if not self.macro_calls or self.scope_floor == 0 or self.is_bound_here(name):
            return False
        return name in self.scopes[self.scope_floor - 1]

    def is_bound_here(self, name: str) -> bool:
        """Whether ``name`` is bound by the function or macro body being parsed (not by what a
        macro's body sees around it, which an assignment there shadows)."""
        return any(name in s for s in self.scopes[self.scope_floor :])

    def bind(self, name: str, value: Any, node: ast.AST) -> None:
        if self.is_bound_here(name):
            old = self.lookup(name, node)
            if isinstance(old, Buffer) and isinstance(node, ast.arg):
                raise self.error(node, f"parameter '{name}' is declared twice")
            if isinstance(old, Buffer):
                raise self.error(node, f"'{name}' is a buffer; store into it with {name}[...] = value")
            raise self.error(
                node,
                f"'{name}' is already defined: TIR variables are immutable, "
                f"use a new name (or a buffer for a mutable value)",
            )
        self.scopes[-1][name] = value

    # ------------------------------------------------------------------ function
    def parse(self) -> PrimFunc:
        token = macros.active_parser.set(self)
        try:
            with fragments.names_of_one_function():
                return self._parse()
        finally:
            macros.active_parser.reset(token)

    def _parse(self) -> PrimFunc:
        fn = self.tree
        args = fn.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error(fn, "prim_func parameters must be plain positional parameters")
        self.assigned_names = _assigned_names(fn.body)
        self._predeclare(fn.body)
        self.mutable_names = _reassigned_names(fn.body)
        # scalar params first, so buffer annotations can use them; then buffers in order
        annos: dict[str, Any] = {}
        for a in args.args:
            if a.annotation is None:
                raise self.error(
                    a,
                    f"parameter '{a.arg}' needs a type annotation (T.Buffer(...), T.handle or a dtype such as T.int32)",
                )
        param_vars: dict[str, Var] = {}
        # pass 1 binds scalar parameters; annotations that fail (they may use a scalar
        # parameter declared later) are evaluated again in pass 2
        for final in (False, True):
            for a in args.args:
                if a.arg in annos:
                    continue
                try:
                    val = self.eval_expr(a.annotation)
                except TVMScriptError:
                    if final:
                        raise
                    continue
                annos[a.arg] = val
                dt = T.dtype_of_annotation(val)
                if dt is not None:
                    v = Var(a.arg, dt)
                    param_vars[a.arg] = v
                    self.bind(a.arg, v, a)
                elif not isinstance(val, T.BufferSpec):
                    raise self.error(
                        a.annotation,
                        f"unsupported annotation for parameter '{a.arg}': expected T.Buffer(...), T.handle or a dtype",
                    )
        buffer_map: dict[Var, Buffer] = {}
        for a in args.args:
            val = annos[a.arg]
            if isinstance(val, T.BufferSpec):
                buf = self.make_buffer(a.arg, val, a.annotation)
                param_vars[a.arg] = buf.data
                buffer_map[buf.data] = buf
                self.bind(a.arg, buf, a)
        params = [param_vars[a.arg] for a in args.args]
        self.buffer_map = buffer_map
        body = self.parse_block(self._strip_docstring(fn.body))
        for p in params:
            if p in self.matched:
                buffer_map[p] = self.matched[p]
        buffer_map = {p: buffer_map[p] for p in params if p in buffer_map}
        attrs = dict(self.attrs)
        if not self.private:
            attrs.setdefault("global_symbol", fn.name)
        func = PrimFunc(params, body, buffer_map, attrs, fn.name, self.span(fn))
        return func

    @staticmethod
    def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            return body[1:]
        return body

    def _predeclare(self, body: list[ast.stmt]) -> None:
        """Bind ``n = T.int32()`` declarations at the top of the body before the parameters."""
        for st in body:
            if (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
                and isinstance(st.value, ast.Call)
                and not st.value.keywords
            ):
                try:
                    fn = self.eval_expr(st.value.func)
                    if not ((getattr(fn, "_tir_dtype", None) and not st.value.args) or fn is T.var):
                        continue
                    val = self.eval_expr(st.value)
                except TVMScriptError:
                    continue
                if isinstance(val, T.VarSpec) and not self.is_bound(st.targets[0].id):
                    self._declare(st.targets[0], val)  # a second declaration is met in order
                    self.predeclared.add(id(st))

    def _declare(self, target: ast.Name, spec: T.VarSpec) -> None:
        """``n = T.int32()``: a new symbolic variable. Declaring a name again that a declaration
        bound makes another variable under it (as Apache TVM's printer writes: a view's stride
        variables declared at the top and again where the view is matched)."""
        name, var = target.id, Var(target.id, spec.dtype)
        old = self.lookup(name, target) if self.is_bound(name) else None
        if isinstance(old, Var) and id(old) in self.declared_vars:
            self.scopes[-1][name] = var
        else:
            self.bind(name, var, target)
        self.declared_vars.add(id(var))

    def make_buffer(self, name: str, spec: T.BufferSpec, node: ast.AST, data: Optional[Var] = None) -> Buffer:
        """A Buffer named ``name`` from a spec; string dims declare int32 shape variables."""

        def dim(x):
            if isinstance(x, str):
                if self.is_bound(x):
                    v = self.lookup(x, node)
                else:
                    v = Var(x, "int32")
                    self.scopes[0][x] = v
                return v
            if isinstance(x, bool) or not isinstance(x, (int, PrimExpr)):
                raise self.error(node, f"buffer dimension must be an integer, got {x!r}")
            if isinstance(x, int):
                return IntImm("int32", x) if -(2**31) <= x < 2**31 else IntImm("int64", x)
            if not (_dt.is_integer(x.dtype)):
                raise self.error(node, f"buffer dimension must be an integer, got {x.dtype}")
            return x

        shape = tuple(dim(x) for x in spec.shape)
        strides = tuple(dim(x) for x in spec.strides)
        off = spec.elem_offset
        off = IntImm("int32", off) if isinstance(off, int) else off
        if isinstance(off, IntImm) and off.value == 0:
            off = IntImm("int32", 0)  # T.int64(0): no offset, printed as none
        kwargs = dict(strides=strides, elem_offset=off, scope=spec.scope, align=spec.align)
        try:
            return Buffer(name, shape, spec.dtype, data if data is not None else Var(name, "handle"), **kwargs)
        except (TypeError, ValueError) as e:
            raise self.error(node, str(e)) from None

    # ------------------------------------------------------------------ statements
    def parse_block(self, nodes: list[ast.stmt], new_scope: bool = True) -> Stmt:
        if new_scope:
            self.scopes.append({})
        threads_open = len(self.thread_loops)  # T.launch_thread statements bind threads to the block's end
        try:
            out: list[Stmt] = []
            for i, node in enumerate(nodes):
                r = self.visit_stmt(node)
                if isinstance(r, _Wrap):
                    rest = self.parse_block(nodes[i + 1 :], new_scope=False)
                    out.append(r.build(rest))
                    break
                if r is not None:
                    out.append(r)
            if not out:
                return Evaluate(IntImm("int32", 0))
            return seq(*out)
        finally:
            del self.thread_loops[threads_open:]
            if new_scope:
                self.ended_names.update(self.scopes.pop())

    def visit_stmt(self, node: ast.stmt):
        fragments.new_statement()
        self.statement = node
        m = getattr(self, "stmt_" + type(node).__name__, None)
        if m is None:
            raise self.error(node, f"unsupported statement '{type(node).__name__}' in TVMScript")
        outer, self.emitted = self.emitted, []
        try:
            r = m(node)
        except _PASSTHROUGH:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError, OverflowError) as e:
            raise self.error(node, str(e)) from None  # a statement's own argument checks, located
        finally:
            emitted, self.emitted = self.emitted, outer
        if isinstance(r, Stmt) and r.span is None:
            r.span = self.span(node)
        return _after(emitted, r) if emitted else r

    @contextlib.contextmanager
    def refusing_macros(self, refusal: _MacroRefusal):
        """Parse an expression in which a macro's expansion is refused for ``refusal``: its
        statements, placed before the statement being parsed, would run at the wrong time."""
        outer, self.macro_refusal = self.macro_refusal, refusal
        try:
            yield
        finally:
            self.macro_refusal = outer

    def emit(self, stmt: Stmt, macro: macros.Macro) -> None:
        """Place ``stmt`` (a macro's expansion) before the statement being parsed."""
        if self.emitted is None:
            raise TypeError(f"{macro.kind} '{macro.name}' is called outside the kernel's statements")
        self.emitted.append(stmt)

    def stmt_Pass(self, node: ast.Pass):
        return None

    def stmt_Return(self, node: ast.Return):
        """``return`` ends the function; ``return x`` also gives its caller ``x`` (a scalar, of
        the function's return annotation when it has one), as Apache TVM's host functions do."""
        if self.macro_calls:
            raise self.error(
                node,
                f"'return' in {self.macro_calls[-1].kind} '{self.macro_calls[-1].name}': a macro's statements are "
                "placed where it is called and give no value (a Python helper function returns expressions)",
            )
        if node.value is None:
            return Evaluate(Call("void", "ret", ()))
        val = self.eval_expr(node.value)
        if isinstance(val, bool) or not isinstance(val, (int, float, PrimExpr)):
            raise self.error(node.value, f"a prim_func returns a scalar, got {_kind(val)}")
        ret = self.tree.returns
        dt = T.dtype_of_annotation(self.eval_expr(ret)) if ret is not None else None
        if dt not in (None, "handle") and not _dt.is_float(dt) and not _dt.is_bool(dt):
            if isinstance(val, float) and not val.is_integer():
                raise self.error(node.value, f"the function returns {dt}, and {val!r} has a fraction")
            if isinstance(val, PrimExpr) and _dt.is_float(val.dtype):
                self._warn_converted(f"returning a {val.dtype} value from a function that returns {dt}", node)
        val = _op.cast(dt, val) if dt not in (None, "handle") else _op.convert(val)
        return Evaluate(Call("void", "ret", (val,)))

    def stmt_Expr(self, node: ast.Expr):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # a string statement (comment-like)
        if isinstance(node.value, ast.Call) and self._is_block_annotation(node.value.func):
            self._check_names_defined(node.value)
            return None  # T.reads / T.writes / T.block_attr: regions the lowering does not need
        self.statement_call = node.value  # the one call whose value may be a macro's statements
        val = self.eval_expr(node.value)
        if isinstance(val, T.WhereSpec):
            cond = val.condition
            if not isinstance(cond, PrimExpr) or not _dt.is_bool(cond.dtype):
                raise self.error(node, "T.where needs a boolean expression")
            if self.macro_calls and len(self.blocks) <= self.block_floor:
                raise self.error(
                    node,
                    "T.where in a T.macro would guard only the macro's own statements after it, not the block "
                    "it is expanded in: write T.where in the block itself",
                )
            span = self.span(node)
            return _Wrap(lambda body: _where_guard(cond, body, span))
        if isinstance(val, T.FuncAttrSpec):
            if self.depth:
                raise self.error(node, "T.func_attr must be at the top level of the function body")
            self.attrs.update(val.attrs)
            return None
        if val is None:
            return None
        if isinstance(val, T.LaunchThreadSpec):
            return self._launch(val, None, node)
        if isinstance(val, T.DeviceEntrySpec):
            return self._device_entry(node)
        if isinstance(val, T.ScopeIdSpec):
            self._scope_ids(val, [], node)
            return None
        if isinstance(val, T.AttrSpec):
            self._enter_attr(val)
            return _Wrap(lambda body: body)  # T.attr(...) over the rest of the block
        if isinstance(val, T.ThreadAllreduceSpec):
            return self._thread_allreduce(val, node)
        if isinstance(val, T.BindSpec):
            return self._bind_declared(val, node)
        if isinstance(val, (int, float)) and not isinstance(val, bool):
            return Evaluate(_op.convert(val))
        if isinstance(val, PrimExpr):
            return Evaluate(val)
        if isinstance(val, Stmt):  # buf.vstore(...)
            return val
        raise self.error(node, f"expression statement of type {_kind(val)} has no effect in TIR")

    def stmt_For(self, node: ast.For):
        if node.orelse:
            raise self.error(node, "for ... else is not supported")
        it = self.eval_expr(node.iter)
        if isinstance(it, range):
            it = T.serial(it.start, it.stop, it.step)
        packed = None  # ``for ij in T.grid(m, n)``: ij is the tuple of the loop variables, as in Apache TVM
        if isinstance(it, T.GridSpec):
            if isinstance(node.target, ast.Name) and len(it.extents) > 1:
                packed = node.target.id
                names = [(f"{packed}_{i}", node.target) for i in range(len(it.extents))]
            else:
                names = self._target_names(node.target, len(it.extents))
            specs = [T.serial(e) for e in it.extents]
        elif isinstance(it, T.LoopSpec):
            names = self._target_names(node.target, 1)
            specs = [it]
        else:
            python = f" (got {_kind(it)}, a Python value: TIR loops count; loop over range(n) and index the values)"
            raise self.error(
                node.iter,
                "a loop must iterate over range(), T.serial, T.parallel, "
                "T.vectorized, T.unroll, T.thread_binding or T.grid"
                + (python if hasattr(it, "__iter__") and not isinstance(it, (PrimExpr, Buffer)) else ""),
            )
        span = self.span(node)
        self.scopes.append({})
        self.depth += 1
        threads_open = len(self.thread_loops)
        try:
            wraps = [self._loop_header(name, spec, node.iter, span) for (name, _), spec in zip(names, specs)]
            if packed is not None:
                self.scopes[-1][packed] = tuple(self.scopes[-1][name] for name, _ in names)
            body = self.parse_block(node.body)
        finally:
            del self.thread_loops[threads_open:]
            self.depth -= 1
            self.ended_names.update(self.scopes.pop())  # the loop variables
        for wrap in reversed(wraps):
            body = wrap(body)
        return body

    def _loop_header(self, name: str, spec: T.LoopSpec, node: ast.AST, span: Span) -> Callable[[Stmt], Stmt]:
        """Bind loop variable ``name`` in the current scope and return what wraps the loop's body:
        the ``For`` (with a let of the named variable for a loop with a step), or for a loop bound
        to the thread index of an enclosing loop, nothing or the guard of a narrower extent."""
        if not (isinstance(spec.step, int) and spec.step == 1):
            return self._stepped_header(name, spec, node, span)
        mn, ext, dtype = self._loop_range(spec, node)
        outer = self._enclosing_thread(spec, mn, ext, node)
        if outer is not None:  # the same hardware index: the name means the enclosing loop's
            self.scopes[-1][name] = outer.index
            if structural_equal(outer.extent, ext):
                return lambda body: body
            guard = _op.binary("lt", outer.index, ext)
            return lambda body: IfThenElse(guard, body, None, span)
        v = Var(name, dtype)
        self.scopes[-1][name] = v
        self.loop_starts[v] = mn
        if nonnegative(mn, self.nonnegative_vars):
            self.nonnegative_vars.add(v)
        if spec.kind is ForKind.THREAD_BINDING:
            self.thread_loops.append(ThreadLoop(v, spec.thread, ext, mn))
        elif spec.kind is ForKind.PARALLEL:
            self.thread_loops.append(ThreadLoop(v, PARALLEL, ext))  # a block may not reduce over it
        annotations = dict(spec.annotations)
        return lambda body: For(v, mn, ext, spec.kind, body, spec.thread, annotations, span)

    def _enclosing_thread(self, spec: T.LoopSpec, mn: PrimExpr, ext: PrimExpr, node: ast.AST) -> Optional[ThreadLoop]:
        """The enclosing loop bound to the same thread index as this ``T.thread_binding`` loop, if
        any (Apache TVM's schedules nest them: a cooperative copy inside a thread-bound loop). The
        inner loop then runs on the same threads: its variable is the outer one's, guarded when its
        extent is smaller; a larger extent or a nonzero start is an error."""
        if spec.kind is not ForKind.THREAD_BINDING:
            return None
        outer = next((t for t in self.thread_loops if t.tag == spec.thread), None)
        if outer is None:
            return None
        if not (isinstance(mn, IntImm) and mn.value == 0):
            raise self.error(node, f"{spec.thread} is bound again inside a loop bound to it, starting at {_shown(mn)}")
        if not structural_equal(outer.extent, ext) and not (
            isinstance(ext, IntImm) and isinstance(outer.extent, IntImm) and ext.value < outer.extent.value
        ):
            raise self.error(
                node,
                f"{spec.thread} is bound again inside a loop bound to it with extent {_shown(ext)}, more than the "
                f"enclosing loop's {_shown(outer.extent)}",
            )
        return outer

    def _stepped_header(self, name: str, spec: T.LoopSpec, node: ast.AST, span: Span) -> Callable[[Stmt], Stmt]:
        """A loop with a step: a counter ``k`` over the trip count, and ``name`` bound to
        ``start + k * step`` (TIR loops step by one); what wraps the loop's body. A step known
        only at run time must be positive there (a ValueError otherwise: the loop would never
        end, or run backwards past its stop)."""
        start, stop, step = spec.start, spec.stop, spec.step
        mn, _, dtype = self._loop_range(T.serial(start, stop), node)
        dynamic = not isinstance(step, int)
        if dynamic and (_dt.bits(step.dtype) > _dt.bits(dtype) or _dt.is_uint(step.dtype)):
            dtype, mn = "int64", _op.cast("int64", mn)  # a step wider than the bounds widens the loop
        if isinstance(start, int) and isinstance(stop, int) and not dynamic:
            trips, count, wide = IntImm(dtype, len(range(start, stop, step))), dtype, None
        else:
            trips, count, wide = self._trip_count(start, stop, step, mn, dtype)
        k = Var(f"{name}_iter", count)
        v = Var(name, dtype)
        self.scopes[-1][name] = v
        self.loop_starts[v] = mn  # its first value, where T.init of a block reducing over it runs
        if (dynamic or step > 0) and nonnegative(mn, self.nonnegative_vars):
            self.nonnegative_vars.add(v)
        step_value = _op.cast(count, step) if dynamic else IntImm(count, step)
        if wide is None:
            value = _op.binary("add", mn, _op.binary("mul", k, step_value))
        else:  # start + k * step wrapping in unsigned arithmetic: exact, as the value lies between the bounds
            unsigned_step = _op.cast(wide, step) if dynamic else IntImm(wide, step % 2 ** _dt.bits(wide))
            offset = _op.binary("mul", _op.cast(wide, k), unsigned_step)
            value = _op.cast(dtype, _op.binary("add", _op.cast(wide, mn), offset))
        zero, kind, annotations = IntImm(count, 0), spec.kind, dict(spec.annotations)
        loop = lambda body: For(k, zero, trips, kind, LetStmt(v, value, body, span), spec.thread, annotations, span)  # noqa: E731
        if not dynamic:
            return loop
        positive = _op.binary("gt", step_value, IntImm(count, 0))
        message = f"the step of loop {name} ({expr_text(step)}) must be positive"
        return lambda body: AssertStmt(positive, message, loop(body), span, "ValueError")

    def _trip_count(self, start: Any, stop: Any, step: Any, mn: PrimExpr, dtype: str) -> tuple[PrimExpr, str, Any]:
        """The trips of a stepped loop from ``mn`` (``start`` in ``dtype``) to ``stop``, the dtype
        of its counter and the unsigned dtype its values are computed in (None: ``dtype``).
        Trips are ``ceil(distance / stride)`` as ``(distance - 1) // stride + 1`` (no stride
        added to overflow). Bounds of either sign, or unsigned ones, may lie further apart than
        their dtype holds: the distance is taken unsigned, as wide as the bounds (at least 32
        bits), exact there, and the bounds' order decides whether there are trips. int32 bounds
        from a value known >= 0 keep the plain signed count."""
        dynamic = not isinstance(step, int)
        ahead = dynamic or step > 0
        low, high = (mn, _op.convert(stop, dtype)) if ahead else (_op.convert(stop, dtype), mn)
        some_trips = _op.binary("lt", low, high)
        if dtype == "int32" and nonnegative(low, self.nonnegative_vars):
            stride = _op.cast(dtype, step) if dynamic else IntImm(dtype, abs(step))
            plain = _op.binary(
                "add", _op.binary("floordiv", _op.binary("sub", _op.binary("sub", high, low), 1), stride), 1
            )
            if nonnegative(high, self.nonnegative_vars):
                return plain, dtype, None  # both >= 0: the distance fits
            return _op.select(some_trips, plain, IntImm(dtype, 0)), dtype, None  # from 0: high - 1 fits when high > 0
        wide = "uint64" if _dt.bits(dtype) == 64 else "uint32"
        count = "int64" if wide == "uint64" else "int32"
        stride = _op.cast(wide, step) if dynamic else IntImm(wide, abs(step))
        distance = _op.binary("sub", _op.cast(wide, high), _op.cast(wide, low))
        quotient = _op.binary("floordiv", _op.binary("sub", distance, IntImm(wide, 1)), stride)
        trips = _op.cast(count, _op.binary("add", quotient, IntImm(wide, 1)))
        return _op.select(some_trips, trips, IntImm(count, 0)), count, wide

    def _target_names(self, target: ast.expr, n: int) -> list[tuple[str, ast.AST]]:
        if isinstance(target, ast.Name):
            elts = [target]
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = list(target.elts)
        else:
            raise self.error(target, "loop variable must be a name")
        if len(elts) != n or not all(isinstance(e, ast.Name) for e in elts):
            raise self.error(target, f"expected {n} loop variable name(s), got {len(elts)}")
        return [(e.id, e) for e in elts]

    def _loop_range(self, spec: T.LoopSpec, node: ast.AST) -> tuple[PrimExpr, PrimExpr, str]:
        start, stop = (python_number(x) for x in (spec.start, spec.stop))  # range(np.int64(8))
        for x in (start, stop):
            if isinstance(x, bool) or not isinstance(x, (int, PrimExpr)):
                raise self.error(node, f"loop bounds must be integers, got {x!r}")
            if isinstance(x, PrimExpr) and not (_dt.is_integer(x.dtype)):
                raise self.error(node, f"loop bounds must be integers, got {x.dtype}")
        dtype = _bounds_dtype([x.dtype for x in (start, stop) if isinstance(x, PrimExpr)])
        ints = [x for x in (start, stop) if isinstance(x, int)]
        if len(ints) == 2:
            ints.append(stop - start)
        if any(not -(2**31) <= x < 2**31 for x in ints):
            if any(not -(2**63) <= x < 2**63 for x in ints):
                raise self.error(node, f"loop bounds {start}..{stop} do not fit a 64-bit integer")
            dtype = _op.promote_dtypes(dtype, "int64")  # an int32 loop variable would wrap
        mn = _op.convert(start, dtype).astype(dtype)
        if _is_zero(start):
            ext = _op.convert(stop, dtype).astype(dtype)
        elif isinstance(start, (int, IntImm)) and isinstance(stop, (int, IntImm)):
            first, end = (x.value if isinstance(x, IntImm) else x for x in (start, stop))
            count = max(end - first, 0)  # exact: uint8 56 - 200 wrapped to 112 trips
            # int8 -100..100 has 200 trips, which int8 cannot hold: the count takes a wider dtype
            ext = IntImm(dtype if _dt.fits(count, dtype) else "int64" if count >= 2**31 else "int32", count)
        elif isinstance(stop, Add) and _same_expr(stop.a, mn):
            ext = stop.b.astype(dtype)
        else:
            ext = _op.binary("sub", _op.convert(stop, dtype).astype(dtype), mn)
        return mn, ext, dtype

    def stmt_If(self, node: ast.If):
        cond = self.eval_expr(node.test)
        if not isinstance(cond, PrimExpr):
            if isinstance(cond, (bool, int)):
                return (
                    self.parse_block(node.body if cond else node.orelse)
                    if (node.body if cond else node.orelse)
                    else None
                )
            raise self.error(node.test, f"if condition must be a boolean expression, got {_kind(cond)}")
        cond = _truth(cond)  # ``if i:`` as Python means it
        if not _dt.is_bool(cond.dtype):
            raise self.error(
                node.test, f"if condition must be boolean, got {cond.dtype}; compare explicitly (e.g. x != 0.0)"
            )
        self.depth += 1
        try:
            then = self.parse_block(node.body)
            other = self.parse_block(node.orelse) if node.orelse else None
        finally:
            self.depth -= 1
        return IfThenElse(cond, then, other)

    def stmt_Assert(self, node: ast.Assert):
        cond = self.eval_expr(node.test)
        msg = f"assertion failed: {ast.unparse(node.test)}" if node.msg is None else self.eval_expr(node.msg)
        kind = "RuntimeError"
        if isinstance(msg, (tuple, list)) and len(msg) == 2 and isinstance(msg[0], str) and isinstance(msg[1], list):
            if not all(isinstance(part, (str, int, float)) for part in msg[1]):
                raise self.error(
                    node.msg, "assert: the message parts must be strings (values known when it is written)"
                )
            kind, msg = msg[0], "".join(str(part) for part in msg[1])  # (error kind, [message parts])
            if kind not in ASSERT_KINDS:
                raise self.error(
                    node.msg, f"assert: unknown error kind '{kind}'; expected one of {', '.join(ASSERT_KINDS)}"
                )
        if isinstance(msg, (tuple, list)) and all(isinstance(m, str) for m in msg):
            msg = "".join(msg)  # the parts of one message
        if not isinstance(msg, str):
            raise self.error(node.msg, "assert message must be a string (or a tuple of strings)")
        if not isinstance(cond, PrimExpr):
            if cond:
                return None
            cond = IntImm("bool", 0)  # `assert False, msg` (as script() prints T.bool(False)): fails when reached
        cond = _truth(cond)
        if not _dt.is_bool(cond.dtype):
            raise self.error(node.test, f"assert condition must be boolean, got {cond.dtype}")
        span = self.span(node)

        def build(body: Stmt) -> Stmt:
            return AssertStmt(cond, msg, body, span, kind)

        return _Wrap(build)

    def stmt_AugAssign(self, node: ast.AugAssign):
        if isinstance(node.target, ast.Name) and self.is_bound(node.target.id):
            scalar = self.lookup(node.target.id, node.target)
            if isinstance(scalar, _MutableScalar):
                val = self._binop(node.op, scalar.load(), self.eval_expr(node.value), node)
                self._check_literal_dtype(scalar, val, node)
                return scalar.store(self._store_value(scalar.buffer, val, node.value))
        if isinstance(node.target, ast.Name) and self._is_macro_parameter(node.target.id):
            # a macro's ``s += 1`` on its parameter: as ``s = s + 1``, a name of its own
            load = ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target)
            value = ast.copy_location(ast.BinOp(load, node.op, node.value), node)
            return self._assign(node.target, value, node)
        if not isinstance(node.target, ast.Subscript):
            name = getattr(node.target, "id", "?")
            raise self.error(
                node,
                f"cannot update '{name}': TIR variables are immutable; "
                f"use a buffer element (e.g. a local buffer) instead",
            )
        buf, idx = self._store_target(node.target)
        if any(calls_out(i) for i in idx) and _dt.access_lanes(idx) == 1:
            # A[g()] += v calls g once, as Python does: the index is bound before the update
            names = [Var("index", i.dtype) if calls_out(i) else None for i in idx]
            bound = tuple(v if v is not None else i for v, i in zip(names, idx))
            cur = BufferLoad(buf, bound)
            val = self._binop(node.op, cur, self.eval_expr(node.value), node)
            out: Stmt = BufferStore(buf, self._store_value(buf, val, node.value), bound)
            for v, i in reversed(list(zip(names, idx))):
                out = out if v is None else LetStmt(v, i, out, self.span(node))
            return out
        cur = self.eval_expr(node.target)  # as a load reads it: a slice is a vector
        rhs = self.eval_expr(node.value)
        val = self._binop(node.op, cur, rhs, node)
        return BufferStore(buf, self._store_value(buf, val, node.value, _dt.access_lanes(idx)), idx)

    def stmt_AnnAssign(self, node: ast.AnnAssign):
        if node.value is None:
            raise self.error(node, "a declaration needs a value")
        anno = self.eval_expr(node.annotation)
        dt = T.dtype_of_annotation(anno)
        if isinstance(node.target, ast.Subscript) or dt is None:
            return self._assign(node.target, node.value, node)
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "annotated assignment target must be a name")
        self.assigned_call = node.value
        val = self.eval_expr(node.value)
        if isinstance(val, T.VarSpec):
            return self._assign_value(node.target, val, node)
        if isinstance(val, T.ScopeIdSpec):  # tx: T.int32 = T.thread_id([32]): the id in that dtype
            return self._assign_value(node.target, dataclasses.replace(val, dtype=dt), node)
        try:
            val = _op.cast(dt, val)
        except (TypeError, ValueError) as e:
            raise self.error(node.value, str(e)) from None
        return self._assign_value(node.target, val, node)

    def stmt_Assign(self, node: ast.Assign):
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment is not supported")
        if id(node) in self.predeclared:
            return None
        return self._assign(node.targets[0], node.value, node)

    def _assign(self, target: ast.expr, value_node: ast.expr, node: ast.stmt):
        if isinstance(target, ast.Subscript):
            buf, idx = self._store_target(target)
            val = self.eval_expr(value_node)
            return BufferStore(buf, self._store_value(buf, val, value_node, _dt.access_lanes(idx)), idx)
        self.assigned_call = value_node  # a scope id assigned to a name is named by it
        val = self.eval_expr(value_node)
        if (
            isinstance(target, ast.Name)
            and isinstance(val, tuple)
            and len(val) > 1
            and all(isinstance(v, T.AxisSpec) for v in val)
        ):
            raise self.error(node, f"T.axis.remap binds {len(val)} axes: give as many names ({target.id}, ... = ...)")
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(val, tuple) and val:
            if all(isinstance(v, T.AxisSpec) for v in val):
                return self._bind_axes(target.elts, list(val), node)
            if all(isinstance(v, T.VarSpec) for v in val) and len(val) == len(target.elts):
                for t, v in zip(target.elts, val):  # n, m = T.int32(), T.int32()
                    if not isinstance(t, ast.Name):
                        raise self.error(t, "assignment target must be a name")
                    self._assign_value(t, v, node)
                return None
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(val, T.ScopeIdSpec):
            for t in target.elts:
                if not isinstance(t, ast.Name):
                    raise self.error(t, "assignment target must be a name")
            self._scope_ids(val, target.elts, node)  # bx, by = T.cta_id([4, 8])
            return None
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(val, (tuple, list)) or len(val) != len(target.elts):
                raise self.error(node, "tuple assignment needs a tuple of the same length on the right")
            if any(isinstance(v, (PrimExpr, T.AllocSpec, T.MatchBufferSpec, T.VarSpec)) for v in val):
                raise self.error(node, "tuple assignment of TIR values is not supported; assign one by one")
            for t, v in zip(target.elts, val):
                if not isinstance(t, ast.Name):
                    raise self.error(t, "assignment target must be a name")
                self.bind(t.id, v, t)
            return None
        if not isinstance(target, ast.Name):
            raise self.error(target, "assignment target must be a name or a buffer element")
        if self._is_meta_var(value_node) and target.id not in self.mutable_names and _is_plain_value(val):
            self.bind(target.id, val, target)  # x = T.meta_var(expr): x stands for expr itself, read where used
            return None
        return self._assign_value(target, val, node)

    def _assign_mutable(self, target: ast.Name, val: PrimExpr, node: ast.stmt):
        """An assignment of a name assigned again later: its first one allocates the value's
        one-element local buffer, every one stores into it."""
        scalar = self.lookup(target.id, target) if self.is_bound_here(target.id) else None
        if isinstance(scalar, _MutableScalar):
            self._check_literal_dtype(scalar, val, node)
            return scalar.store(self._store_value(scalar.buffer, val, node.value))
        literal = None
        if isinstance(val, (int, float)):  # s = 0, then s = s + A[i]; found = False, then found = True
            literal, val = val, _op.convert(val)
        scalar = _MutableScalar(Buffer(target.id, (1,), val.dtype, scope="local"), literal)
        self.bind(target.id, scalar, target)
        span = self.span(node)
        return _Wrap(lambda body: Allocate(scalar.buffer, seq(scalar.store(val), body), span))

    def _check_literal_dtype(self, scalar: _MutableScalar, val: Any, node: ast.stmt) -> None:
        """A name first assigned a Python number holds that number's default dtype (int32,
        float32); a value it cannot hold exactly (a float in an int, int64 or float64, uint32 in
        an int32) would be converted at every step, so it is refused with the spelling that holds it."""
        if scalar.literal is None:
            return
        if isinstance(val, float) and not isinstance(scalar.literal, float):
            got = "float32"  # s = 0, then s = 65536.0: a float, as in Python
        elif isinstance(val, PrimExpr):
            got = _dt.with_lanes(val.dtype, 1)
        else:
            return
        have = scalar.buffer.dtype
        if not _dt.holds_every_value(have, got):
            name = scalar.buffer.name
            raise self.error(
                node,
                f"'{name}' was first assigned the Python number {scalar.literal!r}, so it holds {have}, "
                f"but is assigned a value of dtype {got} here; start it as {name} = {_start(scalar.literal, got)}",
            )

    def _assign_value(self, target: ast.Name, val: Any, node: ast.stmt):
        name = target.id
        if isinstance(val, Stmt):
            raise self.error(node, f"'{ast.unparse(node)}': the right side is a statement (A.vstore ...), not a value")
        if name in self.mutable_names and isinstance(val, (int, float)):
            return self._assign_mutable(target, val, node)  # s = 0, then s = s + A[i]
        if isinstance(val, T.BindSpec):  # x = T.bind(value, var=v): x names v
            self.bind(name, val.var, target)
            return self._bind_declared(val, node)
        if isinstance(val, T.EnvThreadSpec):
            var = Var(name, "int32")
            self.env_threads[var] = val.tag
            self.bind(name, var, target)
            return None
        if isinstance(val, T.LaunchThreadSpec):
            return self._launch(val, target, node)
        if isinstance(val, T.ScopeIdSpec):
            self._scope_ids(val, [target], node)
            return None
        if isinstance(val, T.DeviceEntrySpec):
            raise self.error(node, "T.device_entry() gives no value: write it as a statement of its own")
        if isinstance(val, T.AxisSpec):
            return self._bind_axes([target], [val], node)
        if isinstance(val, tuple) and len(val) == 1 and isinstance(val[0], T.AxisSpec):
            return self._bind_axes([target], list(val), node)  # vi = T.axis.remap("S", [i])
        if isinstance(val, T.VarSpec):
            self._declare(target, val)
            return None
        if isinstance(val, T.MatchBufferSpec) and isinstance(val.handle, BufferLoad):  # A[i, j] or A[i, 0:4]
            load = val.handle
            for i in load.indices:
                if _dt.lanes(i.dtype) > 1 and not (isinstance(i, Call) and str(i.op).endswith("ramp")):
                    raise self.error(node.value, "a region's index is a slice (A[i, 0:4]) or one element, not a vector")
                if _dt.lanes(i.dtype) > 1 and not _is_one(i.args[1]):
                    raise self.error(node.value, _STEPPED_REGION)
            starts = [i.args[0] if _dt.lanes(i.dtype) > 1 else i for i in load.indices]
            sliced = [_dt.lanes(i.dtype) > 1 for i in load.indices]
            extents = [_dt.lanes(i.dtype) for i in load.indices]
            val = T.MatchBufferSpec(_Region(load.buffer, starts, sliced, extents), val.spec)
        if isinstance(val, T.MatchBufferSpec) and isinstance(val.handle, _Region):
            return self._match_region(name, self._region_spec(val, node), target, node)
        if isinstance(val, T.MatchBufferSpec):
            if val.spec.shape is None:
                raise self.error(node.value, "T.match_buffer of a parameter needs its shape: T.match_buffer(a, (n,))")
            if val.spec.dtype is None:
                val.spec.dtype = "float32"
            h = val.handle
            if not isinstance(h, Var) or h.dtype != "handle" or not any(h is p for p in self._handle_params()):
                raise self.error(node.value, "T.match_buffer expects a T.handle parameter of this function")
            if h in self.matched:
                raise self.error(node.value, f"parameter '{h.name}' is already matched to a buffer")
            if self.depth:
                raise self.error(node, "T.match_buffer must be at the top level of the function body")
            buf = self.make_buffer(name, val.spec, node.value, data=h)
            self.matched[h] = buf
            self.bind(name, buf, target)
            return None
        address = self.element_addresses.get(val.data) if isinstance(val, T.BufferSpec) else None
        if address is not None and _dt.element_of(val.dtype) == _dt.element_of(address.args[0].buffer.dtype):
            val = dataclasses.replace(val, data=address)  # (a view as another dtype stays one over the handle)
        if isinstance(val, T.BufferSpec) and _is_element_address(val.data):
            val = self._view_at_element(val, node.value)
        if isinstance(val, T.BufferSpec):
            if not isinstance(val.data, Var) or val.data.dtype != "handle":
                raise self.error(
                    node.value,
                    'a buffer view in the body needs data=<handle>, e.g. T.Buffer((n,), "float32", data=A.data)',
                )
            buf = self.make_buffer(name, val, node.value, data=val.data)
            self.bind(name, buf, target)
            return None
        if isinstance(val, T.AllocSpec):
            buf = self.make_buffer(name, val.spec, node.value)
            self.bind(name, buf, target)
            span = self.span(node)
            return _Wrap(lambda body: Allocate(buf, body, span))
        if isinstance(val, PrimExpr):
            if val.dtype == "void":
                raise self.error(node.value, "this call has no value")
            if name in self.mutable_names:
                return self._assign_mutable(target, val, node)
            if val.dtype == "bool" and lanes_of(val) > 1:  # a comparison of vectors: a vector of bools
                val = val.astype(_dt.with_lanes("bool", lanes_of(val)))
            v = Var(name, val.dtype)
            self.bind(name, v, target)
            self.let_names.add(name)
            loads = lambda x: isinstance(x, BufferLoad)  # noqa: E731
            if _is_element_address(val) and not any(any_node(i, loads) for i in val.args[0].indices):
                self.element_addresses[v] = val
            span = self.span(node)
            return _Wrap(lambda body: LetStmt(v, val, body, span))
        self.bind(name, val, target)  # a Python value (constant, tuple, buffer alias ...)
        if isinstance(val, (int, float)):
            self.let_names.add(name)
        return None

    def _bind_declared(self, spec: T.BindSpec, node: ast.stmt) -> _Wrap:
        """``T.bind(value, var=v)``: a let of the declared variable ``v`` over the rest of the block."""
        span = self.span(node)
        return _Wrap(lambda body: LetStmt(spec.var, spec.value, body, span))

    def _view_at_element(self, spec: T.BufferSpec, node: ast.AST) -> T.BufferSpec:
        """``T.decl_buffer(shape, dtype, data=T.address_of(A[i, j]))``: a view of ``A``'s memory
        starting at that element (its offset the element's flat index)."""
        load = spec.data.args[0]
        base = load.buffer
        if _dt.element_of(spec.dtype) != _dt.element_of(base.dtype):
            raise self.error(
                node, f"a view at an element of {base.name} ({base.dtype}) must have that dtype, not {spec.dtype}"
            )
        offset = flat_index(base, load.indices)
        if not (isinstance(spec.elem_offset, int) and spec.elem_offset == 0):  # the view's own, from there
            offset = _op.binary("add", offset, _op.convert(spec.elem_offset, offset.dtype))
        return dataclasses.replace(spec, data=base.data, elem_offset=offset, scope=base.scope)

    def _handle_params(self) -> list[Var]:
        return [v for s in self.scopes[:1] for v in s.values() if isinstance(v, Var) and v.dtype == "handle"]

    def _store_target(self, target: ast.Subscript) -> tuple[Buffer, tuple]:
        buf = self.eval_expr(target.value)
        if not isinstance(buf, Buffer):
            raise self.error(target.value, f"only buffer elements can be assigned, not {_kind(buf)}")
        return buf, self._indices(buf, target)

    def _store_value(self, buf: Buffer, val: Any, node: ast.AST, lanes: int = 1) -> PrimExpr:
        """``val`` as a value of ``buf``'s dtype (with ``lanes`` lanes for a vector index)."""
        self._has_value(val, node)
        if isinstance(val, bool):
            val = IntImm("bool", int(val)) if _dt.is_bool(buf.dtype) else int(val)
        if isinstance(val, (int, float)):
            try:
                return _op.broadcast(_op.convert(val, buf.dtype), lanes)
            except (TypeError, ValueError) as e:
                raise self.error(node, f"cannot store {val!r} into {buf.dtype} buffer {buf.name}: {e}") from None
        if not isinstance(val, PrimExpr):
            raise self.error(node, f"cannot store {_a(_kind(val))} into buffer {buf.name}")
        if lanes > 1 and lanes_of(val) == 1:
            val = _op.broadcast(val, lanes)
        want = _dt.with_lanes(buf.dtype, lanes * _dt.lanes(buf.dtype))
        if val.dtype == want:
            return val
        if lanes_of(val) != _dt.lanes(want):  # (a comparison of vectors is typed bool, with their lanes)
            raise self.error(node, f"cannot store a {val.dtype} value at {lanes} lane(s) of buffer {buf.name}")
        if not _same_family(val.dtype, want) and _dt.is_float(val.dtype) and not _dt.is_float(want):
            self._warn_converted(f"storing a {val.dtype} value into {buf.dtype} buffer {buf.name}", node)
        return val.astype(want)  # as Apache TVM's parser does: a store converts to the buffer's type

    def _warn_converted(self, what: str, node: ast.AST) -> None:
        """Warn that ``what`` (a float value put where an integer goes) drops its fraction, at the
        line, and in a macro the calls it was expanded at."""
        message = f"{what} converts it (the fraction is dropped)\n{self.span(node).render_with_calls()}"
        warnings.warn(message, TVMScriptWarning, stacklevel=3)

    def _slice_lanes(self, buf: Buffer, dim: int, e: ast.Slice) -> Optional[PrimExpr]:
        """``A[i:i + 4]`` as the vector index ``T.ramp(i, 1, 4)``; None unless the slice has a
        constant length of 2 to 64 lanes and a constant step."""
        start = self.eval_expr(e.lower) if e.lower is not None else 0
        stop = self.eval_expr(e.upper) if e.upper is not None else buf.shape[dim]
        step = self.eval_expr(e.step) if e.step is not None else 1
        if not all(isinstance(x, (int, PrimExpr)) and not isinstance(x, bool) for x in (start, stop, step)):
            return None
        terms, length = linear_form(_op.binary("sub", stop, start))
        step = step.value if isinstance(step, IntImm) else step
        if terms or not isinstance(step, int) or step <= 0:
            return None
        lanes = -(-length // step)
        return _op.ramp(start, step, lanes) if 2 <= lanes <= 64 else None

    def _check_python_slice(self, e: ast.Slice) -> None:
        """Refuse what a slice means only in Python: a negative bound counts from the end there
        (``A[-4:]``), a negative step walks backwards (``A[7:3:-1]``); TIR indices do neither."""

        def negative(x: Optional[ast.expr]) -> bool:
            if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.USub) and isinstance(x.operand, ast.Constant):
                return isinstance(x.operand.value, int) and x.operand.value > 0
            return isinstance(x, ast.Constant) and isinstance(x.value, int) and x.value < 0

        if negative(e.lower) or negative(e.upper):
            raise self.error(e, "a negative slice bound counts from the end in Python, which buffer indices do not: "
                             "write the element numbers (A[n - 4:n] for A[-4:])")  # fmt: skip
        if negative(e.step):
            raise self.error(e, "a slice with a negative step is not supported: slice forward (A[4:8]) and reverse "
                             "the lanes with T.Shuffle, or index one element at a time")  # fmt: skip

    def _indices(self, buf: Buffer, sub: ast.Subscript, region_ok: bool = False) -> Optional[tuple]:
        """The indices of ``buf[...]``, a slice as a vector index (``T.ramp``); with ``region_ok``,
        None for a slice that is not one vector (the caller takes it as a region)."""
        sl = sub.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        out = []
        if sum(isinstance(e, ast.Slice) for e in elts) > 1:
            raise self.error(sub, "only one dimension of a buffer access can be a slice (a vector); "
                             "write a loop over the others")  # fmt: skip
        for dim, e in enumerate(elts):
            if isinstance(e, ast.Slice):
                self._check_python_slice(e)
                ramp = self._slice_lanes(buf, dim, e) if dim < len(buf.shape) else None
                if ramp is None and region_ok:
                    return None
                if ramp is None:
                    raise self.error(e, "a buffer slice here must be one vector: a constant length of 2 to 64 "
                                     "lanes (A[i:i + 4]); index one element at a time otherwise")  # fmt: skip
                out.append(ramp)
                continue
            v = self.eval_expr(e)
            if isinstance(v, bool):
                raise self.error(e, "buffer index must be an integer, got bool")
            if isinstance(v, int):
                v = _op.convert(v)
            elif isinstance(v, float):
                raise self.error(e, f"buffer index must be an integer, got float {v!r}")
            elif not isinstance(v, PrimExpr):
                raise self.error(e, f"buffer index must be an integer expression, got {_kind(v)}")
            elif not (_dt.is_integer(v.dtype)):
                raise self.error(e, f"buffer index must be an integer, got {v.dtype}")
            out.append(v)
        if len(out) != len(buf.shape):
            raise self.error(
                sub, f"buffer {buf.name} has {len(buf.shape)} dimension(s) but {len(out)} index(es) were given"
            )
        return tuple(out)

    def stmt_While(self, node: ast.While):
        if node.orelse:
            raise self.error(node, "while ... else is not supported")
        with self.refusing_macros(_IN_WHILE_CONDITION):
            cond = self.eval_expr(node.test)
        if cond is True:  # while True: ... break
            if not _leaves_loop(node.body):
                raise self.error(node.test, "'while True' without a break or return in its body never ends")
            cond = IntImm("bool", 1)
        cond = _truth(cond)
        if not isinstance(cond, PrimExpr) or not _dt.is_bool(cond.dtype):
            raise self.error(node.test, "a while condition must be a boolean TIR expression")
        self.depth += 1
        try:
            body = self.parse_block(node.body)
        finally:
            self.depth -= 1
        return While(cond, body)

    def stmt_Break(self, node: ast.Break):
        return Break()

    def stmt_Continue(self, node: ast.Continue):
        return Continue()

    def stmt_With(self, node):
        if len(node.items) != 1:
            raise self.error(
                node, "one context per 'with' in TVMScript: nest them (with T.sblock(...): with T.init():)"
            )
        item = node.items[0]
        val = self.eval_expr(item.context_expr)
        if isinstance(val, T.BlockSpec):
            self.blocks.append(_OpenBlock())
            self.depth += 1
            try:
                body = self.parse_block(node.body)
                block = self.blocks[-1]
                bindings = [binding for _, _, binding in block.reductions]
                if len(self.blocks) in self.allreduce_blocks:  # already an explicit cross-thread reduction
                    self.allreduce_blocks.discard(len(self.blocks))
                    return body
                self._check_reduction_over_scope_ids(val.name, node)
                try:
                    return lower_block_reduction(
                        body, val.name, bindings, self.thread_loops, self.span(node), block.spatial
                    )
                except CrossThreadError as err:
                    raise self.error(node, str(err)) from None
            finally:
                self.depth -= 1
                self.blocks.pop()
        if isinstance(val, T.InitSpec):
            return self._init(node)
        if isinstance(val, T.AttrSpec):
            self._enter_attr(val)
            return self.parse_block(node.body)
        if not isinstance(val, T.LaunchThreadSpec):
            raise self.error(
                node,
                f"'with {ast.unparse(item.context_expr)}' is not TVMScript: a 'with' opens T.sblock / T.block, "
                "T.init, T.launch_thread or T.attr, one per 'with'",
            )
        target = item.optional_vars
        if target is not None and not isinstance(target, ast.Name):
            raise self.error(target, "T.launch_thread(...) as <name>: the target must be a name")
        self.scopes.append({})
        self.depth += 1
        threads_open = len(self.thread_loops)
        try:
            wrap = self._launch(val, target, node)
            return wrap.build(self.parse_block(node.body, new_scope=False))
        finally:
            del self.thread_loops[threads_open:]
            self.depth -= 1
            self.scopes.pop()

    def _region_spec(self, val: T.MatchBufferSpec, node: ast.stmt) -> T.MatchBufferSpec:
        """``val`` with the shape (the region's extents) and dtype (its buffer's) it leaves out."""
        region, spec = val.handle, val.spec
        if spec.dtype is None:
            spec = dataclasses.replace(spec, dtype=region.buffer.dtype)
        if spec.shape is None:
            if None in region.extents:
                raise self.error(
                    node.value, "T.match_buffer: a region whose extents are not known here needs the view's shape"
                )
            spec = dataclasses.replace(spec, shape=tuple(region.extents))
        return T.MatchBufferSpec(region, spec)

    def _match_region(self, name: str, val: T.MatchBufferSpec, target: ast.Name, node: ast.stmt) -> None:
        """``X = T.match_buffer(A[i:i + 4, j], (4,))``: a view of ``A``'s memory starting at the
        region's first element, with ``A``'s strides of the region's sliced dimensions (or of all
        of them when the view has as many dimensions as ``A``)."""
        region, spec = val.handle, val.spec
        parent = region.buffer
        strides = list(parent.strides) or _row_major_strides(parent.shape)
        leading = len(strides) - len(spec.shape)  # Apache TVM drops leading dimensions of extent 1
        if len(spec.shape) == sum(region.sliced):
            view_strides = [st for st, sl in zip(strides, region.sliced) if sl]
        elif len(spec.shape) == len(strides):
            view_strides = strides
        elif leading > 0 and all(extent == 1 for extent in region.extents[:leading]):
            view_strides = strides[leading:]
        else:
            raise self.error(node.value, f"T.match_buffer: a {len(spec.shape)}-d view of a region of {parent.name} "
                             f"needs {sum(region.sliced)} sliced dimension(s)")  # fmt: skip
        from tvm.tir.transform.flatten import needs_int64_indices

        wide = needs_int64_indices(parent)  # the view starts where 32 bits may not reach
        as_index = (lambda e: _op.cast("int64", e)) if wide else (lambda e: e)  # noqa: E731
        offset = as_index(parent.elem_offset)
        for start, stride in zip(region.starts, strides):
            offset = _op.binary("add", offset, _op.binary("mul", as_index(start), as_index(stride)))
        dims = list(range(len(strides)))
        if len(spec.shape) == sum(region.sliced):
            dims = [d for d in dims if region.sliced[d]]
        dims = dims[len(dims) - len(spec.shape) :]
        self._check_region_extents(parent, [region.extents[d] for d in dims], spec, node)
        view = T.BufferSpec(spec.shape, spec.dtype, tuple(view_strides), offset, parent.scope, spec.align, parent.data)
        buf = self.make_buffer(name, view, node.value, data=parent.data)
        fragments.note_view(buf, parent, region.starts, dims)
        self.bind(name, buf, target)
        return self._bind_view_layout(spec, buf)

    def _check_region_extents(self, parent: Buffer, extents: list, spec: T.BufferSpec, node: ast.stmt) -> None:
        """The view's shape must be the region's extents (where both are constants; in bytes
        for a view as a dtype of another size), as Apache TVM requires: a larger view would
        reach past the region it was matched to."""

        def const(x: Any) -> Optional[int]:
            return x if isinstance(x, int) else x.value if isinstance(x, IntImm) else None

        have, want = [const(x) for x in extents], [const(x) for x in spec.shape]

        def shape(xs: Any) -> str:
            return "(" + ", ".join(_shown(x) for x in xs) + ("," if len(xs) == 1 else "") + ")"

        region_bytes, view_bytes = _dt.nbytes(parent.dtype), _dt.nbytes(spec.dtype)
        if region_bytes == view_bytes:
            if any(h is not None and w is not None and h != w for h, w in zip(have, want)):
                raise self.error(
                    node.value,
                    f"T.match_buffer: the region of {parent.name} has extents {shape(extents)}, the view's "
                    f"shape is {shape(spec.shape)}: make them the same",
                )
        elif None not in have and None not in want:
            region_bytes, view_bytes = math.prod(have) * region_bytes, math.prod(want) * view_bytes
            if region_bytes != view_bytes:
                raise self.error(
                    node.value,
                    f"T.match_buffer: the region of {parent.name} {shape(extents)} holds {region_bytes} bytes "
                    f"of {parent.dtype}, the {spec.dtype} view of shape {shape(spec.shape)} {view_bytes}: "
                    "make them the same size",
                )

    @staticmethod
    def _bind_view_layout(spec: T.BufferSpec, view: Buffer) -> Optional[_Wrap]:
        """Variables the spec names as the view's strides or offset (``strides=[s1, s0]`` with
        ``s1 = T.int32()``) bound to the view's actual ones over the rest of the block."""
        named = list(zip(spec.strides or (), view.strides)) + [(spec.elem_offset, view.elem_offset)]
        values: dict[Var, list] = {}
        for v, x in named:
            if isinstance(v, Var):
                values.setdefault(v, []).append(_op.cast(v.dtype, x) if x.dtype != v.dtype else x)
        # a variable named for two different values (strides=[s, s]) stays unbound: a use is an error
        lets = [(v, xs[0]) for v, xs in values.items() if all(structural_equal(x, xs[0]) for x in xs)]
        if not lets:
            return None
        for var, value in lets:
            fragments.note_binding(var, value)

        def build(body: Stmt) -> Stmt:
            for var, value in reversed(lets):
                body = LetStmt(var, value, body)
            return body

        return _Wrap(build)

    @staticmethod
    def _is_meta_var(value: ast.expr) -> bool:
        """Whether ``value`` is a call spelled ``T.meta_var(...)``."""
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "meta_var"

    def _check_names_defined(self, call: ast.Call) -> None:
        """Raises, with the line, for a name in ``call``'s arguments that is not defined (a typo
        in ``T.reads(A_typo[vi])``): the arguments themselves are not evaluated."""
        bound = self._names_bound_in_function()  # comprehension and lambda names, later buffers too
        for a in [*call.args, *(k.value for k in call.keywords)]:
            for n in ast.walk(a):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound:
                    self.lookup(n.id, n)

    def _names_bound_in_function(self) -> set:
        """Every name the function being parsed binds anywhere (assignments, loop and ``with``
        targets, parameters), computed once."""
        names = self._bound_names.get(id(self.tree))
        if names is None:
            nodes = list(ast.walk(self.tree))
            names = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            names |= {n.arg for n in nodes if isinstance(n, ast.arg)}
            self._bound_names[id(self.tree)] = names
        return names

    def _is_block_annotation(self, func: ast.expr) -> bool:
        try:
            fn = self.eval_expr(func)
        except TVMScriptError:
            return False
        return fn is T.reads or fn is T.writes or fn is T.block_attr

    def _bind_axes(self, targets: list, axes: list, node: ast.AST) -> _Wrap:
        """Block iteration variables: each name bound to its value (a LetStmt over the rest of the
        block); reduction ones remembered with their domain's start for ``T.init``."""
        if len(targets) != len(axes) or not self.blocks:
            raise self.error(node, "T.axis variables belong inside a 'with T.block(...)' and need one name each")
        bound = []
        for target, ax in zip(targets, axes):
            if not isinstance(target, ast.Name):
                raise self.error(target, "a block iteration variable must be a name")
            value = _op.convert(ax.binding)
            if not _dt.is_integer(value.dtype):
                raise self.error(node, f"a block iteration variable is bound to an integer, got {value.dtype}")
            var = Var(target.id, value.dtype)
            self.bind(target.id, var, target)
            if ax.kind == "R":
                start = ax.start if ax.start is not None else self._first_value(value)
                self.blocks[-1].reductions.append((var, _op.convert(start, value.dtype), value))
            elif ax.kind == "S":
                self.blocks[-1].spatial.append(value)
            bound.append((var, value))
        span = self.span(node)

        def build(body: Stmt) -> Stmt:
            for var, value in reversed(bound):
                body = LetStmt(var, value, body, span)
            return body

        return _Wrap(build)

    def _first_value(self, binding: PrimExpr) -> PrimExpr:
        """What a reduction axis bound to ``binding`` (``k``, ``k + 1``) is at the first step of
        the loops it names, for ``T.init``."""
        from tvm.tir.functor import substitute
        from tvm.tir.transform.simplify import simplify_expr

        return simplify_expr(substitute(binding, self.loop_starts))

    def _init(self, node: ast.With) -> Stmt:
        """``with T.init():`` in a block: its statements guarded by "every reduction axis of the
        block is at its first value" (unguarded when the block has no reduction axis)."""
        if not self.blocks:
            raise self.error(node, "T.init() belongs inside a 'with T.block(...)'")
        self.depth += 1
        try:
            body = self.parse_block(node.body)
        finally:
            self.depth -= 1
        cond = None
        for var, start, _ in self.blocks[-1].reductions:
            first = _op.binary("eq", var, start)
            cond = first if cond is None else _op.binary("and", cond, first)
        if cond is None:
            return body
        guard = IfThenElse(cond, body, None, self.span(node))
        INIT_GUARDS.add(guard)  # the cross-thread lowering tells it from a user's own `if`
        return guard

    def _enter_attr(self, spec: T.AttrSpec) -> None:
        """A ``T.attr`` scope begins: only ``reduce_scope`` changes anything (the reducer of the
        ``T.tvm_thread_allreduce`` that follows); the other keys accepted are hints."""
        if spec.key == "reduce_scope":
            self.reducer = spec.node

    def _thread_allreduce(self, spec: T.ThreadAllreduceSpec, node: ast.AST) -> Stmt:
        """``T.tvm_thread_allreduce(n, value, cond, result[i], k, ...)``: ``result[i]`` of every
        thread = the reducer of the enclosing ``reduce_scope`` over the threads that differ in
        ``k, ...`` (see :mod:`.cross_thread`)."""
        args = spec.args
        if self.reducer is None:
            raise self.error(
                node, 'T.tvm_thread_allreduce needs T.attr(T.comm_reducer(...), "reduce_scope", ...) before it'
            )
        n = int(getattr(args[0], "value", args[0])) if args else 0
        results = list(args[n + 2 : 2 * n + 2])
        if n < 1 or len(args) < 2 * n + 3 or not all(isinstance(r, BufferLoad) for r in results):
            raise self.error(
                node,
                "T.tvm_thread_allreduce(n, value_1..value_n, cond, result_1[i]..result_n[i], thread_var, ...) expected",
            )
        if len(self.reducer.identity) != n:
            raise self.error(
                node, f"T.tvm_thread_allreduce of {n} value(s) under a T.comm_reducer of {len(self.reducer.identity)}"
            )
        values, cond = [_op.convert(v) for v in args[1 : n + 1]], _op.convert(args[n + 1])
        if self.blocks:
            self.allreduce_blocks.add(len(self.blocks))
        threads = [t for t in self.thread_loops if t.tag.startswith("threadIdx")]
        reduced = []
        for v in args[2 * n + 2 :]:
            if not any(t.var is v for t in threads):
                raise self.error(node, f"T.tvm_thread_allreduce: {v} is not a threadIdx variable of an enclosing loop")
            reduced.append(v)
        valid = None if isinstance(cond, IntImm) and cond.value else cond
        identities = [_op.cast(v.dtype, i) for v, i in zip(values, self.reducer.identity)]
        store = lambda totals: [BufferStore(r.buffer, t, r.indices) for r, t in zip(results, totals)]  # noqa: E731
        try:
            return allreduce(values, valid, self.reducer.pairwise, identities, reduced, threads, store, self.span(node))
        except CrossThreadError as err:
            raise self.error(node, str(err)) from None

    def _launch(self, spec: T.LaunchThreadSpec, target: Optional[ast.Name], node: ast.AST) -> _Wrap:
        """The thread-binding loop of ``T.launch_thread`` around what follows (a ``_Wrap``)."""
        thread = spec.thread
        if isinstance(thread, str):
            if thread not in THREAD_TAGS:
                raise self.error(node, f"unknown thread tag '{thread}'; expected one of {', '.join(THREAD_TAGS)}")
            var, tag = Var(target.id if target is not None else thread.replace(".", "_"), "int32"), thread
            if target is not None:
                self.bind(target.id, var, target)
        elif isinstance(thread, Var) and thread in self.env_threads:
            var, tag = thread, self.env_threads[thread]
            if target is not None:
                self.bind(target.id, var, target)
        elif isinstance(thread, T.IterVarSpec) and isinstance(thread.var, Var) and thread.var.dtype == "int32":
            var, tag = thread.var, thread.tag
        else:
            raise self.error(
                node, 'T.launch_thread needs a thread tag such as "threadIdx.x" or a T.env_thread variable'
            )
        extent = spec.extent
        if isinstance(extent, bool) or not isinstance(extent, (int, PrimExpr)):
            raise self.error(node, f"T.launch_thread extent must be an integer, got {extent!r}")
        ext = _op.convert(extent, "int32")
        if isinstance(ext, IntImm) and ext.dtype != var.dtype and _dt.fits(ext.value, var.dtype):
            ext = IntImm(var.dtype, ext.value)  # T.int64(32) threads: the thread variable's dtype, as printed
        elif not isinstance(ext, IntImm) and ext.dtype != var.dtype:
            ext = _op.cast(var.dtype, ext)  # an int64 size m: int32 threads over int32(m), as printed
        span = self.span(node)
        spec = T.thread_binding(ext, thread=tag)  # a virtual thread is a serial loop, as there
        outer = self._enclosing_thread(spec, IntImm("int32", 0), ext, node)
        if outer is not None:  # launched again inside itself: the same threads, under another name
            guard = None if structural_equal(outer.extent, ext) else _op.binary("lt", outer.index, ext)
            same = outer.index if outer.var.dtype == var.dtype else _op.cast(var.dtype, outer.index)

            def alias(body: Stmt) -> Stmt:
                if guard is not None and any_node(body, _op.is_barrier):
                    raise self.error(
                        node,
                        f"{tag} is launched again with the narrower extent {_shown(ext)}, which guards what "
                        f"follows, and that holds a barrier every thread of the block must reach; launch "
                        f"the same extent, or guard only the statements before the barrier with an if",
                    )
                return _guarded(guard, LetStmt(var, same, body, span), span)

            return _Wrap(alias)
        if spec.kind is ForKind.THREAD_BINDING:
            self.thread_loops.append(ThreadLoop(var, tag, ext))
        return _Wrap(
            lambda body: For(var, IntImm(ext.dtype, 0), ext, spec.kind, body, spec.thread, dict(spec.annotations), span)
        )

    def _device_entry(self, node: ast.AST) -> _Wrap:
        """``T.device_entry()``: the rest of the function becomes one kernel (``device_region``)."""
        if self.depth or self.macro_calls:
            raise self.error(node, "T.device_entry() must be at the top level of the function body")
        if self.device_region is not None:
            raise self.error(node, "T.device_entry() is called twice: a function has one device region")
        region = self.device_region = DeviceRegion(bool(self.thread_loops), self._bound_variables)
        span = self.span(node)

        def build(body: Stmt) -> Stmt:
            try:
                return region.build(body, span)
            except ScopeIdError as err:
                raise self.error(err.node, str(err)) from None

        return _Wrap(build)

    def _bound_variables(self) -> list:
        """The variables the kernel's names are bound to now (a buffer's by its memory)."""
        values = [v.data if isinstance(v, Buffer) else v for scope in self.scopes for v in scope.values()]
        return [v for v in values if isinstance(v, Var)]

    def _check_reduction_over_scope_ids(self, block: str, node: ast.AST) -> None:
        """A block reducing over a device region's computed id (``T.lane_id()``, a uint32
        ``T.thread_id``) is refused: the cross-thread lowering sees thread loops only, and every
        thread would update the total at once."""
        computed = self.device_region.computed_ids() if self.device_region is not None else set()
        over = [b for _, _, b in self.blocks[-1].reductions if any(v in computed for v in free_vars(b))]
        if over:
            raise self.error(
                node,
                f"block '{block}' reduces over {expr_text(over[0])}, a scope id computed from the thread index; bind "
                f"the reduction axis to the int32 variable of T.thread_id([n]) itself",
            )

    def _scope_ids(self, spec: T.ScopeIdSpec, targets: list[ast.Name], node: ast.AST) -> list[Var]:
        """``tx = T.thread_id([n])`` and the other scope ids: variables of the device region's launch."""
        if self.device_region is None:
            raise self.error(node, f"T.{spec.call} is an id of a device region: call T.device_entry() before it")
        launches = spec.kind in ("cta", "thread") and spec.kind not in self.device_region.launches
        if launches and (self.depth or self.macro_calls):  # the launch wraps the whole region
            raise self.error(
                node,
                f"T.{spec.call} declares the launch, so it must be at the device region's own level, not in a "
                f"loop, if, block or macro",
            )
        count = len(spec.extents) if spec.extents is not None and spec.kind in ("cta", "thread") else 1
        names = [t.id for t in targets] or [f"{spec.call}_{i}" for i in range(count)]
        try:
            variables, loops = self.device_region.declare(spec, names, node)
        except ScopeIdError as err:
            raise self.error(err.node, str(err)) from None
        for target, var in zip(targets, variables):
            self.bind(target.id, var, target)
        self.thread_loops.extend(loops)
        self.nonnegative_vars.update(loop.var for loop in loops)
        return variables

    def stmt_FunctionDef(self, node: ast.FunctionDef):
        """``@T.macro`` / ``@T.inline`` ``def`` inside the kernel: a macro that sees the kernel's
        names around its definition."""
        options = None
        if len(node.decorator_list) == 1:
            options = macros.options_of(self.eval_expr(node.decorator_list[0]), (T.macro, T.inline))
        if options is None:
            raise self.error(node, "a function defined inside a prim_func must be a @T.macro or @T.inline")
        source = FunctionSource(node, self.filename, self.lines, self.line_offset, self.col_offset, 0)
        signature = macros.signature_of(node.args, self.eval_expr)
        env = self.env
        macro = macros.Macro(options.kind, source, signature, lambda: env, options.hygienic, list(self.scopes))
        self.bind(node.name, macro, node)
        return None

    def expand_macro(self, macro: macros.Macro, arguments: dict[str, Any]) -> Stmt:
        """The statements of ``macro``'s body for ``arguments``, parsed at the current statement
        with the macro's names; an error inside also names the call."""
        if self.macro_refusal is not None:
            where, why, instead = self.macro_refusal
            raise self.error(
                self.calling or self.statement,
                f"{macro.kind} '{macro.name}' is expanded {where}: its statements would run {why}, since a "
                f"macro's statements are placed before the statement being parsed; {instead}",
            )
        call = self.span(self.statement) if self.statement is not None else None
        if len(self.macro_calls) >= macros.MAX_DEPTH:
            raise TVMScriptError(
                f"{macro.kind} '{macro.name}' expands {macros.MAX_DEPTH} macros deep: a macro that calls itself "
                "needs a condition known while parsing that ends the recursion",
                call,
            )
        fields = ("tree", "filename", "lines", "line_offset", "col_offset", "env", "scopes", "mutable_names")
        fields += ("statement", "statement_call", "assigned_call", "scope_floor", "macro_notes", "block_floor")
        fields += ("ended_names", "assigned_names")
        saved = {f: getattr(self, f) for f in fields}
        src = macro.source
        self.tree, self.filename, self.lines = src.tree, src.filename, src.lines
        self.line_offset, self.col_offset = src.line_offset, src.col_offset
        self.env = macro.names_at_call(self.env)
        self.scopes = macro.scopes_at_call(self.scopes, arguments)
        self.scope_floor = len(self.scopes)  # the body's own scope: it may shadow the arguments too
        self.mutable_names = _reassigned_names(src.tree.body)
        self.assigned_names = _assigned_names(src.tree.body)
        self.ended_names = {}  # the macro's own blocks
        self.macro_calls.append(macro)
        self.macro_notes = (_macro_note(macro, call), *self.macro_notes)
        self.block_floor = len(self.blocks)  # blocks opened by the caller, not by the macro's own text
        try:
            return self.parse_block(self._strip_docstring(src.tree.body))
        except TVMScriptError as e:
            raise TVMScriptError(_with_macro_call(e.reason, macro, call), e.span) from None
        finally:
            self.macro_calls.pop()
            for f, value in saved.items():
                setattr(self, f, value)

    # ------------------------------------------------------------------ expressions
    def eval_expr(self, node: ast.expr) -> Any:
        m = getattr(self, "expr_" + type(node).__name__, None)
        if m is None:
            raise self.error(node, f"unsupported expression '{type(node).__name__}' in TVMScript")
        try:
            return m(node)
        except _PASSTHROUGH:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError, OverflowError) as e:
            raise self.error(node, str(e)) from None
        except BackendError as e:  # a target of a backend that is not installed (T.target("x"))
            raise self.error(node, str(e)) from None

    def expr_Lambda(self, node: ast.Lambda):
        """``lambda x, y: x + y`` (a T.comm_reducer's combiner): a Python function that evaluates
        the body as TIR with its parameters bound to the arguments."""
        names = [a.arg for a in node.args.args]

        def call(*values: Any) -> Any:
            if len(values) != len(names):
                raise TypeError(f"the lambda takes {len(names)} argument(s), got {len(values)}")
            self.scopes.append(dict(zip(names, values)))
            try:
                return self.eval_expr(node.body)
            finally:
                self.scopes.pop()

        return call

    def expr_Constant(self, node: ast.Constant):
        return node.value

    def expr_Name(self, node: ast.Name):
        value = self.lookup(node.id, node)
        return value.load() if isinstance(value, _MutableScalar) else value

    def expr_Attribute(self, node: ast.Attribute):
        base = self.eval_expr(node.value)
        if isinstance(base, Buffer) and node.attr in ("vload", "vstore"):
            return self._vector_access(base, node.attr)
        if isinstance(base, Buffer) and node.attr == "access_ptr":
            return self._access_ptr(base)
        if isinstance(base, Buffer) and node.attr == "ty":
            return base  # Apache TVM's C.ty.elem_offset: the buffer's type holds its layout
        if isinstance(base, Buffer) and node.attr not in (
            "shape",
            "dtype",
            "data",
            "name",
            "strides",
            "scope",
            "ndim",
            "elem_offset",
        ):
            raise self.error(node, f"buffer has no attribute '{node.attr}'")
        if isinstance(base, Buffer) and node.attr == "data":
            fragments.note_data(base)
        try:
            return getattr(base, node.attr)
        except AttributeError as e:
            raise self.error(node, str(e)) from None

    def _vector_load(self, buf: Buffer, indices: tuple) -> BufferLoad:
        """``buf[indices]``: as many lanes as the widest index (a ``T.ramp``)."""
        return BufferLoad(buf, indices, _dt.with_lanes(buf.dtype, _dt.lanes(buf.dtype) * _dt.access_lanes(indices)))

    @staticmethod
    def _access_ptr(buf: Buffer) -> Callable:
        """``buf.access_ptr(mask, ptr_type="handle", content_lanes=1, offset=0, extent=None)``: the
        address of element ``offset`` (counted row-major) of ``buf``, as ``T.address_of`` of that
        element. The access mask and the extent only annotate Apache TVM's analyses."""

        def access_ptr(
            access_mask: Any = "rw",
            ptr_type: str = "handle",
            content_lanes: int = 1,
            offset: Any = 0,
            extent: Any = None,
        ) -> PrimExpr:
            if isinstance(access_mask, str) and not set(access_mask) <= set("rw") or not access_mask:
                raise ValueError(f"access mask must be made of 'r' and 'w', got {access_mask!r}")
            indices = unravel_index(_op.convert(offset), buf.shape)
            return T.address_of(BufferLoad(buf, indices, buf.dtype))

        return access_ptr

    def _vector_access(self, buf: Buffer, method: str) -> Callable:
        """``buf.vload(indices, dtype=None, predicate=None)`` and ``buf.vstore(indices, value,
        predicate=None)``: a vector dtype widens the last index to a ramp; lanes whose predicate
        is false read zero and store nothing."""

        def index(indices: Any, dtype: Optional[str]) -> tuple:
            indices = [_op.convert(i) for i in (indices if isinstance(indices, (list, tuple)) else [indices])]
            if len(indices) != len(buf.shape):
                raise TypeError(f"buffer {buf.name} has {len(buf.shape)} dimension(s), got {len(indices)} index(es)")
            if dtype is not None and _dt.lanes(dtype) > 1 and _dt.lanes(indices[-1].dtype) == 1:
                indices[-1] = _op.ramp(indices[-1], 1, _dt.lanes(dtype))
            return tuple(indices)

        def vload(indices: Any, dtype: Optional[str] = None, predicate: Any = None) -> PrimExpr:
            load = self._vector_load(buf, index(indices, dtype))
            if predicate is None:
                return load
            return _op.if_then_else(predicate, load, _op.broadcast(_op.convert(0, buf.dtype), _dt.lanes(load.dtype)))

        def vstore(indices: Any, value: Any, predicate: Any = None) -> Stmt:
            value = _op.convert(value, _dt.element_of(buf.dtype)) if not isinstance(value, PrimExpr) else value
            store = BufferStore(buf, value, index(indices, value.dtype))
            return store if predicate is None else masked_store(store, predicate)

        return vload if method == "vload" else vstore

    def _elements(self, elts: list) -> list:
        """The values of a tuple or list display, ``*xs`` spliced in as Python does."""
        out: list = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self._python_iterable(self.eval_expr(e.value), e.value, "*"))
            else:
                out.append(self.eval_expr(e))
        return out

    def expr_Tuple(self, node: ast.Tuple):
        return tuple(self._elements(node.elts))

    def expr_List(self, node: ast.List):
        return self._elements(node.elts)

    def _python_iterable(self, value: Any, node: ast.AST, what: str) -> Any:
        """``value`` as something Python iterates at parse time (``range(n)`` with constant
        bounds as a Python range); TVMScriptError for a loop or value only known at run time."""
        if isinstance(value, T.LoopSpec) and value.kind is ForKind.SERIAL and not value.annotations:
            bounds = [x.value if isinstance(x, IntImm) else x for x in (value.start, value.stop, value.step)]
            if all(isinstance(x, int) and not isinstance(x, bool) for x in bounds):
                return range(*bounds)
        if isinstance(value, (T.LoopSpec, T.GridSpec, PrimExpr)) or not hasattr(value, "__iter__"):
            raise self.error(
                node,
                f"{what} takes Python values known when the kernel is written (a list, a tuple, range() of "
                f"constants), got {_kind(value)}",
            )
        return value

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> list:
        """``[f(x) for x in range(4) if x != 2]``: evaluated when the kernel is written, each
        iteration's names in a scope of their own (as Python's comprehensions have)."""
        out: list = []

        def run(generators: list) -> None:
            if not generators:
                out.append(self.eval_expr(node.elt))
                return
            gen = generators[0]
            if gen.is_async:
                raise self.error(gen.target, "async comprehensions are not supported")
            for value in self._python_iterable(self.eval_expr(gen.iter), gen.iter, "a comprehension"):
                self.scopes.append({})
                try:
                    self._bind_target(gen.target, value)
                    if all(self._python_condition(c) for c in gen.ifs):
                        run(generators[1:])
                finally:
                    self.scopes.pop()

        run(node.generators)
        return out

    def _bind_target(self, target: ast.expr, value: Any) -> None:
        """Bind the names of a comprehension target (``x`` or ``(i, j)``) to ``value``."""
        if isinstance(target, ast.Name):
            self.scopes[-1][target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            values = list(value) if isinstance(value, (tuple, list)) else None
            if values is None or len(values) != len(target.elts):
                raise self.error(target, f"cannot unpack {_kind(value)} into {len(target.elts)} names")
            for e, v in zip(target.elts, values):
                self.scopes[-1][e.id] = v
        else:
            raise self.error(target, "a comprehension binds a name or a tuple of names")

    def _python_condition(self, node: ast.expr) -> bool:
        cond = self.eval_expr(node)
        if isinstance(cond, PrimExpr):
            raise self.error(
                node, "a comprehension's condition is decided when the kernel is written; this one is known at run time"
            )
        return bool(cond)

    def expr_ListComp(self, node: ast.ListComp):
        return self._comprehension(node)

    def expr_GeneratorExp(self, node: ast.GeneratorExp):
        return iter(self._comprehension(node))

    def expr_Dict(self, node: ast.Dict):
        if any(k is None for k in node.keys):
            raise self.error(node, "dict unpacking is not supported")
        return {self.eval_expr(k): self.eval_expr(v) for k, v in zip(node.keys, node.values)}

    def expr_Call(self, node: ast.Call):
        fn = self.eval_expr(node.func)
        arms = fn is _op.if_then_else  # its value arms are evaluated only when chosen

        def argument(value: ast.expr, is_arm: bool) -> Any:
            if not is_arm:
                return self.eval_expr(value)
            with self.refusing_macros(_IN_IF_THEN_ELSE):
                return self.eval_expr(value)

        args = []
        for i, a in enumerate(node.args):
            if isinstance(a, ast.Starred):
                args.extend(argument(a.value, arms))
            else:
                args.append(argument(a, arms and i > 0))
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                kwargs.update(argument(k.value, arms))
            else:
                kwargs[k.arg] = argument(k.value, arms and k.arg != "cond")
        if not callable(fn):
            raise self.error(node.func, f"'{type(fn).__name__}' object is not callable")
        macro = macros.macro_of(fn)
        if macro is not None and node is not self.statement_call:
            raise self.error(
                node,
                f"{macro.kind} '{macro.name}' gives statements, not a value: call it on a line of its own "
                "(a Python helper function returns expressions)",
            )
        if fn in (builtins.min, builtins.max, builtins.abs) and any(isinstance(a, PrimExpr) for a in args):
            fn = {builtins.min: _op.min, builtins.max: _op.max, builtins.abs: _op.abs}[fn]
        if fn is builtins.range:  # of constants a Python range (zip, len, comprehensions), as a loop T.serial
            plain = args and not kwargs and all(isinstance(a, int) and not isinstance(a, bool) for a in args)
            return builtins.range(*args) if plain else T.serial(*args, **kwargs)
        if fn is builtins.reversed and len(args) == 1 and isinstance(args[0], builtins.range) and not kwargs:
            return args[0][::-1]  # a loop counting down
        if fn is T.prim_func:
            raise self.error(node, "T.prim_func cannot be used inside a prim_func")
        if fn in _PARSE_TIME_BUILTINS:
            raise self.error(
                node,
                f"{fn.__name__}(...) is Python, which runs while the kernel is parsed, not in the kernel: remove it",
            )
        result_dtype = kwargs.pop("dtype", None) if "dtype" in kwargs and not _takes_dtype(fn) else None
        outer_call, self.calling = self.calling, node
        try:
            out = fn(*args, **kwargs)
            if result_dtype is not None and isinstance(out, PrimExpr) and out.dtype != result_dtype:
                out = _op.cast(result_dtype, out)  # T.exp(x, dtype="float32"): Apache TVM's result dtype
            if isinstance(out, T.ScopeIdSpec) and node is not self.statement_call and node is not self.assigned_call:
                ids = self._scope_ids(out, [], node)  # if T.lane_id() == 0: an id declared where it is used
                return ids[0] if len(ids) == 1 else tuple(ids)
            return out
        except (*_PASSTHROUGH, BackendError, RecursionError):
            raise
        except Exception as e:  # noqa: BLE001 - a Python helper's own failure, named at its call
            raise self.error(node, _call_message(fn, e, ast.unparse(node.func))) from None
        finally:
            self.calling = outer_call

    def _slice_extent(self, e: ast.Slice) -> Optional[int]:
        """The length of slice ``lo:hi`` when it is a constant (``i:i + 16`` included), else None."""
        if e.upper is None:
            return None
        lower = e.lower if e.lower is not None else ast.Constant(0)
        upper = e.upper
        if isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add) and isinstance(upper.right, ast.Constant):
            if ast.dump(upper.left) == ast.dump(lower) and isinstance(upper.right.value, int):
                return upper.right.value
        lo, hi = self.eval_expr(lower), self.eval_expr(upper)
        lo, hi = (v.value if isinstance(v, IntImm) else v for v in (lo, hi))
        if isinstance(lo, int) and isinstance(hi, int):
            return hi - lo
        if isinstance(lo, (int, PrimExpr)) and isinstance(hi, (int, PrimExpr)):  # (i + 1) * 16 - i * 16
            try:
                terms, length = linear_form(_op.binary("sub", _op.convert(hi), _op.convert(lo)))
            except (TypeError, ValueError):
                return None
            return None if terms else length
        return None

    def expr_Subscript(self, node: ast.Subscript):
        base = self.eval_expr(node.value)
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        slices = [i for i, e in enumerate(elts) if isinstance(e, ast.Slice)]
        if isinstance(base, Buffer) and len(slices) == 1 and len(elts) == len(base.shape):
            indices = self._indices(base, node, region_ok=True)
            if indices is not None:  # A[i, 0:4]: a vector load (a region where T.match_buffer takes one)
                return self._vector_load(base, indices)
        if isinstance(base, Buffer) and slices:
            if len(elts) != len(base.shape):
                raise self.error(node, f"buffer {base.name} has {len(base.shape)} dimension(s), region has {len(elts)}")
            starts = [self.eval_expr(e.lower) if isinstance(e, ast.Slice) and e.lower else
                      (0 if isinstance(e, ast.Slice) else self.eval_expr(e)) for e in elts]  # fmt: skip
            if any(isinstance(e, ast.Slice) and e.step is not None and self.eval_expr(e.step) != 1 for e in elts):
                raise self.error(node, _STEPPED_REGION)
            extents = [self._slice_extent(e) if isinstance(e, ast.Slice) else 1 for e in elts]
            return _Region(base, starts, [isinstance(e, ast.Slice) for e in elts], extents)
        if isinstance(base, Buffer):
            return self._vector_load(base, self._indices(base, node))
        if isinstance(node.slice, ast.Slice):
            raise self.error(node, "slices are not supported")
        if isinstance(base, PrimExpr) and not hasattr(base, "__getitem__"):
            raise self.error(
                node, f"{ast.unparse(node.value)} is a value of dtype {base.dtype}, not a buffer: it has no elements"
            )
        return base[self.eval_expr(node.slice)]

    def expr_BinOp(self, node: ast.BinOp):
        a = self.eval_expr(node.left)
        b = self.eval_expr(node.right)
        return self._binop(node.op, a, b, node)

    def _has_value(self, val: Any, node: ast.AST) -> None:
        """A call of a function that returns nothing (a module function without ``-> dtype``)
        cannot be used as a value."""
        if isinstance(val, Call) and val.dtype == "void":
            callee = val.args[0].value if val.args and isinstance(val.args[0], StringImm) else val.op
            raise self.error(node, f"{callee} returns nothing: its call is a statement, not a value")

    def _binop(self, op: ast.operator, a: Any, b: Any, node: ast.AST):
        if not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
            return _PY_BINOPS[type(op)](a, b)
        self._has_value(a, node)
        self._has_value(b, node)
        for x in (a, b):
            if not isinstance(x, (PrimExpr, int, float, bool)):
                raise self.error(node, f"cannot combine {_kind(x)} with a TIR expression")
        name = _BINOP_NAMES.get(type(op))
        if name is None:
            if isinstance(op, ast.Pow):
                return _op.pow(a, b)
            bitwise = _BITWISE_NAMES.get(type(op))
            if bitwise is None:
                raise self.error(node, f"operator {type(op).__name__} is not supported on TIR expressions")
            return _op.bitwise_operator(bitwise, a, b)
        out = _op.binary(name, a, b)
        if name == "div" and not _dt.is_float(out.dtype):
            raise self.error(node, INTEGER_TRUE_DIVISION)
        return out

    def expr_UnaryOp(self, node: ast.UnaryOp):
        v = self.eval_expr(node.operand)
        if not isinstance(v, PrimExpr):
            return {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Not: lambda x: not x, ast.Invert: lambda x: ~x}[
                type(node.op)
            ](v)
        if isinstance(node.op, ast.USub):
            if isinstance(v, IntImm) and not _dt.is_bool(v.dtype):  # wraps, as integers do: -INT_MIN
                return IntImm(v.dtype, _dt.wrapped(-v.value, v.dtype))
            if isinstance(v, FloatImm):
                return FloatImm(v.dtype, -v.value)
            if _dt.is_float(v.dtype):
                return -v  # as PrimExpr negates: the sign of a zero kept
            return _op.binary("sub", _zero_like(v), v)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            return _op.logical_not(_truth(v))
        return _op.invert(v)

    def expr_BoolOp(self, node: ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        out = self.eval_expr(node.values[0])
        for value in node.values[1:]:
            if isinstance(out, IntImm) and out.dtype == "bool":
                out = bool(out.value)  # a constant (T.LT(0, 1)): as the literal its text prints as
            if not isinstance(out, PrimExpr):  # a Python value: Python's short circuit
                if bool(out) != is_and:  # `False and x`, `True or x`: x is never evaluated
                    return out
                out = self.eval_expr(value)  # `True and x`, `False or x` are x
                continue
            with self.refusing_macros(_IN_BOOL_OPERAND):  # evaluated at run time only when needed
                v = self.eval_expr(value)
            out = _op.binary("and" if is_and else "or", _truth(out), _truth(v))
        return out

    def expr_Compare(self, node: ast.Compare):
        left = self.eval_expr(node.left)
        result = None
        once = None  # lo <= g() <= hi calls g once, as Python does: its value bound around the chain
        for k, (op, right_node) in enumerate(zip(node.ops, node.comparators)):
            right = self.eval_expr(right_node)
            if k == 0 and len(node.ops) > 1 and isinstance(right, PrimExpr) and calls_out(right):
                once = (Var("value", right.dtype), right)
                right = once[0]
            name = _CMP_NAMES.get(type(op))
            if name is None and type(op) in _PY_ONLY_CMPS:  # `is None`, `in (...)`: about Python values
                word = _PY_ONLY_CMPS[type(op)][0]
                if word.endswith("in") and isinstance(left, PrimExpr) and not isinstance(left, (IntImm, FloatImm)):
                    raise self.error(
                        node,
                        f"'{word}' compares Python values, and this is a run-time one: write "
                        f"{_membership_rewrite(node.left if k == 0 else node.comparators[k - 1], right_node, word)}",
                    )
                r = _PY_ONLY_CMPS[type(op)][1](left, right)
            elif name is None:
                raise self.error(node, f"comparison {type(op).__name__} is not supported")
            elif not isinstance(left, PrimExpr) and not isinstance(right, PrimExpr):
                r = _PY_CMPS[name](left, right)
            else:
                r = _op.binary(name, left, right)
            if result is None:
                result = r
            elif isinstance(result, PrimExpr) or isinstance(r, PrimExpr):
                result = _op.binary("and", result, r)
            else:
                result = result and r
            left = right
        if once is not None and isinstance(result, PrimExpr):
            result = Let(once[0], once[1], result, result.dtype)
        return result

    def expr_IfExp(self, node: ast.IfExp):
        c = self.eval_expr(node.test)
        if not isinstance(c, PrimExpr):
            return self.eval_expr(node.body) if c else self.eval_expr(node.orelse)
        with self.refusing_macros(_IN_CONDITIONAL_EXPRESSION):
            return _op.select(c, self.eval_expr(node.body), self.eval_expr(node.orelse))

    def expr_JoinedStr(self, node: ast.JoinedStr) -> str:
        """An f-string of values known when the kernel is parsed (``T.block(f"{name}_init")``)."""
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            v = self.eval_expr(value.value)
            if isinstance(v, PrimExpr) and not isinstance(v, (IntImm, FloatImm)):
                raise self.error(value, "an f-string of a kernel formats Python values; this one is a run-time value")
            if value.conversion != -1:
                v = {ord("r"): repr, ord("s"): str, ord("a"): ascii}[value.conversion](v)
            spec = self.eval_expr(value.format_spec) if value.format_spec is not None else ""
            parts.append(format(v.value if isinstance(v, (IntImm, FloatImm)) else v, spec))
        return "".join(parts)


def _membership_rewrite(left: ast.expr, options: ast.expr, word: str) -> str:
    """``i == 0 or i == 1`` for ``i in (0, 1)`` (``!=`` and ``and`` for ``not in``)."""
    lhs = ast.unparse(left)
    cmp, join = ("!=", " and ") if word.startswith("not") else ("==", " or ")
    elts = options.elts if isinstance(options, (ast.Tuple, ast.List, ast.Set)) else None
    if not elts:
        return f"{lhs} {cmp} ...{join}{lhs} {cmp} ... for each value"
    return join.join(f"{lhs} {cmp} {ast.unparse(e)}" for e in elts)


class _MacroRefusal(NamedTuple):
    """Why a macro expanded while an expression is parsed would run at the wrong time: where the
    expression is, when its statements would run, and what to write instead."""

    where: str
    why: str
    instead: str


_IN_WHILE_CONDITION = _MacroRefusal(
    "while the condition of a while loop is parsed",
    "once, before the loop, not at each test of the condition",
    "call the macro in the loop's body instead, and keep the condition in a variable the body updates "
    "(a local buffer, or a name assigned again)",
)
_IN_CONDITIONAL_EXPRESSION = _MacroRefusal(
    "in an arm of a conditional expression 'x if c else y'",
    "whichever arm is chosen",
    "use an if statement, with the macro's call in its branch",
)
_IN_BOOL_OPERAND = _MacroRefusal(
    "in an operand of 'and' / 'or' after the first, which is evaluated only when the operands before it "
    "do not decide the result",
    "whether it is evaluated or not",
    "use an if statement, with the macro's call in its branch",
)
_IN_IF_THEN_ELSE = _MacroRefusal(
    "in an arm of T.if_then_else, which evaluates only the arm chosen",
    "whichever arm is chosen",
    "use an if statement, with the macro's call in its branch",
)


def _zero_like(v: PrimExpr) -> PrimExpr:
    return FloatImm(v.dtype, 0.0) if _dt.is_float(v.dtype) else IntImm(v.dtype, 0)


#: Why a region sliced with a step (``A[0:8:2, 0:4]``) is no region: Apache TVM's have none.
_STEPPED_REGION = (
    "a buffer region cannot have a step (A[0:8:2]), as in Apache TVM: declare a view of every other element "
    "with strides, T.decl_buffer(shape, dtype, data=A.data, strides=[...], elem_offset=...)"
)


def _is_one(e: Any) -> bool:
    return (isinstance(e, int) and e == 1) or (isinstance(e, IntImm) and e.value == 1)


def _is_element_address(data: Any) -> bool:
    """Whether ``data`` is ``T.address_of(A[...])``, the address of one buffer element."""
    return _op.address_element(data) is not None


def _same_family(a: str, b: str) -> bool:
    def fam(d):
        if _dt.is_float(d):
            return "float"
        if _dt.is_integer(d):
            return "int"
        return d

    return _dt.lanes(a) == _dt.lanes(b) and fam(a) == fam(b)


def _same_expr(a: PrimExpr, b: PrimExpr) -> bool:
    from tvm.tir.analysis import structural_equal

    return structural_equal(a, b)


def _row_major_strides(shape: tuple) -> list:
    """Element strides of a compact row-major buffer of ``shape``."""
    strides, step = [], IntImm("int32", 1)
    for dim in reversed(shape):
        strides.append(step)
        step = _op.binary("mul", step, dim)
    return strides[::-1]


def _after(emitted: list[Stmt], r: Any) -> Any:
    """Statement result ``r`` (a Stmt, a _Wrap or None) after the ``emitted`` statements."""
    if isinstance(r, _Wrap):
        return _Wrap(lambda body: seq(*emitted, r.build(body)))
    return seq(*emitted) if r is None else seq(*emitted, r)


def _macro_note(macro: macros.Macro, call: Optional[Span]) -> str:
    """``(in T.macro 'f', called at file:line)``."""
    return f"(in {macro.kind} '{macro.name}'" + (f", called at {call})" if call is not None else ")")


def _with_macro_call(reason: str, macro: macros.Macro, call: Optional[Span]) -> str:
    """``reason`` with a line naming the macro call it happened in (of a deep expansion, the four
    innermost calls, "(...)" and the outermost)."""
    note = _macro_note(macro, call)
    lines = reason.split("\n")
    if "(...)" in lines:
        return "\n".join(lines[: lines.index("(...)") + 1] + [note])
    if reason.count("\n(in ") >= 4:
        return f"{reason}\n(...)\n{note}"
    return f"{reason}\n{note}"


def _takes_dtype(fn: Any) -> bool:
    """Whether ``fn`` has a ``dtype`` parameter (else a ``dtype=`` argument names its result's)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True  # unknown: pass the argument on
    return "dtype" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _call_message(fn: Any, e: Exception, written: str) -> str:
    """The message of ``e``, raised by ``fn``, which the kernel calls as ``written(...)``."""
    msg = re.sub(r"^[\w.<>]*?(__call__|\bcall)\(\)", f"{written}()", str(e))  # a callable object's own name
    name = getattr(fn, "__name__", None)
    if msg.startswith(written) or (isinstance(e, TypeError) and (written in msg or (name and name in msg))):
        return msg
    module = str(getattr(fn, "__module__", "") or type(fn).__module__)
    if not module.startswith("tvm"):  # a Python function (not TVMScript's or a backend's) run while parsing
        return f"{written}(...) raised {type(e).__name__}: {msg}"
    return f"{written}: {msg}"


_BINOP_NAMES = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "div",
    ast.FloorDiv: "floordiv",
    ast.Mod: "floormod",
}
#: Python's bitwise operators: the tvm.tir.op function each names (bool operands: And / Or)
_BITWISE_NAMES = {
    ast.BitAnd: "bitwise_and",
    ast.BitOr: "bitwise_or",
    ast.BitXor: "bitwise_xor",
    ast.LShift: "shift_left",
    ast.RShift: "shift_right",
}
_PY_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitXor: lambda a, b: a ^ b,
    ast.LShift: lambda a, b: a << b,
    ast.RShift: lambda a, b: a >> b,
}
_CMP_NAMES = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
#: Comparisons of Python values only (a kernel factory's ``if bias is not None``), evaluated as parsed.
_PY_ONLY_CMPS = {
    ast.Is: ("is", lambda a, b: a is b),
    ast.IsNot: ("is not", lambda a, b: a is not b),
    ast.In: ("in", lambda a, b: a in b),
    ast.NotIn: ("not in", lambda a, b: a not in b),
}
_PY_CMPS = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


# ---------------------------------------------------------------------- entry points


_module_texts = itertools.count()


#: False while the text of a module parsed with ``check_well_formed=False`` runs
_module_checks: contextvars.ContextVar[bool] = contextvars.ContextVar("tvmscript_module_checks", default=True)


def _syntax_error(e: SyntaxError, filename: str, lines: list[str]) -> TVMScriptError:
    ln = e.lineno or 1
    text = lines[ln - 1].rstrip("\n") if ln <= len(lines) else ""
    return TVMScriptError(f"syntax error: {e.msg}", Span(filename, ln, (e.offset or 1) - 1, text))


#: Python builtins whose effect is their side effect at parse time (printing, reading input or
#: files, running code), which a kernel cannot have
_PARSE_TIME_BUILTINS = frozenset(
    (
        builtins.print,
        builtins.input,
        builtins.open,
        builtins.exec,
        builtins.eval,
        builtins.__import__,
        builtins.breakpoint,
    )
)


#: Why CPython's parser gave up on a text (it raises MemoryError when its stack runs out)
_TOO_DEEP = (
    "the TVMScript text nests too deeply for Python's parser (statements or brackets hundreds of levels "
    "deep); bind parts of the expression to variables, or split the kernel"
)


def _raised_by(err: Exception, name: str) -> bool:
    """Whether ``err`` came from the Python of the text ``name`` itself (directly, or from a
    library it called) rather than from this package (the decorators' checks of a function)."""
    import traceback

    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # .../tvm
    frames = traceback.extract_tb(err.__traceback__)[1:]  # after the frame that caught it (here)
    return any(f.filename == name for f in frames) and not any(
        os.path.abspath(f.filename).startswith(package + os.sep) for f in frames
    )


def _class_body_error(err: Exception, name: str, filename: str) -> str:
    """The message for an exception raised by the Python of an ``@I.ir_module`` class body (a
    statement between its functions), with the line of the text it came from."""
    import traceback

    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename == name]
    where = f"{filename}, line {frames[-1].lineno}: " if frames else ""
    return (
        f"{where}the @I.ir_module class body raised {type(err).__name__}: {err} (a module's class body holds "
        f"its @T.prim_func functions and I.module_attrs only)"
    )


def _parse_module_text(text: str, env: dict[str, Any], filename: str, check_well_formed: bool = True) -> Any:
    """Source text holding an ``@I.ir_module`` class: run as a module (its decorators parse the
    functions, with the class's own ``check_well_formed``, which ``check_well_formed=False``
    turns off), and the one module it defines."""
    from tvm.script import ir as I

    name = f"<{filename.strip('<>')} module {next(_module_texts)}>"
    lines = text.splitlines(keepends=True)
    linecache.cache[name] = (len(text), None, lines, name)  # for the decorators
    namespace = {"__name__": "tvmscript_module", "I": I, **env}
    try:
        try:
            code = compile(text, name, "exec")
        except SyntaxError as e:  # what ast.parse lets through: more than 20 nested loops
            raise _syntax_error(e, filename, lines) from None
        except (MemoryError, RecursionError):
            raise TVMScriptError(_TOO_DEEP) from None
        token = _module_checks.set(check_well_formed)
        try:
            exec(code, namespace)  # noqa: S102 (TVMScript source the caller hands over)
        except TVMScriptError:
            raise
        except Exception as err:
            if not _raised_by(err, name):  # an error of a function (the decorators' checks): as it is
                raise
            raise TVMScriptError(_class_body_error(err, name, filename)) from None  # the class body's own Python
        finally:
            _module_checks.reset(token)
    finally:
        linecache.cache.pop(name, None)  # the decorators have read it: one entry per call would pile up
    modules = [v for v in namespace.values() if isinstance(v, IRModule)]
    if len(modules) != 1:
        raise TVMScriptError(f"expected one @I.ir_module class in the TVMScript source, found {len(modules)}")
    return modules[0]


def _checked(func: PrimFunc, check: bool) -> PrimFunc:
    if not check:
        return func
    from tvm.tir.transform.verify import TIRVerifyError, verify

    try:
        verify(func)
    except TIRVerifyError as e:
        span = e.span if isinstance(e.span, Span) else None
        raise TVMScriptError(e.reason, span) from None
    return func


def _bind_module_class(
    func: Callable, env: dict, file_lines: list[str], start: int, filename: str
) -> Optional[ast.ClassDef]:
    """A method of a class (an ``@I.ir_module`` being defined): its class name means the module's
    functions (``Module.f(...)``, see :mod:`.module_calls`) while the class does not exist yet.
    Returns the class's definition, or None for a function outside a class."""
    parts = func.__qualname__.split(".")
    owner = parts[-2] if len(parts) >= 2 and parts[-2] != "<locals>" else None
    if owner is None:
        return None
    class_def = enclosing_class(file_lines, start, owner)
    if class_def is not None:
        evaluate = lambda node: eval(compile(ast.Expression(node), filename, "eval"), env)  # noqa: E731
        env[owner] = ModuleFunctions(class_def, evaluate, dict((macros.class_body(func) or (owner, {}))[1]))
    return class_def


def _module_skips_checks(class_def: Optional[ast.ClassDef], func: Callable, env: dict) -> bool:
    """Whether the class is decorated ``ir_module(check_well_formed=False)`` (under any name, the
    flag a constant or a name of the code around it): its functions are then not checked either,
    as in Apache TVM, where the module is parsed as a whole."""
    for deco in getattr(class_def, "decorator_list", ()):
        for kw in deco.keywords if isinstance(deco, ast.Call) else ():
            if kw.arg != "check_well_formed":
                continue
            names = dict(env)
            missing = {n.id for n in ast.walk(kw.value) if isinstance(n, ast.Name) and n.id not in names}
            _names_from_enclosing_frames(func, missing, names)
            try:
                flag = eval(compile(ast.Expression(kw.value), "<decorator>", "eval"), names)  # noqa: S307
            except Exception:  # noqa: BLE001 (the class statement itself reports it)
                continue
            if flag is False:
                return True
    return False


def _start(literal: Any, dtype: str) -> str:
    """The spelling of a name's first value ``literal`` as a ``dtype`` constant."""
    value = float(literal)
    if math.isfinite(value):
        return f"T.{dtype}({value!r})" if _dt.is_float(dtype) else f"T.{dtype}({int(value)!r})"
    if _dt.is_float(dtype):
        return f'T.{dtype}(float("{value}"))'  # inf, -inf, nan
    return f'T.{"min_value" if value < 0 else "max_value"}("{dtype}")'


def _annotation_names_from_enclosing_frames(func: Callable, fdef: ast.FunctionDef, env: dict[str, Any]) -> None:
    """Add to ``env`` the names the parameter annotations use that the function's closure lacks
    (``A: T.Buffer((n,), dtype)`` in a function that makes kernels for a ``dtype``), from the live
    frames of the functions ``func`` is defined in: Python evaluates annotations there, so they
    never become closure variables of ``func`` (and with ``from __future__ import annotations``
    they are not evaluated at all). Such a local hides a global of the same name, as in Python."""
    annotations = [a.annotation for a in fdef.args.args if a.annotation is not None] + [fdef.returns]
    names = {n.id for a in annotations if a is not None for n in ast.walk(a) if isinstance(n, ast.Name)}
    own = {a.arg for a in fdef.args.args}  # a parameter the annotation names is the kernel's own
    closure = closure_values(func)
    _names_from_enclosing_frames(func, {n for n in names if n not in closure and n not in own}, env)


def _names_from_enclosing_frames(func: Callable, missing: set, env: dict[str, Any]) -> None:
    """Add to ``env`` the ``missing`` names (a local may shadow a builtin, such as ``type``) as
    the live frames of the functions (and class bodies) ``func`` is defined in hold them: the
    frame whose code holds ``func``'s code, then the one whose code holds that frame's, outward
    (a caller that only shares a name with them is not one)."""
    inner = getattr(func, "__code__", None)
    frame = inspect.currentframe()
    try:
        while frame is not None and missing and inner is not None:
            if any(const is inner for const in frame.f_code.co_consts):
                for name in [n for n in missing if n in frame.f_locals]:
                    env[name] = frame.f_locals[name]
                    missing.discard(name)
                inner = frame.f_code
            frame = frame.f_back
    finally:
        del frame


@with_room("parsing TVMScript")
def parse_function(func: Callable, private: bool = False, check_well_formed: bool = True) -> PrimFunc:
    """Parse a Python function object written in TVMScript into a PrimFunc (verified unless
    ``check_well_formed=False``)."""
    src = read_function_source(func)
    env = function_names(func)
    env.setdefault("T", T)
    class_def = _bind_module_class(func, env, src.lines, src.start, src.filename)
    _annotation_names_from_enclosing_frames(func, src.tree, env)
    check = check_well_formed and _module_checks.get() and not _module_skips_checks(class_def, func, env)
    parser = Parser(src.tree, src.filename, src.lines, src.line_offset, src.col_offset, env, private)
    return _checked(parser.parse(), check)


@with_room("parsing TVMScript")
def parse(
    source: str,
    extra_vars: Optional[dict[str, Any]] = None,
    filename: str = "<tvmscript>",
    private: bool = False,
    check_well_formed: bool = True,
) -> PrimFunc:
    """Parse TVMScript source text into a PrimFunc (one ``@T.prim_func`` definition) or an
    IRModule (an ``@I.ir_module`` class, whose own ``check_well_formed`` applies unless
    ``check_well_formed=False`` here).

    ``T``, ``I`` and ``tvm`` are predefined; ``extra_vars`` adds more names. Private functions are
    recognised from ``@T.prim_func(private=True)`` in the source."""
    text = textwrap.dedent(source)
    lines = text.splitlines(keepends=True)
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise _syntax_error(e, filename, lines) from None
    except (MemoryError, RecursionError):  # CPython's parser out of stack: nesting past its limits
        raise TVMScriptError(_TOO_DEEP) from None
    import tvm

    env: dict[str, Any] = {"T": T, "tvm": tvm}
    env.update(extra_vars or {})
    if any(isinstance(node, ast.ClassDef) for node in tree.body):
        return _parse_module_text(text, env, filename, check_well_formed)
    defs = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    if len(defs) > 1:  # the first was taken, the others silently dropped
        raise TVMScriptError(
            f"the text defines {len(defs)} functions ({', '.join(defs)}): parse them one at a time, or as the "
            f"methods of an @I.ir_module class (IRModule.script() prints one)"
        )
    fdef = find_def(tree)
    for dec in fdef.decorator_list:
        if isinstance(dec, ast.Call):
            for k in dec.keywords:
                if k.arg == "private" and isinstance(k.value, ast.Constant):
                    private = bool(k.value.value)
    return _checked(Parser(fdef, filename, lines, 0, 0, env, private).parse(), check_well_formed)
