"""End to end on the CPU: TVMScript -> lower -> C codegen -> run, compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.runtime import numpy_dtype
from tvm.script import tir as T
from tvm.testing.kernels import reference_softmax
from tvm.tir.dtype import SCALAR_DTYPES

import script_kernels as K


pytestmark = pytest.mark.usefixtures("private_cache")


def rand(shape, dtype, rng=np.random.default_rng(0)):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 50, shape).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(numpy_dtype(dtype))


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_elementwise(dtype):
    f = K.ELEMENTWISE[dtype]
    mod = tvm.compile(f, "c")
    n = 128 if dtype == "bool" else 77
    a, b = rand(n, dtype), rand(n, dtype)
    c = tvm.runtime.empty((n,), dtype)
    mod[f.name](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    ref = np.logical_xor(a, b) if dtype == "bool" else (a + b).astype(a.dtype)
    np.testing.assert_array_equal(c.numpy(), ref)


def test_row_sum_and_softmax():
    a = rand((64, 128), "float32")
    s = tvm.runtime.empty((64,), "float32")
    tvm.compile(K.row_sum, "c")["row_sum"](tvm.runtime.tensor(a), s)
    np.testing.assert_allclose(s.numpy(), a.sum(1), rtol=1e-5, atol=1e-4)
    out = tvm.runtime.empty((64, 128), "float32")
    tvm.compile(K.row_softmax, "c")["row_softmax"](tvm.runtime.tensor(a), out)
    np.testing.assert_allclose(out.numpy(), reference_softmax(a), rtol=1e-5, atol=1e-7)


def test_symbolic_int64_shapes_and_scalar_param():
    mod = tvm.compile(K.symbolic_2d, "c")
    for n, m in ((3, 5), (8, 1)):
        a = rand((n, m), "float16")
        b = tvm.runtime.empty((n, m), "float16")
        mod["symbolic_2d"](tvm.runtime.tensor(a), b, m)
        np.testing.assert_array_equal(b.numpy(), np.maximum(a, 0))


def test_cast_min_max():
    a = np.array([-300, -128.5, -3.7, 0, 2.2, 126.9, 127.5, 1000] * 2, dtype="float32")
    b = tvm.runtime.empty((16,), "int8")
    tvm.compile(K.clamp_cast, "c")["clamp_cast"](tvm.runtime.tensor(a), b)
    np.testing.assert_array_equal(b.numpy(), np.clip(a, -128, 127).astype("int8"))


def test_min_and_max_of_bools():
    """T.max/T.min of bools are or/and (False < True), as Apache TVM reads them."""

    @T.prim_func
    def bools(
        a: T.Buffer((4,), "bool"), b: T.Buffer((4,), "bool"), c: T.Buffer((4,), "bool"), d: T.Buffer((4,), "bool")
    ):
        for i in range(4):
            c[i] = T.max(a[i], b[i])
            d[i] = T.min(a[i], b[i])

    x, y = np.array([0, 1, 0, 1], bool), np.array([0, 0, 1, 1], bool)
    c, d = np.zeros(4, bool), np.zeros(4, bool)
    tvm.compile(bools, target="c")["bools"](x, y, c, d)
    np.testing.assert_array_equal(c, np.maximum(x, y))
    np.testing.assert_array_equal(d, np.minimum(x, y))


def test_math_intrinsics_and_integer_division():
    @T.prim_func
    def f(
        A: T.Buffer((32,), "float32"),
        B: T.Buffer((32,), "float32"),
        I: T.Buffer((32,), "int32"),
        J: T.Buffer((32,), "int32"),
    ):
        for i in range(32):
            B[i] = (
                T.exp(A[i])
                + T.sqrt(T.fabs(A[i]))
                + T.tanh(A[i])
                + T.sigmoid(A[i])
                + T.floor(A[i])
                + T.erf(A[i])
                + T.pow(T.fabs(A[i]), T.float32(1.5))
            )
            J[i] = (
                T.floordiv(I[i], 3) * 1000 + T.floormod(I[i], 3) * 100 + T.truncdiv(I[i], 3) * 10 + T.truncmod(I[i], 3)
            )

    from math import erf

    a = rand(32, "float32")
    i = np.arange(-16, 16, dtype="int32")
    b = tvm.runtime.empty((32,), "float32")
    j = tvm.runtime.empty((32,), "int32")
    tvm.compile(f, "c")["f"](tvm.runtime.tensor(a), b, tvm.runtime.tensor(i), j)
    ref = (
        np.exp(a)
        + np.sqrt(np.abs(a))
        + np.tanh(a)
        + 1 / (1 + np.exp(-a))
        + np.floor(a)
        + np.vectorize(erf)(a)
        + np.abs(a) ** 1.5
    )
    np.testing.assert_allclose(b.numpy(), ref.astype("float32"), rtol=1e-5, atol=1e-5)
    tdiv = np.trunc(i / 3).astype("int32")
    ref_j = (i // 3) * 1000 + (i % 3) * 100 + tdiv * 10 + (i - tdiv * 3)
    np.testing.assert_array_equal(j.numpy(), ref_j)


def test_condition_hints_keep_their_condition():
    """``T.likely``, ``T.tvm_thread_invariant`` and ``T.ignore_loop_partition`` are hints: the
    branch they wrap runs exactly when the condition holds."""

    @T.prim_func
    def f(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
        for i in range(16):
            B[i] = 0
            if T.ignore_loop_partition(i < 10):
                B[i] = B[i] + 1
            if T.tvm_thread_invariant(A[0] > 0):
                B[i] = B[i] + 10
            if T.likely(A[i] % 2 == 0):
                B[i] = B[i] + 100

    a = np.arange(16, dtype="int32") - 3
    for first in (5, -5):
        a[0] = first
        b = tvm.runtime.empty((16,), "int32")
        tvm.compile(f, "c")["f"](tvm.runtime.tensor(a), b)
        ref = (np.arange(16) < 10) * 1 + (a[0] > 0) * 10 + (a % 2 == 0) * 100
        np.testing.assert_array_equal(b.numpy(), ref)
