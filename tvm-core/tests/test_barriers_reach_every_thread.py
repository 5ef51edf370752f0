"""A block-wide barrier (``T.tvm_storage_sync("shared")``) waits for every thread of the block, so
one that some threads never reach hangs the kernel (the example device), crashes it (PoCL) or
times out (hexagon). The lowering refuses such a barrier at compile time and names it; barriers
every thread reaches, including under conditions on the thread index that always hold, compile
and run."""

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.tir.transform.verify import TIRVerifyError


@T.prim_func
def half_the_threads(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        if tx < 32:
            T.tvm_storage_sync("shared")
        B[tx] = S[63 - tx]


@T.prim_func
def loop_bound_by_the_thread(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        for _ in range(tx % 2):
            T.tvm_storage_sync("shared")
        B[tx] = S[63 - tx]


@T.prim_func
def narrow_thread_loop(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            S[tx] = A[tx]
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            T.tvm_storage_sync("shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[tx] = S[63 - tx]


@pytest.mark.parametrize("func", [half_the_threads, loop_bound_by_the_thread, narrow_thread_loop])
def test_a_barrier_some_threads_skip_is_refused(func):
    with pytest.raises(TIRVerifyError, match=r"T.tvm_storage_sync\('shared'\) is not reached by every thread") as err:
        tvm.compile(func, target="example")
    assert 'T.tvm_storage_sync("shared")' in str(err.value)  # the source line of the barrier


@T.prim_func
def always_true_guard(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), n: T.int32):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        if tx < 64 and n > 0:
            T.tvm_storage_sync("shared")
            B[tx] = S[63 - tx]


def test_barriers_every_thread_reaches_compile_and_run():
    """``tx < 64`` holds for every thread of a 64-thread block; ``n > 0`` is the same for all."""
    mod = tvm.compile(always_true_guard, target="example")
    dev = tvm.device("example", 0)
    a = np.arange(64, dtype="float32")
    b = tvm.runtime.tensor(np.zeros(64, "float32"), dev)
    mod["always_true_guard"](tvm.runtime.tensor(a, dev), b, 1)
    np.testing.assert_array_equal(b.numpy(), a[::-1])


def test_a_warp_barrier_under_a_condition_is_left_to_the_author():
    @T.prim_func
    def warp_sync(A: T.Buffer((64,), "float32")):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            if tx < 32:
                T.tvm_storage_sync("warp")
            A[tx] = T.float32(1)

    source = tvm.compile(warp_sync, target="cuda").imports[0].inspect_source()
    assert "__syncwarp" in source
