"""TVMScript kernels the OpenCL tests compile (thread-bound loops, shared memory, barriers): the
OpenCL-specific ones written here, the standard ones taken from :mod:`tvm.testing.kernels`."""

from __future__ import annotations

from typing import Any

from tvm.script import tir as T
from tvm.testing import kernels as zoo


def elementwise(dtype: str) -> Any:
    """``C = A * B + A`` over a symbolic length n, 64 work-items per group."""

    @T.prim_func
    def ew(a: T.handle, b: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        C = T.match_buffer(c, (n,), dtype)
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    C[bx * 64 + tx] = A[bx * 64 + tx] * B[bx * 64 + tx] + A[bx * 64 + tx]

    return ew


def unary_math(dtype: str) -> Any:
    """``B = exp(A) * 0.5 + sqrt(|A|) - tanh(A) + floor(A)``."""

    @T.prim_func
    def um(A: T.Buffer((256,), dtype), B: T.Buffer((256,), dtype)):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                B[bx * 64 + tx] = (
                    T.exp(A[bx * 64 + tx]) * T.Cast(dtype, 0.5)
                    + T.sqrt(T.fabs(A[bx * 64 + tx]))
                    - T.tanh(A[bx * 64 + tx])
                    + T.floor(A[bx * 64 + tx])
                )

    return um


@T.prim_func
def compare_select(
    A: T.Buffer((128,), "float32"),
    B: T.Buffer((128,), "float32"),
    M: T.Buffer((128,), "bool"),
    C: T.Buffer((128,), "float32"),
):
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        M[tx] = A[tx] < B[tx]
        C[tx] = T.Select(M[tx], A[tx], B[tx])


@T.prim_func
def axpy(a: T.handle, x: T.handle, y: T.handle, alpha: T.float32, shift: T.int64):
    n = T.int32()
    X = T.match_buffer(x, (n,), "float32")
    Y = T.match_buffer(y, (n,), "float32")
    Z = T.match_buffer(a, (n,), "float32")
    for bx in T.thread_binding((n + 31) // 32, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            if bx * 32 + tx < n:
                Z[bx * 32 + tx] = alpha * X[bx * 32 + tx] + Y[bx * 32 + tx] + T.Cast("float32", shift)


# Row sum, row softmax and tiled matmul are the shared kernels (tvm.testing.kernels), under the
# names these tests use; the sizes not given are symbolic (bound from the arguments).
# One work-group of 128 per 128-wide row: each work-item loads one element, then a tree reduction
# in __local memory with barriers between steps.
row_sum = zoo.row_sum(cols=128, block=128, name="row_sum")
# Row softmax: one work-group of 64 per row, max and sum reduced in __local memory.
softmax = zoo.row_softmax(block=64, name="softmax")
# C[M, N] = A[M, K] @ B[K, N] with 16x16 tiles staged in __local memory (M, N, K multiples of 16).
matmul = zoo.matmul_tiled(tile=16, name="matmul")


@T.prim_func
def dyn_reverse(a: T.handle, b: T.handle):
    """Reverse each block of w elements through a __local tile of launch-time size w."""
    w = T.int32()
    g = T.int32()
    A = T.match_buffer(a, (g, w), "int32")
    B = T.match_buffer(b, (g, w), "int32")
    for bx in T.thread_binding(g, thread="blockIdx.x"):
        tile = T.alloc_buffer((w,), "int32", scope="shared")
        for tx in T.thread_binding(w, thread="threadIdx.x"):
            tile[tx] = A[bx, tx]
            T.tvm_storage_sync("shared")
            B[bx, tx] = tile[w - 1 - tx]


@T.prim_func
def half_cast(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float16"), C: T.Buffer((256,), "float32")):
    """float32 -> float16 (stored with vstore_half) -> float32 through a half __local tile."""
    for tx in T.thread_binding(256, thread="threadIdx.x"):
        tile = T.alloc_buffer((256,), "float16", scope="shared")
        tile[tx] = T.Cast("float16", A[tx] * T.float32(3.0))
        T.tvm_storage_sync("shared")
        B[tx] = tile[255 - tx]
        C[tx] = T.Cast("float32", B[tx]) + T.float32(1.0)


@T.prim_func
def int_ops(
    A: T.Buffer((64,), "int32"),
    B: T.Buffer((64,), "int32"),
    D: T.Buffer((64,), "int32"),
    M: T.Buffer((64,), "int32"),
    X: T.Buffer((64,), "int64"),
):
    """Python-style floor division/modulo (negative operands), shifts, bit ops, int64 math."""
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        D[tx] = T.floordiv(A[tx], B[tx]) + T.floordiv(A[tx], 4)
        M[tx] = T.floormod(A[tx], B[tx]) + T.floormod(A[tx], 8)
        X[tx] = T.Cast("int64", A[tx]) * T.int64(4000000000) + T.Cast("int64", T.bitwise_xor(A[tx], B[tx]))


@T.prim_func
def more_math(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    """More built-ins, an unrolled loop and float predicates."""
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        acc = T.alloc_buffer((1,), "float32", scope="local")
        acc[0] = T.float32(0)
        for k in T.unroll(4):
            acc[0] = acc[0] + T.Cast("float32", k) * T.float32(0.25)
        B[tx] = (
            T.sigmoid(A[tx])
            + T.rsqrt(T.fabs(A[tx]) + T.float32(1))
            + T.pow(T.fabs(A[tx]), T.float32(1.5))
            + T.atan2(A[tx], T.float32(2))
            + T.erf(A[tx])
            + T.log1p(T.fabs(A[tx]))
            + T.exp2(A[tx])
            + T.round(A[tx] * T.float32(3))
            + acc[0]
        )
        C[tx] = T.if_then_else(T.isnan(A[tx] / A[tx]), T.float32(1), T.float32(0)) + T.fmod(A[tx], T.float32(0.7))
