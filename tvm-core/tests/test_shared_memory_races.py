"""Kernels written without barriers get them from the compiler where threads would race on
shared memory (Apache TVM's kernels leave them to it). Where one thread writes what another
reads under a condition on the thread index, no barrier can go: the compile warns, naming the
buffer, and the barriers that can be placed still are (before, such a kernel was left without
any, and even its race-free part computed garbage on devices that run threads one by one)."""

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.tir.transform.barriers import SharedMemoryRaceWarning


@T.prim_func
def reverse_then_shift_under_condition(
    A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")
):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        B[tx] = S[63 - tx]  # needs a barrier before it: another thread wrote S[63 - tx]
        if tx < 32:
            S[tx + 32] = A[tx] * T.float32(2)
            C[tx] = S[tx + 31]  # thread tx - 1 wrote it: no barrier can go inside the condition


@T.prim_func
def tree_sum_without_barriers(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        S[tx] = A[tx]
        for i in T.unroll(6):
            if tx % (2 << i) == 0:
                S[tx] = S[tx] + S[tx + (1 << i)]
        if tx == 0:
            B[0] = S[0]


def run(func, *arrays):
    mod = tvm.compile(func, target="example")
    dev = tvm.device("example", 0)
    tensors = [tvm.runtime.tensor(a, dev) for a in arrays]
    mod(*tensors)
    return [t.numpy() for t in tensors]


def test_an_unorderable_race_warns_and_the_placeable_barriers_are_kept():
    a = np.arange(64, dtype="float32")
    with pytest.warns(SharedMemoryRaceWarning, match="shared buffer S is written and read by different threads") as w:
        _, b, _ = run(reverse_then_shift_under_condition, a, np.zeros(64, "float32"), np.zeros(64, "float32"))
    assert w[0].filename == __file__  # shown at the line that compiles the kernel
    assert "right only where a warp's threads run in lockstep" in str(w[0].message)
    np.testing.assert_array_equal(b, a[::-1])


def test_a_tree_reduction_gets_a_barrier_per_step_and_no_warning(recwarn):
    a = np.random.rand(64).astype("float32")
    _, b = run(tree_sum_without_barriers, a, np.zeros(1, "float32"))
    np.testing.assert_allclose(b[0], a.sum(), rtol=1e-5)
    assert not [w for w in recwarn if issubclass(w.category, SharedMemoryRaceWarning)]


@T.prim_func
def scan_reading_into_a_value(A: T.Buffer((32,), "int32"), B: T.Buffer((32,), "int32")):
    S = T.alloc_buffer((32,), "int32", scope="shared")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S[tx] = A[tx]
        for step in range(5):
            d: T.int32 = T.shift_left(1, step)
            v: T.int32 = T.if_then_else(tx >= d, S[tx - d], 0)  # read, then a barrier, then the store
            S[tx] = S[tx] + v
        B[tx] = S[tx]


@T.prim_func
def rotate_in_a_while_loop(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    S = T.alloc_buffer((32,), scope="shared")
    R = T.alloc_buffer((32,), scope="shared")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        it = T.alloc_buffer((1,), "int32", scope="local")
        S[tx] = A[tx]
        it[0] = 0
        while it[0] < 4:  # the same for every thread: barriers go inside
            R[tx] = S[(tx + 1) % 32]
            S[tx] = R[tx] + T.float32(1)
            it[0] = it[0] + 1
        B[tx] = S[tx]


def test_a_value_read_from_shared_memory_is_read_before_the_store_after_it():
    a = np.arange(1, 33, dtype="int32")
    _, b = run(scan_reading_into_a_value, a, np.zeros(32, "int32"))
    np.testing.assert_array_equal(b, np.cumsum(a))


def test_a_while_loop_gets_its_barriers():
    a = np.arange(32, dtype="float32")
    _, b = run(rotate_in_a_while_loop, a, np.zeros(32, "float32"))
    np.testing.assert_array_equal(b, np.roll(a, -4) + 4)


@T.prim_func
def exchange_under_a_flag_from_the_thread(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    S = T.alloc_buffer((32,), scope="shared")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        odd = 0
        if tx % 2 == 1:
            odd = 1
        if odd == 1:  # divides the threads as tx % 2 does: no barrier can go inside
            S[tx] = A[tx]
            B[tx] = S[tx - 1]


@T.prim_func
def barrier_under_a_flag_from_the_thread(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.alloc_buffer((32,), scope="shared")
        low = 0
        if tx < 16:
            low = 1
        S[tx] = A[tx]
        if low == 1:
            T.tvm_storage_sync("shared")
        B[tx] = S[31 - tx]


def test_a_condition_on_a_value_computed_from_the_thread_divides_the_threads():
    """A flag set from the thread index divides the threads as the index itself does: the
    compiler puts no barrier under it (it had, and the kernel hung or crashed), and one written
    there is refused."""
    from tvm.tir.transform.verify import TIRVerifyError

    with pytest.raises(TIRVerifyError, match="shared buffer S is written and read by different threads under a"):
        tvm.compile(exchange_under_a_flag_from_the_thread, target="example")
    with pytest.raises(TIRVerifyError, match=r"T.tvm_storage_sync\('shared'\) is not reached by every thread"):
        tvm.compile(barrier_under_a_flag_from_the_thread, target="example")


@T.prim_func
def count_while_shared_below(B: T.Buffer((32,), "int32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.alloc_buffer((1,), "int32", scope="shared")
        if tx == 0:
            S[0] = 0
        it = T.alloc_buffer((1,), "int32", scope="local")
        it[0] = 0
        while S[0] < 5:  # every thread reads S[0] before thread 0 writes it: a barrier between
            if tx == 0:
                S[0] = S[0] + 1
            it[0] = it[0] + 1
        B[tx] = it[0]


@T.prim_func
def rotate_then_reuse_the_counter(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.alloc_buffer((32,), scope="shared")
        S[tx] = A[tx]
        T.tvm_storage_sync("shared")
        i = 0
        while i < 4:  # the same for every thread while the loop runs
            v: T.float32 = S[(tx + 1) % 32]
            T.tvm_storage_sync("shared")
            S[tx] = v + T.float32(1)
            T.tvm_storage_sync("shared")
            i = i + 1
        i = 31 - tx  # the name used again, after the loop, for a per-thread index
        B[i] = S[31 - tx]


@T.prim_func
def rotate_until_some_leave(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        S = T.alloc_buffer((32,), scope="shared")
        R = T.alloc_buffer((32,), scope="shared")
        it = T.alloc_buffer((1,), "int32", scope="local")
        S[tx] = A[tx]
        it[0] = 0
        while it[0] < 4:
            if tx >= 16 and it[0] == 2:
                break  # half the threads leave: no barrier can go in the loop
            R[tx] = S[(tx + 1) % 32]
            S[tx] = R[tx] + T.float32(1)
            it[0] = it[0] + 1
        B[tx] = S[tx]


def test_a_while_condition_reading_shared_memory_is_read_before_the_body_writes():
    (b,) = run(count_while_shared_below, np.zeros(32, "int32"))
    np.testing.assert_array_equal(b, np.full(32, 5))


def test_a_counter_the_same_for_every_thread_in_its_loop_stays_uniform_there():
    a = np.arange(32, dtype="float32")
    _, b = run(rotate_then_reuse_the_counter, a, np.zeros(32, "float32"))
    np.testing.assert_array_equal(b, np.roll(a, -4) + 4)


def test_a_loop_some_threads_leave_gets_no_barrier_and_warns():
    with pytest.warns(SharedMemoryRaceWarning, match="shared buffer S is written and read by different threads"):
        tvm.compile(rotate_until_some_leave, target="example")  # it hung on a barrier the leavers never reach
