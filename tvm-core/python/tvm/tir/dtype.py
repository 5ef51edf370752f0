"""DType strings: "bool", "int8".."int64", "uint8".."uint64", "float8_e4m3fn", "float8_e5m2",
"float16", "bfloat16", "float32", "float64", "handle"; vector types carry a lane suffix
("float32x4")."""

from __future__ import annotations

import re
from typing import Iterable

SCALAR_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
)
_RE = re.compile(r"^(bool|int|uint|float|bfloat|handle)(\d*)(?:x(\d+))?$")
#: 8-bit float formats (stored as bytes, computed in float32: tvm.tir.transform.float8)
FLOAT8_DTYPES = ("float8_e4m3fn", "float8_e5m2")
_RE_FLOAT8 = re.compile(r"^(float8_e4m3fn|float8_e5m2)(?:x(\d+))?$")


#: Low-precision dtypes other compilers know, and what to write here instead.
_LOW_PRECISION = (
    (
        re.compile(r"^float8_\w+(x\d+)?$"),
        "an 8-bit float other than float8_e4m3fn and float8_e5m2",
        "store its bits as uint8",
    ),
    (re.compile(r"^float[46]_\w+(x\d+)?$"), "a 4- or 6-bit float", "pack its bits into uint8"),
    (re.compile(r"^u?int[1-7](x\d+)?$"), "a sub-byte integer", "pack the values into int8 or uint8"),
)


def _invalid(dtype: str, message: str) -> ValueError:
    """The error for an invalid ``dtype``: what a low-precision dtype of other compilers is and
    what to write instead, else ``message``."""
    for pattern, what, instead in _LOW_PRECISION:
        if pattern.match(dtype):
            return ValueError(
                f"dtype '{dtype}' ({what}) is not supported by this implementation; {instead} and convert "
                f"with integer operations (supported: {', '.join(SCALAR_DTYPES + FLOAT8_DTYPES)})"
            )
    return ValueError(message)


def parse(dtype: str) -> tuple[str, int, int]:
    """(family, bits, lanes): ``"float32x4" -> ("float", 32, 4)``, ``"float8_e5m2" ->
    ("float8_e5m2", 8, 1)``; raises ValueError when invalid."""
    if not isinstance(dtype, str):
        raise ValueError(f"a dtype is a string such as 'float32', got {dtype!r}")
    m8 = _RE_FLOAT8.match(dtype)
    if m8:
        return m8.group(1), 8, _lanes_of(dtype, m8.group(2))
    m = _RE.match(dtype)
    if not m:
        raise _invalid(dtype, f"unknown dtype '{dtype}'")
    family, bits, lanes = m.group(1), m.group(2), m.group(3)
    if family == "bool":
        return "bool", 1, _lanes_of(dtype, lanes)
    if family == "handle":
        return "handle", 64, 1
    if not bits:
        raise ValueError(f"dtype '{dtype}' needs a bit width")
    b = int(bits)
    ok = {"int": (8, 16, 32, 64), "uint": (8, 16, 32, 64), "float": (16, 32, 64), "bfloat": (16,)}
    if b not in ok[family]:
        raise _invalid(dtype, f"unsupported dtype '{dtype}'")
    return family, b, _lanes_of(dtype, lanes)


def _lanes_of(dtype: str, lanes: str | None) -> int:
    """The lanes written after the ``x`` of ``dtype`` (1 when none): 2 to 64."""
    if not lanes:
        return 1
    if not 2 <= int(lanes) <= 64:
        scalar = dtype[: -len(lanes) - 1]
        hint = f"; one lane is the scalar '{scalar}'" if int(lanes) == 1 else ""
        raise ValueError(f"dtype '{dtype}': vector lanes must be 2 to 64{hint}")
    return int(lanes)


def is_float(d: str) -> bool:
    """float16/bfloat16/float32/float64 (any lanes)."""
    return d.startswith(("float", "bfloat"))


def is_int(d: str) -> bool:
    """Signed integer."""
    return d.startswith("int")


def is_uint(d: str) -> bool:
    """Unsigned integer."""
    return d.startswith("uint")


def is_integer(d: str) -> bool:
    """Signed or unsigned integer."""
    return is_int(d) or is_uint(d)


def is_bool(d: str) -> bool:
    """Boolean."""
    return d.startswith("bool")


def bits(d: str) -> int:
    """Bit width of one lane (bool counts as 8 in memory)."""
    fam, b, _ = parse(d)
    return 8 if fam == "bool" else b


#: The largest finite value of each float dtype whose constants are range-checked.
FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
    "float64": 1.7976931348623157e308,
}


#: The least magnitude that rounds to infinity in each narrower float dtype (the largest finite
#: value plus half a unit in the last place; round to nearest even).
_FLOAT_OVERFLOW = {
    "float16": (2 - 2**-11) * 2**15,
    "bfloat16": (2 - 2**-8) * 2**127,
    "float32": (2 - 2**-24) * 2**127,
}


#: Significand bits of the float dtypes: an integer of at least as many bits may not fit exactly.
_SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53, "float8_e4m3fn": 4, "float8_e5m2": 3}


def holds_every_value(d: str, src: str) -> bool:
    """Whether every value of scalar dtype ``src`` is also a value of ``d`` (int16 in int32,
    float16 in float32, int16 in float32; not int64 in int32, uint32 in int32, int32 in float32
    or a float in an integer dtype). A bool fits every dtype."""
    if d == src or is_bool(src):
        return True
    if is_float(src):
        return is_float(d) and bits(src) <= bits(d)
    if is_float(d):
        return bits(src) < _SIGNIFICAND_BITS[d]
    if is_uint(src) != is_uint(d):
        return is_uint(src) and bits(src) < bits(d)
    return bits(src) <= bits(d)


def fits(value: "int | float", d: str) -> bool:
    """Whether constant ``value`` can be a ``d``: an integer within the dtype's range, a float
    that does not round to infinity in it (infinities and NaN fit every float dtype)."""
    if is_integer(d) and not is_bool(d):
        lo, hi = integer_range(d)
        return lo <= value <= hi
    if is_float(d):
        limit = _FLOAT_OVERFLOW.get(element_of(d))
        return limit is None or not abs(value) >= limit or abs(value) == float("inf")
    return True


def check_fits(value: "int | float", d: str) -> None:
    """Raises ValueError naming the problem when constant ``value`` cannot be a ``d``."""
    if fits(value, d):
        return
    if is_float(d):
        raise ValueError(
            f"{value} does not fit in {d}: it rounds to infinity (the largest {d} is {FLOAT_MAX[element_of(d)]})"
        )
    lo, hi = integer_range(d)
    raise ValueError(f"{value} does not fit in {d} (its range is {lo} to {hi})")


#: (bits of precision, smallest normal exponent, largest exponent) of the floats :func:`round_float` rounds to
_FLOAT_FORMATS = {"float32": (24, -126, 127), "float16": (11, -14, 15), "bfloat16": (8, -126, 127)}


def round_float(d: str, value: float) -> "float | None":
    """``value`` rounded to float dtype ``d`` (to nearest even; subnormals kept; infinity past its
    largest value, or NaN for a float8 without infinities; NaN kept) as a Python float, as NumPy
    and ml_dtypes convert a float64; None for a dtype that is not a float."""
    import math

    e = element_of(d) if is_float(d) else ""
    value = float(value)
    if e in FLOAT8_DTYPES:
        from .transform.float8 import round_value

        return round_value(e, value)
    if e == "float64" or (e and not math.isfinite(value)):
        return value
    if e not in _FLOAT_FORMATS:
        return None
    if value == 0:
        return value
    if e == "bfloat16":  # through float32 first, as ml_dtypes and a float32-to-bfloat16 conversion
        value = round_float("float32", value)
        if not math.isfinite(value):
            return value
    precision, min_exponent, max_exponent = _FLOAT_FORMATS[e]
    exponent = max(math.frexp(value)[1] - 1, min_exponent)
    ulp = math.ldexp(1.0, exponent - precision + 1)
    rounded = round(value / ulp) * ulp  # value / ulp is exact; round() ties to even
    largest = math.ldexp(2.0 - math.ldexp(1.0, 1 - precision), max_exponent)
    return math.copysign(math.inf, value) if abs(rounded) > largest else math.copysign(rounded, value)


def wrapped(value: int, d: str) -> int:
    """``value`` wrapped into integer dtype ``d`` (two's complement), as its arithmetic wraps."""
    lo, hi = integer_range(d)
    return (value - lo) % (hi - lo + 1) + lo


def integer_range(d: str) -> tuple[int, int]:
    """The least and the largest value of integer dtype ``d``."""
    b = bits(d)
    return (0, (1 << b) - 1) if is_uint(d) else (-(1 << (b - 1)), (1 << (b - 1)) - 1)


def nbytes(d: str) -> int:
    """Bytes one value of ``d`` (all its lanes) takes in memory."""
    return bits(d) * lanes(d) // 8


def lanes(d: str) -> int:
    """Vector lanes."""
    return parse(d)[2]


def access_lanes(indices: Iterable) -> int:
    """Lanes of a buffer access: those of its widest index (a ``T.ramp`` index reads or writes
    that many elements), 1 without a vector index."""
    return max((lanes(i.dtype) for i in indices), default=1)


def element_of(d: str) -> str:
    """The scalar dtype of a vector dtype."""
    return d.split("x")[0] if "x" in d else d


def with_lanes(d: str, n: int) -> str:
    """``element_of(d)`` with ``n`` lanes."""
    e = element_of(d)
    return e if n == 1 else f"{e}x{n}"
