"""TVMScript kernels (Apache TVM's loop-level syntax) shared by the script and tir tests."""

from __future__ import annotations

from tvm.script import tir as T
from tvm.tir.dtype import SCALAR_DTYPES


def elementwise(dtype: str):
    """C[i] = A[i] + B[i] (xor for bool) over a symbolic length, in ``dtype``."""
    if dtype == "bool":

        @T.prim_func
        def ew_bool(A: T.Buffer((128,), "bool"), B: T.Buffer((128,), "bool"), C: T.Buffer((128,), "bool")):
            for i in range(128):
                C[i] = (A[i] and not B[i]) or (not A[i] and B[i])

        return ew_bool

    @T.prim_func
    def ew(a: T.handle, b: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        C = T.match_buffer(c, (n,), dtype)
        for i in range(n):
            C[i] = A[i] + B[i]

    return ew


ELEMENTWISE = {d: elementwise(d) for d in SCALAR_DTYPES}


@T.prim_func
def row_sum(A: T.Buffer((64, 128), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in T.parallel(64):
        B[i] = T.float32(0)
        for j in range(128):
            B[i] = B[i] + A[i, j]


@T.prim_func
def row_softmax(A: T.Buffer((64, 128), "float32"), B: T.Buffer((64, 128), "float32")):
    for i in T.parallel(64):
        mx = T.alloc_buffer((1,), "float32", scope="local")
        s = T.alloc_buffer((1,), "float32", scope="local")
        mx[0] = T.min_value("float32")
        for j in range(128):
            mx[0] = T.max(mx[0], A[i, j])
        s[0] = T.float32(0)
        for j in range(128):
            s[0] += T.exp(A[i, j] - mx[0])
        for j in T.vectorized(128):
            B[i, j] = T.exp(A[i, j] - mx[0]) / s[0]


@T.prim_func
def tiled_matmul(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"global_symbol": "tiled_matmul", "tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 64), "float32")
    B = T.match_buffer(b, (64, 64), "float32")
    C = T.match_buffer(c, (n, 64), "float32")
    for bx in T.thread_binding((n + 15) // 16, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            As = T.alloc_buffer((16, 64), "float32", scope="shared")
            acc = T.alloc_buffer((64,), "float32", scope="local")
            for k in range(64):
                if bx * 16 + tx < n:
                    As[tx, k] = A[bx * 16 + tx, k]
            T.tvm_storage_sync("shared")
            for j in range(64):
                acc[j] = T.float32(0)
                for k in T.unroll(64):
                    acc[j] = acc[j] + As[tx, k] * B[k, j]
            for j in range(64):
                if bx * 16 + tx < n:
                    C[bx * 16 + tx, j] = acc[j]


@T.prim_func
def two_kernels(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), alpha: T.float32):
    for bx in T.thread_binding(0, 8, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            B[bx * 128 + tx] = A[bx * 128 + tx] * alpha
    for tx in T.thread_binding(256, thread="threadIdx.x"):
        for k in range(4):
            A[tx * 4 + k] = T.sigmoid(B[tx * 4 + k])


@T.prim_func
def symbolic_2d(a: T.handle, b: T.handle, m: T.int64):
    n = T.int64()
    A = T.match_buffer(a, (n, m), "float16")
    B = T.match_buffer(b, (n, m), "float16")
    for i, j in T.grid(n, m):
        x = A[i, j]
        B[i, j] = T.if_then_else(x > T.float16(0), x, T.float16(0))


@T.prim_func(private=True)
def clamp_cast(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int8")):
    for i in range(16):
        B[i] = T.Cast("int8", T.min(T.max(A[i], T.float32(-128)), T.float32(127)))


@T.prim_func
def gelu_like(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            v: T.float32 = A[bx * 128 + tx]
            B[bx * 128 + tx] = v * T.float32(0.5) * (T.float32(1) + T.erf(v * T.float32(0.7071067811865476)))
