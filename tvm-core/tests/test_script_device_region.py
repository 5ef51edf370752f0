"""Apache TVM's TIRx device regions: ``T.device_entry()`` makes the rest of the function one
kernel, launched over the scope ids declared in it (``T.cta_id`` blocks, ``T.thread_id``
threads, x first; ``T.warp_id`` / ``T.lane_id`` / ``T.warpgroup_id`` / ``T.warp_id_in_wg`` /
``T.thread_id_in_wg`` parts of the linear thread index; one thread when it declares none).
Each kernel runs on the example device and is compared with NumPy; what cannot be launched is
refused by name."""

import re

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.script.diagnostics import TVMScriptError
from tvm.tir.analysis import structural_equal

TARGET = "example"


def run(func, *arrays):
    """Compile ``func`` for the example device, run it on ``arrays`` and return them as NumPy."""
    dev = tvm.device(TARGET, 0)
    tensors = [tvm.runtime.tensor(a, dev) for a in arrays]
    tvm.compile(func, target=TARGET)(*tensors)
    return [t.numpy() for t in tensors]


@T.prim_func
def scale(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.device_entry()
    bx = T.cta_id([2])
    tx = T.thread_id([128])
    B[bx * 128 + tx] = A[bx * 128 + tx] * 2.0


def test_blocks_and_threads():
    a = np.random.default_rng(0).standard_normal(256).astype("float32")
    _, b = run(scale, a, np.zeros(256, "float32"))
    np.testing.assert_array_equal(b, a * 2)


@T.prim_func
def grid_2d(A: T.Buffer((3, 4, 8, 2), "int32")):
    T.device_entry()
    bx, by = T.cta_id([3, 4])
    tx, ty = T.thread_id([8, 2], dtype="uint32")
    A[bx, by, T.int32(tx), T.int32(ty)] = bx * 1000 + by * 100 + T.int32(tx) * 10 + T.int32(ty)


def test_several_dimensions_x_first():
    (out,) = run(grid_2d, np.zeros((3, 4, 8, 2), "int32"))
    i, j, k, m = np.indices((3, 4, 8, 2))
    np.testing.assert_array_equal(out, i * 1000 + j * 100 + k * 10 + m)


@T.prim_func
def warps_and_lanes(A: T.Buffer((4, 128), "int32")):
    T.device_entry()
    bx = T.cta_id([4])
    w = T.warp_id([4])
    lane = T.lane_id([32])
    tid = T.thread_id()  # the block size the warps tell: 128
    A[bx, tid] = bx * 10000 + w * 100 + lane


def test_warp_and_lane_ids():
    (out,) = run(warps_and_lanes, np.zeros((4, 128), "int32"))
    b, t = np.indices((4, 128))
    np.testing.assert_array_equal(out, b * 10000 + (t // 32) * 100 + t % 32)


@T.prim_func
def warpgroups(A: T.Buffer((256, 4), "int32")):
    T.device_entry()
    tx, ty = T.thread_id([64, 4])
    wg = T.warpgroup_id([2])
    w = T.warp_id_in_wg([4])
    t = T.thread_id_in_wg([128])
    lane = T.lane_id()
    A[ty * 64 + tx, 0] = wg
    A[ty * 64 + tx, 1] = w
    A[ty * 64 + tx, 2] = t
    A[ty * 64 + tx, 3] = lane


def test_warpgroup_ids_of_the_linear_thread_index():
    (out,) = run(warpgroups, np.zeros((256, 4), "int32"))
    t = np.arange(256)
    np.testing.assert_array_equal(out, np.stack([t // 128, (t // 32) % 4, t % 128, t % 32], axis=1))


@T.prim_func
def one_thread(A: T.Buffer((10,), "int32")):
    T.device_entry()
    for i in T.serial(10):
        if i == 2:
            continue
        if i == 7:
            break
        A[i] = i * 3


def test_a_region_without_ids_runs_on_one_thread():
    (out,) = run(one_thread, np.full(10, -1, "int32"))
    np.testing.assert_array_equal(out, [0, 3, -1, 9, 12, 15, 18, -1, -1, -1])
    assert "threadIdx.x" in one_thread.script()


@T.prim_func
def block_sum(A: T.Buffer((4, 128), "float32"), B: T.Buffer((4,), "float32"), scale: T.float32):
    doubled = scale * 2.0  # host code, before the region
    T.device_entry()
    S = T.alloc_shared((128,), "float32")  # before the ids: still one per block
    bx = T.cta_id([4])
    tx = T.thread_id([128])
    S[tx] = A[bx, tx] * doubled
    T.tvm_storage_sync("shared")
    if tx == 0:
        total = T.alloc_local((1,), "float32")
        total[0] = T.float32(0)
        for i in T.serial(128):
            total[0] = total[0] + S[i]
        B[bx] = total[0]


def test_shared_memory_barrier_and_host_values():
    a = np.random.default_rng(1).standard_normal((4, 128)).astype("float32")
    dev = tvm.device(TARGET, 0)
    ta, tb = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(np.zeros(4, "float32"), dev)
    tvm.compile(block_sum, target=TARGET)(ta, tb, 0.5)
    np.testing.assert_allclose(tb.numpy(), a.sum(axis=1), rtol=1e-5, atol=1e-5)


@T.prim_func
def launch_hints(A: T.Buffer((4,), "int32")):
    T.device_entry()
    T.attr({"tirx.launch_bounds_min_blocks_per_sm": 1})
    bx = T.cta_id([4])
    tx = T.thread_id([32])
    if tx == 0:
        A[bx] = A[bx] + 1


def test_launch_bound_hints_are_taken():
    (out,) = run(launch_hints, np.arange(4, dtype="int32"))
    np.testing.assert_array_equal(out, np.arange(4) + 1)


@T.prim_func
def explicit_launch(A: T.Buffer((32,), "int32")):
    T.device_entry()
    tx = T.launch_thread("threadIdx.x", 32)
    A[tx] = tx * 2


def test_a_region_that_launches_its_own_threads_is_left_as_written():
    (out,) = run(explicit_launch, np.zeros(32, "int32"))
    np.testing.assert_array_equal(out, np.arange(32) * 2)


@T.prim_func
def ids_where_they_are_used(A: T.Buffer((64,), "int32"), B: T.Buffer((2,), "int32")):
    T.device_entry()
    tx: T.int32 = T.thread_id([T.int64(64)])
    if T.lane_id() == 0:  # an id declared where it is used, as Apache TVM's TIRx kernels write it
        B[T.warp_id()] = tx + T.lane_id() + 1
    A[tx] = T.warp_id() * 100 + tx


def test_ids_declared_inside_expressions_and_annotated():
    a, b = run(ids_where_they_are_used, np.zeros(64, "int32"), np.zeros(2, "int32"))
    np.testing.assert_array_equal(a, np.arange(64) // 32 * 100 + np.arange(64))
    np.testing.assert_array_equal(b, [1, 33])


@pytest.mark.parametrize(
    "func", [scale, grid_2d, warps_and_lanes, warpgroups, one_thread, block_sum, ids_where_they_are_used]
)
def test_printed_text_parses_back_to_the_same_function(func):
    again = tvm.script.from_source(func.script())
    assert structural_equal(again, func)


REFUSED = {
    "T.thread_id is an id of a device region: call T.device_entry() before it": """
def f(A: T.Buffer((32,), "int32")):
    tx = T.thread_id([32])
    A[tx] = 0
""",
    "T.device_entry() is called twice": """
def f(A: T.Buffer((32,), "int32")):
    T.device_entry()
    T.device_entry()
    A[0] = 0
""",
    "T.device_entry() must be at the top level": """
def f(A: T.Buffer((32,), "int32")):
    for i in range(2):
        T.device_entry()
        A[i] = 0
""",
    "declares the launch, so it must be at the device region's own level": """
def f(A: T.Buffer((32,), "int32")):
    T.device_entry()
    for i in range(2):
        tx = T.thread_id([32])
        A[tx] = i
""",
    "T.cta_id() without extents: give the number of blocks": """
def f(A: T.Buffer((32,), "int32")):
    T.device_entry()
    bx = T.cta_id()
    A[bx] = 0
""",
    "T.thread_id() without extents: give the number of threads": """
def f(A: T.Buffer((32,), "int32")):
    T.device_entry()
    tx = T.thread_id()
    A[tx] = 0
""",
    "T.warp_id([3]) in a block of 100 threads, which has 3.125 warps": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    w = T.warp_id([3])
    tx = T.thread_id([100])
    A[tx] = w
""",
    "T.thread_id is declared again with other extents (64; before: 128)": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    tx = T.thread_id([128])
    ty = T.thread_id([64])
    A[tx] = ty
""",
    "T.cta_id takes one to three extents (x, y, z), got 4": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    a, b, c, d = T.cta_id([2, 2, 2, 2])
    A[a] = b + c + d
""",
    "T.thread_id: an extent must be in [1, 2147483647], got 0": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    tx = T.thread_id([0])
    A[tx] = 0
""",
    "T.cta_id with 2 extent(s) gives 2 variable(s); 1 name(s) are assigned": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    bx = T.cta_id([2, 2])
    A[0] = 0
""",
    "T.lane_id([16]): it always has 32 values": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    tx = T.thread_id([32])
    lane = T.lane_id([16])
    A[tx] = lane
""",
    "T.lane_id needs the number of threads of the block": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    lane = T.lane_id([32])
    A[lane] = 0
""",
    "T.thread_id: dtype must be 'int32', 'uint32' or 'int64'": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    tx = T.thread_id([32], dtype="float32")
    A[0] = 0
""",
    "T.attr key 'tirx.cluster_dims' is not supported": """
def f(A: T.Buffer((128,), "int32")):
    T.device_entry()
    T.attr({"tirx.cluster_dims": 2})
    tx = T.thread_id([32])
    A[tx] = 0
""",
    "block 'r' reduces over lane, a scope id computed from the thread index": """
def f(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
    T.device_entry()
    tx = T.thread_id([32])
    lane = T.lane_id()
    with T.block("r"):
        vk = T.axis.reduce(32, lane)
        with T.init():
            B[0] = T.float32(0)
        B[0] = B[0] + A[vk]
""",
    "T.warp_id counts the threads T.thread_id declares, and a T.thread_binding": """
def f(A: T.Buffer((4, 32), "int32")):
    T.device_entry()
    tx = T.thread_id([32])
    w = T.warp_id()
    for ty in T.thread_binding(4, thread="threadIdx.y"):
        A[ty, tx] = w
""",
    "T.device_entry() gives no value: write it as a statement of its own": """
def f(A: T.Buffer((128,), "int32")):
    d = T.device_entry()
    A[0] = 0
""",
    "T.thread_id: its extent uses 'k', which the device region defines; the launch wraps the whole region": """
def f(A: T.Buffer((64,), "int32"), n: T.int32):
    T.device_entry()
    k = n * 2
    tx = T.thread_id([k])
    A[tx] = 1
""",
    "T.cta_id: its extent uses 'tx', which the device region defines": """
def f(A: T.Buffer((64,), "int32")):
    T.device_entry()
    tx = T.thread_id([4])
    bx = T.cta_id([tx + 1])
    A[bx] = 1
""",
    "T.cta_id: an extent must be in [1, 2147483647], got 8589934592": """
def f(A: T.Buffer((32,), "int32")):
    T.device_entry()
    bx = T.cta_id([T.int64(2**33)])
    A[0] = bx
""",
    "T.lane_id in a device region opened inside thread loops (T.launch_thread, T.thread_binding)": """
def f(A: T.Buffer((64,), "int32")):
    t = T.launch_thread("threadIdx.x", 64)
    T.device_entry()
    A[t] = T.lane_id()
""",
    "T.thread_id([32]) is a value of dtype int32, not a buffer": """
def f(A: T.Buffer((64,), "int32")):
    T.device_entry()
    tx = T.thread_id([32])[0]
    A[tx] = 1
""",
}


@pytest.mark.parametrize("message", list(REFUSED))
def test_what_cannot_be_launched_is_refused_by_name(message):
    with pytest.raises(TVMScriptError, match=re.escape(message)):
        tvm.script.from_source("@T.prim_func\n" + REFUSED[message].lstrip("\n"))


@T.prim_func
def unsigned_thread_count(A: T.Buffer((64,), "int32"), n: T.uint32):
    T.device_entry()
    tx = T.thread_id([n])
    A[tx] = tx + 1


@T.prim_func
def id_declared_twice(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
    T.device_entry()
    tx = T.thread_id([32])
    again = T.thread_id()  # the launch declared above, under another name: the same variable
    with T.block("sum"):
        vk = T.axis.reduce(32, again)
        with T.init():
            B[0] = T.float32(0)
        B[0] = B[0] + A[vk]
    if tx == 0:
        A[0] = T.float32(-1)


def test_an_unsigned_extent_and_an_id_declared_again():
    dev = tvm.device(TARGET, 0)
    a = tvm.runtime.tensor(np.zeros(64, "int32"), dev)
    tvm.compile(unsigned_thread_count, target=TARGET)(a, 40)
    np.testing.assert_array_equal(a.numpy(), np.where(np.arange(64) < 40, np.arange(64) + 1, 0))
    a, b = run(id_declared_twice, np.arange(32, dtype="float32"), np.zeros(1, "float32"))
    assert b[0] == np.arange(32).sum() and a[0] == -1


@T.prim_func
def wide_block_count(A: T.Buffer((8,), "int32"), n: T.int64):
    T.device_entry()
    bx = T.cta_id([n])
    if bx < 8:
        A[bx] = 1


def test_a_block_count_past_int32_is_refused_at_launch_not_narrowed():
    dev = tvm.device(TARGET, 0)
    a = tvm.runtime.tensor(np.zeros(8, "int32"), dev)
    f = tvm.compile(wide_block_count, target=TARGET)
    f(a, 8)
    np.testing.assert_array_equal(a.numpy(), np.ones(8))
    with pytest.raises(ValueError, match=r"launch extent blockIdx.x = 4294967298 is out of range"):
        f(a, 2**32 + 2)


@T.prim_func
def count_in_memory(A: T.Buffer((32,), "int32"), N: T.Buffer((1,), "int32")):
    T.device_entry()
    bx = T.cta_id([N[0] % 4 + 1])
    A[bx] = bx + 1


def test_a_launch_extent_read_from_memory_is_refused():
    with pytest.raises(tvm.tir.transform.TIRVerifyError, match="launch extent of blockIdx.x .* reads 'N' from memory"):
        tvm.compile(count_in_memory, target=TARGET)


def test_extents_from_shapes_made_in_python_and_unsigned_counts():
    """A size variable made in Python (``tvm.tir.Var``, as Apache TVM's tests write shapes) was
    taken for a name the region defines; a uint64 block count past int32 was narrowed and a
    uint32 one shown negative."""
    n = tvm.tir.Var("n", "int32")

    @T.prim_func
    def by_shape(A: T.Buffer((n,), "int32")):
        T.device_entry()
        tx = T.thread_id([A.shape[0]])
        A[tx] = tx * 3

    (out,) = run(by_shape, np.zeros(20, "int32"))
    np.testing.assert_array_equal(out, np.arange(20) * 3)

    @T.prim_func
    def blocks(A: T.Buffer((8,), "int32"), m: T.uint64, k: T.uint32):
        T.device_entry()
        bx = T.cta_id([m])
        if bx < 8:
            A[bx] = T.Cast("int32", k)

    f = tvm.compile(blocks, target=TARGET)
    a = tvm.runtime.tensor(np.zeros(8, "int32"), tvm.device(TARGET, 0))
    f(a, 8, 5)
    np.testing.assert_array_equal(a.numpy(), np.full(8, 5))
    with pytest.raises(ValueError, match=r"launch extent blockIdx.x = 4294967298 is out of range"):
        f(a, 2**32 + 2, 5)

    @T.prim_func
    def threads(A: T.Buffer((8,), "int32"), k: T.uint32):
        T.device_entry()
        tx = T.thread_id([k])
        if tx < 8:
            A[tx] = 1

    with pytest.raises(ValueError, match=r"launch extent threadIdx.x = 2147483653 is out of range"):
        tvm.compile(threads, target=TARGET)(a, 2**31 + 5)
