"""Kernels written in TVMScript (compiled with ``tvm.compile``); they live in a file because the
TVMScript parser reads function source. Standard kernels come from :mod:`tvm.testing.kernels`;
the CUDA-specific ones (``T.cuda`` intrinsics) are written here."""

from __future__ import annotations

from tvm.script import tir as T
from tvm.testing import kernels as zoo

# C = A + B over a symbolic length, 128 threads per block (the tests expect the name "vadd").
vadd = zoo.vector_add("float32", 128, name="vadd")


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
