"""Math functions of Apache TVM's TVMScript built from the intrinsics every backend has:
``T.asinh``, ``T.acosh``, ``T.atanh``, ``T.hypot``, ``T.copysign`` and ``T.ldexp``.

Each is an expression of ``log1p``, ``log``, ``sqrt``, ``fabs``, selects and bit views, so that
every backend computes it alike without a library function of its own (``asinh``, ``acosh`` and
``atanh`` use ``log1p``, which the arithmetic legalization spells out for SPIR-V and WGSL).
The forms avoid the cancellations and overflows of the textbook ones (``asinh(x) = log(x +
sqrt(x * x + 1))`` loses everything for large negative ``x``): they stay within a few ulps of
NumPy. float16 and bfloat16 arguments are computed in float32 and rounded once.
"""

from __future__ import annotations

import math

from . import dtype as _dt
from .expr import Cast, FloatImm, IntImm, Let, PrimExpr, Select, Var
from .op import ExprLike, binary, convert, exp2, fabs, isinf, isnan, log, log1p, reinterpret, sqrt

#: Past this magnitude ``x * x`` would overflow: ``asinh`` / ``acosh`` are ``log(2|x|)`` there.
_HUGE = {"float32": 1e18, "float64": 1e150}


def _float_arg(name: str, x: ExprLike) -> tuple[PrimExpr, str]:
    """``x`` in the dtype it is computed in (float32 for 16-bit floats), and its own dtype."""
    x = convert(x)
    if not _dt.is_float(x.dtype) or _dt.lanes(x.dtype) != 1:
        raise TypeError(f"{name} expects a float argument, got {x.dtype}; cast it with T.Cast")
    wide = "float32" if _dt.bits(x.dtype) < 32 else x.dtype
    return (x if wide == x.dtype else Cast(wide, x)), x.dtype


def _const(value: float, dtype: str) -> PrimExpr:
    return FloatImm(dtype, value)


def _bind(name: str, value: PrimExpr, body_of) -> PrimExpr:
    var = Var(name, value.dtype)
    return Let(var, value, body_of(var))


def _result(value: PrimExpr, dtype: str) -> PrimExpr:
    return value if value.dtype == dtype else Cast(dtype, value)


def _add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return binary("add", a, b)


def _mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return binary("mul", a, b)


def asinh(x: ExprLike) -> PrimExpr:
    """The inverse hyperbolic sine: ``sign(x) * log1p(|x| + x² / (1 + sqrt(1 + x²)))``, and
    ``sign(x) * (log|x| + log 2)`` where ``x²`` would overflow."""
    v, dtype = _float_arg("asinh", x)
    t = v.dtype
    one = _const(1.0, t)

    def of(a: PrimExpr) -> PrimExpr:
        square = _mul(a, a)
        moderate = log1p(_add(a, binary("div", square, _add(one, sqrt(_add(one, square))))))
        huge = _add(log(a), _const(math.log(2.0), t))
        magnitude = Select(binary("gt", a, _const(_HUGE[t], t)), huge, moderate)
        return copysign(magnitude, v)  # the sign bit: asinh(-0.0) is -0.0

    return _result(_bind("asinh_a", fabs(v), of), dtype)


def acosh(x: ExprLike) -> PrimExpr:
    """The inverse hyperbolic cosine (NaN below 1): ``log1p((x - 1) + sqrt((x - 1)(x + 1)))``,
    and ``log x + log 2`` where the product would overflow."""
    v, dtype = _float_arg("acosh", x)
    t = v.dtype
    one = _const(1.0, t)

    def of(a: PrimExpr) -> PrimExpr:
        below = binary("sub", a, one)
        moderate = log1p(_add(below, sqrt(_mul(below, _add(a, one)))))
        huge = _add(log(a), _const(math.log(2.0), t))
        defined = Select(binary("gt", a, _const(_HUGE[t], t)), huge, moderate)
        # below 1 the formula can round to log1p(-1) or overflow to inf - inf
        return Select(binary("lt", a, one), _const(math.nan, t), defined)

    return _result(_bind("acosh_x", v, of), dtype)


def atanh(x: ExprLike) -> PrimExpr:
    """The inverse hyperbolic tangent (±inf at ±1, NaN beyond): ``sign(x) * log1p(2|x| / (1 -
    |x|)) / 2`` (``1 - |x|`` is exact near 1, where ``1 + x`` would not be)."""
    v, dtype = _float_arg("atanh", x)
    t = v.dtype

    def of(a: PrimExpr) -> PrimExpr:
        ratio = binary("div", _mul(_const(2.0, t), a), binary("sub", _const(1.0, t), a))
        half = _mul(_const(0.5, t), log1p(ratio))
        return copysign(half, v)  # the sign bit: atanh(-0.0) is -0.0

    return _result(_bind("atanh_a", fabs(v), of), dtype)


def hypot(x: ExprLike, y: ExprLike) -> PrimExpr:
    """``sqrt(x² + y²)`` without overflow or underflow in between: ``m * sqrt(1 + (n / m)²)``
    with ``m = max(|x|, |y|)`` and ``n`` the other; infinite when either is (even if the other
    is NaN, as in C), NaN otherwise when either is."""
    a, dtype = _float_arg("hypot", x)
    b, other = _float_arg("hypot", y)
    if _dt.bits(other) > _dt.bits(dtype):
        dtype = other
    t = "float64" if "float64" in (a.dtype, b.dtype) else "float32"
    a, b = (v if v.dtype == t else Cast(t, v) for v in (a, b))
    zero, one = _const(0.0, t), _const(1.0, t)

    def of(p: PrimExpr, q: PrimExpr) -> PrimExpr:
        big, small = binary("max", p, q), binary("min", p, q)
        ratio = binary("div", small, big)
        finite = Select(binary("eq", big, zero), zero, _mul(big, sqrt(_add(one, _mul(ratio, ratio)))))
        # max and min pick by ">" and "<": they drop a NaN first operand, so test for it here
        ordered = Select(binary("or", isnan(p), isnan(q)), _const(math.nan, t), finite)
        return Select(binary("or", isinf(p), isinf(q)), _const(math.inf, t), ordered)

    return _result(_bind("hypot_a", fabs(a), lambda p: _bind("hypot_b", fabs(b), lambda q: of(p, q))), dtype)


def copysign(x: ExprLike, y: ExprLike) -> PrimExpr:
    """``|x|`` with the sign bit of ``y`` (-0.0 and NaNs with the sign bit set count as negative)."""
    xv = convert(x)
    yv = convert(y)
    if not _dt.is_float(xv.dtype) or not _dt.is_float(yv.dtype):
        raise TypeError(f"copysign expects float arguments, got {xv.dtype} and {yv.dtype}; cast them with T.Cast")
    # the sign bit of a 16-bit float through float32 (WGSL reinterprets 32-bit values only)
    signed = yv if _dt.bits(yv.dtype) >= 32 else Cast("float32", yv)
    bits = f"int{_dt.bits(signed.dtype)}"
    negative = binary("lt", reinterpret(bits, signed), IntImm(bits, 0))
    # -a (a multiplication by -1) turns +0.0 into -0.0, which 0.0 - a does not
    return _bind("copysign_a", fabs(xv), lambda a: Select(negative, -a, a))


def ldexp(x: ExprLike, exponent: ExprLike) -> PrimExpr:
    """``x * 2**exponent`` (an integer exponent), in two exact power-of-two steps so that neither
    factor leaves the float range on its own."""
    v, dtype = _float_arg("ldexp", x)
    e = convert(exponent)
    if not _dt.is_integer(e.dtype):
        raise TypeError(f"ldexp expects an integer exponent, got {e.dtype}")
    t = v.dtype

    def of(n: PrimExpr) -> PrimExpr:
        half = binary("floordiv", n, IntImm("int32", 2))
        first = exp2(Cast(t, half))
        second = exp2(Cast(t, binary("sub", n, half)))
        return _mul(_mul(v, first), second)

    return _result(_bind("ldexp_e", Cast("int32", e) if e.dtype != "int32" else e, of), dtype)


__all__ = ["acosh", "asinh", "atanh", "copysign", "hypot", "ldexp"]
