"""Shared and local buffers allocated at the top of a device function (as Apache TVM's TVMScript
writes them, in the root block) move into the thread-bound loops that use them; a buffer that
must keep its values across a loop's iterations is never moved into that loop. Serial loops
around thread-bound nests stay on the host and launch the nests once per iteration."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.tir.transform import MemoryPlacementWarning, SingleThreadKernelWarning, TIRVerifyError


def run(func, inputs, out_shape):
    dev = tvm.device("example")
    mod = tvm.compile(func, target="example")
    out = tvm.runtime.empty(out_shape, "float32", dev)
    mod[func.global_symbol](*[tvm.runtime.tensor(x, dev) for x in inputs], out)
    return out.numpy(), mod


def allocations_and_barriers(func) -> tuple[dict, int]:
    """The (flattened) shape of each allocation of ``func``'s one example kernel, and how many
    barriers it holds."""
    (kernel,) = tvm.tir.transform.lower(func, tvm.target.Target("example")).kernels
    shapes, syncs = {}, []
    tvm.tir.functor.post_order_visit(
        kernel.body,
        lambda n: (
            shapes.update({n.buffer.name: [x.value for x in n.buffer.shape]})
            if isinstance(n, tvm.tir.Allocate)
            else syncs.append(n)
            if isinstance(n, tvm.tir.Call) and n.op == "tvm_storage_sync"
            else None
        ),
    )
    return shapes, len(syncs)


def test_root_shared_and_local_buffers_move_into_the_kernel():
    @T.prim_func
    def reverse_scale(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        A_shared = T.alloc_buffer((128,), "float32", scope="shared")
        acc = T.alloc_buffer((1,), "float32", scope="local")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                A_shared[tx] = A[tx]
                T.tvm_storage_sync("shared")
                acc[0] = A_shared[127 - tx] * T.float32(2)
                B[tx] = acc[0]

    a = np.random.default_rng(0).random(128, dtype="float32")
    got, _ = run(reverse_scale, [a], (128,))
    np.testing.assert_allclose(got, a[::-1] * 2)


def test_a_device_function_without_thread_bindings_runs_as_one_thread():
    """As in Apache TVM: an unscheduled function compiled for a device is one kernel of one
    thread (with a warning), its global scratch buffer allocated by the host around it."""

    @T.prim_func
    def unscheduled(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        tmp = T.alloc_buffer((16,), "float32")
        acc = T.alloc_buffer((1,), "float32", scope="local")
        for i in range(16):
            acc[0] = A[i] * T.float32(2)
            tmp[i] = acc[0]
        for i in range(16):
            with T.block("reverse"):
                vi = T.axis.spatial(16, i)
                B[15 - vi] = tmp[vi] + T.float32(1)

    a = np.random.default_rng(1).random(16, dtype="float32")
    with pytest.warns(SingleThreadKernelWarning, match="runs as one example kernel of one thread"):
        got, mod = run(unscheduled, [a], (16,))
    np.testing.assert_allclose(got, (a * 2 + 1)[::-1])
    assert "blockIdx" in mod.imports[0].inspect_source()


def test_sblock_alloc_in_the_root_block_with_a_branch():
    @T.prim_func
    def copy_if(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
        A_shared = T.sblock_alloc_buffer((4, 4), "float32", scope="shared")
        for bx in T.thread_binding(1, "blockIdx.x"):
            for tx in T.thread_binding(1, "threadIdx.x"):
                if A[0, 0] > T.float32(-100):
                    for i, j in T.grid(4, 4):
                        A_shared[i, j] = A[i, j]
                    for i, j in T.grid(4, 4):
                        B[i, j] = A_shared[i, j] + T.float32(1)

    a = np.random.default_rng(1).random((4, 4), dtype="float32")
    got, _ = run(copy_if, [a], (4, 4))
    np.testing.assert_allclose(got, a + 1)


def test_an_accumulator_stays_above_the_loop_that_carries_it():
    # every use of acc is inside the k loop: moving it into the loop body would lose the sum
    @T.prim_func
    def row_sums(A: T.Buffer((4, 32, 8), "float32"), B: T.Buffer((4, 32), "float32")):
        acc = T.alloc_buffer((1,), "float32", scope="local")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for k in range(8):
                    if k == 0:
                        acc[0] = T.float32(0)
                    acc[0] = acc[0] + A[bx, tx, k]
                    if k == 7:
                        B[bx, tx] = acc[0]

    a = np.random.default_rng(2).random((4, 32, 8), dtype="float32")
    got, mod = run(row_sums, [a], (4, 32))
    np.testing.assert_allclose(got, a.sum(axis=2), rtol=1e-5)
    source = mod.imports[0].inspect_source()
    assert source.index("float acc[1];") < source.index("for (int32_t k = 0;")  # per thread, above k


def test_a_shared_buffer_two_kernels_use_lives_in_device_memory():
    # the second kernel reads what the first wrote: only device memory keeps it between launches
    @T.prim_func
    def two_kernels(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                S[bx * 32 + tx] = A[bx * 32 + tx] * T.float32(3)
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                B[bx * 32 + tx] = S[63 - bx * 32 - tx]

    a = np.random.default_rng(4).random(64, dtype="float32")
    with pytest.warns(MemoryPlacementWarning, match="'two_kernels': S outlive"):
        got, _ = run(two_kernels, [a], (64,))
    np.testing.assert_allclose(got, a[::-1] * 3)


def test_a_shared_buffer_of_one_kernel_in_a_host_loop_is_an_error_that_names_it():
    # one copy per block would lose the values between the loop's launches; one for the whole
    # device would be shared by blocks that each expect their own
    @T.prim_func
    def per_step(A: T.Buffer((64,), "float32"), B: T.Buffer((4, 64), "float32")):
        S = T.alloc_buffer((32,), "float32", scope="shared")
        for k in range(4):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    S[tx] = A[bx * 32 + tx] + T.float32(1)
                    B[k, bx * 32 + tx] = S[31 - tx]

    with pytest.raises(TIRVerifyError, match="shared buffer 'S' must be allocated inside a thread-bound loop"):
        tvm.compile(per_step, target="example")


def test_unscheduled_blocks_beside_launches_run_as_one_thread_kernels_in_order():
    @T.prim_func
    def half_scheduled(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
        tmp = T.alloc_buffer((32,), "float32")
        for i in range(32):  # left unscheduled: a kernel of one thread
            with T.block("prefix"):
                vi = T.axis.spatial(32, i)
                tmp[vi] = A[vi] + (tmp[vi - 1] if vi > 0 else T.float32(0))
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("scale"):
                vi = T.axis.spatial(32, tx)
                B[vi] = tmp[vi] * T.float32(2)

    a = np.random.default_rng(5).random(32, dtype="float32")
    with pytest.warns(SingleThreadKernelWarning, match="outside its thread-bound loops in 1 statement"):
        got, _ = run(half_scheduled, [a], (32,))
        lowered = tvm.tir.transform.lower(half_scheduled, tvm.target.Target("example"))
    np.testing.assert_allclose(got, np.cumsum(a) * 2, rtol=1e-5)
    assert len(lowered.kernels) == 2  # the one-thread prefix, then the 32-thread scale


def test_cpu_targets_are_left_alone():
    @T.prim_func
    def cpu_scratch(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        tmp = T.alloc_buffer((8,), "float32", scope="local")
        for i in range(8):
            tmp[i] = A[i] * T.float32(3)
        for i in range(8):
            B[i] = tmp[7 - i]

    a = np.arange(8, dtype="float32")
    out = tvm.runtime.empty((8,), "float32")
    tvm.compile(cpu_scratch, target="c")["cpu_scratch"](tvm.runtime.tensor(a), out)
    np.testing.assert_allclose(out.numpy(), a[::-1] * 3)


def test_a_serial_loop_around_kernels_launches_them_once_per_iteration_in_order():
    @T.prim_func
    def doubling(A: T.Buffer((5, 32), "float32")):
        for k in range(1, 5):
            for bx in T.thread_binding(1, thread="blockIdx.x"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    A[k, tx] = A[k - 1, tx] * T.float32(2)

    dev = tvm.device("example")
    a = np.zeros((5, 32), "float32")
    a[0] = np.random.default_rng(3).random(32, dtype="float32")
    t = tvm.runtime.tensor(a, dev)
    mod = tvm.compile(doubling, target="example")
    mod["doubling"](t)
    np.testing.assert_allclose(t.numpy(), a[0] * (2.0 ** np.arange(5))[:, None])
    assert "for" in mod.inspect_source()  # the loop stays on the host


def test_a_host_loop_that_reads_a_buffer_in_its_bounds_is_refused():
    @T.prim_func
    def data_dependent(A: T.Buffer((32,), "int32"), B: T.Buffer((32,), "float32")):
        for k in range(A[0]):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                B[tx] = B[tx] + T.float32(1)

    with pytest.raises(TIRVerifyError, match="host loop over 'k' has bounds that read a buffer"):
        tvm.compile(data_dependent, target="example")


def test_shared_memory_on_a_cpu_target_is_ordinary_memory_its_parallel_loops_share():
    @T.prim_func
    def cpu_shared(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        for i in T.parallel(64):
            S[i] = A[i] * T.float32(2)
        for i in range(64):
            B[i] = S[63 - i]

    a = np.random.default_rng(4).random(64, dtype="float32")
    out = tvm.runtime.empty((64,), "float32")
    tvm.compile(cpu_shared, target="c")["cpu_shared"](tvm.runtime.tensor(a), out)
    np.testing.assert_allclose(out.numpy(), a[::-1] * 2)
    assert cpu_shared.body.buffer.scope == "shared"  # the function itself is unchanged


@T.prim_func
def scheduled_matmul(
    A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")
):
    # as Apache TVM's schedules write a tiled matmul: whole-tensor shared and local buffers in the
    # root block, a cooperative copy nested in the thread loops, and no barriers
    A_shared = T.alloc_buffer((64, 64), scope="shared")
    B_shared = T.alloc_buffer((64, 64), scope="shared")
    C_local = T.alloc_buffer((64, 64), scope="local")
    for by in T.thread_binding(4, thread="blockIdx.y"):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    with T.sblock("init"):
                        vi = T.axis.spatial(64, by * 16 + ty)
                        vj = T.axis.spatial(64, bx * 16 + tx)
                        C_local[vi, vj] = T.float32(0)
                    for ko in range(4):
                        for ty2 in T.thread_binding(16, thread="threadIdx.y"):
                            for tx2 in T.thread_binding(16, thread="threadIdx.x"):
                                with T.sblock("A_shared"):
                                    vi = T.axis.spatial(64, by * 16 + ty2)
                                    vk = T.axis.spatial(64, ko * 16 + tx2)
                                    A_shared[vi, vk] = A[vi, vk]
                                with T.sblock("B_shared"):
                                    vk = T.axis.spatial(64, ko * 16 + ty2)
                                    vj = T.axis.spatial(64, bx * 16 + tx2)
                                    B_shared[vk, vj] = B[vk, vj]
                        for ki in range(16):
                            with T.sblock("update"):
                                vi = T.axis.spatial(64, by * 16 + ty)
                                vj = T.axis.spatial(64, bx * 16 + tx)
                                vk = T.axis.reduce(64, ko * 16 + ki)
                                C_local[vi, vj] = C_local[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]
                    with T.sblock("store"):
                        vi = T.axis.spatial(64, by * 16 + ty)
                        vj = T.axis.spatial(64, bx * 16 + tx)
                        C[vi, vj] = C_local[vi, vj]


def test_a_scheduled_matmul_gets_tile_sized_buffers_and_the_barriers_it_needs():
    dev = tvm.device("example")
    rng = np.random.default_rng(5)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    mod = tvm.compile(scheduled_matmul, target="example")
    c = tvm.runtime.empty((64, 64), "float32", dev)
    mod["scheduled_matmul"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
    shapes, syncs = allocations_and_barriers(scheduled_matmul)
    # one 16x16 tile per k step (shared), one element per thread (local): 2 KiB, not 32 KiB
    assert shapes == {"A_shared": [256], "B_shared": [256], "C_local": [1]}, shapes
    assert syncs == 2  # after the copy, and before the next step overwrites the tiles


@T.prim_func
def block_alloc_matmul(
    A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")
):
    # a block inside the thread loops allocates whole-tensor shared buffers each reduction step;
    # 16 threads copy a 16x16 tile through one fused index; no barriers written
    for by in T.thread_binding(4, thread="blockIdx.y"):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    for ko in range(4):
                        with T.sblock():
                            A_shared = T.sblock_alloc_buffer((64, 64), "float32", scope="shared")
                            B_shared = T.sblock_alloc_buffer((64, 64), "float32", scope="shared")
                            for f in range(16):
                                with T.sblock("A_shared"):
                                    vi = T.axis.spatial(64, by * 16 + (f * 16 + ty * 4 + tx) // 16)
                                    vk = T.axis.spatial(64, ko * 16 + (f * 16 + ty * 4 + tx) % 16)
                                    A_shared[vi, vk] = A[vi, vk]
                            for f in range(16):
                                with T.sblock("B_shared"):
                                    vk = T.axis.spatial(64, ko * 16 + (f * 16 + ty * 4 + tx) // 16)
                                    vj = T.axis.spatial(64, bx * 16 + (f * 16 + ty * 4 + tx) % 16)
                                    B_shared[vk, vj] = B[vk, vj]
                            for ki, i, j in T.grid(16, 4, 4):
                                with T.sblock("C"):
                                    vi = T.axis.spatial(64, by * 16 + ty * 4 + i)
                                    vj = T.axis.spatial(64, bx * 16 + tx * 4 + j)
                                    vk = T.axis.reduce(64, ko * 16 + ki)
                                    with T.init():
                                        C[vi, vj] = T.float32(0)
                                    C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]


def test_buffers_a_block_allocates_inside_the_launch_shrink_to_the_tile_and_get_barriers():
    dev = tvm.device("example")
    rng = np.random.default_rng(8)
    a, b = rng.random((64, 64), dtype="float32"), rng.random((64, 64), dtype="float32")
    mod = tvm.compile(block_alloc_matmul, target="example")
    c = tvm.runtime.empty((64, 64), "float32", dev)
    mod["block_alloc_matmul"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
    shapes, syncs = allocations_and_barriers(block_alloc_matmul)
    # the threads of a block share one 16x16 tile of each (a thread's own loops cover 4x4 of it)
    assert shapes == {"A_shared": [256], "B_shared": [256]}, shapes
    assert syncs, "the copies and the reads of the tiles need barriers between them"


def test_a_block_buffer_indexed_by_a_loop_around_it_holds_one_iteration():
    # B is declared with extent 1 in the dimension that the loop around its block indexes: the
    # region each allocation touches is one column, as Apache TVM's compaction defines it
    @T.prim_func
    def per_step(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for i in range(16):
                with T.sblock():
                    B = T.sblock_alloc_buffer((16, 1), "float32", scope="shared")
                    B[tx, i] = A[tx, i] * T.float32(2)
                    C[tx, i] = B[tx, i] + T.float32(1)

    a = np.random.default_rng(10).random((16, 16), dtype="float32")
    got, _ = run(per_step, [a], (16, 16))
    np.testing.assert_allclose(got, a * 2 + 1, rtol=1e-6)


def test_a_local_tile_reloaded_every_step_holds_one_step():
    """dlight's pattern: a whole-tensor local buffer at the root, loaded by a copy nested in the
    reduction loops and read right after, indexed by the row split across block and thread
    (``(by * 64 + ty * 16 + i) // 16``): each thread holds one step's 16 values."""

    @T.prim_func
    def reload(A: T.Buffer((16, 4, 16), "float32"), W: T.Buffer((4, 16), "float32"), C: T.Buffer((64, 16), "float32")):
        A_local = T.alloc_buffer((64, 4, 16), "float32", scope="local")
        for by in T.thread_binding(1, thread="blockIdx.y"):
            for ty in T.thread_binding(4, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    for i in range(16):
                        C[by * 64 + ty * 16 + tx, i] = T.float32(0)
                    for k0, k1 in T.grid(2, 2):
                        for v in range(16):
                            A_local[by * 4 + ty, k0 * 2 + k1, v] = A[by * 16 + ty * 4 + tx // 4, k0 * 2 + k1, v]
                        for i in range(16):
                            C[by * 64 + ty * 16 + tx, i] = (
                                C[by * 64 + ty * 16 + tx, i]
                                + A_local[(by * 64 + ty * 16 + i) // 16, k0 * 2 + k1, i] * W[k0 * 2 + k1, i]
                            )

    rng = np.random.default_rng(13)
    a, w = rng.random((16, 4, 16), dtype="float32"), rng.random((4, 16), dtype="float32")
    got, _ = run(reload, [a, w], (64, 16))
    rows = [r // 16 * 4 + r % 16 // 4 for r in range(64)]
    np.testing.assert_allclose(got, (a[rows] * w).sum(axis=1), rtol=1e-5)
    shapes, _ = allocations_and_barriers(reload)
    assert shapes == {"A_local": [16]}, shapes  # flattened: one step of one row


def test_a_loop_whose_variable_only_some_accesses_use_stays_varying():
    """Meta-schedule's virtual threads: each step of ``v`` reloads the tile (so ``v`` could
    count as fixed), but only the reads use ``v``; the tile then spans both steps' reads."""

    @T.prim_func
    def steps(A: T.Buffer((64,), "float32"), B: T.Buffer((128,), "float32")):
        S = T.alloc_buffer((64,), "float32", scope="shared")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for v in range(2):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    S[tx] = A[bx * 16 + tx]
                    B[bx * 32 + v * 16 + tx] = S[v * 8 + tx % 8]

    a = np.random.default_rng(14).random(64, dtype="float32")
    got, _ = run(steps, [a], (128,))
    want = [a[i // 32 * 16 + (i % 32 // 16) * 8 + i % 8] for i in range(128)]
    np.testing.assert_allclose(got, want)
    assert allocations_and_barriers(steps)[0] == {"S": [16]}


def test_an_element_passed_as_an_address_keeps_the_buffer_whole():
    @T.prim_func
    def by_address(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            R = T.alloc_buffer((8,), "float32", scope="local")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                R[0] = A[bx * 32 + tx]
                T.evaluate(T.call_extern("int32", "fill_eight", T.address_of(R[0])))
                A[bx * 32 + tx] = R[3]

    shapes, _ = allocations_and_barriers(by_address)
    assert shapes == {"R": [8]}, "fill_eight may write all eight elements through the address"


def test_a_kernel_with_barriers_of_its_own_is_left_as_written():
    @T.prim_func
    def own_barriers(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            S = T.alloc_buffer((32,), "float32", scope="shared")
            S[tx] = A[tx]
            T.tvm_storage_sync("shared")
            B[tx] = S[31 - tx]
            B[tx] = B[tx] + S[tx]

    assert allocations_and_barriers(own_barriers)[1] == 1
    a = np.random.default_rng(9).random(32, dtype="float32")
    got, _ = run(own_barriers, [a], (32,))
    np.testing.assert_allclose(got, a[::-1] + a)


def test_a_race_under_a_thread_dependent_condition_is_an_error_naming_the_buffer():
    @T.prim_func
    def divergent(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
        S = T.alloc_buffer((32,), "float32", scope="shared")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                if tx < 16:
                    S[tx] = A[tx]
                    B[tx] = S[15 - tx]

    with pytest.raises(TIRVerifyError, match="shared buffer S is written and read by different threads under a"):
        tvm.compile(divergent, target="example")


def test_a_local_buffer_enters_a_host_loop_when_each_launch_writes_it_first():
    # one launch per row; no launch sees another's registers, and none needs to
    @T.prim_func
    def per_row(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8, 64), "float32")):
        tmp = T.alloc_buffer((1,), "float32", scope="local")
        for i in range(8):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                tmp[0] = A[i, tx] * T.float32(3)
                B[i, tx] = tmp[0] + T.float32(1)

    a = np.random.default_rng(5).random((8, 64), dtype="float32")
    got, _ = run(per_row, [a], (8, 64))
    np.testing.assert_allclose(got, a * 3 + 1, rtol=1e-6)


def test_a_local_buffer_a_launch_reads_before_writing_stays_refused():
    # the read would see the previous launch's value, which no GPU keeps
    @T.prim_func
    def carried(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8, 64), "float32")):
        tmp = T.alloc_buffer((1,), "float32", scope="local")
        for i in range(8):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                B[i, tx] = tmp[0]
                tmp[0] = A[i, tx]

    with pytest.raises(TIRVerifyError, match="local buffer 'tmp' must be allocated inside a thread-bound loop"):
        tvm.compile(carried, target="example")

    # written first, but element 1 is read and only element 0 written: element 1 would be carried
    @T.prim_func
    def other_element(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8, 64), "float32")):
        tmp = T.alloc_buffer((2,), "float32", scope="local")
        for i in range(8):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                tmp[0] = A[i, tx]
                B[i, tx] = tmp[1]

    with pytest.raises(TIRVerifyError, match="local buffer 'tmp' must be allocated inside a thread-bound loop"):
        tvm.compile(other_element, target="example")


def test_a_local_buffer_of_symbolic_size_shrinks_to_what_each_thread_touches():
    # dlight-style: the local buffer has the whole tensor's (symbolic) shape; each thread uses
    # one element, indexed through a one-thread axis and a one-iteration loop
    @T.prim_func
    def scaled(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            acc = T.alloc_buffer((n,), "float32", scope="local")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                for ty in T.thread_binding(1, thread="threadIdx.y"):
                    for k in range(1):
                        if bx * 64 + tx < n:
                            acc[bx * 64 + tx + ty + k] = A[bx * 64 + tx] * T.float32(2)
                            B[bx * 64 + tx] = acc[bx * 64 + tx] + T.float32(1)

    a = np.random.default_rng(6).random(1000, dtype="float32")
    got, mod = run(scaled, [a], (1000,))
    np.testing.assert_allclose(got, a * 2 + 1, rtol=1e-6)
    assert "acc[1];" in mod.imports[0].inspect_source()


def test_warp_memory_lives_in_shared_memory_and_tagged_scopes_in_their_base():
    # each warp reverses its 32 values through "warp" memory: lanes read each other's elements
    @T.prim_func
    def reverse_in_warps(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        W = T.alloc_buffer((4, 32), "float32", scope="warp")
        tmp = T.alloc_buffer((1,), "float32", scope="local.L0A")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for wy in T.thread_binding(4, thread="threadIdx.y"):
                for lane in T.thread_binding(32, thread="threadIdx.x"):
                    W[wy, lane] = A[wy * 32 + lane]
                    tmp[0] = W[wy, 31 - lane]
                    B[wy * 32 + lane] = tmp[0]

    a = np.random.default_rng(7).random(128, dtype="float32")
    got, _ = run(reverse_in_warps, [a], (128,))
    np.testing.assert_array_equal(got, a.reshape(4, 32)[:, ::-1].reshape(-1))
    with pytest.raises(Exception, match="unknown storage scope 'texture'"):

        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            X = T.alloc_buffer((4,), "float32", scope="texture")
            X[0] = A[0]


def test_a_kernel_without_block_loops_keeps_its_shared_buffer_in_its_one_block():
    # threadIdx only: the root shared buffer belongs to the kernel's one block; each thread
    # writes a row and reads a column, so the barrier between the loops matters
    @T.prim_func
    def transpose_plus_one(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        B = T.alloc_buffer((64, 64), scope="shared")
        for i in T.thread_binding(64, thread="threadIdx.x"):
            for j in T.serial(64):
                B[i, j] = A[i, j] * T.float32(2)
            for j in T.serial(64):
                C[j, i] = B[j, i] + T.float32(1)

    a = np.random.default_rng(8).random((64, 64), dtype="float32")
    got, mod = run(transpose_plus_one, [a], (64, 64))
    np.testing.assert_allclose(got, a * 2 + 1, rtol=1e-6)
    cuda = tvm.compile(transpose_plus_one, target="cuda").imports[0].inspect_source("cuda")
    assert "__shared__ __align__(32) float B[4096];" in cuda


@T.prim_func
def rfactor_gemv(A: T.Buffer((32, 128, 16), "float32"), B: T.Buffer((32, 128), "float32")):
    rf = T.alloc_buffer((16, 32, 128), "float32", scope="local")
    for bx in T.thread_binding(64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for j in range(4):
                    with T.block("init"):
                        vy = T.axis.spatial(16, ty)
                        v0 = T.axis.spatial(32, (bx * 16 + tx) // 128 * 4 + j)
                        v1 = T.axis.spatial(128, (bx * 16 + tx) % 128)
                        rf[vy, v0, v1] = A[v0, v1, vy]
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for j in range(4):
                for ty in T.thread_binding(16, thread="threadIdx.y"):
                    with T.block("red"):
                        vy = T.axis.reduce(16, ty)
                        v0 = T.axis.spatial(32, bx // 8 * 4 + j)
                        v1 = T.axis.spatial(128, bx % 8 * 16 + tx)
                        with T.init():
                            B[v0, v1] = T.float32(0)
                        B[v0, v1] = B[v0, v1] + rf[vy, v0, v1]


def test_a_thread_buffer_indexed_two_ways_shrinks_to_what_the_thread_touches():
    """dlight's rfactor GEMV writes rf at (bx*16+tx)//128*4+j and reads it at bx//8*4+j, the same
    element for tx below 16: the whole-tensor local buffer (256 KiB per thread: refused on OpenCL,
    and lavapipe's shader compiler crashed on it) shrinks to the thread's 4 elements."""
    shapes, _ = allocations_and_barriers(rfactor_gemv)
    assert shapes["rf"] == [4], shapes
    a = np.random.default_rng(6).random((32, 128, 16), dtype="float32")
    got, _ = run(rfactor_gemv, [a], (32, 128))
    np.testing.assert_allclose(got, a.sum(axis=-1), rtol=1e-5)
