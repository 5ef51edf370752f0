"""Legalization: TIR's semantics spelled with plain operations, so an emitter that is not the
C-family printer (SPIR-V, WGSL, ...) gets them without re-implementing them.

TIR defines integer division the way NumPy computes it: ``x // 0 == 0``, ``x % 0 == 0``,
``x // -1 == -x`` (wrapping), ``x % -1 == 0``; ``FloorDiv``/``FloorMod`` round towards negative
infinity; ``Min``/``Max`` pick an operand by ``<``/``>``. After :func:`legalize_arithmetic`:

* no ``FloorDiv``, ``FloorMod``, ``Min`` or ``Max`` remains;
* every integer ``Div``/``Mod`` has a divisor that is neither 0 nor, for signed types, -1, so a
  machine division instruction (``OpSDiv``, WGSL ``/``) computes it exactly, without a trap or
  undefined behaviour; the special divisors are handled by ``Select``;
* float ``FloorDiv`` becomes NumPy's ``floor_divide`` spelled with ``fmod`` and ``floor``, float
  ``FloorMod`` and ``Mod`` become ``fmod``
  (with the divisor's sign for ``FloorMod``), and ``fmod`` of a finite value by an infinity is
  that value (the native ``x - y * trunc(x / y)`` gives NaN);
* ``tanh(x)`` of float32 and float16 is a series near zero (``|x| < 0.55``), where the drivers'
  ``tanh`` loses the low bits, and the native ``tanh`` beyond; ``sinh(x)`` likewise, with
  ``(h/2) * h`` for ``h = exp(|x|/2)`` beyond, and ``cosh(x)`` from the same half exponentials
  (finite up to float32's limit, where ``exp(|x|)`` overflows);
* ``atan`` and ``atan2`` of float32 and float16 give NaN for a NaN operand, ``atan`` is ``x``
  itself near zero (a signed zero kept), and ``atan2`` has C's results for zeros (signed) and
  infinities; the native functions elsewhere (float16 computed in float32, as for ``tanh``,
  ``sinh`` and ``cosh``);
* ``pow(x, y)`` is the native ``pow`` of ``|x|`` (defined for a positive base only in SPIR-V
  and WGSL) with C's results for a negative or zero base and a zero exponent chosen by ``Select``;
* ``log1p(u)`` becomes a series in ``u`` where ``1 + u`` would round away ``u``'s low bits
  (``|u| < 0.1``) and ``log(1 + u)`` elsewhere (SPIR-V and WGSL have no log1p);
* each operand is evaluated once (``Let``), whatever the emitter does with ``Select``.

Integer arithmetic in the result relies on two's-complement wrapping (``0 - x``), which SPIR-V and
WGSL define; the C printer keeps its own helpers and does not need this pass.
"""

from __future__ import annotations

import math
from typing import Any

from tvm.tir import dtype as _dt
from tvm.tir.expr import (
    EQ,
    GE,
    GT,
    LE,
    BinaryOp,
    Cast,
    LT,
    NE,
    Add,
    And,
    Call,
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
    Sub,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator


def _bind(value: PrimExpr, make: Any) -> PrimExpr:
    """``make(v)`` with ``v`` bound to ``value`` once (no binding for variables and constants)."""
    if isinstance(value, (Var, IntImm, FloatImm)):
        return make(value)
    v = Var("legal", value.dtype)  # printers make the names unique, the same in every compile
    return Let(v, value, make(v))


def _const(dtype: str, value: int) -> IntImm:
    return IntImm(dtype, value)


#: The comparisons SPIR-V and WGSL define for numbers only (a bool operand compares as 0 or 1).
_ORDERINGS = (LT, LE, GT, GE)


class _Legalizer(StmtExprMutator):
    def visit_Div(self, e: Div) -> PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        if _dt.is_float(e.dtype):
            return Div(a, b, e.span)
        return _bind(a, lambda x: _bind(b, lambda y: _trunc(x, y, e.dtype, "div")))

    def visit_Mod(self, e: Mod) -> PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        if _dt.is_float(e.dtype):
            return _bind(a, lambda x: _bind(b, lambda y: _fmod(x, y, e.dtype)))
        return _bind(a, lambda x: _bind(b, lambda y: _trunc(x, y, e.dtype, "mod")))

    def visit_FloorDiv(self, e: FloorDiv) -> PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        if _dt.is_float(e.dtype) and _dt.bits(e.dtype) == 16:  # computed in float32, as NumPy does
            wide = _dt.with_lanes("float32", _dt.lanes(e.dtype))
            quotient = _bind(Cast(wide, a), lambda x: _bind(Cast(wide, b), lambda y: _float_floordiv(x, y, wide)))
            return Cast(e.dtype, quotient)
        if _dt.is_float(e.dtype):
            return _bind(a, lambda x: _bind(b, lambda y: _float_floordiv(x, y, e.dtype)))
        if not _dt.is_int(e.dtype):  # unsigned and bool: floor and truncation agree
            return _bind(a, lambda x: _bind(b, lambda y: _trunc(x, y, e.dtype, "div")))
        return _bind(a, lambda x: _bind(b, lambda y: _floor(x, y, e.dtype, "div")))

    def visit_FloorMod(self, e: FloorMod) -> PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        if _dt.is_float(e.dtype):
            return _bind(a, lambda x: _bind(b, lambda y: _float_floormod(x, y, e.dtype)))
        if not _dt.is_int(e.dtype):
            return _bind(a, lambda x: _bind(b, lambda y: _trunc(x, y, e.dtype, "mod")))
        return _bind(a, lambda x: _bind(b, lambda y: _floor(x, y, e.dtype, "mod")))

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        out = super().visit_BinaryOp(e)
        if isinstance(out, _ORDERINGS) and _dt.element_of(out.a.dtype) == "bool":  # as 0 and 1
            wide = _dt.with_lanes("int32", _dt.lanes(out.a.dtype))
            return type(out)(Cast(wide, out.a), Cast(wide, out.b), e.span)
        return out

    def visit_Min(self, e: Min) -> PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return _bind(a, lambda x: _bind(b, lambda y: Select(LT(x, y), x, y)))

    def visit_Max(self, e: Max) -> PrimExpr:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return _bind(a, lambda x: _bind(b, lambda y: Select(LT(y, x), x, y)))

    def visit_Call(self, e: Call) -> PrimExpr:
        e = super().visit_Call(e)
        op = str(e.op).removeprefix("tir.") if isinstance(e, Call) else ""
        if op == "pow" and _dt.is_float(e.dtype):
            return _bind(e.args[0], lambda x: _bind(e.args[1], lambda y: _pow(x, y, e.dtype)))
        if op == "fmod" and _dt.is_float(e.dtype):
            return _bind(e.args[0], lambda x: _bind(e.args[1], lambda y: _fmod(x, y, e.dtype)))
        if op in _FLOAT32_MATH and e.dtype in ("float16", "float32"):
            return _in_float32(e.args, e.dtype, _FLOAT32_MATH[op])
        return _expand_log1p(e)


class _Log1p(StmtExprMutator):
    def visit_Call(self, e: Call) -> PrimExpr:
        return _expand_log1p(super().visit_Call(e))


def _expand_log1p(call: PrimExpr) -> PrimExpr:
    if isinstance(call, Call) and str(call.op).removeprefix("tir.") == "log1p" and _dt.is_float(call.dtype):
        return _bind(call.args[0], lambda u: _log1p(u, call.dtype))
    return call


def _log1p(u: Var, dtype: str) -> PrimExpr:
    """``log(1 + u)``: the alternating series ``u - u²/2 + u³/3 - ...`` (to below the dtype's
    precision) for ``|u| < 0.1``, ``log(1 + u)`` beyond, where rounding ``1 + u`` costs a few ulps."""
    terms = 17 if _dt.bits(dtype) == 64 else 9
    series: PrimExpr = FloatImm(dtype, (-1.0) ** (terms + 1) / terms)
    for k in range(terms - 1, 0, -1):  # Horner: c1 + u * (c2 + u * (...))
        series = Add(FloatImm(dtype, (-1.0) ** (k + 1) / k), Mul(u, series))
    small = LT(Call(dtype, "fabs", (u,)), FloatImm(dtype, 0.1))
    return Select(small, Mul(u, series), Call(dtype, "log", (Add(FloatImm(dtype, 1.0), u),)))


def _pow(x: Var, y: Var, dtype: str) -> PrimExpr:
    """``x ** y`` as C's ``pow`` defines it, from a ``pow`` defined only for ``x > 0`` (SPIR-V's and
    WGSL's) applied to ``|x|``: a negative ``x`` takes the sign of an odd whole ``y`` (NaN for a
    fractional ``y``, except ``-inf``), a zero ``x`` gives 0 or infinity with the sign of ``x`` for
    an odd ``y``; ``y == 0``, ``x == 1`` and ``|x| == 1`` with an infinite ``y`` give 1; NaN
    otherwise gives NaN."""
    from tvm.tir.composite_math import copysign

    zero, one = FloatImm(dtype, 0.0), FloatImm(dtype, 1.0)
    inf, nan = FloatImm(dtype, math.inf), FloatImm(dtype, math.nan)
    whole = EQ(Call(dtype, "floor", (y,)), y)
    odd = And(And(whole, LT(Call(dtype, "fabs", (y,)), inf)), NE(Call(dtype, "fmod", (y, FloatImm(dtype, 2.0))), zero))

    def from_magnitude(m: Var) -> PrimExpr:
        fractional = Select(Call("bool", "isinf", (x,)), m, nan)
        negative = Select(whole, Select(odd, Mul(FloatImm(dtype, -1.0), m), m), fractional)
        at_zero = Select(LT(zero, y), zero, inf)
        at_zero = Select(odd, copysign(at_zero, x), at_zero)  # -0.0 keeps its sign for an odd y
        general = Select(EQ(x, zero), at_zero, Select(LT(x, zero), negative, m))
        unordered = Select(Or(Call("bool", "isnan", (x,)), Call("bool", "isnan", (y,))), nan, general)
        ones = Or(Or(EQ(y, zero), EQ(x, one)), And(EQ(Call(dtype, "fabs", (x,)), one), Call("bool", "isinf", (y,))))
        return Select(ones, one, unordered)

    return _bind(Call(dtype, "pow", (Call(dtype, "fabs", (x,)), y)), from_magnitude)


def _special(b: Var, dtype: str) -> PrimExpr:
    """``b`` is a divisor machine division cannot take: 0, or -1 for signed types."""
    zero = EQ(b, _const(dtype, 0))
    return Or(zero, EQ(b, _const(dtype, -1))) if _dt.is_int(dtype) else zero


def _safe_divisor(b: Var, dtype: str) -> PrimExpr:
    return Select(_special(b, dtype), _const(dtype, 1), b)


def _positive_constant(b: PrimExpr) -> int | None:
    """``b``'s value when it is a constant above 1: a divisor that needs no guard."""
    return b.value if isinstance(b, IntImm) and b.value > 1 else None


def _trunc(a: Var, b: Var, dtype: str, which: str) -> PrimExpr:
    """Truncating ``a / b`` or ``a % b`` with NumPy's results for the special divisors."""
    if _positive_constant(b) is not None:
        return Mod(a, b) if which == "mod" else Div(a, b)
    safe = _safe_divisor(b, dtype)
    zero = _const(dtype, 0)
    if which == "mod":
        return Select(_special(b, dtype), zero, Mod(a, safe))
    quotient = Select(EQ(b, zero), zero, Div(a, safe))
    return Select(EQ(b, _const(dtype, -1)), Sub(zero, a), quotient) if _dt.is_int(dtype) else quotient


def _floor(a: Var, b: Var, dtype: str, which: str) -> PrimExpr:
    """Signed floor division or modulo with NumPy's results for the special divisors."""
    zero, one = _const(dtype, 0), _const(dtype, 1)
    c = _positive_constant(b)
    if c is not None:  # the common case (an index over a tile size) stays short
        if c & (c - 1) == 0:  # a power of two: the arithmetic shift floors, the mask is the remainder
            if which == "mod":
                return Call(dtype, "bitwise_and", (a, _const(dtype, c - 1)))
            return Call(dtype, "shift_right", (a, _const(dtype, c.bit_length() - 1)))

        def with_rem(r: Var) -> PrimExpr:
            negative = LT(r, zero)
            return (
                Select(negative, Add(r, b), r) if which == "mod" else Select(negative, Sub(Div(a, b), one), Div(a, b))
            )

        return _bind(Mod(a, b), with_rem)

    def with_safe(safe: Var) -> PrimExpr:
        def with_rem(r: Var) -> PrimExpr:
            adjust = And(NE(r, zero), NE(LT(r, zero), LT(safe, zero)))
            if which == "mod":
                return Select(_special(b, dtype), zero, Select(adjust, Add(r, safe), r))
            q = Div(a, safe)
            floored = Select(adjust, Sub(q, one), q)
            return Select(EQ(b, zero), zero, Select(EQ(b, _const(dtype, -1)), Sub(zero, a), floored))

        return _bind(Mod(a, safe), with_rem)

    return _bind(_safe_divisor(b, dtype), with_safe)


def _signed_zero(negative: PrimExpr, dtype: str) -> PrimExpr:
    return Select(negative, FloatImm(dtype, -0.0), FloatImm(dtype, 0.0))


def _fmod(a: Var, b: Var, dtype: str) -> PrimExpr:
    """C's ``fmod``: the native remainder (``x - y * trunc(x / y)`` in SPIR-V and WGSL), except
    that a finite ``a`` over an infinite ``b`` is ``a`` (the native form gives NaN), an infinite
    ``a`` or a zero ``b`` is NaN (drivers' native forms gave 0), a zero remainder has ``a``'s sign
    (the native form gave +0.0 for -0.0 and -2.0 by 1.0), and a remainder the native form puts
    outside ``(-|b|, |b|)`` (infinite where ``a / b`` overflows, as by a subnormal ``b``) is a zero
    with ``a``'s sign: exact when ``|b|`` is a power of two, whose multiples such ``a`` are."""
    inf = FloatImm(dtype, math.inf)
    magnitude = Call(dtype, "fabs", (b,))
    finite_over_infinite = And(EQ(magnitude, inf), LT(Call(dtype, "fabs", (a,)), inf))
    undefined = Or(EQ(Call(dtype, "fabs", (a,)), inf), EQ(b, FloatImm(dtype, 0.0)))  # NaN in C

    def with_native(r: Var) -> PrimExpr:
        # not (|r| < |b|): a zero remainder, or one the native form could not compute (NaN b aside)
        computable = And(LT(magnitude, inf), Not(Call("bool", "isnan", (a,))))
        zero = Or(EQ(r, FloatImm(dtype, 0.0)), And(computable, Not(LT(Call(dtype, "fabs", (r,)), magnitude))))
        from tvm.tir.composite_math import sign_bit

        return Select(zero, _signed_zero(sign_bit(a), dtype), r)

    native = Select(finite_over_infinite, a, _bind(Call(dtype, "fmod", (a, b)), with_native))
    return Select(undefined, FloatImm(dtype, math.nan), native)


#: tanh's Taylor coefficients (of x, x**3, x**5, ...): below 0.55 nine terms reach float32's precision
_TANH_SERIES = (1, -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075, -929569 / 638512875,
                6404582 / 10854718875)  # fmt: skip

#: sinh's Taylor coefficients (of x, x**3, x**5, ...): below 0.55 five terms reach float32's precision
_SINH_SERIES = tuple(1 / math.factorial(2 * k + 1) for k in range(5))


def _in_float32(args: Any, dtype: str, make: Any) -> PrimExpr:
    """``make`` of ``args`` (each bound once) computed in float32; a float16 result is rounded once."""
    wide = [a if a.dtype == "float32" else Cast("float32", a) for a in args]

    def bind_from(i: int, bound: list[PrimExpr]) -> PrimExpr:
        if i == len(wide):
            return make(*bound)
        return _bind(wide[i], lambda v: bind_from(i + 1, [*bound, v]))

    out = bind_from(0, [])
    return out if dtype == "float32" else Cast(dtype, out)


def _f32(value: float) -> FloatImm:
    return FloatImm("float32", value)


def _odd_series(v: PrimExpr, coefficients: tuple[float, ...]) -> PrimExpr:
    """``c0 * v + c1 * v**3 + c2 * v**5 + ...`` (Horner in ``v * v``); exactly ``v`` for a tiny ``v``."""

    def with_square(s: PrimExpr) -> PrimExpr:
        poly: PrimExpr = _f32(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            poly = Add(_f32(c), Mul(s, poly))
        return Mul(v, poly)

    return _bind(Mul(v, v), with_square)


def _near_zero(v: PrimExpr) -> PrimExpr:
    return LT(Call("float32", "fabs", (v,)), _f32(0.55))


def _tanh(v: PrimExpr) -> PrimExpr:
    """``tanh(x)``: its series near zero, where the drivers' ``tanh`` (from exponentials) loses
    the low bits (lavapipe gave 2.98e-8 for tanh(1e-8)); the native ``tanh`` beyond."""
    return Select(_near_zero(v), _odd_series(v, _TANH_SERIES), Call("float32", "tanh", (v,)))


def _half_exponentials(v: PrimExpr, combine: Any) -> PrimExpr:
    """``combine(e/2, 1/(2e))`` for ``e = exp(|v|)``, with ``e/2`` as ``(h/2) * h`` for ``h =
    exp(|v|/2)``: finite wherever the result is (``exp(89)`` overflows float32, ``sinh(89)`` not)."""

    def with_h(h: PrimExpr) -> PrimExpr:
        return combine(Mul(Mul(_f32(0.5), h), h), Div(_f32(0.5), Mul(h, h)))

    return _bind(Call("float32", "exp", (Mul(Call("float32", "fabs", (v,)), _f32(0.5)),)), with_h)


def _sinh(v: PrimExpr) -> PrimExpr:
    """``sinh(x)``: its series near zero, where ``(e^x - e^-x) / 2`` cancels (lavapipe gave 2.98e-8
    for sinh(1e-30)), and half exponentials beyond, which overflow only where sinh does."""
    magnitude = _half_exponentials(v, Sub)
    far = _bind(magnitude, lambda m: Select(LT(v, _f32(0.0)), Mul(m, _f32(-1.0)), m))
    return Select(_near_zero(v), _odd_series(v, _SINH_SERIES), far)


def _cosh(v: PrimExpr) -> PrimExpr:
    """``cosh(x)`` from half exponentials, which overflow only where cosh does (the drivers' cosh
    gave inf for cosh(89))."""
    return _half_exponentials(v, Add)


def _atan(v: PrimExpr) -> PrimExpr:
    """``atan(x)``: ``x`` itself for a NaN (lavapipe's gave 0), a signed zero and ``|x| < 2**-12``
    (where ``x - x**3 / 3`` rounds to ``x``), the native ``atan`` otherwise."""
    as_is = Or(Call("bool", "isnan", (v,)), LT(Call("float32", "fabs", (v,)), _f32(2.0**-12)))
    return Select(as_is, v, Call("float32", "atan", (v,)))


def _atan2_special(y: PrimExpr, x: PrimExpr) -> PrimExpr:
    """``|atan2(y, x)|`` where ``y`` or ``x`` is zero or infinite, as C defines it: a negative
    ``x`` (-0.0 included) points west (pi), a positive one east (0)."""
    from tvm.tir.composite_math import sign_bit

    west = sign_bit(x)
    on_axis = Select(west, _f32(math.pi), _f32(0.0))
    diagonal = Select(west, _f32(3 * math.pi / 4), _f32(math.pi / 4))
    infinite_y = Select(Call("bool", "isinf", (x,)), diagonal, _f32(math.pi / 2))
    finite_y = Select(Call("bool", "isinf", (x,)), on_axis, _f32(math.pi / 2))  # else x is zero
    return Select(EQ(y, _f32(0.0)), on_axis, Select(Call("bool", "isinf", (y,)), infinite_y, finite_y))


def _atan2(y: PrimExpr, x: PrimExpr) -> PrimExpr:
    """C's ``atan2(y, x)``: NaN for a NaN operand, the results C defines for zeros (signed) and
    infinities with the sign of ``y``, and the native ``atan2`` elsewhere (lavapipe's gave 0 for
    NaN and 3pi/4 for atan2(0, 0))."""
    from tvm.tir.composite_math import copysign

    def is_(kind: str, v: PrimExpr) -> PrimExpr:
        return Call("bool", kind, (v,))

    zero = _f32(0.0)
    special = Or(Or(EQ(y, zero), EQ(x, zero)), Or(is_("isinf", y), is_("isinf", x)))
    general = Select(special, copysign(_atan2_special(y, x), y), Call("float32", "atan2", (y, x)))
    return Select(Or(is_("isnan", y), is_("isnan", x)), _f32(math.nan), general)


#: float16/float32 math the drivers get wrong, computed in float32 from exact formulations
_FLOAT32_MATH = {"tanh": _tanh, "sinh": _sinh, "cosh": _cosh, "atan": _atan, "atan2": _atan2}


def _float_floormod(a: Var, b: Var, dtype: str) -> PrimExpr:
    """Python's ``%`` for floats: ``fmod`` with the divisor's sign (a zero remainder too)."""
    zero = FloatImm(dtype, 0.0)

    def with_rem(r: Var) -> PrimExpr:
        signed_zero = Select(LT(b, zero), FloatImm(dtype, -0.0), zero)
        return Select(NE(r, zero), Select(NE(LT(r, zero), LT(b, zero)), Add(r, b), r), signed_zero)

    return _bind(_fmod(a, b, dtype), with_rem)


def _float_floordiv(a: Var, b: Var, dtype: str) -> PrimExpr:
    """NumPy's ``floor_divide`` of floats: ``(a - fmod(a, b)) / b``, one less where the remainder
    moves to the divisor's sign, snapped to an integer (``floor(a / b)`` rounds across one where
    the quotient is inexact: ``1e-45 // -2`` is -1); NaN for an infinite ``a``, ``a / b`` for a
    zero ``b``, a zero quotient signed as ``a / b`` is."""
    from tvm.tir.composite_math import sign_bit

    zero, one = FloatImm(dtype, 0.0), FloatImm(dtype, 1.0)

    def with_rem(r: Var) -> PrimExpr:
        moves = And(NE(r, zero), NE(LT(r, zero), LT(b, zero)))

        def with_quotient(q: Var) -> PrimExpr:
            def with_floor(f: Var) -> PrimExpr:
                snapped = Select(LT(FloatImm(dtype, 0.5), Sub(q, f)), Add(f, one), f)
                return Select(EQ(q, zero), _signed_zero(NE(sign_bit(a), sign_bit(b)), dtype), snapped)

            return _bind(Call(dtype, "floor", (q,)), with_floor)

        exact = Div(Sub(a, r), b)
        return _bind(Select(moves, Sub(exact, one), exact), with_quotient)

    return Select(EQ(b, zero), Div(a, b), _bind(_fmod(a, b, dtype), with_rem))


def legalize_arithmetic(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with integer division, floor division and modulo, min and max spelled with plain
    operations (see the module docstring). Usable as a target pass: ``passes=(...,)``."""
    body = _Legalizer().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


def legalize_log1p(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with ``log1p`` spelled with ``log`` and a series (for a language without it, such
    as Metal; :func:`legalize_arithmetic` does it too). Usable as a target pass."""
    body = _Log1p().visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


__all__ = ["legalize_arithmetic", "legalize_log1p"]
