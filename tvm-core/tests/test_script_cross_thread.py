"""Reductions across threads: a block whose reduction axis is bound to threadIdx, and
T.tvm_thread_allreduce under a T.comm_reducer, both lowered to a shared-memory tree with
barriers (every backend's conformance suite runs one on its device too)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T


def run(func, a, out_shape):
    dev = tvm.device("example")
    mod = tvm.compile(func, target="example")
    out = tvm.runtime.empty(out_shape, "float32", dev)
    mod[func.global_symbol](tvm.runtime.tensor(a, dev), out)
    return out.numpy(), mod


def test_a_block_reduction_over_thread_x_with_a_serial_part_and_a_predicate():
    @T.prim_func
    def row_sum(A: T.Buffer((8, 1000), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for ko in range(8):
                for ki in T.thread_binding(128, thread="threadIdx.x"):
                    with T.sblock("B"):
                        vi = T.axis.spatial(8, i)
                        vk = T.axis.reduce(1000, ko * 128 + ki)
                        T.where(ko * 128 + ki < 1000)
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

    a = np.random.default_rng(0).random((8, 1000), dtype="float32")
    got, mod = run(row_sum, a, (8,))
    np.testing.assert_allclose(got, a.sum(axis=1), rtol=1e-5)
    source = mod.imports[0].inspect_source()
    assert "red_buf" in source  # the shared scratch of the tree, not one racing update


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_a_block_reduction_over_very_few_threads(threads):
    """One thread (a tuning configuration may choose it) has nothing to combine: its tree read a
    slot past the scratch buffer and the compile refused its own buffer as out of bounds."""

    @T.prim_func
    def row_sum(A: T.Buffer((8, 12), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k0 in T.thread_binding(threads, thread="threadIdx.x"):
                for k1 in range(12 // threads):
                    with T.sblock("s"):
                        vi = T.axis.spatial(8, i)
                        vk = T.axis.reduce(12, k0 * (12 // threads) + k1)
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

    a = np.random.default_rng(threads).random((8, 12), dtype="float32")
    got, _ = run(row_sum, a, (8,))
    np.testing.assert_allclose(got, a.sum(axis=1), rtol=1e-5)


def test_a_predicate_written_before_the_block_axes_and_more_threads_than_elements():
    """Meta-schedule writes T.where before T.axis; threads past the predicate contribute the
    identity (here 256 threads reduce 100 elements)."""

    @T.prim_func
    def row_max(A: T.Buffer((4, 100), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k_0 in T.serial(1):
                for k_1 in T.thread_binding(256, thread="threadIdx.x"):
                    with T.sblock("B"):
                        T.where(k_0 * 256 + k_1 < 100)
                        vi = T.axis.spatial(4, i)
                        vk = T.axis.reduce(100, k_0 * 256 + k_1)
                        with T.init():
                            B[vi] = T.float32(-3.4028234663852886e38)
                        B[vi] = T.max(B[vi], A[vi, vk])

    a = np.random.default_rng(2).standard_normal((4, 100), dtype="float32")
    got, _ = run(row_max, a, (4,))
    np.testing.assert_array_equal(got, a.max(axis=1))


def test_a_max_over_thread_x_in_groups_of_thread_y_of_a_size_not_a_power_of_two():
    @T.prim_func
    def group_max(A: T.Buffer((4, 3, 48), "float32"), B: T.Buffer((4, 3), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for ty in T.thread_binding(3, thread="threadIdx.y"):
                for tx in T.thread_binding(48, thread="threadIdx.x"):
                    with T.sblock("B"):
                        vi, vj, vk = T.axis.remap("SSR", [i, ty, tx])
                        with T.init():
                            B[vi, vj] = T.float32(-3.0e38)
                        B[vi, vj] = T.max(B[vi, vj], A[vi, vj, vk])

    a = np.random.default_rng(1).standard_normal((4, 3, 48), dtype="float32")
    got, _ = run(group_max, a, (4, 3))
    np.testing.assert_array_equal(got, a.max(axis=2))


def test_tvm_thread_allreduce_under_a_comm_reducer():
    @T.prim_func
    def lowered(a: T.handle, b: T.handle):
        A = T.match_buffer(a, [16, 100], dtype="float32")
        B = T.match_buffer(b, [16], dtype="float32")
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for k in T.thread_binding(0, 100, thread="threadIdx.x"):
                reduce_temp0 = T.alloc_buffer([1], dtype="float32", scope="local")
                with T.sblock("B_cross_thread_reduction"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", T.int32(0))
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[vi, vk], True, reduce_temp0[0], k, dtype="handle"))
                with T.sblock("B_write_back"):
                    vi = T.axis.spatial(16, i)
                    T.where(k == 0)
                    B[vi] = reduce_temp0[0]

    a = np.random.default_rng(2).random((16, 100), dtype="float32")
    got, _ = run(lowered, a, (16,))
    np.testing.assert_allclose(got, a.sum(axis=1), rtol=1e-5)


def test_an_argmax_over_threads_with_a_reducer_of_two_values():
    """T.tvm_thread_allreduce of an (index, value) pair, as Apache TVM lowers argmax: each step of
    the tree combines both values of two threads at once."""

    @T.prim_func
    def argmax(val: T.Buffer((8, 96), "float32"), out_idx: T.Buffer((8,), "int32"), out_val: T.Buffer((8,), "float32")):
        best_idx = T.alloc_buffer([1], dtype="int32", scope="local")
        best_val = T.alloc_buffer([1], dtype="float32", scope="local")
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k in T.thread_binding(96, thread="threadIdx.x"):
                with T.sblock("argmax_cross_thread"):
                    T.attr(
                        T.comm_reducer(
                            lambda x0, x1, y0, y1: (T.Select(x1 >= y1, x0, y0), T.Select(x1 >= y1, x1, y1)),
                            [-1, T.float32(-3.4028234663852886e38)],
                        ),
                        "reduce_scope",
                        T.int32(0),
                    )
                    T.evaluate(
                        T.tvm_thread_allreduce(
                            T.uint32(2), k, val[i, k], True, best_idx[0], best_val[0], k, dtype="handle"
                        )
                    )
                with T.sblock("write_back"):
                    T.where(k == 0)
                    out_idx[i] = best_idx[0]
                    out_val[i] = best_val[0]

    dev = tvm.device("example")
    mod = tvm.compile(argmax, target="example")
    a = np.random.default_rng(3).permutation(8 * 96).reshape(8, 96).astype("float32")
    idx, val = tvm.runtime.empty((8,), "int32", dev), tvm.runtime.empty((8,), "float32", dev)
    mod["argmax"](tvm.runtime.tensor(a, dev), idx, val)
    np.testing.assert_array_equal(idx.numpy(), a.argmax(axis=1))
    np.testing.assert_array_equal(val.numpy(), a.max(axis=1))


@pytest.mark.parametrize("better", ["ge", "le"])
@pytest.mark.parametrize("vdtype", ["float32", "int32"])
def test_an_argmax_block_over_threads_keeps_index_and_value_together(better, vdtype):
    """The block form Apache TVM's schedules write for argmax/argmin: two updates selecting
    between the kept (index, value) and the new one under one condition, after a T.init. With
    int32 values the index and value buffers are alike (dtype and shape): they must not be
    taken for one another."""
    cmp = (lambda a, b: a >= b) if better == "ge" else (lambda a, b: a <= b)
    big = 3.4028234663852886e38 if vdtype == "float32" else 2**31 - 1
    start = T.Cast(vdtype, -big if better == "ge" else big)

    @T.prim_func
    def arg_best(
        idx: T.Buffer((6, 128), "int32"),
        val: T.Buffer((6, 128), vdtype),
        best_idx: T.Buffer((6,), "int32"),
        best_val: T.Buffer((6,), vdtype),
    ):
        for i0 in T.thread_binding(6, thread="blockIdx.x"):
            for i1_0 in T.serial(2):
                for i1_1 in T.thread_binding(64, thread="threadIdx.x"):
                    with T.sblock("argbest"):
                        i = T.axis.spatial(6, i0)
                        k = T.axis.reduce(128, i1_0 * 64 + i1_1)
                        with T.init():
                            best_idx[i] = -1
                            best_val[i] = start
                        v0: T.let[T.int32] = T.Select(cmp(best_val[i], val[i, k]), best_idx[i], idx[i, k])
                        v1: T.let[vdtype] = T.Select(cmp(best_val[i], val[i, k]), best_val[i], val[i, k])
                        best_idx[i] = v0
                        best_val[i] = v1

    dev = tvm.device("example")
    mod = tvm.compile(arg_best, target="example")
    rng = np.random.default_rng(4)
    val = rng.permutation(6 * 128).reshape(6, 128).astype(vdtype)
    idx = np.broadcast_to(np.arange(128, dtype="int32") * 10, (6, 128)).copy()
    out_i, out_v = tvm.runtime.empty((6,), "int32", dev), tvm.runtime.empty((6,), vdtype, dev)
    mod["arg_best"](tvm.runtime.tensor(idx, dev), tvm.runtime.tensor(val, dev), out_i, out_v)
    pick = val.argmax(axis=1) if better == "ge" else val.argmin(axis=1)
    np.testing.assert_array_equal(out_i.numpy(), pick * 10)
    np.testing.assert_array_equal(out_v.numpy(), val[np.arange(6), pick])


def test_a_block_reduction_updating_one_buffer_twice_is_an_error_naming_the_block():
    with pytest.raises(TVMScriptError, match="block 'B' reduces over k .*each of its own element"):

        @T.prim_func
        def two_updates(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
            for i in T.thread_binding(4, thread="blockIdx.x"):
                for k in T.thread_binding(32, thread="threadIdx.x"):
                    with T.sblock("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        B[vi] = B[vi] + A[vi, vk]
                        B[vi] = B[vi] * T.float32(2)


def test_a_reduction_bound_to_blockidx_is_refused():
    with pytest.raises(TVMScriptError, match="reduces over k, which is bound to blockIdx: blocks cannot combine"):

        @T.prim_func
        def racy(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8,), "float32")):
            for i in T.serial(8):
                for k in T.thread_binding(128, thread="blockIdx.x"):
                    with T.sblock("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]


def test_a_reduction_over_a_parallel_loop_is_refused_and_a_parallel_spatial_axis_runs():
    with pytest.raises(TVMScriptError, match="reduces over k, a T.parallel loop: its iterations run at the same time"):

        @T.prim_func
        def racy(A: T.Buffer((4, 1000), "float32"), B: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                for k in T.parallel(1000):
                    with T.sblock("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

    @T.prim_func
    def rows(A: T.Buffer((4, 1000), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.parallel(4):
            for k in T.serial(1000):
                with T.sblock("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    a = np.random.default_rng(3).random((4, 1000), dtype="float32")
    b = np.zeros(4, "float32")
    tvm.compile(rows, target="c")(a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-4)


def test_reducer_errors_name_the_problem():
    with pytest.raises(TVMScriptError, match="T.tvm_thread_allreduce of 1 value\\(s\\) under a T.comm_reducer of 2"):

        @T.prim_func
        def two_values(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                T.attr(
                    T.comm_reducer(lambda x0, x1, y0, y1: (x0 + y0, x1 + y1), [T.float32(0), T.float32(0)]),
                    "reduce_scope",
                    T.int32(0),
                )
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[k], True, B[0], k, dtype="handle"))

    with pytest.raises(TVMScriptError, match="needs T.attr\\(T.comm_reducer"):

        @T.prim_func
        def no_scope(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[k], True, B[0], k, dtype="handle"))


def test_a_reduction_into_a_local_buffer_leaves_the_total_in_every_thread():
    # dlight's rfactor schedule: partial sums per thread (local), a cross-thread reduction into a
    # local buffer with T.init, then code outside the thread loop that every thread runs reads it
    @T.prim_func
    def rfactor_sum(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
        total_local = T.alloc_buffer((8,), scope="local")
        part_local = T.alloc_buffer((32, 8), scope="local")
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                with T.sblock("part_init"):
                    vt, v0 = T.axis.remap("SS", [tx, bx])
                    part_local[vt, v0] = T.float32(0)
                for ko in range(2):
                    with T.sblock("part"):
                        vt, v0, vk = T.axis.remap("SSR", [tx, bx, ko])
                        part_local[vt, v0] = part_local[vt, v0] + A[v0, vk * 32 + vt]
            for t in T.thread_binding(32, thread="threadIdx.x"):
                with T.sblock("total"):
                    vt, v0 = T.axis.remap("RS", [t, bx])
                    with T.init():
                        total_local[v0] = T.float32(0)
                    total_local[v0] = total_local[v0] + part_local[vt, v0]
            with T.sblock("out"):
                v0 = T.axis.spatial(8, bx)
                B[v0] = total_local[v0] + T.float32(1)

    a = np.random.default_rng(3).random((8, 64), dtype="float32")
    got, _ = run(rfactor_sum, a, (8,))
    np.testing.assert_allclose(got, a.sum(axis=1) + 1, rtol=1e-5)


def test_a_block_reducing_into_two_buffers_through_lets():
    # dlight's layer norm: a sum and a sum of squares in one block, each through a T.let
    @T.prim_func
    def moments(A: T.Buffer((8, 300), "float32"), S: T.Buffer((8,), "float32"), Q: T.Buffer((8,), "float32")):
        S_shared = T.alloc_buffer((8,), "float32", scope="shared")
        Q_shared = T.alloc_buffer((8,), "float32", scope="shared")
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                for ko in T.serial(5):
                    with T.sblock("moments"):
                        vi = T.axis.spatial(8, bx)
                        vk = T.axis.reduce(320, ko * 64 + tx)
                        T.where(ko * 64 + tx < 300)
                        with T.init():
                            S_shared[vi] = T.float32(0)
                            Q_shared[vi] = T.float32(0)
                        s_new: T.let[T.float32] = S_shared[vi] + A[vi, vk]
                        q_new: T.let[T.float32] = Q_shared[vi] + A[vi, vk] * A[vi, vk]
                        S_shared[vi] = s_new
                        Q_shared[vi] = q_new
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if tx == 0:
                    S[bx] = S_shared[bx]
                    Q[bx] = Q_shared[bx]

    a = np.random.default_rng(0).random((8, 300), dtype="float32")
    dev = tvm.device("example")
    s, q = (tvm.runtime.empty((8,), "float32", dev) for _ in range(2))
    tvm.compile(moments, target="example")["moments"](tvm.runtime.tensor(a, dev), s, q)
    np.testing.assert_allclose(s.numpy(), a.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(q.numpy(), (a * a).sum(axis=1), rtol=1e-5)


def test_a_block_without_init_into_a_local_buffer_is_each_threads_own_partial():
    # Apache TVM's lowered form: per-thread partials (a block without T.init writing a local
    # buffer is not a reduction block), then an explicit allreduce of the partials
    @T.prim_func
    def row_sums(A: T.Buffer((16, 120), "float32"), B: T.Buffer((16,), "float32")):
        partial = T.alloc_buffer((1,), "float32", scope="local")
        total = T.alloc_buffer((1,), "float32", scope="local")
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for ki in T.thread_binding(32, thread="threadIdx.x"):
                with T.sblock("in_thread_init"):
                    partial[0] = T.float32(0)
                for ko in T.serial(4):
                    with T.sblock("in_thread"):
                        vi = T.axis.spatial(16, i)
                        vk = T.axis.reduce(120, ko * 32 + ki)
                        T.where(ko * 32 + ki < 120)
                        partial[0] = partial[0] + A[vi, vk]
                with T.sblock("cross_thread"):
                    T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", T.int32(0))
                    T.tvm_thread_allreduce(T.uint32(1), partial[0], True, total[0], ki)
                with T.sblock("write_back"):
                    vi = T.axis.spatial(16, i)
                    T.where(ki == 0)
                    B[vi] = total[0]

    a = np.random.default_rng(2).random((16, 120), dtype="float32")
    dev = tvm.device("example")
    b = tvm.runtime.empty((16,), "float32", dev)
    tvm.compile(row_sums, target="example")["row_sums"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_allclose(b.numpy(), a.sum(axis=1), rtol=1e-5)


def test_a_reduction_into_shared_memory_that_every_thread_then_reads():
    """dlight's spatial-inner broadcast: the total goes into shared S[v0] under the reduced
    thread's condition (its init, then its update, the same element), and the next loop nest reads
    S. The write and the re-read of one element by one thread were taken for two threads racing."""

    @T.prim_func
    def broadcast(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        S = T.alloc_buffer((16,), scope="shared")
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                with T.block("sum"):
                    vk = T.axis.reduce(16, ty)
                    v0 = T.axis.spatial(16, tx)
                    with T.init():
                        S[v0] = T.float32(0)
                    S[v0] = S[v0] + A[vk, v0]
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                with T.block("add"):
                    v0, v1 = T.axis.remap("SS", [ty, tx])
                    B[v0, v1] = A[v0, v1] + S[v1]

    a = np.random.default_rng(5).random((16, 16), dtype="float32")
    with pytest.warns(Warning, match="S outlive"):
        got, _ = run(broadcast, a, (16, 16))
    np.testing.assert_allclose(got, a + a.sum(axis=0), rtol=1e-5)


def test_a_predicated_max_over_threads_of_a_row_of_minus_infinity_is_minus_infinity():
    """Threads the T.where leaves out contributed float32's lowest finite value: a fully masked
    attention row reduced to -3.4e38 instead of -inf."""

    @T.prim_func
    def row_max(A: T.Buffer((2, 100), "float32"), B: T.Buffer((2,), "float32")):
        for i in T.thread_binding(2, thread="blockIdx.x"):
            for k0 in range(1):
                for k1 in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial(2, i)
                        vk = T.axis.reduce(100, k0 * 128 + k1)
                        T.where(k0 * 128 + k1 < 100)
                        with T.init():
                            B[vi] = T.float32("-inf")
                        B[vi] = T.max(B[vi], A[vi, vk])

    dev = tvm.device("example")
    a = np.full((2, 100), -np.inf, "float32")
    a[1, 5] = 1.0
    b = tvm.runtime.tensor(np.zeros(2, "float32"), dev)
    tvm.compile(row_max, target="example")["row_max"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_array_equal(b.numpy(), a.max(1))


def test_an_init_with_two_plain_updates_and_a_predicated_update_without_init_are_reductions():
    @T.prim_func
    def moments(A: T.Buffer((4, 40), "float32"), S: T.Buffer((4,), "float32"), Q: T.Buffer((4,), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k in T.thread_binding(40, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        S[vi] = T.float32(0)
                        Q[vi] = T.float32(0)
                    S[vi] = S[vi] + A[vi, vk]
                    Q[vi] = Q[vi] + A[vi, vk] * A[vi, vk]

    @T.prim_func
    def decomposed(A: T.Buffer((4, 100), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k1 in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B_init"):
                    vi = T.axis.spatial(4, i)
                    T.where(k1 == 0)
                    B[vi] = T.float32(0)
            for k0 in range(4):
                for k1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("B_update"):
                        vi = T.axis.spatial(4, i)
                        vk = T.axis.reduce(100, k0 * 32 + k1)
                        T.where(k0 * 32 + k1 < 100)
                        B[vi] = B[vi] + A[vi, vk]

    dev = tvm.device("example")
    rng = np.random.default_rng(0)
    a = rng.random((4, 40), dtype="float32")
    s, q = tvm.runtime.empty((4,), "float32", dev), tvm.runtime.empty((4,), "float32", dev)
    tvm.compile(moments, target="example")["moments"](tvm.runtime.tensor(a, dev), s, q)
    np.testing.assert_allclose(s.numpy(), a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(q.numpy(), (a * a).sum(1), rtol=1e-5)
    a = rng.random((4, 100), dtype="float32")
    b = tvm.runtime.tensor(np.full(4, 9, "float32"), dev)
    tvm.compile(decomposed, target="example")["decomposed"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_allclose(b.numpy(), a.sum(1), rtol=1e-5)


def test_a_reduction_in_a_thread_loop_narrower_than_the_launch_is_refused_at_its_block():
    """Its barriers would not be reached by the launch's other threads: refused, and the error
    points at the block (the barriers are the lowering's, not the user's)."""

    @T.prim_func
    def f(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4, 64), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for t in T.thread_binding(64, thread="threadIdx.x"):
                C[i, t] = T.float32(1)
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    from tvm.tir.transform.verify import TIRVerifyError

    with pytest.raises(TIRVerifyError, match="not reached by every thread") as info:
        tvm.compile(f, target="example")
    assert 'with T.block("B"):' in str(info.value)


def test_a_reduction_over_a_thread_loop_of_no_threads_reduces_nothing():
    """As the serial form over an empty extent: the output keeps what it held (it failed to
    compile, naming the lowering's own scratch buffer)."""

    @T.prim_func
    def f(A: T.Buffer((4, 0), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k in T.thread_binding(0, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    dev = tvm.device("example")
    b = tvm.runtime.tensor(np.full(4, 9, "float32"), dev)
    tvm.compile(f, target="example")["f"](tvm.runtime.tensor(np.zeros((4, 0), "float32"), dev), b)
    np.testing.assert_array_equal(b.numpy(), np.full(4, 9, "float32"))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_a_predicated_max_over_threads_in_narrow_floats(dtype):
    """float8_e4m3fn has no infinity: its identity is its largest finite value (an infinity
    there became NaN and the whole result with it)."""
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="needs ml_dtypes for bfloat16 and float8 arrays")

    @T.prim_func
    def row_max(A: T.Buffer((2, 100), dtype), B: T.Buffer((2,), dtype)):
        for i in T.thread_binding(2, thread="blockIdx.x"):
            for k1 in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(2, i)
                    vk = T.axis.reduce(100, k1)
                    T.where(k1 < 100)
                    with T.init():
                        B[vi] = T.Cast(dtype, -2.0)
                    B[vi] = T.max(B[vi], A[vi, vk])

    np_dtype = getattr(ml_dtypes, dtype, dtype)
    a = ((np.arange(200).reshape(2, 100) % 7 - 3) * 0.5).astype("float32").astype(np_dtype)
    dev = tvm.device("example")
    b = tvm.runtime.tensor(np.zeros(2, np_dtype), dev)
    tvm.compile(row_max, target="example")["row_max"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_array_equal(b.numpy().astype("float32"), a.astype("float32").max(1))


def test_a_users_if_in_a_reduction_block_is_neither_its_init_nor_its_predicate():
    """A plain `if` first in the block ran once as if it were T.init; one reading the accumulator
    was taken for T.where and guarded the reduction with a partial value (32 instead of 10)."""
    for body in (
        "if vk == 0:\n                    B[vi] = T.float32(0)\n                B[vi] = B[vi] + A[vi, vk]",
        "if B[vi] < T.float32(10):\n                    B[vi] = B[vi] + A[vi, vk]",
    ):
        src = (
            "@T.prim_func\n"
            'def f(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):\n'
            '    for i in T.thread_binding(4, thread="blockIdx.x"):\n'
            '        for k in T.thread_binding(32, thread="threadIdx.x"):\n'
            '            with T.block("B"):\n'
            '                vi, vk = T.axis.remap("SR", [i, k])\n'
            f"                {body}\n"
        )
        with pytest.raises(TVMScriptError, match="its body must be updates"):
            tvm.script.parse(src)


def test_an_init_of_a_shared_and_a_local_accumulator_resets_each_where_it_lives():
    """The local accumulator's init ran in the group's first thread only, with the shared one's:
    the other threads kept a stale value (124 of 128 outputs wrong)."""

    @T.prim_func
    def f(A: T.Buffer((4, 32), "float32"), S: T.Buffer((4,), "float32"), C: T.Buffer((4, 32), "float32")):
        L = T.alloc_buffer((4,), scope="local")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for t in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("junk"):
                    v0 = T.axis.spatial(4, bx)
                    L[v0] = T.float32(100)
            for t in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("total"):
                    v0, vt = T.axis.remap("SR", [bx, t])
                    with T.init():
                        S[v0] = T.float32(0)
                        L[v0] = T.float32(0)
                    S[v0] = S[v0] + A[v0, vt]
                    L[v0] = L[v0] + A[v0, vt]
            for t in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("out"):
                    v0, vt = T.axis.remap("SS", [bx, t])
                    C[v0, vt] = L[v0]

    dev = tvm.device("example")
    a = np.random.default_rng(0).random((4, 32), dtype="float32")
    s = tvm.runtime.tensor(np.zeros(4, "float32"), dev)
    c = tvm.runtime.tensor(np.full((4, 32), 7, "float32"), dev)
    tvm.compile(f, target="example")["f"](tvm.runtime.tensor(a, dev), s, c)
    np.testing.assert_allclose(s.numpy(), a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(c.numpy(), np.repeat(a.sum(1)[:, None], 32, 1), rtol=1e-5)


def test_a_predicated_sum_over_threads_of_negative_zeros_is_negative_zero():
    """Threads the T.where leaves out added +0.0, which turns a -0.0 total into +0.0; the identity
    of a float sum is -0.0 (as the serial form keeps it)."""

    @T.prim_func
    def row_sum(A: T.Buffer((2, 100), "float32"), B: T.Buffer((2,), "float32")):
        for i in T.thread_binding(2, thread="blockIdx.x"):
            for k in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(2, i)
                    vk = T.axis.reduce(100, k)
                    T.where(k < 100)
                    with T.init():
                        B[vi] = T.float32(-0.0)
                    B[vi] = B[vi] + A[vi, vk]

    dev = tvm.device("example")
    b = tvm.runtime.tensor(np.ones(2, "float32"), dev)
    tvm.compile(row_sum, target="example")["row_sum"](tvm.runtime.tensor(np.full((2, 100), -0.0, "float32"), dev), b)
    assert np.all(b.numpy() == 0) and np.all(np.signbit(b.numpy()))


def test_an_init_written_as_if_else_keeps_both_branches():
    @T.prim_func
    def k(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for ki in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(32, ki)
                    with T.init():
                        if vi < 2:
                            B[vi] = T.float32(0)
                        else:
                            B[vi] = T.float32(1000)
                    B[vi] = B[vi] + A[vi, vk]

    dev = tvm.device("example")
    b = tvm.runtime.tensor(np.full(4, 7, "float32"), dev)
    tvm.compile(k, target="example")["k"](tvm.runtime.tensor(np.ones((4, 32), "float32"), dev), b)
    np.testing.assert_array_equal(b.numpy(), [32, 32, 1032, 1032])


@T.macro
def _predicate(i):
    T.where(i < 5)


def test_a_where_in_a_macro_is_refused_instead_of_guarding_nothing():
    with pytest.raises(TVMScriptError, match="T.where in a T.macro would guard only the macro's own statements"):

        @T.prim_func
        def k(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    _predicate(i)
                    B[vi] = A[vi] + T.float32(1)


def test_a_parallel_loop_whose_iterations_reduce_into_their_own_totals_runs():
    @T.prim_func
    def segment_sum(A: T.Buffer((1000,), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.parallel(4):
            for k in T.serial(250):
                with T.sblock("B"):
                    vi = T.axis.spatial(4, i)  # each iteration of the parallel loop has its own total
                    vk = T.axis.reduce(1000, i * 250 + k)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vk]

    a = np.random.default_rng(0).random(1000, dtype="float32")
    b = np.zeros(4, "float32")
    tvm.compile(segment_sum, target="c")(a, b)
    np.testing.assert_allclose(b, a.reshape(4, 250).sum(axis=1), rtol=1e-4)
