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
from .op import ExprLike, binary, broadcast, convert, fabs, isinf, isnan, log, log1p, reinterpret, sqrt

#: Past this magnitude ``x * x`` would overflow: ``asinh`` / ``acosh`` are ``log(2|x|)`` there.
_HUGE = {"float32": 1e18, "float64": 1e150}


def _float_arg(name: str, x: ExprLike) -> tuple[PrimExpr, str]:
    """``x`` in the dtype it is computed in (float32 for 16-bit floats, with ``x``'s lanes: a
    vector is computed lane by lane), and its own dtype."""
    x = convert(x)
    if not _dt.is_float(x.dtype):
        raise TypeError(f"{name} expects a float argument, got {x.dtype}; cast it with T.Cast")
    wide = _dt.with_lanes("float32", _dt.lanes(x.dtype)) if _dt.bits(x.dtype) < 32 else x.dtype
    return (x if wide == x.dtype else Cast(wide, x)), x.dtype


def _const(value: float, dtype: str) -> PrimExpr:
    """``value`` as a constant of ``dtype`` (every lane of a vector dtype)."""
    scalar = FloatImm(_dt.element_of(dtype), value)
    return scalar if _dt.lanes(dtype) == 1 else broadcast(scalar, _dt.lanes(dtype))


def _lanes_alike(a: PrimExpr, b: PrimExpr, name: str) -> tuple[PrimExpr, PrimExpr]:
    """``a`` and ``b`` with the same lanes (a scalar next to a vector fills every lane)."""
    la, lb = _dt.lanes(a.dtype), _dt.lanes(b.dtype)
    if la == lb:
        return a, b
    if la == 1:
        return broadcast(a, lb), b
    if lb == 1:
        return a, broadcast(b, la)
    raise TypeError(f"{name} expects operands of the same lanes, got {a.dtype} and {b.dtype}")


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

    def of(a: PrimExpr, u: PrimExpr) -> PrimExpr:
        square = _mul(a, a)
        moderate = log1p(_add(a, binary("div", square, _add(one, sqrt(_add(one, square))))))
        huge = _add(log(a), _const(math.log(2.0), t))
        magnitude = Select(binary("gt", a, _const(_HUGE[_dt.element_of(t)], t)), huge, moderate)
        return copysign(magnitude, u)  # the sign bit: asinh(-0.0) is -0.0

    # x bound once: its load is read once (WGSL reads a bfloat16 element through its 32-bit word)
    return _result(_bind("asinh_x", v, lambda u: _bind("asinh_a", fabs(u), lambda a: of(a, u))), dtype)


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
        defined = Select(binary("gt", a, _const(_HUGE[_dt.element_of(t)], t)), huge, moderate)
        # below 1 the formula can round to log1p(-1) or overflow to inf - inf
        return Select(binary("lt", a, one), _const(math.nan, t), defined)

    return _result(_bind("acosh_x", v, of), dtype)


def atanh(x: ExprLike) -> PrimExpr:
    """The inverse hyperbolic tangent (±inf at ±1, NaN beyond): ``sign(x) * log1p(2|x| / (1 -
    |x|)) / 2`` (``1 - |x|`` is exact near 1, where ``1 + x`` would not be)."""
    v, dtype = _float_arg("atanh", x)
    t = v.dtype

    def of(a: PrimExpr, u: PrimExpr) -> PrimExpr:
        ratio = binary("div", _mul(_const(2.0, t), a), binary("sub", _const(1.0, t), a))
        half = _mul(_const(0.5, t), log1p(ratio))
        return copysign(half, u)  # the sign bit: atanh(-0.0) is -0.0

    return _result(_bind("atanh_x", v, lambda u: _bind("atanh_a", fabs(u), lambda a: of(a, u))), dtype)


def hypot(x: ExprLike, y: ExprLike) -> PrimExpr:
    """``sqrt(x² + y²)`` without overflow or underflow in between: ``m * sqrt(1 + (n / m)²)``
    with ``m = max(|x|, |y|)`` and ``n`` the other; infinite when either is (even if the other
    is NaN, as in C), NaN otherwise when either is."""
    a, dtype = _float_arg("hypot", x)
    b, other = _float_arg("hypot", y)
    a, b = _lanes_alike(a, b, "hypot")
    lanes = _dt.lanes(a.dtype)
    if _dt.bits(other) > _dt.bits(dtype):
        dtype = other
    dtype = _dt.with_lanes(dtype, lanes)
    t = _dt.with_lanes("float64" if 64 in (_dt.bits(a.dtype), _dt.bits(b.dtype)) else "float32", lanes)
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
    xv, yv = _lanes_alike(xv, yv, "copysign")  # a vector lane by lane
    # -a (a multiplication by -1) turns +0.0 into -0.0, which 0.0 - a does not
    return _bind("copysign_a", fabs(xv), lambda a: Select(sign_bit(yv), -a, a))


def sign_bit(y: PrimExpr) -> PrimExpr:
    """Whether float ``y``'s sign bit is set, lane by lane (-0.0 and NaNs with the bit set
    included); a 16-bit float through float32, as WGSL reinterprets 32-bit values only."""
    signed = y if _dt.bits(y.dtype) >= 32 else Cast(_dt.with_lanes("float32", _dt.lanes(y.dtype)), y)
    bits = f"int{_dt.bits(signed.dtype)}"
    return binary("lt", reinterpret(_dt.with_lanes(bits, _dt.lanes(signed.dtype)), signed), IntImm(bits, 0))


#: (largest exponent, bits of precision) of the dtypes ldexp computes in
_FORMAT = {"float32": (127, 24), "float64": (1023, 53)}


def _power_of_two(k: PrimExpr, t: str) -> PrimExpr:
    """``2**k`` in float dtype ``t`` for an integer ``k`` (of ``t``'s lanes) within the normal
    exponent range, built from its bits (exact on every backend, unlike a driver's ``exp2``)."""
    emax, precision = _FORMAT[_dt.element_of(t)]
    bits = _dt.with_lanes(f"int{_dt.bits(t)}", _dt.lanes(t))
    biased = binary("add", k if k.dtype == bits else Cast(bits, k), IntImm(_dt.element_of(bits), emax))
    return reinterpret(t, binary("mul", biased, IntImm(_dt.element_of(bits), 2 ** (precision - 1))))


def _where(cond: PrimExpr, a: PrimExpr, b: PrimExpr, lanes: int) -> PrimExpr:
    """``Select`` with both values of ``lanes`` lanes (a comparison of vectors may be typed ``bool``)."""
    a, b = (v if _dt.lanes(v.dtype) == lanes else broadcast(v, lanes) for v in (a, b))
    return Select(cond, a, b)


def ldexp(x: ExprLike, exponent: ExprLike) -> PrimExpr:
    """``x * 2**exponent`` (an integer exponent) as C's ``ldexp``: exact, or rounded once where
    the result is subnormal; 0, infinities and NaN unchanged. The exponent is clamped to where the
    result saturates, then applied in three power-of-two factors that each stay in range (so no
    factor is 0 or inf, which ``0 * inf`` would turn into NaN). Going down, the first factors
    stop ``precision`` bits above the subnormals (as musl's ``scalbn``), so that only the last
    multiplication can round. float16/bfloat16 are computed in float32 and rounded once."""
    v, dtype = _float_arg("ldexp", x)
    e = convert(exponent)
    if not _dt.is_integer(_dt.element_of(e.dtype)) or _dt.is_bool(e.dtype):
        raise TypeError(f"ldexp expects an integer exponent, got {e.dtype}")
    v, e = _lanes_alike(v, e, "ldexp")
    t = v.dtype
    emax, precision = _FORMAT[_dt.element_of(t)]
    emin = 1 - emax
    limit = 2 * emax + precision + 1  # beyond it every finite x gives 0 or inf
    n32 = _dt.with_lanes("int32", _dt.lanes(e.dtype))
    element = _dt.element_of(e.dtype)
    low, high = _dt.integer_range(element)
    if high > limit:  # then it fits int32
        e = binary("min", e, IntImm(element, limit))
    if low < -limit:
        e = binary("max", e, IntImm(element, -limit))
    e = e if e.dtype == n32 else Cast(n32, e)

    def step(n: PrimExpr) -> PrimExpr:  # the part of n a first factor takes
        zero = IntImm("int32", 0)
        lanes = _dt.lanes(n.dtype)
        down = _where(binary("lt", n, IntImm("int32", emin)), IntImm("int32", emin + precision), zero, lanes)
        return _where(binary("gt", n, IntImm("int32", emax)), IntImm("int32", emax), down, lanes)

    def of(n: PrimExpr) -> PrimExpr:
        return _bind(
            "ldexp_k1",
            step(n),
            lambda k1: _bind(
                "ldexp_n1",
                binary("sub", n, k1),
                lambda n1: _bind(
                    "ldexp_k2",
                    step(n1),
                    lambda k2: _mul(
                        _mul(_mul(v, _power_of_two(k1, t)), _power_of_two(k2, t)),
                        _power_of_two(binary("sub", n1, k2), t),
                    ),
                ),
            ),
        )

    return _result(_bind("ldexp_e", e, of), _dt.with_lanes(dtype, _dt.lanes(t)))


__all__ = ["acosh", "asinh", "atanh", "copysign", "hypot", "ldexp", "sign_bit"]
