"""One printer for every C-like language: CPU C, CUDA, OpenCL, HIP and Metal.

:class:`CFamilyPrinter` turns TIR expressions and statements into C text. Everything that differs
between the languages is a class attribute (a table) or a small method that a backend overrides:

===========================  ==================================================================
``TYPE_NAMES``               dtype -> type name (``"float16": "half"`` ...)
``RESTRICT``                 restrict keyword on pointer parameters (``""`` to omit)
``EXTERN_C``                 prefix of kernel definitions (``'extern "C" '`` for C++ languages)
``KERNEL_QUALIFIER``         ``"__global__ void"``, ``"__kernel void"``, ``"kernel void"``
``GLOBAL_PTR_QUALIFIER``     address-space qualifier of buffer parameters (``"__global "``)
``SHARED_QUALIFIER``         declaration prefix of ``shared`` allocations (``"__shared__ "``)
``LOCAL_QUALIFIER``          declaration prefix of ``local`` allocations
``HELPER_QUALIFIER``         prefix of helper functions in the prelude (``"static inline"``)
``THREAD_INDEX``             thread tag -> index expression (``"threadIdx.x": "threadIdx.x"``)
``BARRIER``                  text of ``tvm_storage_sync`` (``"__syncthreads();"``)
``BARRIERS``                 per-scope overrides of it (``{"warp": "__syncwarp()"}``)
``UNROLL_PRAGMA``            pragma before UNROLLED loops (``{n}`` = extent)
``INTRINSICS``               op -> ``(float32 name, float64 name)`` or one name for every dtype
``CALL_TEMPLATES``           op -> C text over the printed arguments (``"__syncwarp({0})"``)
``VECTOR_WIDTHS``/``VECTOR_SPELLING``  vector widths and spellings (``vload{n}(0, {ptr})``):
                             runs of stores to consecutive elements become vector stores
``HALF_NATIVE``/``BF16_NATIVE``  True when the language computes in half/bfloat16 itself;
                             otherwise values are stored as ``uint16_t`` and computed as float
                             through the prelude's conversion helpers.
===========================  ==================================================================

Override points (methods): :meth:`type_name`, :meth:`vector_type`, :meth:`thread_index`,
:meth:`kernel_signature`, :meth:`prelude`, :meth:`print_call` (or add ``call_<op>`` methods),
:meth:`float_literal`, :meth:`visit_For` and friends (``visit_<NodeClass>`` dispatch).

Buffers may be accessed with one index (already flattened) or with N indices; N indices are
flattened here (row-major, or with the buffer's strides), so the printer works on both lowered and
unlowered functions. Integer ``FloorDiv``/``FloorMod`` follow Python semantics for negative values.
"""

from __future__ import annotations

import dataclasses
import math
import re
import struct
from typing import Any, Iterable

from tvm.error import InternalError
from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.analysis import any_node
from tvm.tir.function import PrimFunc
from tvm.tir.functor import ExprFunctor, StmtExprMutator
from tvm.tir.op import WARP_SHUFFLES, binary, is_convergent, is_reinterpret

from .vector_runs import VectorBuilder, group_store_runs

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool true false half kernel global local private "
    "constant device thread threadgroup new delete this class template namespace using main "
    "min max abs exp log sqrt select".split()
)


#: Names of the C library and headers the generated code includes: a variable of one of them
#: hid it (``NULL``, ``int32_t``) and broke the build.
_C_LIBRARY_NAMES = frozenset(
    "NULL int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t ssize_t intptr_t "
    "uintptr_t ptrdiff_t errno memcpy memset malloc calloc free printf snprintf strlen abort assert exit "
    "linux unix i386".split()  # (the last: macros GNU C predefines)
)


def _may_be_a_macro(name: str) -> bool:
    """Whether ``name`` is spelled as the C headers spell their macros (INT32_MAX, EOF, M_PI)."""
    return len(name) > 1 and name.upper() == name and any(c.isalpha() for c in name)


#: Prefixes of the identifiers the generated code defines itself (its runtime prelude, tvm-ffi's
#: and DLPack's names, the host code's tensors ``t_<buffer>``): a variable spelled so is renamed.
_GENERATED_PREFIXES = ("tvm_", "TVM", "kTVM", "kDL", "DL", "t_")


def _without_outer_parentheses(text: str) -> str:
    """``text`` without one pair of parentheses around all of it: ``if ((a == b))`` draws clang's
    -Wparentheses-equality warning (PoCL prints "1 warning generated." for it)."""
    if not (text.startswith("(") and text.endswith(")")) or '"' in text or "'" in text:
        return text  # (parentheses inside a string literal do not count)
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0 and i < len(text) - 1:
            return text  # "(a) && (b)": the first pair closes before the end
    return text[1:-1]


def c_string_literal(text: str) -> str:
    """``text`` as a C string literal: backslashes, quotes and control characters escaped (a
    carriage return broke the line, a NUL cut the string short), the rest as written."""
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _as_float32(value: float) -> float:
    """``value`` rounded to float32 (to infinity past its range)."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _is_scalar_value(dtype: str) -> bool:
    """Whether a C variable can hold a value of ``dtype`` (one lane of a number or a bool)."""
    if dtype in ("handle", "void"):
        return False
    return _dt.lanes(dtype) == 1 and (_dt.is_float(dtype) or _dt.is_integer(dtype) or _dt.is_bool(dtype))


class _LetHoister(StmtExprMutator):
    """Takes the ``Let`` expressions a statement always evaluates out of it, innermost first, as
    ``(var, value)`` pairs (and any such subexpression :attr:`SPLIT_HEIGHT` operations high):
    printed as declarations before the statement, each value is printed once. Pasting a value
    at every use of its variable grows the text exponentially with nesting (bfloat16 emulation
    uses its operand five times per operation). Lets under a condition (an arm of
    ``if_then_else`` or ``Select``, the right side of ``and``/``or``) stay where they are: their
    values may only be evaluated when the condition holds."""

    #: A subexpression this many operations high is also bound to a variable of its own (where
    #: it is always evaluated), so that no printed expression nests deeper: clang-based device
    #: compilers refuse more than 256 nested brackets.
    SPLIT_HEIGHT = 32

    def __init__(self) -> None:
        self.lets: list[tuple[E.Var, E.PrimExpr]] = []
        self.guarded = 0
        self.renamed: dict[E.Var, E.Var] = {}  # a Let's variable -> the one declared for it
        self._heights: list[int] = []  # per expression being visited: its children's height

    def visit_expr(self, e: E.PrimExpr) -> E.PrimExpr:
        self._heights.append(0)
        out = super().visit_expr(e)
        height = self._heights.pop() + 1
        inner = bool(self._heights)  # a statement's own expression is declared already
        if height >= self.SPLIT_HEIGHT and inner and not self.guarded and self._splittable(out):
            var = E.Var("deep", out.dtype)
            self.lets.append((var, out))
            out, height = var, 1
        if self._heights:
            self._heights[-1] = max(self._heights[-1], height)
        return out

    @staticmethod
    def _splittable(e: E.PrimExpr) -> bool:
        """Whether ``e`` may be bound to a variable: a scalar value, not a load (``T.address_of``
        takes one as a place: its indices split instead)."""
        return _is_scalar_value(e.dtype) and not isinstance(e, E.BufferLoad)

    def visit_Var(self, e: E.Var) -> E.PrimExpr:
        return self.renamed.get(e, e)

    def visit_Let(self, e: E.Let) -> E.PrimExpr:
        if self.guarded:
            return super().visit_Let(e)
        # a variable of its own: the same Let may sit in several statements (a vector's lanes)
        var = self.renamed[e.var] = E.Var(e.var.name, e.var.dtype)
        self.lets.append((var, self.visit_expr(e.value)))
        return self.visit_expr(e.body)

    def _guarded(self, e: E.PrimExpr) -> E.PrimExpr:
        self.guarded += 1
        try:
            return self.visit_expr(e)
        finally:
            self.guarded -= 1

    def visit_Select(self, e: E.Select) -> E.PrimExpr:
        c, t, f = self.visit_expr(e.condition), self._guarded(e.true_value), self._guarded(e.false_value)
        if c is e.condition and t is e.true_value and f is e.false_value:
            return e
        return E.Select(c, t, f, e.dtype, e.span)

    def visit_And(self, e: E.BinaryOp) -> E.PrimExpr:
        a, b = self.visit_expr(e.a), self._guarded(e.b)
        return e if (a is e.a and b is e.b) else type(e)(a, b, e.span)

    visit_Or = visit_And

    def visit_Call(self, e: E.Call) -> E.PrimExpr:
        if e.op not in ("if_then_else", "tir.if_then_else"):
            return super().visit_Call(e)
        args = (self.visit_expr(e.args[0]), *(self._guarded(x) for x in e.args[1:]))
        return e if all(a is b for a, b in zip(args, e.args)) else E.Call(e.dtype, e.op, args, e.span)


def _rewrite_own(s: S.Stmt, mutator: StmtExprMutator) -> S.Stmt:
    """``s`` with ``mutator`` applied to what ``s`` evaluates itself: a store's or an
    evaluation's expressions, a let's value, an ``if``'s or ``while``'s condition (not the
    statements inside); ``s`` itself when nothing changed."""
    if isinstance(s, S.LetStmt):
        value = mutator.visit_expr(s.value)
        return s if value is s.value else S.LetStmt(s.var, value, s.body, s.span)
    if isinstance(s, (S.IfThenElse, S.While)):
        cond = mutator.visit_expr(s.condition)
        return s if cond is s.condition else dataclasses.replace(s, condition=cond)
    return mutator.visit_stmt(s)


def hoist_let_expressions(s: S.Stmt) -> S.Stmt | None:
    """``s`` (a store, an evaluation, a let statement or an ``if``) inside let statements binding
    the ``Let`` expressions it always evaluates (see :class:`_LetHoister`); None when it has none."""
    h = _LetHoister()
    out = _rewrite_own(s, h)
    for var, value in reversed(h.lets):
        out = S.LetStmt(var, value, out, s.span)
    return out if h.lets else None


class CodegenError(InternalError):
    """The IR contains something the printer cannot express; ``span`` is the TVMScript source of
    the statement being printed (its line is shown) once known."""

    def __init__(self, message: str, span: Any = None) -> None:
        from tvm.tir.transform.verify import with_span

        super().__init__(with_span(message, span))
        self.span = span


def located_codegen_errors(s: S.Stmt, emit: Any) -> None:
    """``emit(s)``, a :class:`CodegenError` from it without a source location given the
    statement's (the innermost statement with a span names the line)."""
    try:
        emit(s)
    except CodegenError as err:
        span = getattr(s, "span", None)
        if err.span is not None or span is None:
            raise
        raise CodegenError(str(err), span) from None


def _takes_values(e: E.PrimExpr) -> bool:
    """Whether ``e``, inside an index, computes from its operands' values (not a sum, difference
    or product forming the index, whose low bits are all an index needs)."""
    if isinstance(e, (E.Add, E.Sub, E.Mul, E.Var, E.IntImm, E.BufferLoad)):
        return False
    if isinstance(e, E.Cast):
        src = e.value.dtype
        return _dt.is_integer(src) and _dt.is_integer(e.dtype) and _dt.bits(e.dtype) > _dt.bits(src)
    return True


class CFamilyPrinter(ExprFunctor[str]):
    """Prints TIR as C-family code; subclass and change the tables for each language."""

    TYPE_NAMES: dict[str, str] = {
        "bool": "bool",
        "int8": "int8_t",
        "int16": "int16_t",
        "int32": "int32_t",
        "int64": "int64_t",
        "uint8": "uint8_t",
        "uint16": "uint16_t",
        "uint32": "uint32_t",
        "uint64": "uint64_t",
        "float16": "uint16_t",
        "bfloat16": "uint16_t",
        "float32": "float",
        "float64": "double",
        "handle": "void*",
    }
    RESTRICT = "restrict"
    EXTERN_C = ""
    KERNEL_QUALIFIER = "void"
    GLOBAL_PTR_QUALIFIER = ""
    SHARED_QUALIFIER = ""
    LOCAL_QUALIFIER = ""
    HELPER_QUALIFIER = "static inline"
    THREAD_INDEX: dict[str, str] = {}
    BARRIER = ""
    #: Barrier text for a ``tvm_storage_sync`` scope other than "shared" (e.g. "warp", "global").
    BARRIERS: dict[str, str] = {}
    UNROLL_PRAGMA = "#pragma GCC unroll {n}"
    #: Largest count the unroll pragma takes (GCC's limit is 65534); longer loops get none.
    MAX_UNROLL = 65534
    #: Loops longer than this are unrolled by this many iterations, not whole: compilers take
    #: time superlinear in an unrolled body (gcc: 2 s for 1,024, 113 s for 8,192 iterations).
    UNROLL_CAP = 256
    HALF_NATIVE = False
    BF16_NATIVE = False
    INDENT = "  "
    #: Calls printed as text over their printed arguments ``{0}``, ``{1}``, ... (a backend's
    #: intrinsics that map to one function of its language).
    CALL_TEMPLATES: dict[str, str] = {}
    INTRINSICS: dict[str, Any] = {
        "exp": ("expf", "exp"),
        "exp2": ("exp2f", "exp2"),
        "expm1": ("expm1f", "expm1"),
        "log": ("logf", "log"),
        "log2": ("log2f", "log2"),
        "log10": ("log10f", "log10"),
        "log1p": ("log1pf", "log1p"),
        "sqrt": ("sqrtf", "sqrt"),
        "sin": ("sinf", "sin"),
        "cos": ("cosf", "cos"),
        "tan": ("tanf", "tan"),
        "asin": ("asinf", "asin"),
        "acos": ("acosf", "acos"),
        "atan": ("atanf", "atan"),
        "sinh": ("sinhf", "sinh"),
        "cosh": ("coshf", "cosh"),
        "tanh": ("tanhf", "tanh"),
        "asinh": ("asinhf", "asinh"),
        "acosh": ("acoshf", "acosh"),
        "atanh": ("atanhf", "atanh"),
        "erf": ("erff", "erf"),
        "floor": ("floorf", "floor"),
        "ceil": ("ceilf", "ceil"),
        "trunc": ("truncf", "trunc"),
        "round": ("rintf", "rint"),
        "nearbyint": ("nearbyintf", "nearbyint"),
        "fabs": ("fabsf", "fabs"),
        "pow": ("powf", "pow"),
        "atan2": ("atan2f", "atan2"),
        "fmod": ("fmodf", "fmod"),
        "hypot": ("hypotf", "hypot"),
        "copysign": ("copysignf", "copysign"),
        "fma": ("fmaf", "fma"),
        "nextafter": ("nextafterf", "nextafter"),
        "ldexp": ("ldexpf", "ldexp"),
    }
    #: Vector widths of the language, and how it spells vector loads, stores, broadcasts, lane
    #: lists and conversions (``{n}`` lanes, ``{type}`` the vector type, ``{ptr}`` an element's
    #: address): a run of stores to consecutive elements is then one vector store
    #: (:mod:`tvm.codegen.vector_runs`). Empty: every store is printed on its own.
    VECTOR_WIDTHS: tuple[int, ...] = ()
    VECTOR_SPELLING: dict[str, str] = {}
    #: The body of float min and max (``{op}`` is ``<`` or ``>``): TIR picks ``b`` unless
    #: ``a {op} b``, so a NaN ``b`` is the result.
    FLOAT_MINMAX = "a {op} b ? a : b"
    #: ops printed as infix ``a <op> b``
    _INFIX = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "shift_left": "<<", "shift_right": ">>"}

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._indent = 0
        self._names: dict[Any, str] = {}  # Var / Buffer -> C identifier
        self._used: set[str] = set()
        self._subst: dict[Any, str] = {}  # Let-bound Var -> printed value
        self.helpers: dict[str, str] = {}  # helper name -> definition (the prelude collects them)
        self._dyn_offset: E.PrimExpr | None = None  # next free byte of dynamic shared memory
        self._untyped: set[Any] = set()  # handle parameters declared void*: buffers over them cast
        self._param_buffers: dict[Any, E.Buffer] = {}  # data of each buffer parameter -> its buffer
        self._index_memo: dict = {}  # used_only_as_index's answers for the lets being printed
        self._allocated: dict[Any, E.Buffer] = {}  # data Var of an allocation -> its buffer
        self._index_depth = 0  # > 0 while printing an element index or loop bounds
        self._ranges: dict[Any, tuple[int, int]] = {}  # loop variable -> its values (constant bounds)
        self._lets: dict[Any, E.PrimExpr] = {}  # Let variable -> its value

    # ------------------------------------------------------------------ output
    def emit(self, line: str) -> None:
        """Append one line at the current indentation."""
        self._lines.append(self.INDENT * self._indent + line if line else "")

    def take(self) -> str:
        """The text printed so far (and reset the buffer)."""
        out = "\n".join(self._lines) + "\n"
        self._lines = []
        return out

    # ------------------------------------------------------------------ names
    def name_of(self, node: Any, hint: str | None = None) -> str:
        """The C identifier of a Var or Buffer (allocated on first use, unique per printer)."""
        got = self._names.get(node)
        if got is not None:
            return got
        base = re.sub(r"[^0-9A-Za-z_]", "_", hint or getattr(node, "name", "v")) or "v"
        program_name = isinstance(node, (E.Var, E.Buffer))  # not a name the printer makes for itself
        if base[0].isdigit() or (program_name and base.startswith(_GENERATED_PREFIXES)):
            base = "v_" + base
        reserved = base in _C_KEYWORDS or base in _C_LIBRARY_NAMES or base in self.RESERVED_NAMES
        if reserved or _may_be_a_macro(base) or base.startswith("__") or base in self._function_names():
            base = base.lstrip("_") + "_"  # keywords and math functions stay visible
        name, k = base, 1
        while name in self._used:
            name = f"{base}_{k}"
            k += 1
        self._used.add(name)
        self._names[node] = name
        return name

    @classmethod
    def _function_names(cls) -> frozenset[str]:
        cached = cls.__dict__.get("_FUNCTION_NAMES")
        if cached is None:
            names = set()
            for entry in cls.INTRINSICS.values():
                names.update((entry,) if isinstance(entry, str) else entry)
            cached = frozenset(
                names
                | {
                    "isinf",
                    "isfinite",
                    "isnan",
                    "memcpy",
                    "free",
                    "malloc",
                    "tvm_h2f",
                    "tvm_f2h",
                    "tvm_bf2f",
                    "tvm_f2bf",
                    "tvm_raise",
                }
            )
            setattr(cls, "_FUNCTION_NAMES", cached)
        return cached

    def reserve(self, name: str) -> None:
        """Keep ``name`` from being used for any Var (e.g. names of helper variables)."""
        self._used.add(name)

    # ------------------------------------------------------------------ types
    def type_name(self, dtype: str) -> str:
        """The storage type of ``dtype`` (vector dtypes go through :meth:`vector_type`)."""
        if dtype == "handle":
            return self.TYPE_NAMES["handle"]
        if dtype in _dt.FLOAT8_DTYPES:  # bytes (the lowering computes float8 in float32)
            return self.type_name("uint8")
        if _dt.lanes(dtype) > 1:
            return self.vector_type(dtype)
        try:
            return self.TYPE_NAMES[dtype]
        except KeyError:
            raise CodegenError(f"{type(self).__name__} has no type for dtype '{dtype}'") from None

    def compute_type(self, dtype: str) -> str:
        """The type values of ``dtype`` have in expressions (float for emulated half/bfloat16)."""
        if self.is_emulated(dtype):
            return "float"
        return self.type_name(dtype)

    def vector_type(self, dtype: str) -> str:
        """Type of a vector dtype such as ``float32x4`` (C: GCC vector extension typedef)."""
        elem, n = _dt.element_of(dtype), _dt.lanes(dtype)
        scalar = self.type_name(elem)
        name = f"{scalar.replace(' ', '_')}x{n}_t"
        size = n * _dt.bits(elem) // 8
        self.helpers.setdefault(name, f"typedef {scalar} {name} __attribute__((vector_size({size})));")
        return name

    def is_emulated(self, dtype: str) -> bool:
        """True when ``dtype`` is stored as uint16 and computed as float."""
        e = _dt.element_of(dtype) if dtype != "handle" else dtype
        return (e == "float16" and not self.HALF_NATIVE) or (e == "bfloat16" and not self.BF16_NATIVE)

    # ------------------------------------------------------------------ literals
    def float_literal(self, value: float, dtype: str) -> str:
        """A floating-point constant of ``dtype`` (inf and nan included)."""
        double = _dt.element_of(dtype) == "float64"
        if not double and not math.isnan(value):  # the value a float literal has: 1e-320 is 0 there
            value = _as_float32(value)
        if math.isnan(value):
            text = "NAN" if math.copysign(1.0, value) > 0 else "(-NAN)"  # the sign bit kept
            text = f"((double){text})" if double else text
        elif math.isinf(value):
            text = "INFINITY" if value > 0 else "-INFINITY"
            text = f"((double){text})" if double else text
        else:
            text = repr(float(value))
            if "e" not in text and "." not in text and "inf" not in text:
                text += ".0"
            if not double:
                text += "f"
        if _dt.element_of(dtype) in ("float16", "bfloat16") and not self.is_emulated(dtype):
            return f"(({self.type_name(dtype)}){text})"
        return text

    def int_literal(self, value: int, dtype: str) -> str:
        """An integer constant of ``dtype``."""
        if dtype == "bool":
            return "true" if value else "false"
        bits = _dt.bits(dtype)
        if _dt.is_uint(dtype):
            return f"(({self.type_name(dtype)}){value}U)" if bits < 64 else f"{value}ULL"
        if bits == 64:
            return "(-9223372036854775807LL - 1)" if value == -(2**63) else f"{value}LL"
        if value == -(2**31):
            return "(-2147483647 - 1)"
        return str(value) if bits == 32 else f"(({self.type_name(dtype)}){value})"

    # ------------------------------------------------------------------ expressions
    def expr(self, e: E.PrimExpr) -> str:
        """Print an expression (:meth:`ExprFunctor.visit_expr`). Inside an element index, only
        ``+``, ``-`` and ``*`` forming the index itself are plain C: the operands of anything else
        (a comparison, a division, a widening conversion ...) are values, printed with TIR's
        wrapping, as the run-time bounds check computes them."""
        if self._index_depth and _takes_values(e):
            depth, self._index_depth = self._index_depth, 0
            try:
                return self.visit_expr(e)
            finally:
                self._index_depth = depth
        return self.visit_expr(e)

    def visit_CmpOp(self, e: E.CmpOp) -> str:
        return self._binary(e, e.op)

    def unsupported_expr(self, e: E.PrimExpr) -> str:
        raise CodegenError(f"{type(self).__name__} cannot print expression {type(e).__name__}")

    def visit_Var(self, e: E.Var) -> str:
        sub = self._subst.get(e)
        return sub if sub is not None else self.name_of(e)

    def visit_IntImm(self, e: E.IntImm) -> str:
        return self.int_literal(int(e.value), e.dtype)

    def visit_FloatImm(self, e: E.FloatImm) -> str:
        return self.float_literal(e.dtype_value, e.dtype)

    def visit_StringImm(self, e: E.StringImm) -> str:
        return c_string_literal(e.value)

    def visit_Cast(self, e: E.Cast) -> str:
        src, dst = e.value.dtype, e.dtype
        v = self.expr(e.value)
        if dst == "bool":
            return f"({v} != 0)"
        if self.is_emulated(dst):
            # compute as float, but round to the narrow type like a real conversion would
            to_float, from_float = self.half_converters(dst)
            return f"{to_float}({from_float}((float)({v})))"
        if src == dst:
            return v
        if dst == "uint64" and _dt.is_float(src) and _dt.lanes(src) == 1:
            return f"{self._float_to_uint64_helper(src)}({v})"
        through = self._float_to_int_through(src, dst)
        if through is not None:
            v = f"(({self.type_name(through)})({v}))"
        return f"(({self.compute_type(dst)})({v}))"

    def converts_plainly(self, src: str, dst: str) -> bool:
        """Whether the language's own conversion of ``src`` to ``dst`` is the one this printer
        prints (a vector conversion may be used), not one through another type or a helper."""
        scalar_src, scalar_dst = _dt.with_lanes(src, 1), _dt.with_lanes(dst, 1)
        if scalar_dst == "uint64" and _dt.is_float(scalar_src):
            return False
        return self._float_to_int_through(scalar_src, scalar_dst) is None

    def vector_accessible(self, buffer: Any) -> bool:
        """Whether loads and stores of ``buffer`` may be printed as vector accesses (a printer
        that declares some arrays volatile says no for those)."""
        return True

    @staticmethod
    def _float_to_int_through(src: str, dst: str) -> str | None:
        """The integer type a float converts to before narrower integer ``dst``: C leaves a float
        outside ``dst``'s range undefined, and clang (PoCL, Hexagon) then kept 300.0 as a uint8
        of 300; through int32 (int64 for uint32) the low bits are kept as a machine's conversion
        and NumPy on x86 keep them (300.0 -> int8 44, -1.0 -> uint32 4294967295)."""
        if not _dt.is_float(src) or _dt.lanes(src) != 1 or _dt.lanes(dst) != 1 or not _dt.is_integer(dst):
            return None
        bits = _dt.bits(dst)
        if bits < 32:
            return "int32"
        return "int64" if bits == 32 and _dt.is_uint(dst) else None

    def _float_to_uint64_helper(self, src: str) -> str:
        """Prelude helper converting a float to uint64 as NumPy on x86 does: a negative value
        through int64 (-2.0 -> 2**64 - 2; C leaves it undefined, and PoCL gave 2**64 - 1 and
        Hexagon 0), the rest directly (2**63 and above stay exact)."""
        t, u, i = self.compute_type(src), self.TYPE_NAMES["uint64"], self.TYPE_NAMES["int64"]
        name = f"tvm_{_dt.element_of(src)}_to_u64"
        body = f"  return v < 0 ? ({u})({i})v : ({u})v;"
        self.helpers.setdefault(name, f"{self.HELPER_QUALIFIER} {u} {name}({t} v) {{\n{body}\n}}")
        return name

    def _binary(self, e: E.BinaryOp, op: str) -> str:
        return f"({self.expr(e.a)} {op} {self.expr(e.b)})"

    def count(
        self, var: E.Var, value: E.PrimExpr | None = None, bounds: tuple[E.PrimExpr, E.PrimExpr] | None = None
    ) -> None:
        """Record ``var`` as a Let variable bound to ``value`` or as a loop variable over
        ``bounds`` (min, extent), for :meth:`_in_range`."""
        if value is not None:
            self._lets[var] = value
        elif bounds is not None and all(isinstance(b, E.IntImm) for b in bounds):
            first, extent = (int(b.value) for b in bounds)
            self._ranges[var] = (first, first + max(extent, 1) - 1)

    def _in_range(self, e: E.PrimExpr) -> bool:
        """Whether ``e`` is index arithmetic (loop variables with constant bounds, Let variables
        computed from them, constants) that provably stays in its dtype's range: then its C
        arithmetic cannot overflow."""
        from tvm.tir.op import max_value, min_value
        from tvm.tir.transform.bounds import _interval

        span = _interval(e, self._ranges, self._lets)
        return span is not None and min_value(e.dtype).value <= span[0] and span[1] <= max_value(e.dtype).value

    def _arith(self, e: E.BinaryOp, op: str) -> str:
        a, b = self.expr(e.a), self.expr(e.b)
        if self._plain_integer(e):
            return f"({a} {op} {b})"
        return self.wrapping(e.dtype, a, op, b)

    def _plain_integer(self, e: E.PrimExpr) -> bool:
        """Whether 32- or 64-bit arithmetic ``e`` is printed as plain C: inside an element index
        or loop bounds, or over loop variables and constants when it provably stays in range
        (narrower integers always wrap: C computes them in ``int``)."""
        if not (_dt.is_integer(e.dtype) and _dt.bits(e.dtype) >= 32):
            return False
        return self._index_depth > 0 or self._in_range(e)

    def narrowed(self, dtype: str, text: str) -> str:
        """``text`` converted back to 8- or 16-bit integer ``dtype`` (C computes those in ``int``:
        ``-128 // -1`` would stay 128)."""
        if _dt.lanes(dtype) == 1 and _dt.is_integer(dtype) and _dt.bits(dtype) < 32:
            return f"(({self.type_name(dtype)}){text})"
        return text

    def wrapping(self, dtype: str, a: str, op: str, b: str) -> str:
        """``a op b`` wrapped to ``dtype``'s width, as TIR and NumPy define integer arithmetic.
        C computes 8- and 16-bit integers in ``int`` (so ``uint8`` 200 + 100 would be 300) and
        signed overflow is undefined (an optimizer may assume ``x + 1 > x``): such operands are
        computed as unsigned integers of at least 32 bits and converted back (modular in every C
        compiler this project uses). Unsigned 32- and 64-bit arithmetic wraps in C already, and
        32- and 64-bit index arithmetic stays plain (:meth:`_plain_integer`)."""
        if _dt.lanes(dtype) > 1 or not _dt.is_integer(dtype):
            return f"({a} {op} {b})"
        bits = _dt.bits(dtype)
        if _dt.is_uint(dtype) and bits >= 32:
            return f"({a} {op} {b})"
        wide = self.type_name(f"uint{max(bits, 32)}")
        right = b if op in ("<<", ">>") else f"({wide})({b})"
        return f"(({self.type_name(dtype)})(({wide})({a}) {op} {right}))"

    def visit_Add(self, e: E.BinaryOp) -> str:
        return self._arith(e, "+")

    def visit_Sub(self, e: E.BinaryOp) -> str:
        return self._arith(e, "-")

    def visit_Mul(self, e: E.BinaryOp) -> str:
        return self._arith(e, "*")

    def visit_Div(self, e: E.BinaryOp) -> str:
        if self._needs_guard(e):
            return self.narrowed(e.dtype, f"{self._int_div_helper('div', e.dtype)}({self.expr(e.a)}, {self.expr(e.b)})")
        return self._binary(e, "/")

    def visit_Mod(self, e: E.BinaryOp) -> str:
        if _dt.is_float(e.dtype):
            return self._math_call("fmod", e.dtype, [self.expr(e.a), self.expr(e.b)])
        if self._needs_guard(e):
            return f"{self._int_div_helper('mod', e.dtype)}({self.expr(e.a)}, {self.expr(e.b)})"
        return self._binary(e, "%")

    @staticmethod
    def _needs_guard(e: E.BinaryOp) -> bool:
        """Integer division whose divisor may be 0 (or -1 for signed types): such a division traps
        on x86, so it goes through a helper that returns NumPy's results (0 for a zero divisor,
        wrap-around for MIN / -1) instead of crashing the process."""
        if _dt.is_float(e.dtype) or e.dtype == "bool":
            return False
        b = e.b
        if isinstance(b, E.IntImm):
            return b.value == 0 or (b.value == -1 and not _dt.is_uint(e.dtype))
        return True

    def _int_div_helper(self, which: str, dtype: str) -> str:
        """Prelude helper for guarded truncating ``/`` (``div``) or ``%`` (``mod``)."""
        unsigned = _dt.is_uint(dtype)
        bits = max(32, _dt.bits(dtype))
        t = self.TYPE_NAMES[f"{'u' if unsigned else ''}int{bits}"]
        ut = self.TYPE_NAMES[f"uint{bits}"]
        name = f"tvm_{which}_{'u' if unsigned else 'i'}{bits}"
        if which == "div":
            neg = "" if unsigned else f"  if (b == -1) return ({t})(0 - ({ut})a);\n"
            body = f"  if (b == 0) return 0;\n{neg}  return a / b;"
        else:
            neg = "" if unsigned else "  if (b == -1) return 0;\n"
            body = f"  if (b == 0) return 0;\n{neg}  return a % b;"
        self.helpers.setdefault(name, f"{self.HELPER_QUALIFIER} {t} {name}({t} a, {t} b) {{\n{body}\n}}")
        return name

    def visit_FloorDiv(self, e: E.BinaryOp) -> str:
        dt = e.dtype
        if _dt.is_float(dt) and _dt.bits(dt) == 16 and not self.is_emulated(dt):  # as NumPy: in float32
            wide = _dt.with_lanes("float32", _dt.lanes(dt))
            return self.visit_Cast(E.Cast(dt, E.FloorDiv(E.Cast(wide, e.a), E.Cast(wide, e.b))))
        if _dt.is_float(dt):
            return f"{self._floor_helper('div', dt)}({self.expr(e.a)}, {self.expr(e.b)})"
        if _dt.is_uint(dt) or dt == "bool":
            return self.visit_Div(e)
        k = self._pow2_const(e.b)
        if k is not None:
            return f"({self.expr(e.a)} >> {k})"  # arithmetic shift floors for signed values
        return self.narrowed(dt, f"{self._floor_helper('div', dt)}({self.expr(e.a)}, {self.expr(e.b)})")

    def visit_FloorMod(self, e: E.BinaryOp) -> str:
        dt = e.dtype
        if _dt.is_float(dt):
            return f"{self._floor_helper('mod', dt)}({self.expr(e.a)}, {self.expr(e.b)})"
        if _dt.is_uint(dt) or dt == "bool":
            return self.visit_Mod(e)
        k = self._pow2_const(e.b)
        if k is not None:
            return f"({self.expr(e.a)} & {self.int_literal((1 << k) - 1, dt)})"
        return f"{self._floor_helper('mod', dt)}({self.expr(e.a)}, {self.expr(e.b)})"

    @staticmethod
    def _pow2_const(b: E.PrimExpr) -> int | None:
        if isinstance(b, E.IntImm) and b.value > 0 and (b.value & (b.value - 1)) == 0:
            return b.value.bit_length() - 1
        return None

    def _float_floor_helper(self, which: str, dtype: str) -> str:
        """Name of a prelude helper giving NumPy's ``floor_divide`` or ``mod`` of floats: the
        remainder is ``fmod`` moved to the divisor's sign (a zero one too); the quotient is
        ``(a - remainder) / b`` snapped to an integer, so it agrees with that remainder where
        ``floor(a / b)`` would round across an integer (``1e-45 // -2`` is -1), is NaN for an
        infinite ``a`` and ``a / b`` for a zero ``b``. A language without ``fmod`` for ``dtype``
        (ROCm's float64 without its device library) divides as ``floor(a / b)``."""
        t = self.compute_type(dtype)
        floor = self.intrinsic_name("floor", dtype)
        try:
            fmod = self.intrinsic_name("fmod", dtype)
        except CodegenError:
            if which == "mod":
                raise
            name = f"tvm_floordiv_{t}"
            self.helpers.setdefault(
                name, f"{self.HELPER_QUALIFIER} {t} {name}({t} a, {t} b) {{ return {floor}(a / b); }}"
            )
            return name
        zero, negative_zero = self.float_literal(0.0, dtype), self.float_literal(-0.0, dtype)
        name = f"tvm_floor{which}_{t}"
        signature = f"{self.HELPER_QUALIFIER} {t} {name}({t} a, {t} b) {{\n"
        moves = f"((r < {zero}) != (b < {zero}))"  # a non-zero remainder of the other sign
        if which == "mod":
            body = (
                f"  {t} r = {fmod}(a, b);\n"
                f"  if (r == {zero}) return b < {zero} ? {negative_zero} : {zero};\n"
                f"  return {moves} ? r + b : r;\n}}"
            )
        else:
            one, half = self.float_literal(1.0, dtype), self.float_literal(0.5, dtype)
            copysign = self.intrinsic_name("copysign", dtype)
            body = (
                self._quick_floor_quotient(dtype) + f"  if (b == {zero}) return a / b;\n"
                f"  {t} r = {fmod}(a, b);\n"
                f"  {t} d = (a - r) / b;\n"
                f"  if (r != {zero} && {moves}) d = d - {one};\n"
                f"  if (d == {zero}) return {copysign}({zero}, a / b);\n"
                f"  {t} g = {floor}(d);\n"
                f"  return d - g > {half} ? g + {one} : g;\n}}"
            )
        self.helpers.setdefault(name, signature + body)
        return name

    def _quick_floor_quotient(self, dtype: str) -> str:
        """The start of the float floor division helper: where the quotient is below the
        precision's integer range (2**23 for float32) and ``b`` finite, ``floor(a / b)`` is the
        floor of the exact quotient unless ``a / b`` rounded onto an integer from below, which
        one fused multiply-add tells (``a - f * b`` then has the other sign than ``b``). Larger
        quotients, infinities, NaN and a zero ``b`` take the exact algorithm after it, whose
        ``fmod`` costs a loop over the exponents."""
        limit = self.float_literal(2.0 ** (49 if self.compute_type(dtype) == "double" else 20), dtype)
        infinity = self.float_literal(math.inf, dtype)
        fabs, floor = self.intrinsic_name("fabs", dtype), self.intrinsic_name("floor", dtype)
        fma, t = self.intrinsic_name("fma", dtype), self.compute_type(dtype)
        zero, one = self.float_literal(0.0, dtype), self.float_literal(1.0, dtype)
        return (
            f"  {t} q = a / b;\n"
            f"  if ({fabs}(q) < {limit} && {fabs}(b) < {infinity}) {{\n"
            f"    {t} f = {floor}(q);\n"
            f"    if (f == q) {{\n"
            f"      {t} e = {fma}(-f, b, a);\n"
            f"      if (e != {zero} && ((e < {zero}) != (b < {zero}))) f = f - {one};\n"
            f"    }}\n"
            f"    return f;\n"
            f"  }}\n"
        )

    def _floor_helper(self, which: str, dtype: str) -> str:
        """Name of a prelude helper giving Python's ``//`` or ``%`` for ``dtype``."""
        if _dt.is_float(dtype):
            return self._float_floor_helper(which, dtype)
        bits = max(32, _dt.bits(dtype))
        t = self.TYPE_NAMES[f"int{bits}"]
        name = f"tvm_floor{which}_i{bits}"
        ut = self.TYPE_NAMES[f"uint{bits}"]
        # b == 0 gives 0 and b == -1 wraps, as in NumPy, instead of trapping
        if which == "div":
            body = (
                f"  if (b == 0) return 0;\n"
                f"  if (b == -1) return ({t})(0 - ({ut})a);\n"
                f"  {t} q = a / b, r = a % b;\n"
                f"  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;"
            )
        else:
            body = (
                f"  if (b == 0 || b == -1) return 0;\n"
                f"  {t} r = a % b;\n"
                f"  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;"
            )
        self.helpers.setdefault(name, f"{self.HELPER_QUALIFIER} {t} {name}({t} a, {t} b) {{\n{body}\n}}")
        return name

    def visit_Min(self, e: E.BinaryOp) -> str:
        return f"{self._minmax_helper('min', e.dtype)}({self.expr(e.a)}, {self.expr(e.b)})"

    def visit_Max(self, e: E.BinaryOp) -> str:
        return f"{self._minmax_helper('max', e.dtype)}({self.expr(e.a)}, {self.expr(e.b)})"

    def _minmax_helper(self, which: str, dtype: str) -> str:
        """A prelude helper for min/max (evaluates each operand once, unlike a macro)."""
        t = self.compute_type(dtype)
        name = f"tvm_{which}_{re.sub(r'[^0-9A-Za-z]', '_', t)}"
        op = "<" if which == "min" else ">"
        body = self.FLOAT_MINMAX if _dt.is_float(dtype) else "a {op} b ? a : b"
        self.helpers.setdefault(
            name, f"{self.HELPER_QUALIFIER} {t} {name}({t} a, {t} b) {{ return {body.format(op=op)}; }}"
        )
        return name

    def visit_Not(self, e: E.Not) -> str:
        return f"(!{self.expr(e.a)})"

    #: Whether the function being printed holds a warp collective (set where each function's
    #: printing starts; True before, so that nothing is missed): the expressions of one that
    #: holds none are not searched, which would cost a walk of every Select's arms.
    may_converge = True

    def converges(self, e: E.PrimExpr) -> bool:
        """Whether ``e`` holds a warp collective (:func:`tvm.tir.op.is_convergent`)."""
        return self.may_converge and is_convergent(e)

    def visit_Select(self, e: E.Select) -> str:
        """``c ? a : b``; T.Select evaluates both arms, so an arm holding a warp collective,
        which every lane must reach, goes through a function whose arguments every lane
        evaluates."""
        if not (self.converges(e.true_value) or self.converges(e.false_value)):
            return f"({self.expr(e.condition)} ? {self.expr(e.true_value)} : {self.expr(e.false_value)})"
        t = self.compute_type(e.dtype)
        name = f"tvm_select_{re.sub(r'[^0-9A-Za-z]', '_', t)}"
        self.helpers.setdefault(
            name, f"{self.HELPER_QUALIFIER} {t} {name}(bool c, {t} a, {t} b) {{ return c ? a : b; }}"
        )
        return f"{name}({self.expr(e.condition)}, {self.expr(e.true_value)}, {self.expr(e.false_value)})"

    def visit_And(self, e: E.BinaryOp) -> str:
        return self.logical(e, "and", "&&")

    def visit_Or(self, e: E.BinaryOp) -> str:
        return self.logical(e, "or", "||")

    def logical(self, e: E.BinaryOp, name: str, symbol: str) -> str:
        """``&&`` / ``||``, except that a right side holding a warp collective is evaluated on
        every lane (through a function's arguments), as TIR's And and Or evaluate both sides."""
        if not self.converges(e.b):
            return self.visit_CmpOp(e)
        helper = f"tvm_{name}"
        self.helpers.setdefault(
            helper, f"{self.HELPER_QUALIFIER} bool {helper}(bool a, bool b) {{ return a {symbol} b; }}"
        )
        return f"{helper}({self.expr(e.a)}, {self.expr(e.b)})"

    def visit_Let(self, e: E.Let) -> str:
        # TIR expressions are pure: substituting the value is equivalent and portable C.
        self._subst[e.var] = f"({self.expr(e.value)})"
        self.count(e.var, e.value)
        try:
            return self.expr(e.body)
        finally:
            del self._subst[e.var]

    def visit_BufferLoad(self, e: E.BufferLoad) -> str:
        owner = self._allocated.get(e.buffer.data)  # None for memory the function is given
        if e.buffer.dtype == "bool" and (e.buffer.scope == "global" or (owner is not None and owner.dtype != "bool")):
            return self.bool_from_memory(e.buffer, owner, self.flat_index(e.buffer, e.indices))
        text = f"{self.buffer_ref(e.buffer)}[{self.flat_index(e.buffer, e.indices)}]"
        if self.is_emulated(e.buffer.dtype):
            return f"{self.half_converters(e.buffer.dtype)[0]}({text})"
        return text

    def visit_Call(self, e: E.Call) -> str:
        return self.print_call(e)

    # ------------------------------------------------------------------ calls
    #: The language's name in messages.
    LANGUAGE = "C"
    #: Names the language's own functions take, which no variable may hide.
    RESERVED_NAMES: frozenset[str] = frozenset()
    #: The warp sizes Apache TVM's ``T.tvm_warp_shuffle*`` may be written for on this target (the
    #: last argument of each; empty: the language has no warp shuffles), printed by
    #: :meth:`warp_shuffle`.
    SHUFFLE_WARP_SIZES: tuple[int, ...] = ()

    def check_width(self, op: str, width: E.PrimExpr, most: int) -> None:
        """A constant segment width of a warp operation is a power of two from 1 to ``most`` (a
        symbolic one is the kernel's to keep so); CodegenError otherwise."""
        if isinstance(width, E.IntImm):
            n = width.value
            if n < 1 or n & (n - 1) or n > most:
                raise CodegenError(f"T.{op}: width {n} must be a power of two from 1 to the warp size {most}")

    def _check_shuffle(self, op: str, call: E.Call) -> None:
        """A shuffle written for this target's warps: a constant warp size it has, and a constant
        width that is a power of two no larger (a symbolic width is the kernel's to keep so)."""
        warp_size, width = call.args[4], call.args[3]
        sizes = " or ".join(str(n) for n in self.SHUFFLE_WARP_SIZES)
        if not isinstance(warp_size, E.IntImm) or warp_size.value not in self.SHUFFLE_WARP_SIZES:
            raise CodegenError(
                f"T.{op} is written for a warp of {self.expr(warp_size)} lanes, but {self.LANGUAGE} warps have "
                f"{sizes}: give the warp size of the target as its last argument"
            )
        self.check_width(op, width, warp_size.value)

    def warp_shuffle(self, kind: str, mask: str, value: str, lane: str, width: str, warp_size: int) -> str:
        """The language's shuffle of ``value`` (kind "" by lane, "_up"/"_down" by an offset,
        "_xor" by a lane mask, each taken modulo ``warp_size`` as PTX takes it modulo 32) within
        segments of ``width`` lanes among the lanes of ``mask``, for warps of ``warp_size``."""
        raise CodegenError(f"{self.LANGUAGE} has no warp shuffles")

    def print_call(self, call: E.Call) -> str:
        """Print an intrinsic call: a ``call_<op>`` method, ``CALL_TEMPLATES``, the infix table, or
        ``INTRINSICS``."""
        op = call.op[4:] if call.op.startswith("tir.") else call.op
        if op in WARP_SHUFFLES and self.SHUFFLE_WARP_SIZES:
            self._check_shuffle(op, call)
            mask, value, lane, width = (self.expr(a) for a in call.args[:4])
            return self.warp_shuffle(op.removeprefix("tvm_warp_shuffle"), mask, value, lane, width, call.args[4].value)
        if op.startswith(("float8_decode_", "float8_encode_")):
            return f"{self.float8_helper(op)}({self.expr(call.args[0])})"
        special = getattr(self, "call_" + op.replace(".", "_"), None)
        if special is not None:
            return special(call)
        args = [self.expr(a) for a in call.args]
        template = self.CALL_TEMPLATES.get(op)
        if template is not None:
            return template.format(*args)
        if op == "shift_left" and len(args) == 2 and not self._plain_integer(call):
            return self.wrapping(call.dtype, args[0], "<<", args[1])
        if op in self._INFIX and len(args) == 2:
            return f"({args[0]} {self._INFIX[op]} {args[1]})"
        if op in self.INTRINSICS or op in ("abs", "rsqrt", "sigmoid", "exp10"):
            return self._math_call(op, call.dtype, args)
        if "." in op:  # a backend's TVMScript namespace (T.webgpu.subgroup_add)
            namespace = op.split(".")[0]
            raise CodegenError(
                f"T.{op} is an operation of the {namespace} backend (TVMScript namespace T.{namespace}); "
                f"{type(self).__name__} cannot print it: compile the kernel for target '{namespace}', or write it "
                f"without T.{namespace}.*"
            )
        language = type(self).__name__.removesuffix("Printer")
        raise CodegenError(
            f"T.{op} has no {language} form, so this target cannot compile it: write it with other "
            f"operations, or compile for another target (a printer prints it with a method "
            f"call_{op}(self, call) -> str or an entry '{op}' in CALL_TEMPLATES)"
        )

    def intrinsic_name(self, op: str, dtype: str) -> str:
        """The function implementing math op ``op`` for ``dtype`` (float vs double variant)."""
        entry = self.INTRINSICS.get(op)
        if entry is None:
            raise CodegenError(f"{type(self).__name__}: no math function for '{op}'")
        if isinstance(entry, str):
            return entry
        return entry[1] if self.compute_type(dtype) == "double" else entry[0]

    def _math_call(self, op: str, dtype: str, args: list[str]) -> str:
        if op == "abs":
            if _dt.is_float(dtype):
                return f"{self.intrinsic_name('fabs', dtype)}({args[0]})"
            if _dt.is_uint(dtype) or _dt.is_bool(dtype):
                return args[0]
            # negated as an unsigned value: -INT_MIN wraps to INT_MIN, as in NumPy (C's -x is undefined)
            return f"(({args[0]}) < 0 ? {self.wrapping(dtype, '0', '-', args[0])} : ({args[0]}))"
        if op == "rsqrt":
            one = self.float_literal(1.0, dtype)
            return f"({one} / {self.intrinsic_name('sqrt', dtype)}({args[0]}))"
        if op == "sigmoid":
            one = self.float_literal(1.0, dtype)
            return f"({one} / ({one} + {self.intrinsic_name('exp', dtype)}(-({args[0]}))))"
        if op == "exp10" and op not in self.INTRINSICS:  # C's math.h has no exp10 (a GNU extension)
            return f"{self.intrinsic_name('pow', dtype)}({self.float_literal(10.0, dtype)}, {args[0]})"
        return f"{self.intrinsic_name(op, dtype)}({', '.join(args)})"

    def call_if_then_else(self, call: E.Call) -> str:
        c, a, b = (self.expr(x) for x in call.args)
        return f"({c} ? {a} : {b})"

    def call_call_extern(self, call: E.Call) -> str:
        """``T.call_extern``: a call of the named C function."""
        name = call.args[0].value if isinstance(call.args[0], E.StringImm) else None
        if not name or not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise CodegenError(f"call_extern needs a C function name, got {call.args[0]!r}")
        return f"{name}({', '.join(self.expr(a) for a in call.args[1:])})"

    def call_address_of(self, call: E.Call) -> str:
        """``T.address_of(A[i])``: a pointer to the element."""
        load = call.args[0]
        return f"(&{self.buffer_ref(load.buffer)}[{self.flat_index(load.buffer, load.indices)}])"

    def call_isnullptr(self, call: E.Call) -> str:
        return f"({self.expr(call.args[0])} == NULL)"

    def call_likely(self, call: E.Call) -> str:
        return self.expr(call.args[0])

    call_unlikely = call_likely

    def call_bitwise_not(self, call: E.Call) -> str:
        return self.narrowed(call.dtype, f"(~{self.expr(call.args[0])})")  # ~ of a promoted uint8 is negative

    def call_isnan(self, call: E.Call) -> str:
        v = self.expr(call.args[0])
        return f"({v} != {v})"

    def call_isinf(self, call: E.Call) -> str:
        # C's isinf is only nonzero for an infinity: glibc gives -1 for -inf, which a cast of
        # the bool to an integer would keep
        return f"(isinf({self.expr(call.args[0])}) != 0)"

    def call_isfinite(self, call: E.Call) -> str:
        return f"(isfinite({self.expr(call.args[0])}) != 0)"

    def call_tvm_storage_sync(self, call: E.Call) -> str:
        scope = call.args[0].value if call.args and isinstance(call.args[0], E.StringImm) else "shared"
        return self.BARRIERS.get(scope, self.BARRIER).rstrip(";")

    def call_reinterpret(self, call: E.Call) -> str:
        src = call.args[0]
        if _dt.bits(src.dtype) != _dt.bits(call.dtype):
            raise CodegenError(f"reinterpret from {src.dtype} to {call.dtype} changes the width")
        if call.dtype == "bool" and not _dt.is_bool(src.dtype):  # a byte as NumPy's view(bool): nonzero is true
            return f"({self.expr(src)} != 0)"
        if not (self.is_emulated(src.dtype) or self.is_emulated(call.dtype)):
            return self.bitcast(self.expr(src), src.dtype, call.dtype)
        # an emulated 16-bit float is a float in expressions and its uint16 bits in memory
        if self.is_emulated(src.dtype):
            bits = self.emulated_bits(src)
        else:
            bits = self.bitcast(self.expr(src), src.dtype, "uint16")
        if self.is_emulated(call.dtype):
            return self.emulated_from_bits(bits, call.dtype)
        return self.bitcast(bits, "uint16", call.dtype)

    def emulated_bits(self, value: E.PrimExpr) -> str:
        """The uint16 bits of an emulated float16/bfloat16 ``value`` (a load reads them as stored)."""
        if isinstance(value, E.BufferLoad):
            return f"{self.buffer_ref(value.buffer)}[{self.flat_index(value.buffer, value.indices)}]"
        return f"{self.half_converters(value.dtype)[1]}({self.expr(value)})"

    def stored_bits(self, s: S.BufferStore) -> str | None:
        """The uint16 bits ``s`` stores into an emulated 16-bit float buffer when its value is a
        reinterpret of bits (stored as given, NaN payloads kept); None otherwise."""
        if not (self.is_emulated(s.buffer.dtype) and is_reinterpret(s.value)):
            return None
        src = s.value.args[0]
        if self.is_emulated(src.dtype) or _dt.bits(src.dtype) != 16:
            return None
        return self.bitcast(self.expr(src), src.dtype, "uint16")

    def emulated_from_bits(self, bits: str, dtype: str) -> str:
        """The value (a float) of emulated ``dtype`` whose uint16 bits are ``bits``."""
        return f"{self.half_converters(dtype)[0]}({bits})"

    def bitcast(self, value: str, src_dtype: str, dtype: str) -> str:
        """``value`` (C text of a ``src_dtype`` value) with its bits read as ``dtype``, of the same
        width (a union helper; a language with a bitcast builtin overrides this)."""
        st, dt_ = self.type_name(src_dtype), self.type_name(dtype)
        if st == dt_:
            return value
        name = re.sub(r"\W", "_", f"tvm_bitcast_{st}_{dt_}".replace("*", "ptr"))  # void* -> voidptr
        self.helpers.setdefault(
            name,
            (
                f"{self.HELPER_QUALIFIER} {dt_} {name}({st} v) {{ union {{ {st} a; {dt_} b; }} u; "
                f"u.a = v; return u.b; }}"
            ),
        )
        return f"{name}({value})"

    # ------------------------------------------------------------------ buffers
    def bool_from_memory(self, buf: E.Buffer, owner: E.Buffer | None, index: str) -> str:
        """Element ``index`` of bool buffer ``buf`` in memory others wrote (given to the function,
        or allocated as ``owner`` of another dtype): any nonzero byte is true, as in NumPy (a byte
        of 2 read as a C ``bool`` gives 2, or is assumed 0 or 1)."""
        ref, byte = self.buffer_ref(buf), self.type_name("uint8")
        if self.type_name("bool") != byte:
            qualifier = self.GLOBAL_PTR_QUALIFIER if owner is None else self.view_qualifier(owner)
            ref = f"(({qualifier}{byte}*){ref})"
        return f"({ref}[{index}] != 0)"

    def buffer_ref(self, buf: E.Buffer) -> str:
        """The C expression of a buffer's typed base pointer / array (a buffer declared over a
        ``void*`` handle parameter, ``T.decl_buffer(..., data=A_data)``, casts it)."""
        name = self.name_of(buf.data, buf.name)
        param = self._param_buffers.get(buf.data)
        if buf.data in self._untyped or (param is not None and param.dtype != buf.dtype):
            return f"(({self.GLOBAL_PTR_QUALIFIER}{self.type_name(buf.dtype)}*){name})"
        owner = self._allocated.get(buf.data)
        if owner is not None and owner.dtype != buf.dtype:  # T.decl_buffer(..., data=S.data)
            return self.typed_view(owner, buf, name)
        return name

    def typed_view(self, allocation: E.Buffer, view: E.Buffer, name: str) -> str:
        """``name``, the array of ``allocation``, as a pointer to the elements of ``view``, which
        reads the same bytes as another dtype. A language without pointer casts, or a printer
        that widens a dtype in memory, raises :class:`CodegenError` instead."""
        return f"(({self.view_qualifier(allocation)}{self.type_name(view.dtype)}*){name})"

    def view_qualifier(self, allocation: E.Buffer) -> str:
        """The address-space qualifier of a pointer into ``allocation`` (OpenCL's ``__local``)."""
        return ""

    def flat_index(self, buf: E.Buffer, indices: Iterable[E.PrimExpr]) -> str:
        """The element offset of ``indices`` in ``buf`` (row-major unless the buffer has strides)."""
        self._index_depth += 1  # the indices' arithmetic as index_expr prints it
        try:
            return self._flat_index(buf, list(indices))
        finally:
            self._index_depth -= 1

    def _flat_index(self, buf: E.Buffer, idx: list[E.PrimExpr]) -> str:
        if len(idx) == 1 and not buf.strides:
            out = self.expr(idx[0])
        else:
            if len(idx) != len(buf.shape):
                raise CodegenError(f"buffer {buf.name} has {len(buf.shape)} dims, accessed with {len(idx)} indices")
            terms = []
            if buf.strides:
                for i, s in zip(idx, buf.strides):
                    terms.append(f"{self.expr(i)} * {self.expr(s)}")
                out = " + ".join(terms) or "0"
            else:
                out = self.expr(idx[0]) if idx else "0"
                for i, s in zip(idx[1:], buf.shape[1:]):
                    out = f"({out}) * {self.expr(s)} + {self.expr(i)}"
        off = buf.elem_offset
        if not (isinstance(off, E.IntImm) and off.value == 0):
            out = f"{self.expr(off)} + {out}"
        return out

    def half_converters(self, dtype: str) -> tuple[str, str]:
        """(to_float, from_float) helper names for an emulated 16-bit float dtype."""
        self.helpers.setdefault("tvm_half", self.half_helpers())
        return ("tvm_h2f", "tvm_f2h") if _dt.element_of(dtype) == "float16" else ("tvm_bf2f", "tvm_f2bf")

    def float8_helper(self, op: str) -> str:
        """Define (once) and name the helper of a float8 conversion (``float8_decode_<dtype>``,
        ``float8_encode_<dtype>``): a function of one value whose body is the conversion's
        steps (:func:`tvm.tir.transform.float8.conversion_steps`) printed in this language."""
        name = f"tvm_{op}"
        if name in self.helpers:
            return name
        from tvm.tir.transform.float8 import conversion_steps

        steps = conversion_steps(op)
        saved = dict(self._subst)
        try:
            self._subst[steps.param] = steps.param.name
            lines = []
            for var, value in steps.steps:
                lines.append(f"  {self.compute_type(var.dtype)} {var.name} = {self.expr(value)};")
                self._subst[var] = var.name
            result = self.expr(steps.result)
        finally:
            self._subst = saved
        signature = (
            f"{self.type_name(steps.result.dtype)} {name}({self.type_name(steps.param.dtype)} {steps.param.name})"
        )
        body = "\n".join(lines)
        self.helpers[name] = f"{self.HELPER_QUALIFIER} {signature} {{\n{body}\n  return {result};\n}}"
        return name

    def half_helpers(self) -> str:
        """C definitions of the float16/bfloat16 <-> float conversions (round to nearest even)."""
        q = self.HELPER_QUALIFIER
        return f"""{q} float tvm_bits2f(uint32_t b) {{ union {{ uint32_t u; float f; }} v; v.u = b; return v.f; }}
{q} uint32_t tvm_f2bits(float f) {{ union {{ uint32_t u; float f; }} v; v.f = f; return v.u; }}
{q} float tvm_h2f(uint16_t h) {{
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {{ float f = (float)m * 5.9604644775390625e-8f; return sign ? -f : f; }}
  if (e == 31) return tvm_bits2f(sign | 0x7f800000u | (m << 13));
  return tvm_bits2f(sign | ((e + 112u) << 23) | (m << 13));
}}
{q} uint16_t tvm_f2h(float f) {{
  uint32_t x = tvm_f2bits(f), ax = x & 0x7fffffffu;
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);
  if (ax < 0x38800000u) {{
    float a = tvm_bits2f(ax) * 16777216.0f;
    uint32_t n = (uint32_t)a; float frac = a - (float)n;
    if (frac > 0.5f || (frac == 0.5f && (n & 1u))) n += 1u;
    return (uint16_t)(sign | n);
  }}
  return (uint16_t)(sign | ((ax + 0xfffu + ((ax >> 13) & 1u) - 0x38000000u) >> 13));
}}
{q} float tvm_bf2f(uint16_t h) {{ return tvm_bits2f((uint32_t)h << 16); }}
{q} uint16_t tvm_f2bf(float f) {{
  uint32_t x = tvm_f2bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}}"""

    # ------------------------------------------------------------------ statements
    def stmt(self, s: S.Stmt) -> None:
        """Print a statement."""
        fn = getattr(self, "visit_" + type(s).__name__, None)
        if fn is None:
            raise CodegenError(f"{type(self).__name__} cannot print statement {type(s).__name__}")
        if isinstance(s, S.Allocate):  # views of its memory in another dtype cast its pointer
            self._allocated[s.buffer.data] = s.buffer
        if isinstance(s, (S.BufferStore, S.Evaluate, S.LetStmt, S.IfThenElse, S.While)):
            prepared = self.prepared(s)
            if prepared is not None:
                self.stmt(prepared)
                return
        located_codegen_errors(s, fn)

    def visit_SeqStmt(self, s: S.SeqStmt) -> None:
        if not self.VECTOR_SPELLING:
            for x in s.seq:
                self.stmt(x)
            return
        for item in group_store_runs(s.seq, self.VECTOR_WIDTHS, self.vector_accessible):
            if isinstance(item, list):
                self.emit(VectorBuilder(self).store(item))
            else:
                self.stmt(item)

    def visit_BufferStore(self, s: S.BufferStore) -> None:
        bits = self.stored_bits(s)
        if bits is not None:
            self.emit(f"{self.buffer_ref(s.buffer)}[{self.flat_index(s.buffer, s.indices)}] = {bits};")
            return
        v = s.value
        if self.is_emulated(s.buffer.dtype):
            if isinstance(v, E.Cast) and v.dtype == s.buffer.dtype and v.value.dtype == "float32":
                v = v.value  # the store rounds it: no rounding and widening before
            value = f"{self.half_converters(s.buffer.dtype)[1]}({self.expr(v)})"
        else:
            value = self.expr(v)
        self.emit(f"{self.buffer_ref(s.buffer)}[{self.flat_index(s.buffer, s.indices)}] = {value};")

    def visit_Evaluate(self, s: S.Evaluate) -> None:
        v = s.value
        if isinstance(v, (E.IntImm, E.FloatImm)):
            return
        text = self.expr(v)
        if text:
            self.emit(text + ";")

    def visit_LetStmt(self, s: S.LetStmt) -> None:
        if s.var.dtype == "handle":
            self._untyped.add(s.var)  # a void* like a handle parameter: buffers over it cast
        name = self.name_of(s.var)
        self.emit(f"{self.compute_type(s.var.dtype)} {name} = {self.let_value(s)};")
        self.count(s.var, s.value)
        self.stmt(s.body)

    def let_value(self, s: S.LetStmt) -> str:
        """The value of a LetStmt: index arithmetic (plain C) when the variable is only ever an
        element index or a loop bound (``i = bx * 64 + tx``), since an index that wraps is out of
        bounds anyway and the C compiler optimizes addressing with it."""
        from tvm.tir.analysis import used_only_as_index

        if _dt.is_integer(s.var.dtype) and used_only_as_index(s.var, s.body, self._index_memo):
            return self.index_expr(s.value)
        return self.expr(s.value)

    def visit_IfThenElse(self, s: S.IfThenElse) -> None:
        self.emit(f"if ({_without_outer_parentheses(self.expr(s.condition))}) {{")
        self._block(s.then_case)
        if s.else_case is not None:
            self.emit("} else {")
            self._block(s.else_case)
        self.emit("}")

    def visit_While(self, s: S.While) -> None:
        self.emit(f"while ({_without_outer_parentheses(self.expr(s.condition))}) {{")
        self._block(s.body)
        self.emit("}")

    def visit_Break(self, s: S.Break) -> None:
        self.emit("break;")

    def visit_Continue(self, s: S.Continue) -> None:
        self.emit("continue;")

    def visit_AssertStmt(self, s: S.AssertStmt) -> None:
        # device code cannot raise: a kernel's asserts became records the host raises
        # (check_indices_at_run_time); hosts override this
        self.stmt(s.body)

    def visit_Allocate(self, s: S.Allocate) -> None:
        from tvm.tir.transform import dynamic_shared_bytes

        buf = s.buffer
        if dynamic_shared_bytes(buf) is not None:  # a printer that places it overrides this method
            raise CodegenError(
                f"allocation {buf.name} needs dynamic shared memory (scope 'shared.dyn', or 'shared' of a size "
                "known only at run time), which this backend does not support: allocate it with scope 'shared' "
                "and a constant size"
            )
        if buf.scope not in ("shared", "local"):
            raise CodegenError(f"allocation {buf.name}: scope '{buf.scope}' has no place in a kernel of this backend")
        size = self.alloc_size(buf)
        qual = self.SHARED_QUALIFIER if buf.scope == "shared" else self.LOCAL_QUALIFIER
        self.emit(f"{qual}{self.type_name(buf.dtype)} {self.name_of(buf.data, buf.name)}[{size}];")
        self.stmt(s.body)

    def dynamic_shared_view(
        self, buf: E.Buffer, base: str | None, qualifier: str = "", elem: str | None = None
    ) -> bool:
        """Declare ``buf`` as a view into the kernel's dynamic shared memory ``base`` (a byte
        pointer) when it lives there (:func:`tvm.tir.transform.dynamic_shared_bytes`), placed
        after the views before it, as the lowering sized the region; False when it does not.
        ``qualifier`` prefixes the pointer type (``"__local "``); ``elem`` overrides the element type."""
        from tvm.tir.transform import dynamic_shared_bytes, simplify_expr

        size = dynamic_shared_bytes(buf)
        if size is None:
            return False
        if base is None:
            raise CodegenError(
                f"allocation {buf.name} needs dynamic shared memory, but the kernel has no 'dyn_shmem' launch parameter"
            )
        t = f"{qualifier}{elem or self.type_name(buf.dtype)}*"
        offset = self._dyn_offset if self._dyn_offset is not None else E.IntImm("int32", 0)
        self.emit(f"{t} {self.name_of(buf.data, buf.name)} = ({t})({base} + {self.expr(offset)});")
        self._dyn_offset = simplify_expr(binary("add", offset, size))
        return True

    def alloc_size(self, buf: E.Buffer) -> str:
        """Number of elements of an allocation (a constant for stack/shared arrays)."""
        total = 1
        for d in buf.shape:
            if not isinstance(d, E.IntImm):
                raise CodegenError(
                    f"allocation {buf.name} needs a constant shape, or one with a constant upper bound "
                    f"below 2**31 elements (such as T.min(n, 64)), got {buf.shape}"
                )
            total *= int(d.value)
        return str(total)

    def visit_For(self, s: S.For) -> None:
        if s.kind is S.ForKind.THREAD_BINDING:
            self.print_thread_binding(s)
            return
        v = self.name_of(s.loop_var)
        # an 8- or 16-bit variable counts in 32 bits: `i < m + 20` is computed in int, so an int8
        # loop past 127 wrapped and never ended (its values fit the variable's dtype in a valid loop)
        narrow = _dt.is_integer(s.loop_var.dtype) and _dt.bits(s.loop_var.dtype) < 32
        t = self.compute_type("int32" if narrow else s.loop_var.dtype)
        lo, hi = self.loop_bounds(s)
        self.count(s.loop_var, bounds=(s.min, s.extent))
        # bounds that read memory are evaluated once, as TIR's are (the body may write it)
        hoist = any(any_node(b, lambda n: isinstance(n, (E.BufferLoad, E.Call))) for b in (s.min, s.extent))
        if hoist:
            self.emit("{")
            self.emit(f"const {t} {v}_first = {lo}, {v}_end = {hi};")
            lo, hi = f"{v}_first", f"{v}_end"
        self.loop_pragma(s)
        self.emit(f"for ({t} {v} = {lo}; {v} < {hi}; ++{v}) {{")
        self._block(s.body)
        self.emit("}")
        if hoist:
            self.emit("}")

    def index_expr(self, e: E.PrimExpr) -> str:
        """``e`` printed as an element index or a loop bound: 32- and 64-bit arithmetic as plain C
        (an index that wraps is out of bounds anyway)."""
        self._index_depth += 1
        try:
            return self.expr(e)
        finally:
            self._index_depth -= 1

    def loop_bounds(self, s: S.For) -> tuple[str, str]:
        """``(first, end)`` of a loop: its min and min + extent."""
        lo = self.index_expr(s.min)
        return lo, self.index_expr(s.extent) if self._is_zero(s.min) else f"{lo} + {self.index_expr(s.extent)}"

    def loop_pragma(self, s: S.For) -> None:
        """Pragma lines before a loop (unroll here; the CPU host adds OpenMP)."""
        if s.kind is S.ForKind.UNROLLED and self.UNROLL_PRAGMA:
            if isinstance(s.extent, E.IntImm):
                if 0 < s.extent.value <= self.MAX_UNROLL:  # past it a hint compilers reject: a plain loop
                    self.emit(self.UNROLL_PRAGMA.format(n=min(s.extent.value, self.UNROLL_CAP)))
            elif "{n}" not in self.UNROLL_PRAGMA:  # a count-free pragma works for any extent
                self.emit(self.UNROLL_PRAGMA)

    def print_thread_binding(self, s: S.For) -> None:
        """A loop bound to a thread tag becomes ``int v = <thread index> + min;``."""
        v = self.name_of(s.loop_var)
        self.count(s.loop_var, bounds=(s.min, s.extent))
        idx = self.thread_index(s.thread_tag or "")
        if not self._is_zero(s.min):
            idx = f"{idx} + {self.expr(s.min)}"
        self.emit("{")
        self._indent += 1
        self.emit(f"{self.compute_type(s.loop_var.dtype)} {v} = ({self.compute_type(s.loop_var.dtype)})({idx});")
        self.stmt(s.body)
        self._indent -= 1
        self.emit("}")

    def thread_index(self, tag: str) -> str:
        """Expression of the index bound to ``tag`` (``blockIdx.x`` ...)."""
        try:
            return self.THREAD_INDEX[tag]
        except KeyError:
            raise CodegenError(f"{type(self).__name__} does not support thread tag '{tag}'") from None

    def _block(self, body: S.Stmt) -> None:
        self._indent += 1
        self.stmt(body)
        self._indent -= 1

    @staticmethod
    def _is_zero(e: E.PrimExpr) -> bool:
        return isinstance(e, E.IntImm) and e.value == 0

    # ------------------------------------------------------------------ functions
    def param_decl(self, func: PrimFunc, param: E.Var) -> str:
        """Declaration of one kernel parameter (buffers as typed restrict pointers)."""
        buf = func.buffer_map.get(param)
        if buf is not None:
            name = self.name_of(buf.data, buf.name)
            self._names.setdefault(param, name)
            self._param_buffers[buf.data] = buf  # a view of its memory as another dtype casts
            restrict = f" {self.RESTRICT}" if self.RESTRICT else ""
            return f"{self.GLOBAL_PTR_QUALIFIER}{self.type_name(buf.dtype)}*{restrict} {name}"
        if param.dtype == "handle":
            self._untyped.add(param)
            return f"{self.GLOBAL_PTR_QUALIFIER}void* {self.name_of(param)}"
        return f"{self.compute_type(param.dtype)} {self.name_of(param)}"

    def kernel_signature(self, func: PrimFunc, name: str) -> str:
        """``<EXTERN_C><KERNEL_QUALIFIER> name(params)`` (Metal overrides for its attributes)."""
        params = ", ".join(self.param_decl(func, p) for p in func.params)
        return f"{self.EXTERN_C}{self.KERNEL_QUALIFIER} {name}({params})"

    def print_kernel(self, func: PrimFunc, name: str | None = None) -> str:
        """Print one function definition (signature + body) and return its text."""
        name = name or func.global_symbol
        self.reserve(name)
        self._dyn_offset = None
        self.may_converge = is_convergent(func.body)
        sig = self.kernel_signature(func, name)
        self.emit(sig + " {")
        self._indent += 1
        for line in self.kernel_prologue(func):
            self.emit(line)
        self._indent -= 1
        self._block(func.body)
        self.emit("}")
        return self.take()

    def prepared(self, s: S.Stmt) -> S.Stmt | None:
        """A store, evaluation, let statement, ``if`` or ``while`` as it prints, when that differs
        from ``s``: each operation of a 16-bit float this printer emulates in float32 rounded back
        to that float (a whole expression computed in float32 and rounded once would differ from
        the dtype's own arithmetic, NumPy's and ml_dtypes'), then its Let expressions bound before
        it (:func:`hoist_let_expressions`). None when it prints as it is."""
        from tvm.tir.transform.float16 import per_operation_rounding

        out = s
        for dtype in ("float16", "bfloat16"):
            if self.is_emulated(dtype):
                out = _rewrite_own(out, per_operation_rounding(dtype))
        if isinstance(out, S.While):  # its condition runs again each iteration: nothing hoisted
            return None if out is s else out
        return hoist_let_expressions(out) or (None if out is s else out)

    def kernel_prologue(self, func: PrimFunc) -> list[str]:
        """Lines printed at the top of the kernel body, before ``func.body`` (none by default)."""
        return []

    def prelude(self) -> str:
        """Headers and helpers every file of this language starts with."""
        return "\n\n".join(self.helpers.values()) + ("\n" if self.helpers else "")

    def print_module(self, funcs: list[PrimFunc]) -> str:
        """Print a whole translation unit: prelude then every kernel."""
        bodies = [self.print_kernel(f) for f in funcs]
        return self.prelude() + "\n" + "\n".join(bodies)
