"""One operation on constants, folded to the constant the machine computes at run time: integers
wrap to their dtype's width, float32 and float64 results are rounded once per operation (from
each operand's dtype value), float min/max are TIR's ``x < y ? x : y`` / ``x > y ? x : y``, a
float floor division is NumPy's ``floor_divide``. float16, bfloat16 and float8 results, vectors
and divisions by zero are not folded (None).

Used by the Python operators and ``tvm.tir`` helpers on two constants (as Apache TVM folds
them) and by :mod:`tvm.tir.transform.simplify`.
"""

from __future__ import annotations

import math
import struct
from typing import Optional

from . import dtype as _dt
from .expr import EQ, GE, GT, LE, LT, NE, Add, And, BinaryOp, Div, FloatImm, FloorDiv, FloorMod, IntImm
from .expr import Max, Min, Mod, Mul, Or, PrimExpr, Sub


def wrap_int(dtype: str, v: int) -> int:
    """``v`` wrapped to integer (or bool) ``dtype``, as its arithmetic wraps."""
    return (1 if v else 0) if _dt.is_bool(dtype) else _dt.wrapped(v, dtype)


def round_folded(dtype: str, v: float) -> Optional[float]:
    """``v`` as a ``dtype`` value; None for the dtypes not folded (16-bit and 8-bit floats)."""
    return _dt.round_float(dtype, v) if dtype in ("float32", "float64") else None


def constant(dtype: str, v) -> Optional[PrimExpr]:
    """The scalar constant ``v`` of ``dtype`` (wrapped or rounded to it); None where not folded."""
    if _dt.lanes(dtype) != 1:
        return None
    if _dt.is_float(dtype):
        r = round_folded(dtype, float(v))
        return None if r is None else FloatImm(dtype, r)
    return IntImm(dtype, wrap_int(dtype, int(v)))


def int_as_float(v: int, dtype: str) -> float:
    """Integer ``v`` rounded once to float ``dtype``'s precision (to nearest even), as a machine
    converts it: through float64 first, a float32 result could be rounded twice."""
    digits = {"float32": 24, "float16": 11, "bfloat16": 8}.get(_dt.element_of(dtype), 53)
    n = abs(v).bit_length()
    if n <= digits:
        return float(v)
    shift = n - digits
    q, r = divmod(abs(v), 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return math.copysign(float(q << shift), v)


def value_of(x: PrimExpr):
    """A constant's value as the machine holds it (a float rounded to its dtype); else None."""
    if isinstance(x, FloatImm):
        return x.dtype_value
    return x.value if isinstance(x, IntImm) else None


_COMPARE = {EQ: lambda a, b: a == b, NE: lambda a, b: a != b, LT: lambda a, b: a < b}
_COMPARE.update({LE: lambda a, b: a <= b, GT: lambda a, b: a > b, GE: lambda a, b: a >= b})


def _floor(x: float) -> float:
    """C's ``floor``: infinities and NaN as they are, and a zero result keeps the sign of ``x``
    (``floor(-0.0)`` is ``-0.0``)."""
    return math.copysign(math.floor(x), x) if math.isfinite(x) else x


def _floor_divide(dtype: str, a: float, b: float) -> Optional[float]:
    """NumPy's ``floor_divide`` of floats (Python's ``//``), each step rounded to ``dtype`` as
    the generated code computes it; ``b`` is not zero. None for the dtypes not folded."""
    if round_folded(dtype, 0.0) is None:
        return None
    if not math.isfinite(a) or math.isnan(b):
        return math.nan
    r = math.fmod(a, b)  # exact in every dtype
    q = round_folded(dtype, round_folded(dtype, a - r) / b)
    if r != 0 and (r < 0) != (b < 0):  # the remainder moves to the divisor's sign
        q = round_folded(dtype, q - 1.0)
    if q == 0:
        return math.copysign(0.0, math.copysign(1.0, a) * math.copysign(1.0, b))
    f = _floor(q)
    return f + 1.0 if q - f > 0.5 else f


def _truncated_quotient(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def fold_binary(e: BinaryOp) -> Optional[PrimExpr]:
    """The constant ``e`` computes when both operands are constants; None when it cannot be
    folded (see the module's description)."""
    a, b = value_of(e.a), value_of(e.b)
    if a is None or b is None:
        return None
    d = e.a.dtype
    isf = _dt.is_float(d)
    t = type(e)
    if t in _COMPARE:
        return IntImm("bool", int(_COMPARE[t](a, b)))
    if t is And or t is Or:
        return IntImm("bool", int(bool(a) and bool(b) if t is And else bool(a) or bool(b)))
    if t is Add:
        return constant(d, a + b)
    if t is Sub:
        return constant(d, a - b)
    if t is Mul:
        return constant(d, a * b)
    if t is Min:  # TIR's definitions (a NaN operand picks the other side; -0.0 and 0.0 as ordered)
        return constant(d, a if a < b else b)
    if t is Max:
        return constant(d, a if a > b else b)
    if b == 0:
        return None
    if t is Div:
        return constant(d, a / b if isf else _truncated_quotient(a, b))
    if t is Mod and not isf:
        return constant(d, a - _truncated_quotient(a, b) * b)
    if t is FloorDiv:
        if not isf:
            return constant(d, a // b)
        quotient = _floor_divide(d, a, b)
        return None if quotient is None else constant(d, quotient)
    if t is FloorMod and not isf:
        return constant(d, a % b)
    return None


__all__ = ["constant", "fold_binary", "fold_int_call", "int_as_float", "round_folded", "value_of", "wrap_int"]


def _rint(x: float) -> float:
    """C's ``rint`` in the default rounding mode: to nearest, ties to even."""
    return math.copysign(float(round(x)), x) if math.isfinite(x) else x  # rint(-0.4) is -0.0


def _trunc(x: float) -> float:
    return math.copysign(float(math.trunc(x)), x) if math.isfinite(x) else x


def _ceil(x: float) -> float:
    return math.copysign(float(math.ceil(x)), x) if math.isfinite(x) else x


#: float calls whose result is exact, so folding them gives every target's result
_EXACT_CALLS = {"round": _rint, "nearbyint": _rint, "trunc": _trunc, "floor": _floor, "ceil": _ceil, "fabs": abs}


#: Integer intrinsics folded on constant operands: op -> (Python function, is a shift). Right
#: shifts are arithmetic for signed dtypes and logical for unsigned ones, as Python's ``>>`` on
#: the values of those dtypes.
_INT_CALLS = {
    "bitwise_and": (lambda a, b: a & b, False),
    "bitwise_or": (lambda a, b: a | b, False),
    "bitwise_xor": (lambda a, b: a ^ b, False),
    "bitwise_not": (lambda a: ~a, False),
    "shift_left": (lambda a, b: a << b, True),
    "shift_right": (lambda a, b: a >> b, True),
}


def fold_int_call(op: str, dtype: str, args: tuple) -> Optional[IntImm]:
    """A bitwise or shift call on integer constants: the constant it computes, wrapped to
    ``dtype``; None for anything else, and for a shift by the width or more (or a negative one),
    which means nothing the same everywhere."""
    fold = _INT_CALLS.get(op[4:] if op.startswith("tir.") else op)
    if fold is None or _dt.lanes(dtype) != 1 or not _dt.is_integer(dtype):
        return None
    if not all(isinstance(a, IntImm) for a in args):
        return None
    values = [wrap_int(a.dtype, int(a.value)) for a in args]
    if len(values) == 2 and fold[1] and not 0 <= values[1] < _dt.bits(dtype):
        return None
    return IntImm(dtype, wrap_int(dtype, fold[0](*values)))


def fold_float_call(op: str, dtype: str, args: tuple) -> Optional[PrimExpr]:
    """A one-operand float call on a constant, where its result is exact: the rounding functions
    and ``fabs`` of any constant, and any one-operand float function of a NaN (a NaN). Device
    compilers have mistreated such constants (rint of 1e300 made a whole OpenCL kernel a no-op);
    None for anything else."""
    name = op[4:] if op.startswith("tir.") else op
    if len(args) != 1 or not isinstance(args[0], FloatImm) or _dt.lanes(dtype) != 1 or args[0].dtype != dtype:
        return None
    x = args[0].dtype_value
    if math.isnan(x):
        from .op import INTRINSICS  # (op builds on this module)

        return FloatImm(dtype, math.nan) if INTRINSICS.get(name) == (1, "float") else None
    fn = _EXACT_CALLS.get(name)
    return FloatImm(dtype, fn(x)) if fn is not None else None


def float_bits(dtype: str, x: FloatImm) -> Optional[PrimExpr]:
    """``reinterpret(dtype, x)`` of a float constant as an integer of the same width: its bits
    (a NaN as the quiet NaN machines make, ``0x7fc00000`` in float32); None for other pairs."""
    formats = {"float64": ("<d", "<Q", 0), "float32": ("<f", "<I", 0), "float16": ("<e", "<H", 0)}
    formats["bfloat16"] = ("<f", "<I", 16)  # its value is exact in float32; the top half
    fmt = formats.get(x.dtype)
    if fmt is None or _dt.lanes(dtype) != 1 or not _dt.is_integer(dtype) or _dt.bits(dtype) != _dt.bits(x.dtype):
        return None
    bits = struct.unpack(fmt[1], struct.pack(fmt[0], x.dtype_value))[0] >> fmt[2]
    return IntImm(dtype, wrap_int(dtype, bits))
