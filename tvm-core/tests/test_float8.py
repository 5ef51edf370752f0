"""float8_e4m3fn and float8_e5m2: bytes in memory, float32 in arithmetic (tvm.tir.transform.float8),
bit for bit against ml_dtypes on the CPU target."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T
from tvm.tir.transform.verify import TIRVerifyError

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (pip install ml_dtypes) gives the reference")
FORMATS = ["float8_e4m3fn", "float8_e5m2"]


def _convert(dtype: str, n: int):
    @T.prim_func
    def convert(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), dtype), C: T.Buffer((n,), "float32")):
        for i in range(n):
            B[i] = T.Cast(dtype, A[i])
            C[i] = T.Cast("float32", B[i])

    return tvm.compile(convert, target="c")["convert"]


@pytest.mark.parametrize("dtype", FORMATS)
def test_every_rounding_case_matches_ml_dtypes(dtype):
    """Random float32 bit patterns (every exponent, NaNs and infinities included), the midpoints
    between neighbouring float8 values and their neighbours: encoded bit for bit, decoded exactly."""
    f8 = getattr(ml_dtypes, dtype)
    codes = np.arange(256, dtype=np.uint8).view(f8).astype("float64")
    finite = np.unique(codes[np.isfinite(codes)])
    mid = (finite[:-1] + finite[1:]) / 2
    near = np.concatenate(
        [mid, np.nextafter(mid.astype("float32"), np.inf), np.nextafter(mid.astype("float32"), -np.inf)]
    )
    bits = np.random.default_rng(0).integers(0, 2**32, 1 << 16, dtype=np.uint64).astype(np.uint32).view("float32")
    a = np.concatenate([bits, near.astype("float32"), -near.astype("float32"), [0.0, -0.0, np.inf, -np.inf]]).astype(
        "float32"
    )
    n = a.size
    b, c = tvm.runtime.empty((n,), dtype), tvm.runtime.empty((n,), "float32")
    _convert(dtype, n)(tvm.runtime.tensor(a), b, c)
    want = a.astype(f8)
    np.testing.assert_array_equal(b.numpy().view("uint8"), want.view("uint8"))
    np.testing.assert_array_equal(c.numpy().view("uint32"), want.astype("float32").view("uint32"))


@pytest.mark.parametrize("dtype", FORMATS)
def test_every_code_decodes_like_ml_dtypes(dtype):
    @T.prim_func
    def decode(A: T.Buffer((256,), "uint8"), B: T.Buffer((256,), "float32")):
        for i in range(256):
            B[i] = T.Cast("float32", T.reinterpret(dtype, A[i]))

    codes = np.arange(256, dtype=np.uint8)
    out = tvm.runtime.empty((256,), "float32")
    tvm.compile(decode, target="c")["decode"](tvm.runtime.tensor(codes), out)
    want = codes.view(getattr(ml_dtypes, dtype)).astype("float32")
    same = (out.numpy().view("uint32") == want.view("uint32")) | (np.isnan(out.numpy()) & np.isnan(want))
    assert same.all(), codes[~same]


@pytest.mark.parametrize("dtype", FORMATS)
def test_arithmetic_is_rounded_per_operation(dtype):
    @T.prim_func
    def fma_like(A: T.Buffer((64,), dtype), B: T.Buffer((64,), dtype), C: T.Buffer((64,), dtype)):
        for i in range(64):
            x = A[i] * B[i]
            C[i] = x + T.Cast(dtype, 0.375) - A[i] / B[i]

    f8 = getattr(ml_dtypes, dtype)
    rng = np.random.default_rng(1)
    a, b = (rng.uniform(-8, 8, 64).astype(f8) for _ in range(2))
    c = tvm.runtime.empty((64,), dtype)
    tvm.compile(fma_like, target="c")["fma_like"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    want = (a * b + f8(0.375)) - a / b
    np.testing.assert_array_equal(c.numpy().view("uint8"), want.view("uint8"))


def test_float8_errors_name_the_problem():
    with pytest.raises(TIRVerifyError, match="scalar parameter 's' of float8_e4m3fn"):

        @T.prim_func
        def scalar(A: T.Buffer((4,), "float8_e4m3fn"), s: T.float8_e4m3fn):
            for i in range(4):
                A[i] = s

        tvm.compile(scalar, target="c")
    with pytest.raises(TVMScriptError, match="'float8_e4m3fnuz' .* other than float8_e4m3fn and float8_e5m2"):

        @T.prim_func
        def other(A: T.Buffer((4,), "float8_e4m3fnuz")):
            A[0] = A[1]


def test_bits_stored_through_reinterpret_are_kept():
    """A float8 store of ``T.reinterpret`` of bits writes those bits (a NaN keeps its payload)."""

    @T.prim_func
    def copy_bits(A: T.Buffer((256,), "uint8"), B: T.Buffer((256,), "float8_e5m2")):
        for i in range(256):
            B[i] = T.reinterpret("float8_e5m2", A[i])

    codes = np.arange(256, dtype=np.uint8)
    out = tvm.runtime.empty((256,), "float8_e5m2")
    tvm.compile(copy_bits, target="c")["copy_bits"](tvm.runtime.tensor(codes), out)
    np.testing.assert_array_equal(out.numpy().view("uint8"), codes)


def test_constants_round_like_ml_dtypes():
    @T.prim_func
    def constants(B: T.Buffer((3,), "float8_e4m3fn")):
        B[0] = T.float8_e4m3fn(1.0625 + 1e-12)  # through float32: a tie, to even
        B[1] = T.float8_e4m3fn(464.0)
        B[2] = T.float8_e4m3fn(-1e300)

    out = tvm.runtime.empty((3,), "float8_e4m3fn")
    tvm.compile(constants, target="c")["constants"](out)
    want = np.array([1.0625 + 1e-12, 464.0, -1e300]).astype(ml_dtypes.float8_e4m3fn)
    np.testing.assert_array_equal(out.numpy().view("uint8"), want.view("uint8"))
