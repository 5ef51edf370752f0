"""Standard GPU-style TVMScript kernels that every device backend's tests and benchmarks share.

Each factory returns a fresh ``PrimFunc`` for the given sizes, dtype and block size, written with
thread bindings (``blockIdx.x`` / ``threadIdx.x``), shared memory and barriers, so one kernel text
exercises every backend's code generator. ``reference_*`` functions give the NumPy result.
"""

from __future__ import annotations

import numpy as np

from tvm.script import tir as T


def vector_add(dtype: str = "float32", block: int = 64):
    """``C[i] = A[i] + B[i]`` over a symbolic length ``n``, one thread per element."""

    @T.prim_func
    def vector_add(a: T.handle, b: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        C = T.match_buffer(c, (n,), dtype)
        for bx in T.thread_binding((n + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                if bx * block + tx < n:
                    C[bx * block + tx] = A[bx * block + tx] + B[bx * block + tx]

    return vector_add


def row_sum(rows: int, cols: int, dtype: str = "float32", block: int = 64):
    """``B[r] = sum(A[r, :])``: one block per row, strided partial sums then a tree reduction in
    shared memory with barriers. ``block`` must be a power of two."""
    assert block & (block - 1) == 0, "block must be a power of two"
    steps = block.bit_length() - 1

    @T.prim_func
    def row_sum(A: T.Buffer((rows, cols), dtype), B: T.Buffer((rows,), dtype)):
        for bx in T.thread_binding(rows, thread="blockIdx.x"):
            red = T.alloc_buffer((block,), dtype, scope="shared")
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                acc = T.alloc_buffer((1,), dtype, scope="local")
                acc[0] = T.Cast(dtype, 0)
                for k in range((cols + block - 1) // block):
                    if k * block + tx < cols:
                        acc[0] = acc[0] + A[bx, k * block + tx]
                red[tx] = acc[0]
                T.tvm_storage_sync("shared")
                for s in range(steps):
                    if tx < T.shift_right(block // 2, s):
                        red[tx] = red[tx] + red[tx + T.shift_right(block // 2, s)]
                    T.tvm_storage_sync("shared")
                if tx == 0:
                    B[bx] = red[0]

    return row_sum


def row_softmax(rows: int, cols: int, block: int = 64):
    """Numerically stable softmax of each row of a float32 matrix: shared-memory max and sum
    reductions, one block per row."""
    assert block & (block - 1) == 0, "block must be a power of two"
    steps = block.bit_length() - 1

    @T.prim_func
    def row_softmax(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows, cols), "float32")):
        for bx in T.thread_binding(rows, thread="blockIdx.x"):
            red = T.alloc_buffer((block,), "float32", scope="shared")
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                acc = T.alloc_buffer((1,), "float32", scope="local")
                acc[0] = T.float32(-3.4e38)
                for k in range((cols + block - 1) // block):
                    if k * block + tx < cols:
                        acc[0] = T.max(acc[0], A[bx, k * block + tx])
                red[tx] = acc[0]
                T.tvm_storage_sync("shared")
                for s in range(steps):
                    if tx < T.shift_right(block // 2, s):
                        red[tx] = T.max(red[tx], red[tx + T.shift_right(block // 2, s)])
                    T.tvm_storage_sync("shared")
                row_max = T.alloc_buffer((1,), "float32", scope="local")
                row_max[0] = red[0]
                T.tvm_storage_sync("shared")
                acc[0] = T.float32(0)
                for k in range((cols + block - 1) // block):
                    if k * block + tx < cols:
                        acc[0] = acc[0] + T.exp(A[bx, k * block + tx] - row_max[0])
                red[tx] = acc[0]
                T.tvm_storage_sync("shared")
                for s in range(steps):
                    if tx < T.shift_right(block // 2, s):
                        red[tx] = red[tx] + red[tx + T.shift_right(block // 2, s)]
                    T.tvm_storage_sync("shared")
                for k in range((cols + block - 1) // block):
                    if k * block + tx < cols:
                        B[bx, k * block + tx] = T.exp(A[bx, k * block + tx] - row_max[0]) / red[0]

    return row_softmax


def matmul_tiled(m: int, n: int, k: int, tile: int = 8, dtype: str = "float32"):
    """``C = A @ B`` with ``tile x tile`` thread blocks staging tiles of A and B in shared memory
    and accumulating in a local register. Sizes must be multiples of ``tile``."""
    assert m % tile == 0 and n % tile == 0 and k % tile == 0, "sizes must be multiples of tile"

    @T.prim_func
    def matmul_tiled(A: T.Buffer((m, k), dtype), B: T.Buffer((k, n), dtype), C: T.Buffer((m, n), dtype)):
        for by in T.thread_binding(m // tile, thread="blockIdx.y"):
            for bx in T.thread_binding(n // tile, thread="blockIdx.x"):
                As = T.alloc_buffer((tile, tile), dtype, scope="shared")
                Bs = T.alloc_buffer((tile, tile), dtype, scope="shared")
                for ty in T.thread_binding(tile, thread="threadIdx.y"):
                    for tx in T.thread_binding(tile, thread="threadIdx.x"):
                        acc = T.alloc_buffer((1,), dtype, scope="local")
                        acc[0] = T.Cast(dtype, 0)
                        for ko in range(k // tile):
                            As[ty, tx] = A[by * tile + ty, ko * tile + tx]
                            Bs[ty, tx] = B[ko * tile + ty, bx * tile + tx]
                            T.tvm_storage_sync("shared")
                            for ki in range(tile):
                                acc[0] = acc[0] + As[ty, ki] * Bs[ki, tx]
                            T.tvm_storage_sync("shared")
                        C[by * tile + ty, bx * tile + tx] = acc[0]

    return matmul_tiled


def reference_softmax(a: np.ndarray) -> np.ndarray:
    """NumPy row softmax."""
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
