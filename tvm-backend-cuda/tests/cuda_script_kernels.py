"""Kernels written in TVMScript (compiled with ``tvm.compile``); they live in a file because the
TVMScript parser reads function source."""

from __future__ import annotations

from tvm.script import tir as T


@T.prim_func
def vadd(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for bx in T.thread_binding((n + 127) // 128, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            if bx * 128 + tx < n:
                C[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]


@T.prim_func
def warp_reduce(a: T.handle, b: T.handle):
    """B[i] = sum of the 32 values of row i, with T.cuda.warp_sum."""
    m = T.int32()
    A = T.match_buffer(a, (m, 32), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for bx in T.thread_binding(m, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            s = T.cuda.warp_sum(A[bx, tx])
            if tx == 0:
                B[bx] = s
