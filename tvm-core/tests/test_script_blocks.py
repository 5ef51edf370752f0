"""Blocks as Apache TVM writes them (``T.block``/``T.sblock``, ``T.axis.spatial/reduce/remap``,
``T.init``, ``T.where``, ``T.reads``/``T.writes``, allocations in blocks) are lowered to plain
statements; each kernel compiles, runs and matches NumPy."""

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T


@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, [64, 32])
    B = T.match_buffer(b, [48, 32])
    C = T.match_buffer(c, [64, 48])
    for i, j, k in T.grid(64, 48, 32):
        with T.block("update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(C[vi, vj], A[vi, vk], B[vj, vk])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


def test_reduction_block_with_init():
    a, b = np.random.rand(64, 32).astype("float32"), np.random.rand(48, 32).astype("float32")
    c = tvm.runtime.tensor(np.full((64, 48), 7, "float32"))  # garbage the init must overwrite
    tvm.compile(matmul, target="c")["matmul"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b.T, rtol=1e-5)


@T.prim_func
def grid_as_one_name(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32")):
    for ij in T.grid(4, 6):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", ij)
            B[vi, vj] = A[vi, vj] * T.float32(2) + T.Cast("float32", ij[1])


def test_one_name_for_a_grid_is_the_tuple_of_its_loop_variables():
    """``for ij in T.grid(m, n)`` binds ij to (ij_0, ij_1), as Apache TVM does."""
    a = np.random.rand(4, 6).astype("float32")
    b = tvm.runtime.tensor(np.zeros((4, 6), "float32"))
    tvm.compile(grid_as_one_name, target="c")["grid_as_one_name"](tvm.runtime.tensor(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + np.arange(6, dtype="float32")[None, :])
    assert "for ij_1 in range(6)" in grid_as_one_name.script()


@T.prim_func
def root_block_where(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (100,), "float32")
    C = T.match_buffer(c, (100,), "float32")
    with T.sblock("root"):
        T.reads([])
        T.writes([])
        B = T.alloc_buffer((100,), "float32")
        for io, ii in T.grid(4, 32):
            with T.sblock("B"):
                vi = T.axis.spatial(100, io * 32 + ii)
                T.where(io * 32 + ii < 100)
                B[vi] = A[vi] * T.float32(2)
        for i in range(100):
            with T.sblock("C"):
                vi = T.axis.remap("S", [i])
                T.block_attr({"meta_schedule.auto_tensorize": "x"})
                C[vi] = B[vi] + T.float32(1)


def test_root_block_allocation_and_where():
    a = np.random.rand(100).astype("float32")
    c = tvm.runtime.empty((100,), "float32")
    tvm.compile(root_block_where, target="c")["root_block_where"](tvm.runtime.tensor(a), c)
    np.testing.assert_allclose(c.numpy(), a * 2 + 1, rtol=1e-6)


@T.prim_func
def row_sum_ranges(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16, 40), "float32")
    B = T.match_buffer(b, (16,), "float32")
    for i in range(16):
        for k in range(8, 40):
            with T.block("sum"):
                vi = T.axis.spatial(16, i)
                vk = T.axis.reduce((8, 40), k)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def test_reduce_axis_over_a_range_starts_at_its_domain():
    a = np.random.rand(16, 40).astype("float32")
    b = tvm.runtime.tensor(np.full(16, 99, "float32"))
    tvm.compile(row_sum_ranges, target="c")["row_sum_ranges"](tvm.runtime.tensor(a), b)
    np.testing.assert_allclose(b.numpy(), a[:, 8:].sum(axis=1), rtol=1e-5)


@T.prim_func
def gpu_blocks(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (256,), "float32")
    B = T.match_buffer(b, (256,), "float32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, bx * 64 + tx)
                B[vi] = T.exp(A[vi])


def test_blocks_under_thread_bindings_run_on_a_device():
    dev = tvm.device("example")
    a = np.random.rand(256).astype("float32")
    b = tvm.runtime.empty((256,), "float32", dev)
    tvm.compile(gpu_blocks, target="example")["gpu_blocks"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_allclose(b.numpy(), np.exp(a), rtol=1e-5)


def test_axis_outside_a_block_is_an_error():
    source = """
from tvm.script import tir as T

@T.prim_func
def bad(A: T.Buffer((4,), "float32")):
    for i in range(4):
        vi = T.axis.spatial(4, i)
        A[vi] = T.float32(0)
"""
    with pytest.raises(TVMScriptError, match="inside a 'with T.block"):
        tvm.script.parse(source)


@T.prim_func
def tile_views(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (32, 32), "float32")
    B = T.match_buffer(b, (32, 32), "float32")
    for i, j in T.grid(2, 2):
        with T.block("tile"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi * 16 : vi * 16 + 16, vj * 16 : vj * 16 + 16])
            T.writes(B[vi * 16 : vi * 16 + 16, vj * 16 : vj * 16 + 16])
            AA = T.match_buffer(A[vi * 16 : vi * 16 + 16, vj * 16 : vj * 16 + 16], (16, 16))
            BB = T.match_buffer(B[vi * 16 : vi * 16 + 16, vj * 16 : vj * 16 + 16], (16, 16))
            row = T.match_buffer(A[vi * 16 + 3, vj * 16 : vj * 16 + 16], (16,))
            for x, y in T.grid(16, 16):
                BB[x, y] = AA[x, y] * T.float32(2) + row[y]


def test_match_buffer_of_a_region_is_a_view():
    a = np.random.rand(32, 32).astype("float32")
    b = tvm.runtime.empty((32, 32), "float32")
    tvm.compile(tile_views, target="c")["tile_views"](tvm.runtime.tensor(a), b)
    want = np.empty_like(a)
    for i in range(2):
        for j in range(2):
            tile = a[i * 16 : i * 16 + 16, j * 16 : j * 16 + 16]
            want[i * 16 : i * 16 + 16, j * 16 : j * 16 + 16] = tile * 2 + a[i * 16 + 3, j * 16 : j * 16 + 16]
    np.testing.assert_allclose(b.numpy(), want, rtol=1e-6)


@T.prim_func
def tile_views_shape_left_out(A: T.Buffer((32, 32), "float16")):
    for ti, tj, i, j in T.grid(2, 2, 16, 16):
        with T.block("compute"):
            vti, vtj, vi, vj = T.axis.remap("SSSS", [ti, tj, i, j])
            tile = T.match_buffer(A[vti * 16 : (vti + 1) * 16, vtj * 16 : (vtj + 1) * 16])
            tile[vi, vj] = T.float16(vti * 10 + vtj)


def test_match_buffer_of_a_region_without_shape_takes_its_extents_and_dtype():
    """As in Apache TVM: ``T.match_buffer(A[i * 16:(i + 1) * 16, ...])`` is a view shaped as the
    region (its extents worked out from the bounds) of the buffer's dtype."""
    a = tvm.runtime.tensor(np.zeros((32, 32), "float16"))
    tvm.compile(tile_views_shape_left_out, target="c")["tile_views_shape_left_out"](a)
    want = np.zeros((32, 32), "float16")
    want[:16, 16:], want[16:, :16], want[16:, 16:] = 1, 10, 11
    np.testing.assert_array_equal(a.numpy(), want)


def test_match_buffer_without_shape_needs_one_for_a_parameter_or_an_open_region():
    with pytest.raises(TVMScriptError, match=r"T.match_buffer of a parameter needs its shape"):

        @T.prim_func
        def of_a_handle(a: T.handle):
            A = T.match_buffer(a)
            A[0] = T.float32(1)

    with pytest.raises(TVMScriptError, match=r"a region whose extents are not known here needs the view's shape"):

        @T.prim_func
        def open_region(A: T.Buffer((32,), "float32"), n: T.int32):
            for i in range(1):
                with T.block("b"):
                    V = T.match_buffer(A[0:n])
                    V[0] = T.float32(1)


@pytest.mark.parametrize("region", ["A[0:8:2, 0:4]", "A[i, 0:8:2]"])
def test_a_region_with_a_step_is_refused(region):
    """The step was dropped: the view read rows 0-3 for A[0:8:2] (no region of Apache TVM has one)."""
    source = f"""
@T.prim_func
def f(A: T.Buffer((8, 8), "float32"), B: T.Buffer((4, 4), "float32")):
    for i in range(4):
        with T.block("b"):
            S = T.match_buffer({region})
            B[i, 0] = T.float32(1)
"""
    with pytest.raises(TVMScriptError, match=r"a buffer region cannot have a step \(A\[0:8:2\]\)"):
        tvm.script.parse(source, extra_vars={"T": T})


def test_a_region_of_a_vector_index_is_refused_by_name():
    source = """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    with T.block("b"):
        S = T.match_buffer(A[T.ramp(0, 1, 4) + T.broadcast(1, 4)], (4,), "float32")
        S[0] = T.float32(1)
"""
    with pytest.raises(TVMScriptError, match=r"a region's index is a slice \(A\[i, 0:4\]\) or one element"):
        tvm.script.parse(source, extra_vars={"T": T})


@pytest.mark.parametrize("func", ["tile_views", "batched_tile_views"])
def test_lowered_region_views_compile_again(func):
    """A flat view states an extent that covers its region's offset (folded into every index), so
    the lowered function, printed and read back too, compiles again and gives the same bits."""
    func = {"tile_views": tile_views, "batched_tile_views": batched_tile_views}[func]
    lowered = tvm.tir.transform.lower(func, "c").host
    shape = tuple(int(d) for d in func.buffer_map[func.params[0]].shape)
    a = np.random.rand(*shape).astype("float32")
    outputs = []
    for f in (func, lowered, tvm.script.parse(lowered.script())):
        b = np.zeros_like(a)
        tvm.compile(f, target="c")(a, b)
        outputs.append(b)
    assert outputs[0].any()
    np.testing.assert_array_equal(outputs[1], outputs[0])
    np.testing.assert_array_equal(outputs[2], outputs[0])


@T.prim_func
def batched_tile_views(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (2, 8, 8), "float32")
    B = T.match_buffer(b, (2, 8, 8), "float32")
    for n, i in T.grid(2, 2):
        with T.block("tile"):
            vn, vi = T.axis.remap("SS", [n, i])
            AA = T.match_buffer(A[vn : vn + 1, vi * 4 : vi * 4 + 4, 0:8], (4, 8))
            BB = T.match_buffer(B[vn : vn + 1, vi * 4 : vi * 4 + 4, 0:8], (4, 8))
            corner = T.match_buffer(A[vn, vi * 4, 0], (1,))
            for x, y in T.grid(4, 8):
                BB[x, y] = AA[x, y] + corner[0]


def test_match_buffer_drops_leading_dimensions_of_extent_one():
    """As in Apache TVM, a view with fewer dimensions than its region drops the region's leading
    ones when they have extent 1 (a slice ``n:n + 1`` or an index)."""
    a = np.random.rand(2, 8, 8).astype("float32")
    b = np.zeros_like(a)
    tvm.compile(batched_tile_views, target="c")["batched_tile_views"](a, b)
    corners = np.repeat(a[:, ::4, 0], 4, axis=1)[:, :, None]
    np.testing.assert_allclose(b, a + corners, rtol=1e-6)
    source = """
@T.prim_func
def f(a: T.handle):
    A = T.match_buffer(a, (2, 8, 8), "float32")
    for n in range(2):
        with T.block("tile"):
            vn = T.axis.spatial(2, n)
            AA = T.match_buffer(A[vn : vn + 2, 0:4, 0:8], (4, 8))
            AA[0, 0] = T.float32(1)
"""
    with pytest.raises(TVMScriptError, match="a 2-d view of a region of A needs 3 sliced dimension"):
        tvm.script.parse(source)
