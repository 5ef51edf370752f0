"""float8 (``float8_e4m3fn``, ``float8_e5m2``) as bytes, computed in float32.

``legalize_float8`` rewrites a function so that no float8 value is left: every float8 buffer is
read and written through a ``uint8`` view of its memory, a load is decoded to the float32 of the
same value (``float8_decode_<dtype>(byte)``), a store encodes its value
(``float8_encode_<dtype>(f)``: round to nearest even, as ml_dtypes converts), and every float8
operation, cast or constant is computed in float32 and rounded to float8. Only the function's
buffer parameters keep their float8 dtype (the host checks the tensors passed), so a code
generator needs ``uint8`` storage for them and a helper per conversion: the C-family printers
print one from :func:`conversion_steps` (integer and bit operations only).

Formats (OCP 8-bit floats): e4m3fn has 4 exponent bits (bias 7), 3 mantissa bits, no infinity,
NaN ``S.1111.111``, largest finite 448: a value that rounds past it becomes NaN. e5m2 has 5
exponent bits (bias 15), 2 mantissa bits, infinities and NaNs as IEEE: past 57344 it rounds to
infinity; a NaN becomes ``S.11111.10``. A float64 value is rounded to float32 first, as
ml_dtypes converts one.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from typing import Any

from tvm.tir import dtype as _dt
from tvm.tir.expr import (
    EQ,
    GE,
    GT,
    Add,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    FloatImm,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Select,
    Sub,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer, StmtExprMutator
from tvm.tir.stmt import BufferStore, Stmt

from .narrow import NarrowEmulator
from .verify import TIRVerifyError, with_span

F32, U32, I32, U8 = "float32", "uint32", "int32", "uint8"


@dataclasses.dataclass(frozen=True)
class Format:
    """An 8-bit float format: exponent and mantissa bits, bias, and whether it has infinities."""

    exponent: int
    mantissa: int
    bias: int
    ieee: bool  # infinities and IEEE NaNs (e5m2); else no infinity, one NaN pattern (e4m3fn)

    @property
    def largest_code(self) -> int:
        """The code (sign bit clear) of the largest finite value."""
        return 0x7B if self.ieee else 0x7E

    @property
    def overflow_code(self) -> int:
        """What a value past the largest finite one becomes: infinity or NaN."""
        return 0x7C if self.ieee else 0x7F

    @property
    def nan_code(self) -> int:
        return 0x7E if self.ieee else 0x7F


FORMATS = dict(zip(_dt.FLOAT8_DTYPES, (Format(4, 3, 7, False), Format(5, 2, 15, True))))


def is_float8(dtype: str) -> bool:
    """Whether ``dtype`` is one of the float8 formats."""
    return dtype in FORMATS


def _u(v: int) -> IntImm:
    return IntImm(U32, v)


def _call(dtype: str, op: str, *args: PrimExpr) -> Call:
    return Call(dtype, op, tuple(args))


def _and(a: PrimExpr, mask: int) -> PrimExpr:
    return _call(U32, "bitwise_and", a, _u(mask))


def _shr(a: PrimExpr, n: int) -> PrimExpr:
    return _call(U32, "shift_right", a, _u(n))


def _shl(a: PrimExpr, n: Any) -> PrimExpr:
    return _call(U32, "shift_left", a, n if isinstance(n, PrimExpr) else _u(n))


def _or(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return _call(U32, "bitwise_or", a, b)


class _Steps:
    """A computation as named steps (``name = value``) and a result: what a helper function's
    body is (:meth:`tvm.codegen.c_family.CFamilyPrinter` prints one per conversion)."""

    def __init__(self, param: Var) -> None:
        self.param, self.steps, self.result = param, [], None

    def let(self, name: str, value: PrimExpr) -> Var:
        var = Var(name, value.dtype)
        self.steps.append((var, value))
        return var


def decode_steps(fmt: Format) -> _Steps:
    """float8 bits (a uint8 parameter) to the float32 of the same value."""
    m_bits, e_mask = fmt.mantissa, (1 << fmt.exponent) - 1
    st = _Steps(Var("b", U8))
    u = st.let("u", Cast(U32, st.param))
    sign = st.let("sign", _shl(_shr(u, 7), 31))
    exp = st.let("e", _and(_shr(u, m_bits), e_mask))
    man = st.let("m", _and(u, (1 << m_bits) - 1))
    normal_exp = Add(exp, _u(127 - fmt.bias))
    if fmt.ieee:  # the top exponent is infinity (mantissa 0) or NaN, as in float32
        normal_exp = Select(EQ(exp, _u(e_mask)), _u(255), normal_exp, U32)
    normal = st.let("normal", _call(F32, "reinterpret", _or(sign, _or(_shl(normal_exp, 23), _shl(man, 23 - m_bits)))))
    tiny = st.let("tiny", Mul(Cast(F32, man), FloatImm(F32, 2.0 ** (1 - fmt.bias - m_bits))))  # exponent 0
    tiny = Select(EQ(sign, _u(0)), tiny, Mul(tiny, FloatImm(F32, -1.0)), F32)  # -0.0 stays negative
    out = Select(EQ(exp, _u(0)), tiny, normal, F32)
    if not fmt.ieee:  # S.1111.111 is the only NaN
        nan = _call(F32, "reinterpret", _or(sign, _u(0x7FC00000)))
        out = Select(EQ(_and(u, 0x7F), _u(0x7F)), nan, out, F32)
    st.result = out
    return st


def encode_steps(fmt: Format) -> _Steps:
    """A float32 parameter to the bits (a uint8) of the nearest float8 (round to nearest even)."""
    m_bits, drop = fmt.mantissa, 23 - fmt.mantissa
    st = _Steps(Var("f", F32))
    u = st.let("u", _call(U32, "reinterpret", st.param))
    a = st.let("a", _and(u, 0x7FFFFFFF))
    exp = st.let("e", Sub(Cast(I32, _shr(a, 23)), IntImm(I32, 127 - fmt.bias)))
    # a normal float8: a's mantissa rounded to m_bits, carrying into the exponent
    rounded = Add(Add(a, _u((1 << (drop - 1)) - 1)), _and(_shr(a, drop), 1))
    normal = st.let("normal", Sub(_shr(rounded, drop), _u((127 - fmt.bias) << m_bits)))
    # a subnormal one: the 24-bit significand shifted right by 24 - m_bits - e (1..31), rounded
    shift = st.let("shift", Cast(U32, Max(Min(Sub(IntImm(I32, 24 - m_bits), exp), IntImm(I32, 31)), IntImm(I32, 1))))
    sig = st.let("sig", _or(_and(a, 0x7FFFFF), _u(0x800000)))
    half = Sub(_shl(_u(1), Sub(shift, _u(1))), _u(1))
    tiny = st.let(
        "tiny", _call(U32, "shift_right", Add(Add(sig, half), _and(_call(U32, "shift_right", sig, shift), 1)), shift)
    )
    mag = st.let("mag", Select(GE(exp, IntImm(I32, 1)), normal, tiny, U32))
    mag = Select(GT(mag, _u(fmt.largest_code)), _u(fmt.overflow_code), mag, U32)
    mag = Select(GT(a, _u(0x7F800000)), _u(fmt.nan_code), mag, U32)
    st.result = Cast(U8, _or(_shl(_shr(u, 31), 7), mag))
    return st


def decode(dtype: str, byte: PrimExpr) -> PrimExpr:
    """The float32 value of the ``dtype`` (a float8 format) whose bits are ``byte``."""
    return Call(F32, f"float8_decode_{dtype}", (Cast(U8, byte) if byte.dtype != U8 else byte,))


def encode(dtype: str, f: PrimExpr) -> PrimExpr:
    """The bits (a uint8) of the ``dtype`` value nearest to float32 ``f``."""
    return Call(U8, f"float8_encode_{dtype}", (f if f.dtype == F32 else Cast(F32, f),))


def conversion_steps(op: str) -> _Steps:
    """The steps of the conversion a ``float8_decode_*`` / ``float8_encode_*`` call names."""
    kind, dtype = op.removeprefix("tir.").removeprefix("float8_").split("_", 1)
    return (decode_steps if kind == "decode" else encode_steps)(FORMATS[dtype])


def _encode_value(fmt: Format, value: float) -> int:
    """The code of the float8 nearest to ``value`` (a constant), rounded through float32 as
    ml_dtypes converts a double, then to nearest even as :func:`encode_steps` rounds."""
    try:
        (value,) = struct.unpack("<f", struct.pack("<f", value))
    except OverflowError:  # past float32's range: infinity
        value = math.copysign(math.inf, value)
    sign = 0x80 if math.copysign(1.0, value) < 0 else 0
    if math.isnan(value):
        return sign | fmt.nan_code
    if math.isinf(value):
        return sign | fmt.overflow_code
    if value == 0:
        return sign
    exponent = max(math.frexp(abs(value))[1] - 1, 1 - fmt.bias)  # of the leading bit, or subnormal
    quantum = 2.0 ** (exponent - fmt.mantissa)
    n = round(abs(value) / quantum)  # exact division by a power of two; round() ties to even
    if exponent == 1 - fmt.bias and n < (1 << fmt.mantissa):
        code = n  # subnormal
    else:
        code = ((exponent + fmt.bias) << fmt.mantissa) + n - (1 << fmt.mantissa)
    return sign | (fmt.overflow_code if code > fmt.largest_code else code)


def _decode_value(fmt: Format, byte: int) -> float:
    """:func:`decode` of a Python int, for constants."""
    sign = -1.0 if byte & 0x80 else 1.0
    exp, man = (byte >> fmt.mantissa) & ((1 << fmt.exponent) - 1), byte & ((1 << fmt.mantissa) - 1)
    if not fmt.ieee and byte & 0x7F == 0x7F or fmt.ieee and exp == (1 << fmt.exponent) - 1 and man:
        return math.copysign(math.nan, sign)
    if fmt.ieee and exp == (1 << fmt.exponent) - 1:
        return sign * math.inf
    if exp == 0:
        return sign * man * 2.0 ** (1 - fmt.bias - fmt.mantissa)
    return sign * (1 + man / (1 << fmt.mantissa)) * 2.0 ** (exp - fmt.bias)


def round_value(dtype: str, value: float) -> float:
    """The float8 ``dtype`` value nearest to ``value`` (a constant), as a Python float."""
    fmt = FORMATS[dtype]
    return _decode_value(fmt, _encode_value(fmt, value))


def rounded(dtype: str, f: PrimExpr) -> PrimExpr:
    """float32 ``f`` rounded to ``dtype`` (a float8 format), as a float32."""
    return decode(dtype, encode(dtype, f))


class _Float8(NarrowEmulator, BufferReplacer):
    """Every float8 expression becomes a float32 one holding a float8 value; float8 buffers are
    read and written as bytes."""

    def replacement(self, b: Buffer) -> dict | None:
        return {"dtype": U8} if is_float8(b.dtype) else None

    def narrow(self, dtype: str) -> bool:
        return is_float8(dtype)

    def rounded(self, dtype: str, f: PrimExpr) -> PrimExpr:
        return rounded(dtype, f)

    def widen(self, original: BufferLoad, load: BufferLoad) -> PrimExpr:
        return decode(original.dtype, BufferLoad(load.buffer, load.indices, U8, original.span))

    def store(self, s: BufferStore, out: BufferStore) -> Stmt:
        value = out.value if out.value.dtype == F32 else Cast(F32, out.value)
        return BufferStore(out.buffer, encode(s.buffer.dtype, value), out.indices, s.span)

    def store_bits(self, s: BufferStore, out: BufferStore) -> Stmt:
        return BufferStore(out.buffer, Cast(U8, out.value), out.indices, s.span)

    def reinterpret(self, e: Call) -> PrimExpr:
        src = e.args[0]
        if is_float8(e.dtype):  # bits given as a uint8 (or int8): decoded
            return decode(e.dtype, Cast(U8, self.visit_expr(src)))
        if isinstance(src, BufferLoad):  # the byte as stored
            load = StmtExprMutator.visit_BufferLoad(self, src)
            return Cast(e.dtype, BufferLoad(load.buffer, load.indices, U8, src.span))
        return Cast(e.dtype, encode(src.dtype, self.visit_expr(src)))


def legalize_float8(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with its float8 values computed in float32 and stored as bytes (module docstring);
    ``func`` itself when it has none. A float8 scalar parameter, or float8 on a ``target`` whose
    capability ``supports_float8`` is false, is a TIRVerifyError."""
    if target is not None and not target.capability("supports_float8"):
        from .capabilities import first_use

        use = first_use(func, is_float8)
        if use is not None:
            raise TIRVerifyError(
                with_span(
                    f"in function '{func.global_symbol}': {use[0]}; target '{target.kind.name}' has no {use[1]}",
                    use[2],
                )
            )
    for p in func.params:
        if p not in func.buffer_map and is_float8(p.dtype):
            raise TIRVerifyError(
                f"in function '{func.global_symbol}': scalar parameter '{p.name}' of {p.dtype}: pass float8 "
                "values in a tensor, or the scalar as float32"
            )
    return _Float8().legalize(func)


__all__ = ["FORMATS", "conversion_steps", "decode", "encode", "is_float8", "legalize_float8", "rounded"]
