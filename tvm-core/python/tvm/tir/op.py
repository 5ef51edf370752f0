"""Intrinsic constructors (``exp``, ``sqrt``, ``if_then_else`` ...) and dtype promotion.

Every constructor returns a TIR node with its result dtype already set. Math intrinsics become
``Call(dtype, name, args)``; ``min``/``max``/``truncdiv``/``floordiv``... become the dedicated
expression nodes (``Min``, ``Div``, ``FloorDiv`` ...).

:data:`INTRINSICS` maps each ``Call.op`` name to ``(n_args, rule)``. ``n_args`` is ``None`` for
variadic intrinsics. ``rule`` says how the result dtype follows from the arguments:

``"same"``       dtype of the first argument (any numeric dtype)
``"float"``      dtype of the first argument, which must be a float dtype
``"int"``        dtype of the first argument, which must be an integer dtype
``"arg1"``       dtype of the second argument (``if_then_else(cond, t, f)``)
``"moved"``      dtype of the second argument, the value a warp shuffle moves between lanes
``"bool"``       ``bool``
``"void"``       ``void`` (statement-like intrinsics used inside ``Evaluate``)
``"int32"``      ``int32``
``"uint32"``     ``uint32``
``"explicit"``   given by the caller (``call_intrin``); not derivable from the arguments

Implicit promotion (used by the TVMScript parser for ``a + b`` and by :func:`binary`):
Python numbers take the other operand's dtype; two integer dtypes promote to the wider one
(signed wins on equal width); integer with float promotes to the float; two floats promote to
the wider float. bool promotes to the other operand's dtype.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

from . import dtype as _dt
from . import fold as _fold
from .analysis import lanes_of
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
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
    const,
    _folded,
    tir_op_name,
)

ExprLike = Union[PrimExpr, int, float, bool]

#: name -> (number of args or None for variadic, result dtype rule); see the module docstring.
#: Apache TVM's warp shuffles: ``tvm_warp_shuffle`` by lane, ``_up``/``_down`` by an offset,
#: ``_xor`` by a lane mask.
WARP_SHUFFLES = tuple(f"tvm_warp_shuffle{kind}" for kind in ("", "_up", "_down", "_xor"))

INTRINSICS: dict[str, tuple[Optional[int], str]] = {
    "exp": (1, "float"),
    "exp2": (1, "float"),
    "exp10": (1, "float"),
    "log": (1, "float"),
    "log2": (1, "float"),
    "log10": (1, "float"),
    "log1p": (1, "float"),
    "sqrt": (1, "float"),
    "rsqrt": (1, "float"),
    "sin": (1, "float"),
    "cos": (1, "float"),
    "tan": (1, "float"),
    "asin": (1, "float"),
    "acos": (1, "float"),
    "atan": (1, "float"),
    "sinh": (1, "float"),
    "cosh": (1, "float"),
    "tanh": (1, "float"),
    "erf": (1, "float"),
    "sigmoid": (1, "float"),
    "floor": (1, "float"),
    "ceil": (1, "float"),
    "round": (1, "float"),
    "trunc": (1, "float"),
    "nearbyint": (1, "float"),
    "fabs": (1, "float"),
    "pow": (2, "float"),
    "atan2": (2, "float"),
    "fmod": (2, "float"),
    "fma": (3, "float"),
    "abs": (1, "int"),
    "isnan": (1, "bool"),
    "isinf": (1, "bool"),
    "isfinite": (1, "bool"),
    "if_then_else": (3, "arg1"),
    "shift_left": (2, "int"),
    "shift_right": (2, "int"),
    "bitwise_and": (2, "int"),
    "bitwise_or": (2, "int"),
    "bitwise_xor": (2, "int"),
    "bitwise_not": (1, "int"),
    "tvm_storage_sync": (1, "void"),
    # Apache TVM's warp shuffles: (mask, value, lane / offset / lane mask, width, warp_size)
    **{name: (5, "moved") for name in WARP_SHUFFLES},
    "tvm_warp_activemask": (0, "uint32"),
    "ret": (None, "void"),  # ``return`` / ``return x`` in TVMScript: leave a host function (with x)
    "tir.launch_kernel": (None, "int32"),
    # vectors (tvm.tir.transform.vectors spells them lane by lane before code generation)
    "ramp": (3, "explicit"),
    "broadcast": (2, "explicit"),
    "shuffle": (None, "explicit"),
    # float8 <-> float32 (tvm.tir.transform.float8; the float8 side is its uint8 bits)
    **{f"float8_{way}_{d}": (1, "explicit") for way in ("decode", "encode") for d in _dt.FLOAT8_DTYPES},
}

_FLOAT_RANK = {"float16": 0, "bfloat16": 0, "float32": 1, "float64": 2}


# --------------------------------------------------------------------------- conversion helpers


def convert(value: ExprLike, dtype: Optional[str] = None) -> PrimExpr:
    """``value`` as a PrimExpr; Python numbers become constants of ``dtype`` (or the default)."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, str):
        return StringImm(value)
    if dtype is not None and isinstance(value, (bool, int, float)):
        if isinstance(value, float) and not _dt.is_float(dtype):
            if not math.isfinite(value) or value != int(value):
                raise TypeError(f"cannot use float constant {value!r} as {dtype}")
            value = int(value)
        if _dt.is_bool(dtype):
            return IntImm("bool", int(bool(value)))
        return const(value, dtype)
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**31) <= value < 2**31:
        return IntImm("int64", value)  # too large for the default int32
    return const(value)


def promote_dtypes(a: str, b: str) -> str:
    """The common dtype of two operand dtypes (see the module docstring)."""
    if a == b:
        return a
    if _dt.lanes(a) != _dt.lanes(b):
        raise TypeError(f"operands have different vector lanes: {a} and {b}")
    if _dt.is_bool(a):
        return b
    if _dt.is_bool(b):
        return a
    fa, fb = _dt.is_float(a), _dt.is_float(b)
    if fa and fb:
        ea, eb = _dt.element_of(a), _dt.element_of(b)
        if _FLOAT_RANK[ea] == _FLOAT_RANK[eb]:
            raise TypeError(f"cannot mix {a} and {b} implicitly; use T.Cast")
        return a if _FLOAT_RANK[ea] > _FLOAT_RANK[eb] else b
    if fa:
        return a
    if fb:
        return b
    ba, bb = _dt.bits(a), _dt.bits(b)
    if ba != bb:
        return a if ba > bb else b
    return a if _dt.is_int(a) else b


def _pair(a: ExprLike, b: ExprLike) -> tuple[PrimExpr, PrimExpr]:
    """Both operands as PrimExprs of one common dtype."""
    if not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        a = convert(a)
        b = convert(b, a.dtype if not isinstance(b, float) or _dt.is_float(a.dtype) else None)
    elif not isinstance(a, PrimExpr):
        a = _literal_like(a, b)
    elif not isinstance(b, PrimExpr):
        b = _literal_like(b, a)
    la, lb = _dt.lanes(a.dtype), _dt.lanes(b.dtype)
    if la != lb or _dt.is_bool(a.dtype) or _dt.is_bool(b.dtype):  # a comparison of vectors is typed bool
        la, lb = lanes_of(a), lanes_of(b)
    if la != lb and 1 not in (la, lb):
        raise TypeError(f"operands have different vector lanes: {la} and {lb}")
    if la != lb:  # a scalar next to a vector is every lane's value
        a, b = (broadcast(a, lb), b) if la == 1 else (a, broadcast(b, la))
        la = lb = la if la != 1 else lb  # (this module's max is TIR's)
    if a.dtype != b.dtype and _dt.is_bool(a.dtype) and _dt.is_bool(b.dtype) and la == lb:
        a, b = (x if _dt.lanes(x.dtype) == la else x.astype(_dt.with_lanes("bool", la)) for x in (a, b))
    if a.dtype != b.dtype:
        dt = promote_dtypes(a.dtype, b.dtype)
        a, b = a.astype(dt), b.astype(dt)
    return a, b


def _literal_like(value: Any, other: PrimExpr) -> PrimExpr:
    """A Python literal next to an expression: it takes the expression's dtype when it fits (the
    element dtype of a vector, whose lanes it then fills)."""
    if _dt.lanes(other.dtype) > 1:
        element = _literal_like(value, Cast(_dt.element_of(other.dtype), other))
        return broadcast(element, _dt.lanes(other.dtype))
    if isinstance(value, bool):
        return IntImm("bool", int(value)) if _dt.is_bool(other.dtype) else convert(int(value), other.dtype)
    if isinstance(value, int):
        if _dt.is_bool(other.dtype):
            return const(value)
        return convert(value, other.dtype)
    if isinstance(value, float):
        return FloatImm(other.dtype, value) if _dt.is_float(other.dtype) else FloatImm("float32", value)
    raise TypeError(f"cannot use {type(value).__name__} {value!r} in a TIR expression")


_BINARY = {
    "add": Add,
    "sub": Sub,
    "mul": Mul,
    "div": Div,
    "truncdiv": Div,
    "truncmod": Mod,
    "floordiv": FloorDiv,
    "floormod": FloorMod,
    "min": Min,
    "max": Max,
    "eq": EQ,
    "ne": NE,
    "lt": LT,
    "le": LE,
    "gt": GT,
    "ge": GE,
}


def binary(op: str, a: ExprLike, b: ExprLike, fold: bool = True) -> PrimExpr:
    """Build ``a <op> b`` with implicit promotion; ``op`` is one of ``add sub mul div truncdiv
    truncmod floordiv floormod min max eq ne lt le gt ge and or``. Constant operands are folded
    unless ``fold`` is False (Apache TVM's node constructors, ``T.Add(3, 4)``, build the node)."""
    if op in ("and", "or"):
        a, b = _pair(_as_bool(a), _as_bool(b))  # a scalar bool next to a vector one fills its lanes
        return And(a, b) if op == "and" else Or(a, b)
    a, b = _pair(a, b)
    if op in ("min", "max") and _dt.is_bool(a.dtype) and _dt.lanes(a.dtype) == 1:
        return And(a, b) if op == "min" else Or(a, b)  # False < True, as Apache TVM orders them
    if op == "truncdiv" and _dt.is_float(a.dtype):
        raise TypeError(f"truncdiv needs integer operands, got {a.dtype}; use T.trunc(a / b)")
    return _folded(_BINARY[op], a, b) if fold else _BINARY[op](a, b)


def _as_bool(x: ExprLike) -> PrimExpr:
    x = convert(x)
    if not _dt.is_bool(x.dtype):
        raise TypeError(f"expected a boolean condition, got {x.dtype}")
    return x


# --------------------------------------------------------------------------- vectors


def _lane_count(lanes: Any) -> int:
    if isinstance(lanes, PrimExpr) and not isinstance(lanes, IntImm):  # 4 * T.vscale()
        from tvm.tir.transform.simplify import simplify_expr

        lanes = simplify_expr(lanes)
    value = lanes.value if isinstance(lanes, IntImm) else lanes
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 64:
        raise TypeError(f"vector lanes must be a constant integer from 1 to 64, got {lanes!r}")
    return value


def ramp(base: ExprLike, stride: ExprLike, lanes: Any) -> PrimExpr:
    """The integer vector ``[base, base + stride, ..., base + (lanes - 1) * stride]`` (the index
    of a vector load or store: ``A[T.ramp(i, 1, 4)]``)."""
    base, stride = _pair(base, stride)
    if not _dt.is_integer(base.dtype) or _dt.lanes(base.dtype) != 1:
        raise TypeError(f"ramp needs scalar integer base and stride, got {base.dtype}")
    n = _lane_count(lanes)
    return base if n == 1 else Call(_dt.with_lanes(base.dtype, n), "ramp", (base, stride, IntImm("int32", n)))


def broadcast(value: ExprLike, lanes: Any) -> PrimExpr:
    """A vector of ``lanes`` copies of the scalar ``value``."""
    value = convert(value)
    if _dt.lanes(value.dtype) != 1:
        raise TypeError(f"broadcast needs a scalar, got {value.dtype}")
    n = _lane_count(lanes)
    return value if n == 1 else Call(_dt.with_lanes(value.dtype, n), "broadcast", (value, IntImm("int32", n)))


def shuffle(vectors: Any, indices: Any) -> PrimExpr:
    """The vector of lanes ``indices`` picks from the concatenation of ``vectors`` (scalars count as
    one lane): ``shuffle([x, y], [1, 0])`` is ``[y, x]``."""
    vectors = [convert(v) for v in (vectors if isinstance(vectors, (list, tuple)) else [vectors])]
    element = _dt.element_of(vectors[0].dtype) if vectors else None
    if not vectors or any(_dt.element_of(v.dtype) != element for v in vectors):
        raise TypeError(f"shuffle needs vectors of one element type, got {[v.dtype for v in vectors]}")
    total = sum(_dt.lanes(v.dtype) for v in vectors)
    picks = []
    for i in indices if isinstance(indices, (list, tuple)) else [indices]:
        i = i.value if isinstance(i, IntImm) else i
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < total:
            raise TypeError(f"shuffle index {i!r} is not a constant lane in [0, {total})")
        picks.append(IntImm("int32", i))
    n = _lane_count(len(picks))
    return Call(_dt.with_lanes(element, n), "shuffle", (IntImm("int32", len(vectors)), *vectors, *picks))


# --------------------------------------------------------------------------- intrinsics


def _unary_float(name: str):
    def f(x: ExprLike) -> PrimExpr:
        x = convert(x)
        if not _dt.is_float(x.dtype):
            raise TypeError(f"{name} expects a float argument, got {x.dtype}; cast it with T.Cast")
        return Call(x.dtype, name, (x,))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``{name}(x)`` for a float ``x`` (result has x's dtype)."
    return f


exp = _unary_float("exp")
exp2 = _unary_float("exp2")
exp10 = _unary_float("exp10")
log = _unary_float("log")
log2 = _unary_float("log2")
log10 = _unary_float("log10")
log1p = _unary_float("log1p")
sqrt = _unary_float("sqrt")
rsqrt = _unary_float("rsqrt")
sin = _unary_float("sin")
cos = _unary_float("cos")
tan = _unary_float("tan")
asin = _unary_float("asin")
acos = _unary_float("acos")
atan = _unary_float("atan")
sinh = _unary_float("sinh")
cosh = _unary_float("cosh")
tanh = _unary_float("tanh")
erf = _unary_float("erf")
sigmoid = _unary_float("sigmoid")
floor = _unary_float("floor")
ceil = _unary_float("ceil")
round = _unary_float("round")  # noqa: A001  (TVM's name)
trunc = _unary_float("trunc")
nearbyint = _unary_float("nearbyint")
fabs = _unary_float("fabs")


def _binary_float(name: str):
    def f(x: ExprLike, y: ExprLike) -> PrimExpr:
        x, y = _pair(x, y)
        if not _dt.is_float(x.dtype):
            raise TypeError(f"{name} expects float arguments, got {x.dtype}; cast with T.Cast")
        return Call(x.dtype, name, (x, y))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``{name}(x, y)`` for float operands (promoted to a common dtype)."
    return f


pow = _binary_float("pow")  # noqa: A001
atan2 = _binary_float("atan2")
fmod = _binary_float("fmod")


def fma(a: ExprLike, b: ExprLike, c: ExprLike) -> PrimExpr:
    """``a * b + c`` through the language's fused multiply-add, for float operands promoted to a
    common dtype: rounded once in C, CUDA, OpenCL, Metal and HIP; SPIR-V's and WGSL's ``fma``
    may round the product first (llvmpipe does)."""
    a, b = _pair(a, b)
    a, c = _pair(a, c)
    b = b if b.dtype == a.dtype else cast(a.dtype, b)
    if not _dt.is_float(a.dtype):
        raise TypeError(f"fma expects float arguments, got {a.dtype}; cast with T.Cast")
    return Call(a.dtype, "fma", (a, b, c))


def abs(x: ExprLike) -> PrimExpr:  # noqa: A001
    """Absolute value: ``fabs`` for floats, ``abs`` for signed ints, identity for unsigned."""
    x = convert(x)
    if _dt.is_float(x.dtype):
        return Call(x.dtype, "fabs", (x,))
    if _dt.is_uint(x.dtype) or _dt.is_bool(x.dtype):
        return x
    return Call(x.dtype, "abs", (x,))


def _pred(name: str):
    def f(x: ExprLike) -> PrimExpr:
        x = convert(x)
        result = _dt.with_lanes("bool", _dt.lanes(x.dtype))  # a vector is tested lane by lane
        if not _dt.is_float(x.dtype):
            value = IntImm("bool", 1 if name == "isfinite" else 0)
            return value if result == "bool" else broadcast(value, _dt.lanes(x.dtype))
        return Call(result, name, (x,))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``{name}(x)`` as a bool expression (a bool vector of as many lanes for a vector ``x``)."
    return f


isnan = _pred("isnan")
isinf = _pred("isinf")
isfinite = _pred("isfinite")


def _int_binary(name: str):
    def f(x: ExprLike, y: ExprLike) -> PrimExpr:
        x, y = _pair(x, y)
        if not (_dt.is_integer(x.dtype)):
            raise TypeError(f"{name} expects integer arguments, got {x.dtype}")
        return _int_call(x.dtype, name, (x, y))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"``{name}(x, y)`` on integers (two constants give the constant, as Apache TVM folds them)."
    return f


def bitwise_operator(name: str, a: ExprLike, b: ExprLike) -> PrimExpr:
    """Python's ``&``, ``|``, ``^``, ``<<`` or ``>>`` on expressions, as TVMScript means them:
    the function ``name`` (``bitwise_and`` ... ``shift_right``) on integers, and ``And`` / ``Or``
    / ``NE`` (logical xor, as Python and NumPy compute ``bool ^ bool``) for ``&`` / ``|`` / ``^`` on
    bools (not folded, as no bool operation is: see :func:`tvm.tir.expr._folded`)."""
    a, b = _pair(a, b)
    if _dt.is_bool(a.dtype) and name in _LOGICAL_ON_BOOLS:
        return binary(_LOGICAL_ON_BOOLS[name], a, b)
    return _INT_OPERATORS[name](a, b)


#: Python's bitwise operators that are logical on bools: the :func:`binary` operation of each
_LOGICAL_ON_BOOLS = {"bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "ne"}


def invert(x: ExprLike) -> PrimExpr:
    """Python's ``~`` on an expression: ``Not`` of a bool, :func:`bitwise_not` of an integer."""
    x = convert(x)
    return logical_not(x) if _dt.is_bool(x.dtype) else bitwise_not(x)


def _int_call(dtype: str, name: str, args: tuple) -> PrimExpr:
    """``Call(dtype, name, args)``, or the constant it computes when its operands are constants
    their dtype holds (:func:`tvm.tir.fold.fold_int_call`)."""
    if all(type(a) is IntImm and _dt.fits(a.value, a.dtype) for a in args):
        folded = _fold.fold_int_call(name, dtype, args)
        if folded is not None:
            return folded
    return Call(dtype, name, args)


shift_left = _int_binary("shift_left")
shift_right = _int_binary("shift_right")
bitwise_and = _int_binary("bitwise_and")
bitwise_or = _int_binary("bitwise_or")
bitwise_xor = _int_binary("bitwise_xor")
_INT_OPERATORS = {f.__name__: f for f in (shift_left, shift_right, bitwise_and, bitwise_or, bitwise_xor)}


def _with_lets(bindings: list[tuple[Var, PrimExpr]], body: PrimExpr) -> PrimExpr:
    """``body`` inside ``Let``s of ``bindings``, the first binding outermost."""
    for var, bound in reversed(bindings):
        body = Let(var, bound, body)
    return body


def clz(x: ExprLike) -> PrimExpr:
    """The number of leading zero bits of a 32- or 64-bit integer, as int32: ``T.clz(x)``. 0 gives
    the bit width (Apache TVM leaves it undefined). Spelled with shifts and selects, so every
    target computes it the same way."""
    x = convert(x)
    bits = _dt.bits(x.dtype)
    if not _dt.is_integer(x.dtype) or bits not in (32, 64) or _dt.lanes(x.dtype) != 1:
        raise TypeError(f"clz expects a 32- or 64-bit integer, got {x.dtype}")
    unsigned = f"uint{bits}"
    value = Var("clz_x", unsigned)
    bindings = [(value, x if x.dtype == unsigned else reinterpret(unsigned, x))]
    count: PrimExpr = IntImm("int32", 0)
    shifted: PrimExpr = value
    step = bits // 2
    while step:  # halve the window: a zero top half adds its width and moves the rest up
        top_zero = binary("eq", shift_right(shifted, bits - step), IntImm(unsigned, 0))
        amount = Var("clz_s", "int32")  # no bool variable: vectorizers choke on vectors of them
        bindings.append((amount, Select(top_zero, IntImm("int32", step), IntImm("int32", 0))))
        count = binary("add", count, amount)
        moved = Var("clz_v", unsigned)
        bindings.append((moved, shift_left(shifted, Cast(unsigned, amount))))
        shifted, step = moved, step // 2
    total = Var("clz_n", "int32")
    bindings.append((total, count))
    return _with_lets(bindings, Select(binary("eq", value, IntImm(unsigned, 0)), IntImm("int32", bits), total))


def popcount(x: ExprLike) -> PrimExpr:
    """The number of set bits of an 8-, 16-, 32- or 64-bit integer, in its own dtype:
    ``T.popcount(x)`` (a negative value counts its two's complement bits). Spelled with shifts,
    masks and adds, so every target computes it the same way."""
    x = convert(x)
    bits = _dt.bits(x.dtype)
    if not _dt.is_integer(x.dtype) or bits not in (8, 16, 32, 64) or _dt.lanes(x.dtype) != 1:
        raise TypeError(f"popcount expects an 8-, 16-, 32- or 64-bit integer, got {x.dtype}")
    unsigned = f"uint{bits}"

    def const(byte: int) -> PrimExpr:  # ``byte`` repeated over the width
        return IntImm(unsigned, int.from_bytes(bytes([byte]) * (bits // 8), "little"))

    def shifted(v: PrimExpr, n: int) -> PrimExpr:
        return shift_right(v, IntImm(unsigned, n))

    bindings: list[tuple[Var, PrimExpr]] = []

    def bind(name: str, value: PrimExpr) -> Var:
        var = Var(f"popcount_{name}", unsigned)
        bindings.append((var, value))
        return var

    v = bind("x", x if x.dtype == unsigned else reinterpret(unsigned, x))
    pairs = bind("pairs", binary("sub", v, bitwise_and(shifted(v, 1), const(0x55))))
    nibbles = bind(
        "nibbles", binary("add", bitwise_and(pairs, const(0x33)), bitwise_and(shifted(pairs, 2), const(0x33)))
    )
    total = bind("bytes", bitwise_and(binary("add", nibbles, shifted(nibbles, 4)), const(0x0F)))
    width = 8
    while width < bits:  # add the byte counts pairwise: each sum stays below 2 ** 7
        total = bind(f"sum{width}", binary("add", total, shifted(total, width)))
        width *= 2
    count = bitwise_and(total, IntImm(unsigned, 0x7F))
    return _with_lets(bindings, count if x.dtype == unsigned else Cast(x.dtype, count))


def _int32_operand(name: str, x: ExprLike) -> PrimExpr:
    x = convert(x)
    if _dt.element_of(x.dtype) != "int32":
        raise TypeError(f"{name} multiplies int32 Q-numbers, got {x.dtype}")
    return x


def _fixed_point_product(name: str, x: ExprLike, y: ExprLike, q: ExprLike, left: PrimExpr, right: PrimExpr) -> PrimExpr:
    """``int32((int64(x) << left) * int64(y) + 2**(right + q - 1)) >> (right + q))``, lane-wise."""
    x, y = _int32_operand(name, x), _int32_operand(name, y)
    lanes = _dt.lanes(x.dtype)
    wide = _dt.with_lanes("int64", lanes)
    product = binary("mul", shift_left(Cast(wide, x), Cast("int64", left)), Cast(wide, y))
    total = Var(f"{name}_shift", "int64")
    half = shift_left(IntImm("int64", 1), binary("sub", total, IntImm("int64", 1)))
    rounded = shift_right(binary("add", product, half), total)
    bound = binary("add", Cast("int64", right), Cast("int64", convert(q)))
    return Let(total, bound, Cast(_dt.with_lanes("int32", lanes), rounded))


def q_multiply_shift(x: ExprLike, y: ExprLike, q: ExprLike, s: ExprLike, dtype: str = "int32") -> PrimExpr:
    """The product of two int32 Q-numbers with ``q`` fractional bits, shifted by ``s`` (left when
    positive) and rounded half up: ``round(x * y * 2**(s - q))`` as int32, computed in int64
    (Apache TVM's ``T.q_multiply_shift``): exact while ``x * 2**s * y`` fits in int64; the result
    wraps when it leaves the int32 range."""
    if dtype != "int32":
        raise TypeError(f"q_multiply_shift gives int32, got dtype={dtype!r}")
    shift = Var("q_multiply_shift_s", "int32")
    zero = IntImm("int32", 0)
    positive = binary("gt", shift, zero)
    left, right = Select(positive, shift, zero), Select(positive, zero, binary("sub", zero, shift))
    return Let(shift, cast("int32", s), _fixed_point_product("q_multiply_shift", x, y, q, left, right))


def q_multiply_shift_per_axis(
    x: ExprLike,
    y: ExprLike,
    ls: ExprLike,
    rs: ExprLike,
    q: ExprLike,
    is_lshift_required: Any,
    is_rshift_required: Any,
    dtype: str = "int32",
) -> PrimExpr:
    """:func:`q_multiply_shift` with the left shift ``ls`` and right shift ``rs`` given apart (per
    output channel in quantized kernels); ``is_lshift_required`` false skips the left shift, and
    ``is_rshift_required`` is accepted for Apache TVM's signature (a right shift of 0 is exact)."""
    if dtype != "int32":
        raise TypeError(f"q_multiply_shift_per_axis gives int32, got dtype={dtype!r}")
    flag = is_lshift_required.value if isinstance(is_lshift_required, IntImm) else is_lshift_required
    left = cast("int32", ls) if bool(flag) else IntImm("int32", 0)
    return _fixed_point_product("q_multiply_shift_per_axis", x, y, q, left, cast("int32", rs))


def bitwise_not(x: ExprLike) -> PrimExpr:
    """``~x`` on an integer."""
    x = convert(x)
    if not (_dt.is_integer(x.dtype)):
        raise TypeError(f"bitwise_not expects an integer argument, got {x.dtype}")
    return _int_call(x.dtype, "bitwise_not", (x,))


def min(a: ExprLike, b: ExprLike, *rest: ExprLike) -> PrimExpr:  # noqa: A001
    """``Min`` of two or more values (promoted to a common dtype)."""
    out = binary("min", a, b)
    for r in rest:
        out = binary("min", out, r)
    return out


def max(a: ExprLike, b: ExprLike, *rest: ExprLike) -> PrimExpr:  # noqa: A001
    """``Max`` of two or more values (promoted to a common dtype)."""
    out = binary("max", a, b)
    for r in rest:
        out = binary("max", out, r)
    return out


def truncdiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Integer division rounding towards zero (C ``/``): a ``Div`` node."""
    return binary("truncdiv", a, b)


def truncmod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder of :func:`truncdiv` (C ``%``): a ``Mod`` node."""
    return binary("truncmod", a, b)


def floordiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Division rounding towards negative infinity (Python ``//``): a ``FloorDiv`` node."""
    return binary("floordiv", a, b)


def floormod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder with the sign of the divisor (Python ``%``): a ``FloorMod`` node."""
    return binary("floormod", a, b)


def if_then_else(cond: ExprLike, t: ExprLike, f: ExprLike) -> PrimExpr:
    """``cond ? t : f`` evaluating only the chosen branch (``Call("if_then_else")``)."""
    cond = _as_bool(cond)
    t, f = _pair(t, f)
    return Call(t.dtype, "if_then_else", (cond, t, f))


def select(cond: ExprLike, t: ExprLike, f: ExprLike) -> PrimExpr:
    """``Select`` node (both branches may be evaluated); operands promoted to a common dtype."""
    cond = _as_bool(cond)
    t, f = _pair(t, f)
    return Select(cond, t, f)


def cast(dtype: str, value: ExprLike) -> PrimExpr:
    """``value`` converted to ``dtype`` (a ``Cast`` node, or a constant for Python numbers)."""
    _dt.parse(dtype)
    if not isinstance(value, PrimExpr):
        if isinstance(value, float) and not _dt.is_float(dtype):
            return IntImm(dtype, int(value)) if not _dt.is_bool(dtype) else IntImm("bool", int(bool(value)))
        return convert(value, dtype)
    return value.astype(dtype)


def logical_and(a: ExprLike, b: ExprLike) -> PrimExpr:
    """``a && b`` on booleans."""
    return binary("and", a, b)


def logical_or(a: ExprLike, b: ExprLike) -> PrimExpr:
    """``a || b`` on booleans."""
    return binary("or", a, b)


def logical_not(a: ExprLike) -> PrimExpr:
    """``!a`` on a boolean."""
    return Not(_as_bool(a))


def max_value(dtype: str) -> PrimExpr:
    """The largest finite value of ``dtype`` as a constant."""
    fam, b, _ = _dt.parse(dtype)
    if fam == "int":
        return IntImm(dtype, (1 << (b - 1)) - 1)
    if fam == "uint":
        return IntImm(dtype, (1 << b) - 1)
    if fam == "bool":
        return IntImm("bool", 1)
    return FloatImm(dtype, _dt.FLOAT_MAX[_dt.element_of(dtype)])


def min_value(dtype: str) -> PrimExpr:
    """The smallest finite value of ``dtype`` as a constant."""
    fam, b, _ = _dt.parse(dtype)
    if fam == "int":
        return IntImm(dtype, -(1 << (b - 1)))
    if fam in ("uint", "bool"):
        return IntImm(dtype, 0)
    return FloatImm(dtype, -_dt.FLOAT_MAX[_dt.element_of(dtype)])


def infinity(dtype: str) -> PrimExpr:
    """``+inf`` of a float dtype."""
    if not _dt.is_float(dtype):
        raise TypeError(f"infinity needs a float dtype, got {dtype}")
    return FloatImm(dtype, math.inf)


def tvm_storage_sync(scope: str = "shared") -> PrimExpr:
    """Barrier among threads sharing ``scope`` memory (``__syncthreads()`` for ``"shared"``;
    ``"shared.dyn"``, dynamic shared memory, is the same barrier)."""
    if scope == "shared.dyn":
        scope = "shared"
    if scope not in ("shared", "global", "warp"):
        raise ValueError(f"tvm_storage_sync scope must be 'shared', 'global' or 'warp', got {scope!r}")
    return Call("void", "tvm_storage_sync", (StringImm(scope),))


def _warp_shuffle(
    kind: str, mask: ExprLike, value: ExprLike, lane: ExprLike, width: ExprLike, warp_size: ExprLike
) -> PrimExpr:
    name = f"tvm_warp_shuffle{kind}"
    v = convert(value)
    if _dt.lanes(v.dtype) != 1 or v.dtype in ("void", "handle"):
        raise TypeError(f"T.{name} moves one scalar value per lane, got {v.dtype}")
    operands = {
        "mask": (mask, "uint32"),
        "lane": (lane, "int32"),
        "width": (width, "int32"),
        "warp_size": (warp_size, "int32"),
    }
    args = {}
    for what, (x, dtype) in operands.items():
        x = convert(x, dtype if isinstance(x, (int, bool)) else None)
        if not _dt.is_integer(x.dtype) or _dt.lanes(x.dtype) != 1:
            raise TypeError(f"T.{name}: the {what} must be a scalar integer, got {x.dtype}")
        args[what] = x if x.dtype == dtype else Cast(dtype, x)
    return Call(v.dtype, name, (args["mask"], v, args["lane"], args["width"], args["warp_size"]))


def tvm_warp_shuffle(mask: ExprLike, value: ExprLike, lane: ExprLike, width: ExprLike, warp_size: ExprLike) -> PrimExpr:
    """``value`` of lane ``lane`` of this lane's segment of ``width`` lanes, among the lanes of
    ``mask`` (CUDA's ``__shfl_sync``); ``warp_size`` is the warp size the kernel is written for,
    which the target must have."""
    return _warp_shuffle("", mask, value, lane, width, warp_size)


def tvm_warp_shuffle_up(
    mask: ExprLike, value: ExprLike, offset: ExprLike, width: ExprLike, warp_size: ExprLike
) -> PrimExpr:
    """``value`` of the lane ``offset`` below this one; a lane with none below it in its segment
    keeps its own (``__shfl_up_sync``)."""
    return _warp_shuffle("_up", mask, value, offset, width, warp_size)


def tvm_warp_shuffle_down(
    mask: ExprLike, value: ExprLike, offset: ExprLike, width: ExprLike, warp_size: ExprLike
) -> PrimExpr:
    """``value`` of the lane ``offset`` above this one; a lane with none above it in its segment
    keeps its own (``__shfl_down_sync``)."""
    return _warp_shuffle("_down", mask, value, offset, width, warp_size)


def tvm_warp_shuffle_xor(
    mask: ExprLike, value: ExprLike, lane_mask: ExprLike, width: ExprLike, warp_size: ExprLike
) -> PrimExpr:
    """``value`` of lane ``lane ^ lane_mask``; a lane whose partner is in a later segment keeps
    its own (``__shfl_xor_sync``)."""
    return _warp_shuffle("_xor", mask, value, lane_mask, width, warp_size)


def tvm_warp_activemask() -> PrimExpr:
    """The mask of the warp's lanes executing this call, as uint32 (``__activemask()``)."""
    return Call("uint32", "tvm_warp_activemask", ())


#: Ops every lane of a warp (subgroup) must reach together: shuffles, warp reductions, ballots.
#: Backends add theirs (``register_convergent``); a code generator evaluates them on every lane
#: of an expression that holds one, and no pass makes one conditional.
CONVERGENT_OPS: set[str] = {*WARP_SHUFFLES, "tvm_warp_activemask"}


def register_convergent(*ops: str) -> None:
    """Declare backend ops (``"cuda.shfl_xor"``) that every lane of a warp must reach together."""
    CONVERGENT_OPS.update(ops)


def is_convergent(e: Any) -> bool:
    """Whether expression ``e`` holds a call of a :data:`CONVERGENT_OPS` op."""
    from .analysis import any_node

    return any_node(e, lambda n: isinstance(n, Call) and str(n.op).removeprefix("tir.") in CONVERGENT_OPS)


def reinterpret(dtype: str, value: ExprLike, op: str = "reinterpret") -> PrimExpr:
    """The bits of ``value`` read as ``dtype``, of the same total width (ValueError naming both
    otherwise): lanes may regroup, ``uint8x4`` <-> ``int32`` (lane 0 in the low bits); ``op`` is
    the call's name (``"tir.reinterpret"`` from :func:`call_intrin`)."""
    v = convert(value)
    if _dt.bits(dtype) * _dt.lanes(dtype) != _dt.bits(v.dtype) * _dt.lanes(v.dtype):
        raise ValueError(f"reinterpret from {v.dtype} to {dtype} changes the width")
    return Call(dtype, op, (v,))


def is_reinterpret(e: Any) -> bool:
    """Whether ``e`` is a reinterpret call (spelled ``reinterpret`` or ``tir.reinterpret``)."""
    return isinstance(e, Call) and e.op in ("reinterpret", "tir.reinterpret")


def call_intrin(dtype: str, op: str, *args: ExprLike) -> PrimExpr:
    """A ``Call`` with an explicit result dtype (any intrinsic, including backend ones; ``tirx.``
    names are the ``tir.`` ones)."""
    op = tir_op_name(op)
    if op in ("reinterpret", "tir.reinterpret") and len(args) == 1:
        return reinterpret(dtype, args[0], op)
    if op in ("clz", "tir.clz") and len(args) == 1:
        return clz(args[0])
    if op in ("popcount", "tir.popcount") and len(args) == 1:
        return cast(dtype, popcount(args[0]))
    if op in ("q_multiply_shift", "tir.q_multiply_shift") and len(args) == 4:
        return q_multiply_shift(*args, dtype=dtype)
    if op in ("q_multiply_shift_per_axis", "tir.q_multiply_shift_per_axis") and len(args) == 7:
        return q_multiply_shift_per_axis(*args, dtype=dtype)
    return Call(dtype, op, tuple(convert(a) for a in args))


def result_dtype(op: str, args: tuple) -> Optional[str]:
    """The dtype :data:`INTRINSICS` derives for ``op`` over ``args`` (None when not derivable)."""
    entry = INTRINSICS.get(op)
    if entry is None:
        return None
    rule = entry[1]
    if rule in ("same", "float", "int"):
        return args[0].dtype if args else None
    if rule in ("arg1", "moved"):
        return args[1].dtype if len(args) > 1 else None
    if rule == "bool":  # isnan/isinf/isfinite test a vector lane by lane
        return _dt.with_lanes("bool", _dt.lanes(args[0].dtype)) if args else rule
    if rule in ("void", "int32", "uint32"):
        return rule
    return None


# --------------------------------------------------------------------------- builders TVMScript spells T.<name>


def likely(cond: ExprLike) -> PrimExpr:
    """Branch-prediction hint; this implementation returns ``cond`` unchanged."""
    return cond


def ceildiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """``ceil(a / b)`` for integers (``(a + b - 1) // b``; ``(a + b + 1) // b`` for a negative
    constant ``b``)."""
    if any(isinstance(x, float) or (isinstance(x, PrimExpr) and _dt.is_float(x.dtype)) for x in (a, b)):
        raise TypeError(f"T.ceildiv divides integers, got {a!r} and {b!r}")
    if not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
        return -(-a // b)
    negative = (isinstance(b, int) and b < 0) or (isinstance(b, IntImm) and b.value < 0)
    return floordiv(binary("add" if negative else "sub", binary("add", a, b), 1), b)


def address_of(value: Any) -> PrimExpr:
    """The address of a buffer element (``T.address_of(A[i])``) or of a buffer's first element, as
    a ``handle`` (C-family targets)."""
    if isinstance(value, Buffer):
        value = value[tuple(0 for _ in value.shape)]
    if not isinstance(value, BufferLoad):
        raise TypeError(f"T.address_of needs a buffer element such as A[i], got {value!r}")
    return Call("handle", "address_of", (value,))


def address_element(e: Any) -> Optional[BufferLoad]:
    """The element ``A[i, j]`` whose address ``e`` is (``T.address_of(A[i, j])`` of scalar
    indices), else None."""
    if isinstance(e, Call) and str(e.op).removeprefix("tir.") == "address_of" and e.args:
        load = e.args[0]
        if isinstance(load, BufferLoad) and all(_dt.lanes(i.dtype) == 1 for i in load.indices):
            return load
    return None


def call_extern(*args: Any, dtype: Optional[str] = None) -> PrimExpr:
    """A call of the C function ``name``: ``T.call_extern("float32", "sqrtf", x)`` or
    ``T.call_extern("sqrtf", x, dtype="float32")``. Host (CPU) code only."""
    if dtype is None and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        dtype, args = args[0], args[1:]
    if not args or not isinstance(args[0], str):
        raise TypeError("T.call_extern needs the function's name as a string")
    operands = tuple(convert(a) for a in args[1:])
    return Call(dtype or "int32", "call_extern", (StringImm(args[0]), *operands))


call_pure_extern = call_extern


def call_packed(name: str, *args: Any) -> PrimExpr:
    """A call of the global function ``name`` (registered with tvm-ffi, e.g.
    ``tvm_ffi.register_global_func``) from host code: ``T.call_packed("my_func", A, A.data, n)``.
    A buffer argument arrives as a tensor (a view of its memory, shape and dtype), a handle as an
    opaque pointer, numbers as ints and floats. A statement: its result is not used."""
    if not isinstance(name, str):
        raise TypeError(f"T.call_packed needs the function's name as a string, got {name!r}")
    operands = []
    for a in args:
        if isinstance(a, Buffer):  # a tensor viewing the buffer, made where the call is
            offset = a.elem_offset if a.elem_offset is not None else IntImm("int32", 0)
            rank = IntImm("int32", len(a.shape))
            a = Call("handle", "tensor_of", (StringImm(a.dtype), a.data, offset, rank, *a.shape, *a.strides))
        operands.append(convert(a))
    return Call("int32", "call_packed", (StringImm(name), *operands))


def is_barrier(e: Any) -> bool:
    """Whether ``e`` is a :func:`tvm_storage_sync` call (spelled with or without ``tir.``)."""
    return isinstance(e, Call) and e.op in ("tvm_storage_sync", "tir.tvm_storage_sync")


__all__ = [
    "INTRINSICS",
    "abs",
    "acos",
    "address_of",
    "asin",
    "atan",
    "atan2",
    "binary",
    "bitwise_and",
    "bitwise_not",
    "bitwise_operator",
    "bitwise_or",
    "bitwise_xor",
    "broadcast",
    "call_extern",
    "call_intrin",
    "call_packed",
    "call_pure_extern",
    "cast",
    "ceil",
    "ceildiv",
    "clz",
    "convert",
    "cos",
    "cosh",
    "erf",
    "exp",
    "exp10",
    "exp2",
    "fabs",
    "floor",
    "floordiv",
    "floormod",
    "fma",
    "fmod",
    "if_then_else",
    "invert",
    "infinity",
    "is_barrier",
    "is_convergent",
    "register_convergent",
    "is_reinterpret",
    "isfinite",
    "isinf",
    "isnan",
    "likely",
    "log",
    "log10",
    "log1p",
    "log2",
    "logical_and",
    "logical_not",
    "logical_or",
    "max",
    "max_value",
    "min",
    "min_value",
    "nearbyint",
    "popcount",
    "pow",
    "q_multiply_shift",
    "q_multiply_shift_per_axis",
    "promote_dtypes",
    "ramp",
    "reinterpret",
    "result_dtype",
    "round",
    "rsqrt",
    "select",
    "shift_left",
    "shift_right",
    "shuffle",
    "sigmoid",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
    "truncdiv",
    "truncmod",
    "tvm_storage_sync",
    "tvm_warp_activemask",
    "tvm_warp_shuffle",
    "tvm_warp_shuffle_down",
    "tvm_warp_shuffle_up",
    "tvm_warp_shuffle_xor",
    "Cast",
    "Select",
]
