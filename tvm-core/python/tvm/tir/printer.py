"""TVMScript printer: ``script(func) -> str`` in the syntax :mod:`tvm.script.parser` accepts, so
``tvm.script.parse(script(f))`` is structurally equal to ``f``.

Conventions: buffer parameters print as ``A: T.Buffer(shape, dtype)`` annotations; symbolic shape
variables are declared first in the body (``n = T.int32()``); int32 constants print bare, other
constants as ``T.<dtype>(value)``; let statements print with their dtype
(``x: T.float32 = ...``); variable names are made unique with ``_1``, ``_2`` suffixes.
"""

from __future__ import annotations

import keyword
import math
import unicodedata
from typing import Any, Callable, Optional

from . import dtype as _dt
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    StringImm,
    Sub,
    Var,
)
from tvm._recursion import with_room

from .function import PrimFunc
from .functor import StmtExprVisitor, post_order_visit
from .op import INTRINSICS, result_dtype
from .stmt import (
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
)

# precedence: higher binds tighter (Python's)
_PREC = {
    Or: 1,
    And: 2,
    EQ: 4,
    NE: 4,
    LT: 4,
    LE: 4,
    GT: 4,
    GE: 4,
    Add: 6,
    Sub: 6,
    Mul: 7,
    FloorDiv: 7,
    FloorMod: 7,
    Div: 7,
}
_SYM = {
    Add: "+",
    Sub: "-",
    Mul: "*",
    FloorDiv: "//",
    FloorMod: "%",
    Div: "/",
    EQ: "==",
    NE: "!=",
    LT: "<",
    LE: "<=",
    GT: ">",
    GE: ">=",
    And: "and",
    Or: "or",
}
_ATOM = 100
#: An expression this many operations high is printed as a name bound before its statement
#: (``deep = T.meta_var(...)``, which stands for the expression itself), so that no printed line
#: nests deeper than Python's parser reads (200 nested brackets), as the C printers split theirs.
_SPLIT_HEIGHT = 32


class _Printer:
    def __init__(self):
        self.names: dict[Any, str] = {}
        # Python's keywords and the names the printed text itself uses are never a variable's
        self.used: set[str] = {"T", "I", "tvm", "range", "float", *keyword.kwlist}
        self.lines: list[str] = []
        self.data_of: dict[Var, Buffer] = {}
        # buffers that neither a parameter nor an allocation declares (views of memory, buffers
        # over a handle), each with the variables its declaration names; printed by declare_views
        self.pending: dict[Buffer, set] = {}
        self.bound: set = set()  # variables in scope where the printer is
        self.loop_depth = 0
        self.splitting = False  # deep subexpressions bound to names (in a function's body)
        self.heights: list[int] = []  # per expression being printed: its children's height
        self.split_lines: list[str] = []  # the bindings of the statement being printed
        self.split_names: dict = {}  # a subexpression bound there -> its name (one it uses again)

    # ------------------------------------------------------------------ names
    def name_of(self, obj: Any, hint: str) -> str:
        if obj in self.names:
            return self.names[obj]
        base = unicodedata.normalize("NFKC", hint)  # as Python reads it: "ﬁ" is "fi", "Ｔ" is "T"
        base = base if base.isidentifier() else "v"
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        self.names[obj] = name
        return name

    def var(self, v: Var) -> str:
        b = self.data_of.get(v)
        if b is not None and v not in self.names:
            return f"{self.buf(b)}.data"
        return self.name_of(v, v.name)

    def buf(self, b: Buffer) -> str:
        return self.name_of(b, b.name)

    # ------------------------------------------------------------------ expressions
    def expr(self, e: Any, ctx: int = 0) -> str:
        s, p = self._split(e)
        return f"({s})" if p < ctx else s

    def _split(self, e: Any) -> tuple[str, int]:
        """``e`` printed (text, precedence); a subexpression :data:`_SPLIT_HEIGHT` operations high
        is bound to a name of its own first, where a function's body is being printed."""
        if isinstance(e, PrimExpr) and e in self.split_names:
            s, p, height = self.split_names[e], _ATOM, 1
        else:
            self.heights.append(0)
            s, p = self._expr(e)
            height = self.heights.pop() + 1
        if height >= _SPLIT_HEIGHT and self.heights and self.splitting and isinstance(e, PrimExpr):
            name = self.split_names[e] = self.name_of(object(), "deep")
            self.split_lines.append(f"{name} = T.meta_var({s})")
            s, p, height = name, _ATOM, 1
        if self.heights:
            self.heights[-1] = max(self.heights[-1], height)
        return s, p

    def _expr(self, e: Any) -> tuple[str, int]:
        if isinstance(e, (int, float, str)) and not isinstance(e, PrimExpr):
            return repr(e), _ATOM
        if isinstance(e, Var):
            return self.var(e), _ATOM
        if isinstance(e, IntImm):
            if e.dtype == "bool":
                return ("True" if e.value else "False"), _ATOM
            if e.dtype == "int32":
                return (str(e.value), _ATOM) if e.value >= 0 else (f"({e.value})", _ATOM)
            return f"T.{e.dtype}({e.value})", _ATOM
        if isinstance(e, FloatImm):
            v = e.value
            if isinstance(v, int) and not isinstance(v, bool) and float(v) == v:
                v = float(v)  # FloatImm("float32", 1) prints as T.float32(1.0), as it reads back
            lit = repr(v) if math.isfinite(v) else f'"{"-" if math.copysign(1.0, v) < 0 else ""}{abs(v)}"'
            return f"T.{e.dtype}({lit})", _ATOM
        if isinstance(e, StringImm):
            return _pystr(e.value), _ATOM
        if isinstance(e, Cast):
            if isinstance(e.value, IntImm) and e.value.dtype == "int32":
                return f'T.Cast("{e.dtype}", T.int32({e.value.value}))', _ATOM
            return f'T.Cast("{e.dtype}", {self.expr(e.value)})', _ATOM
        if isinstance(e, Not):
            return f"not {self.expr(e.a, 3)}", 3
        if isinstance(e, BinaryOp) and all(isinstance(x, (IntImm, FloatImm)) for x in (e.a, e.b)):
            # an operation the compiler left on constants: the node constructor, which the parser
            # does not fold (``3 + 4`` would read back as 7)
            return f"T.{type(e).__name__}({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if isinstance(e, (Min, Max)):
            return f"T.{'min' if isinstance(e, Min) else 'max'}({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if isinstance(e, Mod):
            return f"T.truncmod({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if isinstance(e, Div) and not _dt.is_float(e.dtype):
            return f"T.truncdiv({self.expr(e.a)}, {self.expr(e.b)})", _ATOM
        if isinstance(e, BinaryOp) and type(e) in _PREC:
            p = _PREC[type(e)]
            cmp = p == 4
            # left-assoc: left operand may share precedence, right needs tighter (comparisons never chain)
            left = self.expr(e.a, p + 1 if cmp else p)
            if isinstance(e.a, IntImm) and isinstance(e.b, IntImm) and e.a.dtype == "int32":
                left = f"T.int32({e.a.value})"  # two bare numbers would be Python's (unbounded) integers
            right = self.expr(e.b, p + 1)
            return f"{left} {_SYM[type(e)]} {right}", p
        if isinstance(e, Select):
            return (f"T.Select({self.expr(e.condition)}, {self.expr(e.true_value)}, {self.expr(e.false_value)})"), _ATOM
        if isinstance(e, BufferLoad):
            return f"{self.buf(e.buffer)}[{self.indices(e.indices)}]", _ATOM
        if isinstance(e, Call) and e.op == "shuffle":  # T.shuffle([vectors], [lanes])
            count = e.args[0].value
            vectors = ", ".join(self.expr(a) for a in e.args[1 : 1 + count])
            return f"T.shuffle([{vectors}], [{', '.join(str(a.value) for a in e.args[1 + count :])}])", _ATOM
        if isinstance(e, Call):
            args = ", ".join(self.expr(a) for a in e.args)
            if e.op in ("ramp", "broadcast"):
                return f"T.{e.op}({args})", _ATOM
            if (
                e.op in INTRINSICS
                and "." not in e.op
                and result_dtype(e.op, e.args) == e.dtype
                and INTRINSICS[e.op][1] != "int32"
            ):
                return f"T.{e.op}({args})", _ATOM
            sep = ", " if args else ""
            return f'T.call_intrin("{e.dtype}", "{e.op}"{sep}{args})', _ATOM
        if isinstance(e, Let):
            return f"T.let({self.var(e.var)}, {self.expr(e.value)}, {self.expr(e.body)})", _ATOM
        return f"<unprintable {type(e).__name__}>", _ATOM

    def indices(self, idx: tuple) -> str:
        return ", ".join(self.expr(i) for i in idx) if idx else "()"

    # ------------------------------------------------------------------ statements
    def emit(self, depth: int, text: str):
        """Add the line ``text`` at ``depth``, after the bindings of the subexpressions it names."""
        for line in self.split_lines:
            self.lines.append("    " * depth + line)
        self.split_lines.clear()
        self.split_names.clear()
        self.lines.append("    " * depth + text)

    def stmt(self, s: Stmt, depth: int):
        if isinstance(s, SeqStmt):
            for k, x in enumerate(s.seq):
                if k < len(s.seq) - 1 and isinstance(x, (LetStmt, Allocate, AssertStmt)):
                    # a scoping statement that ends before the sequence does: give it its own block
                    self.emit(depth, "if True:  # scope")
                    self.stmt(x, depth + 1)
                else:
                    self.stmt(x, depth)
        elif isinstance(s, BufferStore):
            self.emit(depth, f"{self.buf(s.buffer)}[{self.indices(s.indices)}] = {self.expr(s.value)}")
        elif isinstance(s, For):
            loops, body = self.loop_nest(s)
            if len(loops) > 1:
                names = ", ".join(self.var(x.loop_var) for x in loops)
                self.emit(depth, f"for {names} in T.grid({', '.join(self.expr(x.extent) for x in loops)}):")
            else:
                self.emit(depth, f"for {self.var(s.loop_var)} in {self.loop_header(s)}:")
            self.loop_depth += 1
            self.in_scope([x.loop_var for x in loops], body, depth + 1)
            self.loop_depth -= 1
        elif isinstance(s, While):
            self.emit(depth, f"while {self.expr(s.condition)}:")
            self.stmt(s.body, depth + 1)
        elif isinstance(s, (Break, Continue)):
            self.emit(depth, "break" if isinstance(s, Break) else "continue")
        elif isinstance(s, IfThenElse):
            self.emit(depth, f"if {self.expr(s.condition)}:")
            self.stmt(s.then_case, depth + 1)
            if s.else_case is not None:
                self.emit(depth, "else:")
                self.stmt(s.else_case, depth + 1)
        elif isinstance(s, LetStmt):
            self.emit(
                depth,
                f"{self.var(s.var)}: T.{s.var.dtype} = {self.expr(s.value)}"
                if s.var.dtype in _dt.SCALAR_DTYPES
                else f"{self.var(s.var)} = {self.expr(s.value)}",
            )
            self.in_scope([s.var], s.body, depth)
        elif isinstance(s, Allocate):
            b = s.buffer
            self.data_of[b.data] = b
            self.emit(
                depth,
                f'{self.buf(b)} = T.alloc_buffer({self.shape(b.shape)}, "{b.dtype}"'
                f'{self.buffer_extras(b)}, scope="{b.scope}")',
            )
            self.in_scope([b.data], s.body, depth)
        elif isinstance(s, Evaluate):
            v = s.value
            if isinstance(v, Call) and v.op == "ret":
                self.emit(depth, " ".join(["return", *(self.expr(a) for a in v.args)]))
            elif isinstance(v, Call) and v.dtype == "void" and v.op in INTRINSICS:
                self.emit(depth, self.expr(v))
            else:
                self.emit(depth, f"T.evaluate({self.expr(v)})")
        elif isinstance(s, AssertStmt):
            msg = _pystr(s.message) if s.kind == "RuntimeError" else f"({_pystr(s.kind)}, [{_pystr(s.message)}])"
            self.emit(depth, f"assert {self.expr(s.condition)}, {msg}")
            self.stmt(s.body, depth)
        else:
            self.emit(depth, f"# unprintable {type(s).__name__}")

    def in_scope(self, variables: list, body: Stmt, depth: int) -> None:
        """Print ``body`` with ``variables`` bound (a loop's, a let's, an allocation's data)."""
        fresh = [v for v in variables if v not in self.bound]
        self.bound.update(fresh)
        self.declare_views(body, depth)
        self.stmt(body, depth)
        self.bound.difference_update(fresh)

    def pending_views(self, f: PrimFunc) -> None:
        """Collect the buffers of ``f`` that need a declaration of their own (see ``pending``)."""
        declared = set(f.buffer_map.values())
        post_order_visit(f.body, lambda n: declared.add(n.buffer) if isinstance(n, Allocate) else None)
        for b in _buffers_in(f.body):
            if b not in declared:
                names = {b.data, *(v for x in (*b.shape, *b.strides, b.elem_offset) for v in _vars_in(x))}
                self.pending[b] = names

    def declare_views(self, body: Stmt, depth: int) -> None:
        """Declare, once, each pending buffer ``body`` uses whose variables are all bound here:
        as high as they allow, so every use below sees it (a view over a parameter's or an
        allocation's memory, a buffer over a handle, a view whose offset names a loop variable)."""
        if not self.pending:
            return
        for b in _buffers_in(body):
            names = self.pending.get(b)
            if names is None or not names <= self.bound:
                continue
            del self.pending[b]
            self.emit(
                depth,
                f'{self.buf(b)} = T.Buffer({self.shape(b.shape)}, "{b.dtype}"{self.buffer_extras(b)}, '
                f"data={self.var(b.data)}{_scope(b)})",
            )

    def loop_nest(self, s: For) -> tuple[list, Stmt]:
        """``s`` and the loops perfectly nested in it that print as one ``T.grid`` (plain serial
        loops from 0), once the nesting nears Python's limit of 20 nested blocks; else ``[s]``."""
        loops = [s]
        if self.loop_depth < 12:
            return loops, s.body
        while self.grid_loop(loops[-1]) and isinstance(loops[-1].body, For) and self.grid_loop(loops[-1].body):
            loops.append(loops[-1].body)
        return (loops, loops[-1].body) if len(loops) > 1 else ([s], s.body)

    @staticmethod
    def grid_loop(s: For) -> bool:
        zero = isinstance(s.min, IntImm) and s.min.value == 0
        return s.kind is ForKind.SERIAL and not s.annotations and zero and s.loop_var.dtype == s.extent.dtype

    def loop_header(self, s: For) -> str:
        ann = f", annotations={_attr_repr(dict(s.annotations), self.expr)}" if s.annotations else ""
        # the parser gives the loop variable the dtype of the range: state it there
        lo, extent = (_in_dtype(x, s.loop_var.dtype) for x in (s.min, s.extent))
        zero = isinstance(lo, IntImm) and lo.value == 0
        rng = self.expr(extent) if zero else f"{self.expr(lo)}, {self.expr(Add(lo, extent))}"
        if s.kind is ForKind.THREAD_BINDING:
            return f'T.thread_binding({rng}, thread="{s.thread_tag}"{ann})'
        if s.kind is ForKind.SERIAL and not ann and zero and s.loop_var.dtype == "int32":
            return f"range({rng})"
        return f"T.{_KIND_FN[s.kind]}({rng}{ann})"

    def shape(self, shape: tuple) -> str:
        items = [self.expr(x) for x in shape]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"

    def buffer_extras(self, b: Buffer) -> str:
        out = ""
        if b.strides:
            out += f", strides={self.shape(b.strides)}"
        if not (isinstance(b.elem_offset, IntImm) and b.elem_offset.value == 0):
            out += f", elem_offset={self.expr(b.elem_offset)}"
        if b.align != 64:  # the declarations' default
            out += f", align={b.align}"
        return out

    # ------------------------------------------------------------------ function
    def func(self, f: PrimFunc, name: Optional[str] = None) -> str:
        """Buffers with constant shapes print as ``A: T.Buffer(...)`` annotations; buffers with
        symbolic shapes as ``var_A: T.handle`` + ``A = T.match_buffer(var_A, ...)`` after the
        ``n = T.int32()`` declarations, so the printed text is also valid plain Python."""
        bufs = {p: f.buffer_map[p] for p in f.params if p in f.buffer_map}
        shape_vars = {
            p: [v for x in (*b.shape, *b.strides, b.elem_offset) for v in _vars_in(x)] for p, b in bufs.items()
        }
        symbolic = {p: None for p, vs in shape_vars.items() if vs}  # ordered like the parameters
        # reserve names: buffers and scalars first, then the handles of matched buffers
        for p in f.params:
            if p in bufs:
                self.data_of[bufs[p].data] = bufs[p]
                if p not in symbolic:  # the signature shows the buffer: its handle is its data
                    self.data_of.setdefault(p, bufs[p])
                self.buf(bufs[p])
            else:
                self.var(p)
        for p in symbolic:
            b = bufs[p]
            self.name_of(p, p.name if p.name != b.name else f"var_{b.name}")
        decls = []
        declared: set = {p for p in f.params if p not in bufs}
        let_vars: list = []  # T.let(x, value, body) needs x declared (x = T.int32()) before it
        post_order_visit(f.body, lambda n: let_vars.append(n.var) if isinstance(n, Let) else None)
        from .analysis import free_vars

        unbound = [v for v in free_vars(f.body, defined=f.params) if v.dtype in _dt.SCALAR_DTYPES]  # ill-formed IR
        for v in [*(v for vs in shape_vars.values() for v in vs), *let_vars, *unbound]:
            if v not in declared:
                declared.add(v)
                decls.append(v)
        sig = []
        for p in f.params:
            b = bufs.get(p)
            if b is not None and p not in symbolic:
                sig.append(
                    f'{self.buf(b)}: T.Buffer({self.shape(b.shape)}, "{b.dtype}"{self.buffer_extras(b)}{_scope(b)})'
                )
            elif p.dtype == "handle":
                sig.append(f"{self.names[p] if p in self.names else self.var(p)}: T.handle")
            else:
                sig.append(f"{self.var(p)}: T.{p.dtype}")
        attrs = dict(f.attrs)
        private = "global_symbol" not in attrs
        fname = _def_name(name if name is not None else f.name)
        if attrs.get("global_symbol") == fname:  # else T.func_attr keeps it ("my-kernel", "ﬁ")
            attrs.pop("global_symbol")
        dec = "@T.prim_func(private=True)" if private else "@T.prim_func"
        self.lines.append(dec)
        self.lines.append(f"def {fname}({', '.join(sig)}):")
        if attrs:
            self.emit(1, f"T.func_attr({_attr_repr(attrs, self.expr)})")
        for v in decls:
            self.emit(1, f"{self.var(v)} = T.{v.dtype}()")
        for p in f.params:
            if p in symbolic:
                b = bufs[p]
                self.emit(
                    1,
                    f"{self.buf(b)} = T.match_buffer({self.names[p]}, {self.shape(b.shape)}, "
                    f'"{b.dtype}"{self.buffer_extras(b)}{_scope(b)})',
                )
        self.pending_views(f)
        self.bound.update(f.params, decls, (b.data for b in bufs.values()))
        self.splitting = True
        self.declare_views(f.body, 1)
        self.stmt(f.body, 1)
        return "\n".join(self.lines) + "\n"


def _scope(b: Buffer) -> str:
    return f', scope="{b.scope}"' if b.scope != "global" else ""


_KIND_FN = {
    ForKind.SERIAL: "serial",
    ForKind.PARALLEL: "parallel",
    ForKind.VECTORIZED: "vectorized",
    ForKind.UNROLLED: "unroll",
}


def _pystr(s: str) -> str:
    """``s`` as a double-quoted Python literal (control characters escaped)."""

    def char(c: str) -> str:
        if c in '\\"':
            return "\\" + c
        return c if c.isprintable() else repr(c)[1:-1]  # \n, \r, \x00, \u2028 ...

    return '"' + "".join(char(c) for c in s) + '"'


def _attr_repr(v: Any, expr: Callable[[PrimExpr], str]) -> str:
    """An attribute value as Python source; an expression (a kernel's launch bound) as ``expr``
    prints it."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_attr_repr(k, expr)}: {_attr_repr(x, expr)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_attr_repr(x, expr) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    if isinstance(v, str):
        return _pystr(v)
    if isinstance(v, float) and not math.isfinite(v):
        return f'float("{"-" if math.copysign(1.0, v) < 0 else ""}{abs(v)}")'
    if isinstance(v, (bool, int, float)) or v is None:
        return repr(v)
    if isinstance(v, PrimExpr):
        return expr(v)
    if type(v).__name__ == "Target" and hasattr(v, "export"):  # every attribute and the host
        return f"T.target({_attr_repr(v.export(), expr)})"
    return _pystr(str(v))


def _in_dtype(x: PrimExpr, dtype: str) -> PrimExpr:
    """``x`` as a value of ``dtype`` (an integer constant retyped, anything else cast)."""
    if x.dtype == dtype:
        return x
    return IntImm(dtype, x.value) if isinstance(x, IntImm) else Cast(dtype, x)


def _buffers_in(node: Stmt) -> list[Buffer]:
    """Every buffer ``node`` loads, stores or allocates, in order of first appearance."""
    found: dict = {}

    class _Visitor(StmtExprVisitor):
        def visit_buffer(self, b: Buffer) -> None:
            found.setdefault(b, None)

    _Visitor().visit_stmt(node)
    return list(found)


def _vars_in(e: Any) -> list:
    from .analysis import free_vars

    return free_vars(e) if isinstance(e, PrimExpr) else []


def expr_text(e: Any) -> str:
    """An expression as TVMScript writes it (``by * 16 + 4``), for messages."""
    return _Printer().expr(e)


def _reads_back(name: str) -> bool:
    """Whether Python reads ``name`` back as it is: an identifier, no keyword, not changed by
    NFKC ("ﬁ" would be read as "fi")."""
    return name.isidentifier() and not keyword.iskeyword(name) and unicodedata.normalize("NFKC", name) == name


def _def_name(name: str) -> str:
    """``name`` as the ``def`` of a function: itself when Python reads it back as it is, else ``main``."""
    return name if _reads_back(name) else "main"


#: Names the text of a module uses itself: a function of the module is never one.
_MODULE_TEXT_NAMES = ("T", "I", "tvm")


def _module_def_names(functions: dict) -> dict:
    """The functions of a module under the names their ``def`` can have, each its own: the key
    where Python reads it back as it is, else a name made from it (``my_kernel``, ``main_1``)."""
    kept = {k: f for k, f in functions.items() if _reads_back(k) and k not in _MODULE_TEXT_NAMES}
    out = dict(kept)  # keys kept first, whatever their order
    for key, f in functions.items():
        if key in kept:
            continue
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in unicodedata.normalize("NFKC", key))
        if not _reads_back(base) or base in _MODULE_TEXT_NAMES:
            base = f"{base}_fn" if base.isidentifier() else "main"
        name, k = base, 0
        while name in out:
            k += 1
            name = f"{base}_{k}"
        out[name] = f
    return out


def _module_attr_text(value: Any) -> str:
    """A module attribute as Python source: as Python writes it where that reads back equal
    (sets, bytes), a NumPy scalar as its Python number, else as function attributes print."""
    import ast

    if hasattr(value, "item") and type(value).__module__ == "numpy":
        value = value.item()
    text = repr(value)
    try:
        if ast.literal_eval(text) == value:
            return text
    except (ValueError, SyntaxError, TypeError):
        pass
    return _attr_repr(value, expr_text)


@with_room("printing TVMScript")
def module_script(module: Any) -> str:
    """``module`` (an IRModule) as an ``@I.ir_module`` class holding its attributes
    (``I.module_attrs``) and its functions under their keys, which ``tvm.script.parse`` reads back."""
    import textwrap

    lines = ["@I.ir_module", "class Module:"]
    if module.attrs:
        items = ", ".join(f"{k!r}: {_module_attr_text(v)}" for k, v in module.attrs.items())
        lines.append(f"    I.module_attrs({{{items}}})")
    texts = [_Printer().func(f, name) for name, f in _module_def_names(module.functions).items()]
    body = "\n\n".join(textwrap.indent(t.rstrip("\n"), "    ") for t in texts)
    return "\n".join(lines) + ("\n" + body if body else "\n    pass") + "\n"


@with_room("printing TVMScript")
def script(func: PrimFunc, name: Optional[str] = None) -> str:
    """``func`` as TVMScript source (``@T.prim_func`` ... ), parseable by ``tvm.script.parse``;
    ``name``, when given, is the name of its ``def`` (its key in a module)."""
    return _Printer().func(func, name)
