"""The CPU target's C says only what TIR means, so gcc -O3 cannot build on a promise the kernel
does not keep: vectorized loops whose iterations depend on each other get no `omp simd`, values
inside an index keep TIR's wrapping, bools read from other bytes are any nonzero byte, long
unrolls are partial, and a parallel loop inside a vectorized one is no OpenMP construct."""

from __future__ import annotations

import numpy as np

import tvm
from tvm.script import tir as T


@T.prim_func
def shift_by(A: T.Buffer((16,), "int32"), m: T.int32):
    for i in T.vectorized(16 - m):
        A[i + m] = A[i] + 1


@T.prim_func
def histogram(A: T.Buffer((4096,), "int32"), H: T.Buffer((8,), "int32")):
    for i in T.vectorized(4096):
        H[A[i] & 7] = H[A[i] & 7] + 1


@T.prim_func
def scale(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.vectorized(64):
        B[i] = B[i] + A[i] * T.float32(2)


def test_vectorized_loops_whose_iterations_depend_run_in_order():
    """`#pragma omp simd` told gcc the iterations were independent: a run-time distance and a
    histogram came out neither serial nor vector-wise (and differently per -mcpu)."""
    a = np.zeros(16, "int32")
    tvm.compile(shift_by, target="c")(a, 1)
    np.testing.assert_array_equal(a, np.arange(16))
    values = np.random.default_rng(3).integers(0, 1000, 4096).astype("int32")
    for target in ("c", "c -mcpu=skylake-avx512"):
        h = np.zeros(8, "int32")
        tvm.compile(histogram, target=target)(values, h)
        np.testing.assert_array_equal(h, np.bincount(values & 7, minlength=8))
    assert "#pragma omp simd" in tvm.compile(scale, target="c").inspect_source()  # independent: kept


@T.prim_func
def widened(X: T.Buffer((1,), "int32"), A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "float32")):
    B[0] = A[T.Cast("int64", X[0] + 1) + T.int64(2**31)]


def test_a_value_widened_inside_an_index_keeps_its_wrapping():
    """`A[int64(x + 1) + 2**31]` with x = INT_MAX is A[0] in TIR; the access was printed as plain
    C, which gcc widened before adding (element 2**32: a crash past the bounds check)."""
    b = np.zeros(1, "float32")
    tvm.compile(widened, target="c")(np.array([2**31 - 1], "int32"), np.array([10], "float32"), b)
    assert b[0] == 10


@T.prim_func
def bools_of_bytes(A: T.Buffer((8,), "uint8"), B: T.Buffer((2, 8), "int32")):
    L = T.alloc_buffer((8,), "uint8", scope="local")
    V = T.decl_buffer((8,), "bool", data=L.data, scope="local")
    for i in range(8):
        L[i] = A[i]
    for i in range(8):
        B[0, i] = T.Cast("int32", V[i])
        B[1, i] = T.Cast("int32", T.reinterpret("bool", A[i]))


def test_bools_viewing_other_bytes_are_true_when_nonzero():
    a = np.array([0, 1, 2, 3, 255, 4, 0, 128], "uint8")
    b = np.zeros((2, 8), "int32")
    tvm.compile(bools_of_bytes, target="c")(a, b)
    np.testing.assert_array_equal(b, np.stack([a.view(np.bool_)] * 2).astype("int32"))


@T.prim_func
def long_unroll(A: T.Buffer((8192,), "float32"), B: T.Buffer((8192,), "float32")):
    for i in T.unroll(8192):
        B[i] = A[i] * T.float32(2) + T.float32(1)


@T.prim_func
def parallel_in_vectorized(A: T.Buffer((4, 8), "int32")):
    for i in T.vectorized(4):
        for j in T.parallel(8):
            A[i, j] = i * 8 + j


def test_long_unrolls_and_parallel_loops_in_vectorized_ones_compile():
    """`#pragma GCC unroll 8192` took gcc two minutes (the count is capped now); `omp parallel`
    inside `omp simd` is an error gcc reported about the generated C."""
    mod = tvm.compile(long_unroll, target="c")
    assert "#pragma GCC unroll 256" in mod.inspect_source()
    a = np.arange(8192, dtype="float32")
    b = np.zeros_like(a)
    mod(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)
    out = np.zeros((4, 8), "int32")
    tvm.compile(parallel_in_vectorized, target="c")(out)
    np.testing.assert_array_equal(out, np.arange(32).reshape(4, 8))
