"""Float semantics on the CPU: T.min / T.max pick by ``<`` / ``>`` as TIR defines them (a NaN
second operand is the result, a NaN first operand is not, and of -0.0 and 0.0 the second is);
``x // 1.0`` is ``floor(x)`` for a finite ``x`` (NaN for an infinite one, as Python's ``//``
gives), never simplified to ``x``."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import tir as T


def cpu_min_max(dtype: str):
    @T.prim_func
    def min_max(A: T.Buffer((8,), dtype), B: T.Buffer((8,), dtype), C: T.Buffer((8,), dtype), D: T.Buffer((8,), dtype)):
        for i in range(8):
            C[i] = T.min(A[i], B[i])
            D[i] = T.max(A[i], B[i])

    return min_max


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_cpu_float_min_max_pick_like_tir(dtype, private_cache):
    a = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, np.inf, 2.0, -3.0], dtype)
    b = np.array([1.0, np.nan, np.nan, 0.0, -0.0, -np.inf, 5.0, -4.0], dtype)
    mod = tvm.compile(cpu_min_max(dtype), target="c")
    c, d = tvm.runtime.empty((8,), dtype), tvm.runtime.empty((8,), dtype)
    mod["min_max"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c, d)
    bits = f"uint{np.dtype(dtype).itemsize * 8}"
    np.testing.assert_array_equal(c.numpy().view(bits), np.where(a < b, a, b).view(bits))
    np.testing.assert_array_equal(d.numpy().view(bits), np.where(a > b, a, b).view(bits))


def test_float_floor_division_by_one_is_floor(private_cache):
    @T.prim_func
    def floor_by_one(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
        for i in range(6):
            B[i] = A[i] // T.float32(1)

    a = np.array([-3.8776412, 2.5, -0.5, 7.0, np.inf, np.nan], "float32")
    b = tvm.runtime.empty((6,), "float32")
    tvm.compile(floor_by_one, target="c")["floor_by_one"](tvm.runtime.tensor(a), b)
    np.testing.assert_array_equal(b.numpy(), a // np.float32(1))
    np.testing.assert_array_equal(b.numpy()[:4], np.floor(a[:4]))


def test_adding_zero_keeps_the_sign_of_a_negative_zero_sum(private_cache):
    """``x + 0.0`` is ``0.0`` for ``x = -0.0``: the simplifier drops only ``x + -0.0``."""

    @T.prim_func
    def plus_zero(A: T.Buffer((3,), "float32"), B: T.Buffer((3,), "float32"), C: T.Buffer((3,), "float32")):
        for i in range(3):
            B[i] = A[i] + T.float32(0)
            C[i] = A[i] + T.float32(-0.0)

    a = np.array([-0.0, 0.0, 2.5], "float32")
    b, c = tvm.runtime.empty((3,), "float32"), tvm.runtime.empty((3,), "float32")
    tvm.compile(plus_zero, target="c")["plus_zero"](tvm.runtime.tensor(a), b, c)
    np.testing.assert_array_equal(np.signbit(b.numpy()), np.signbit(a + np.float32(0)))
    np.testing.assert_array_equal(np.signbit(c.numpy()), np.signbit(a + np.float32(-0.0)))


@T.prim_func
def negate(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = -A[i]
        C[i] = T.float32(1) / -A[i]


def test_negating_zero_gives_negative_zero(private_cache):
    """``-x`` was built as ``0 - x``, which is +0.0 for x = +0.0 (C, NumPy and IEEE 754 give -0.0:
    visible in 1 / -x, copysign, atan2)."""
    a = np.array([0.0, -0.0, 2.0, -np.inf], "float32")
    b, c = np.zeros(4, "float32"), np.zeros(4, "float32")
    tvm.compile(negate, target="c")["negate"](a, b, c)
    np.testing.assert_array_equal(np.signbit(b), np.signbit(-a))
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(c, np.float32(1) / -a)
    x = tvm.tir.Var("x", "float32")
    assert tvm.tir.structural_equal(-x, x * tvm.tir.FloatImm("float32", -1.0))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_remainders_are_pythons_and_cs(dtype, private_cache):
    """``a % b`` and ``T.floormod`` of floats (refused before) give NumPy's ``%``, a zero remainder
    with the divisor's sign; ``T.truncmod`` gives ``np.fmod``."""

    @T.prim_func
    def remainders(
        A: T.Buffer((8,), dtype),
        B: T.Buffer((8,), dtype),
        C: T.Buffer((8,), dtype),
        D: T.Buffer((8,), dtype),
        E: T.Buffer((8,), dtype),
    ):
        for i in range(8):
            C[i] = A[i] % B[i]
            D[i] = T.floormod(A[i], B[i])
            E[i] = T.truncmod(A[i], B[i])

    a = np.array([4, -4, 4, -4, 5.5, -5.5, 5.5, 0.0], dtype)
    b = np.array([2, 2, -2, -2, 2, 2, -2, -3], dtype)
    c, d, e = (np.zeros(8, dtype) for _ in range(3))
    tvm.compile(remainders, target="c")["remainders"](a, b, c, d, e)
    bits = f"uint{np.dtype(dtype).itemsize * 8}"
    for got, want in ((c, a % b), (d, a % b), (e, np.fmod(a, b))):
        np.testing.assert_array_equal(got.view(bits), want.view(bits))
    with pytest.raises(TypeError, match="truncdiv needs integer operands, got float32"):
        tvm.tir.truncdiv(tvm.tir.const(1.0, "float32"), tvm.tir.const(2.0, "float32"))


def test_float_classes_are_zero_or_one_as_integers(private_cache):
    """glibc's isinf gives -1 for -inf: cast to an integer, T.isinf(-inf) was -1 on the CPU."""

    @T.prim_func
    def classes(A: T.Buffer((4,), "float32"), B: T.Buffer((4, 3), "int32")):
        for i in range(4):
            B[i, 0] = T.Cast("int32", T.isinf(A[i]))
            B[i, 1] = T.Cast("int32", T.isfinite(A[i]))
            B[i, 2] = T.Cast("int32", T.isnan(A[i]))

    a = np.array([-np.inf, np.inf, -1.5, np.nan], "float32")
    b = np.zeros((4, 3), "int32")
    tvm.compile(classes, target="c")(a, b)
    np.testing.assert_array_equal(b, np.stack([np.isinf(a), np.isfinite(a), np.isnan(a)], axis=1).astype("int32"))
