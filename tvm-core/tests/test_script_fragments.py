"""Tensor-core fragments as Apache TVM writes them (``wmma.*`` buffers, T.tvm_fill_fragment,
T.tvm_load_matrix_sync, T.tvm_mma_sync, T.tvm_store_matrix_sync, T.tvm_access_ptr): compiled
for the example device (each thread computes whole tiles) and for the CPU, checked against NumPy."""

from __future__ import annotations

import linecache

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T
from tvm.testing import kernels
from tvm.tir.stmt import Allocate
from tvm.tir.functor import post_order_visit
from tvm.tir.transform import lower
from tvm.tir.transform.verify import TIRVerifyError


def _run(func, target, *arrays, out_shape=(32, 32), out_dtype="float32"):
    dev = tvm.device(target, 0)
    out = tvm.runtime.tensor(np.zeros(out_shape, out_dtype), dev)
    tvm.compile(func, target=target)[func.name](*(tvm.runtime.tensor(a, dev) for a in arrays), out)
    return out.numpy()


def _inputs(dtype="float16", shape=(32, 32), seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)


@T.prim_func
def gemm_by_fragment_index(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"),
                           C: T.Buffer((32, 32), "float32")):  # fmt: skip
    # fragments of two tiles named by index; pointers from access_ptr (2-d and 1-d shared
    # memory, an offset), T.tvm_access_ptr and T.address_of
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                As = T.alloc_buffer((16, 32), "float16", scope="shared")
                Bs = T.alloc_buffer((512,), "float16", scope="shared")
                Af = T.alloc_buffer((16, 32), "float16", scope="wmma.matrix_a")
                Bf = T.alloc_buffer((32, 16), "float16", scope="wmma.matrix_b")
                Cf = T.alloc_buffer((16, 16), "float32", scope="wmma.accumulator")
                for i in range(16):
                    As[i, tx] = A[by * 16 + i, tx]
                    Bs[i * 32 + tx] = B[(i * 32 + tx) // 16, bx * 16 + (i * 32 + tx) % 16]
                T.tvm_storage_sync("shared")
                T.tvm_fill_fragment(Cf.data, 16, 16, 16, 0, T.float32(0))
                for kk in range(2):
                    T.tvm_load_matrix_sync(Af.data, 16, 16, 16, kk,
                                           T.tvm_access_ptr(T.type_annotation("float16"), As.data, kk * 16, 256, 1),
                                           32, "row_major")  # fmt: skip
                    T.tvm_load_matrix_sync(
                        Bf.data, 16, 16, 16, kk, Bs.access_ptr("r", offset=kk * 256), 16, "row_major"
                    )
                for kk in range(2):
                    T.tvm_mma_sync(Cf.data, 0, Af.data, kk, Bf.data, kk, Cf.data, 0)
                T.tvm_store_matrix_sync(Cf.data, 16, 16, 16, 0, T.address_of(C[by * 16, bx * 16]), 32, "row_major")


def test_fragments_named_by_index_multiply_like_numpy():
    a, b = _inputs()
    got = _run(gemm_by_fragment_index, "example", a, b)
    np.testing.assert_allclose(got, a.astype("float32") @ b.astype("float32"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_tensorized_gemm_as_apache_writes_it(dtype):
    """Blocks whose match_buffer views are one tile, fragment indices from elem_offset, a
    column-major B, T.tvm_access_ptr pointers."""
    a, bt = _inputs(dtype)
    got = _run(kernels.tensor_core_gemm(dtype), "example", a, bt)
    np.testing.assert_allclose(got, a.astype("float64") @ bt.astype("float64").T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(16, 16, 16), (8, 32, 16), (32, 8, 16)])
@pytest.mark.parametrize("acc", ["float32", "float16"])
def test_every_tile_shape_and_accumulator(shape, acc):
    m, n, k = shape
    rng = np.random.default_rng(1)
    a = (rng.standard_normal((m, k)) / 4).astype("float16")
    bt = (rng.standard_normal((n, k)) / 4).astype("float16")
    got = _run(kernels.tensor_core_tile(m, n, k, acc), "example", a, bt, out_shape=(m, n), out_dtype=acc)
    want = a.astype("float64") @ bt.astype("float64").T + 0.5
    np.testing.assert_allclose(got.astype("float64"), want, rtol=1e-2 if acc == "float16" else 1e-5, atol=1e-2)


def test_fragments_on_the_cpu():
    @T.prim_func
    def cpu_gemm(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16"), C: T.Buffer((16, 16), "float32")):
        Af = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
        Bf = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_b")
        Cf = T.alloc_buffer((16, 16), "float32", scope="wmma.accumulator")
        T.tvm_fill_fragment(Cf.data, 16, 16, 16, 0, T.float32(0))
        T.tvm_load_matrix_sync(Af.data, 16, 16, 16, 0, A.access_ptr("r"), 16, "row_major")
        T.tvm_load_matrix_sync(Bf.data, 16, 16, 16, 0, B.access_ptr("r"), 16, "row_major")
        T.tvm_mma_sync(Cf.data, 0, Af.data, 0, Bf.data, 0, Cf.data, 0)
        T.tvm_store_matrix_sync(Cf.data, 16, 16, 16, 0, C.access_ptr("w"), 16, "row_major")

    a, b = _inputs(shape=(16, 16))
    got = _run(cpu_gemm, "c", a, b, out_shape=(16, 16))
    np.testing.assert_allclose(got, a.astype("float32") @ b.astype("float32"), rtol=1e-5, atol=1e-5)


def test_fragments_reloaded_per_step_shrink_to_one_tile():
    """A fragment written (loaded) before it is read in each k step holds one tile, as Apache
    TVM's compaction gives it; the accumulator, carried across steps, keeps its tile."""
    kernel = lower(kernels.tensor_core_gemm(), "example").kernels[0]
    shapes = {}
    post_order_visit(
        kernel.body, lambda n: shapes.__setitem__(n.buffer.name, n.buffer.shape) if isinstance(n, Allocate) else None
    )
    assert {name: [d.value for d in shapes[name]] for name in ("Af", "Bf", "Cf")} == {
        "Af": [256],
        "Bf": [256],
        "Cf": [256],
    }


def _fragment_kernel(statement: str):
    """A kernel whose last statement is ``statement`` (TVMScript) over fragments Af, Bf, Cf."""
    source = f"""
@T.prim_func
def bad(A: T.Buffer((16, 16), "float16"), C: T.Buffer((16, 16), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        Af = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
        Cf = T.alloc_buffer((16, 16), "float32", scope="wmma.accumulator")
        {statement}
"""
    filename = f"<fragments {len(linecache.cache)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # the parser reads it
    namespace = {"T": T}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 (test kernels)
    return namespace["bad"]


@pytest.mark.parametrize(
    "statement, message",
    # fmt: off
    [
        (
            "T.tvm_fill_fragment(Af.data, 16, 16, 16, 0, T.float32(0))",
            "Af has scope 'wmma.matrix_a'; a fragment of scope wmma.accumulator",
        ),
        (
            "T.tvm_fill_fragment(Cf.data, 16, 16, 8, 0, T.float32(0))",
            r"tile shape m, n, k = \(16, 16, 8\) is not one of",
        ),
        (
            "T.tvm_load_matrix_sync(Af.data, 16, 16, 16, 0, A.access_ptr('r'), 16, 'diagonal')",
            "layout must be 'row_major' or 'col_major'",
        ),
        (
            "T.tvm_load_matrix_sync(Af.data, 16, 16, 16, 0, A.access_ptr('r'), 8, 'row_major')",
            "stride 8 is not the row length 16 of A",
        ),
        (
            "T.tvm_load_matrix_sync(Af.data, 16, 16, 16, 0, A.data, 16, 'row_major')",
            "expected a pointer such as A.access_ptr",
        ),
        ("T.tvm_fill_fragment(Cf.data, 16, 16, 16, 0, 'x')", "value must be a number, got 'x'"),
        ("T.tvm_fill_fragment(Cf.data, 16, 16, 16, 0, A)", "value must be a number, got buffer A"),
        ("T.tvm_fill_fragment(Cf.data, 16, 16, 16, -1, T.float32(0))", "tile -1 of fragment Cf, which holds tiles 0"),
        ("T.tvm_fill_fragment(Cf.data, 16, 16, 16, T.float32(1), T.float32(0))", "tile index must be an integer"),
        ("T.tvm_mma_sync(None, 0, Af.data, 0, Af.data, 0, Cf.data, 0)", "expected the .data of a buffer"),
    ],
)
def test_misuse_is_named(statement, message):
    with pytest.raises(TVMScriptError, match=message):
        _fragment_kernel(statement)


def test_element_access_and_non_fragment_operands_are_refused_at_compile_time():
    with pytest.raises(TIRVerifyError, match="fragment 'Cf' .* element by element inside a threadIdx.x loop"):
        tvm.compile(_fragment_kernel("Cf[tx // 2, 0] = T.float32(1)"), target="example")

    @T.prim_func
    def description(a: T.handle, c: T.handle):  # a tensor intrinsic's description parses
        A = T.match_buffer(a, (16, 16), "float16")
        C = T.match_buffer(c, (16, 16), "float32")
        T.tvm_load_matrix_sync(C.data, 16, 16, 16, 0, A.access_ptr("r"), 16, "row_major")

    with pytest.raises(TIRVerifyError, match="'C' has scope 'global'; its fragment operands must be"):
        tvm.compile(description, target="c")


@T.prim_func
def fragments_before_tensorization(A: T.Buffer((32, 16), "float16"), B: T.Buffer((16, 16), "float16"),
                                   C: T.Buffer((32, 16), "float32")):  # fmt: skip
    # Apache TVM's schedule before tensorization: fragment buffers read and written element by
    # element, by one thread per tile (no threadIdx.x loop), as local memory is
    Af = T.alloc_buffer((32, 16), "float16", scope="wmma.matrix_a")
    Cf = T.alloc_buffer((32, 16), "float32", scope="wmma.accumulator")
    for ty in T.thread_binding(2, thread="threadIdx.y"):
        for i, k in T.grid(16, 16):
            with T.block("A_frag"):
                Af[ty * 16 + i, k] = A[ty * 16 + i, k]
        for i, j, k in T.grid(16, 16, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Cf[ty * 16 + vi, vj] = T.float32(0)
                Cf[ty * 16 + vi, vj] = Cf[ty * 16 + vi, vj] + T.Cast("float32", Af[ty * 16 + vi, vk]) * T.Cast(
                    "float32", B[vk, vj]
                )
        for i, j in T.grid(16, 16):
            C[ty * 16 + i, j] = Cf[ty * 16 + i, j]


@pytest.mark.parametrize("target", ["example", "cuda"])
def test_fragments_read_element_by_element_outside_lane_loops_are_local_memory(target):
    a, b = _inputs(shape=(32, 16))[0], _inputs(shape=(16, 16), seed=1)[1]
    if target == "cuda":  # compiles (per-thread tiles: no PTX wmma for element accesses)
        source = tvm.compile(fragments_before_tensorization, target="cuda").imports[0].inspect_source("cuda")
        assert "wmma" not in source and "float Cf[256];" in source
        return
    got = _run(fragments_before_tensorization, target, a, b, out_shape=(32, 16))
    np.testing.assert_allclose(got, a.astype("float32") @ b.astype("float32"), rtol=1e-5, atol=1e-5)


@T.prim_func
def mma_into_another_tile(A: T.Buffer((16, 16), "float16"), B: T.Buffer((16, 16), "float16"),
                          C: T.Buffer((16, 32), "float32")):  # fmt: skip
    # D and C are two views of one accumulator: tile 0 = A @ B + tile 1 (which holds 2)
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        Af = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
        Bf = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_b")
        Cf = T.alloc_buffer((16, 32), "float32", scope="wmma.accumulator")
        T.tvm_fill_fragment(Cf.data, 16, 16, 16, 0, T.float32(0))
        T.tvm_fill_fragment(Cf.data, 16, 16, 16, 1, T.float32(2))
        T.tvm_load_matrix_sync(Af.data, 16, 16, 16, 0, A.access_ptr("r"), 16, "row_major")
        T.tvm_load_matrix_sync(Bf.data, 16, 16, 16, 0, B.access_ptr("r"), 16, "row_major")
        with T.block("mma"):
            d = T.match_buffer(Cf[0:16, 0:16], (16, 16), "float32", strides=(32, 1), scope="wmma.accumulator")
            c = T.match_buffer(Cf[0:16, 16:32], (16, 16), "float32", strides=(32, 1), scope="wmma.accumulator")
            T.tvm_mma_sync(d.data, 0, Af.data, 0, Bf.data, 0, c.data, 1)
        T.tvm_store_matrix_sync(Cf.data, 16, 16, 16, 0, C.access_ptr("w"), 32, "row_major")
        T.tvm_store_matrix_sync(Cf.data, 16, 16, 16, 1, T.address_of(C[0, 16]), 32, "row_major")


def test_mma_of_two_views_of_one_accumulator_keeps_them_apart():
    a, b = _inputs(shape=(16, 16))
    got = _run(mma_into_another_tile, "example", a, b, out_shape=(16, 32))
    np.testing.assert_allclose(got[:, :16], a.astype("float32") @ b.astype("float32") + 2, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[:, 16:], np.full((16, 16), 2, "float32"))


def test_mma_of_fragments_used_with_two_tile_shapes_is_refused():
    with pytest.raises(TVMScriptError, match="different tile shapes"):

        @T.prim_func
        def shapes(A: T.Buffer((16, 16), "float16")):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                Af = T.alloc_buffer((32, 16), "float16", scope="wmma.matrix_a")
                Bf = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_b")
                Cf = T.alloc_buffer((32, 16), "float32", scope="wmma.accumulator")
                T.tvm_fill_fragment(Cf.data, 32, 8, 16, 0, T.float32(0))
                T.tvm_load_matrix_sync(Af.data, 16, 16, 16, 0, A.access_ptr("r"), 16, "row_major")
                T.tvm_mma_sync(Cf.data, 0, Af.data, 0, Bf.data, 0, Cf.data, 0)


@T.prim_func
def store_through_shared(A: T.Buffer((16, 16), "float16"), C: T.Buffer((32, 16), "float32")):
    # two warps each store a tile into shared memory; every thread then reads rows the other
    # warp stored: a barrier must separate them (the store is a write of shared memory)
    for ty in T.thread_binding(2, thread="threadIdx.y"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            S = T.alloc_buffer((32, 16), "float32", scope="shared")
            Af = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
            Bf = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_b")
            Cf = T.alloc_buffer((16, 16), "float32", scope="wmma.accumulator")
            T.tvm_fill_fragment(Cf.data, 16, 16, 16, 0, T.Cast("float32", ty))
            T.tvm_load_matrix_sync(Af.data, 16, 16, 16, 0, A.access_ptr("r"), 16, "row_major")
            T.tvm_load_matrix_sync(Bf.data, 16, 16, 16, 0, A.access_ptr("r"), 16, "col_major")
            T.tvm_mma_sync(Cf.data, 0, Af.data, 0, Bf.data, 0, Cf.data, 0)
            T.tvm_store_matrix_sync(Cf.data, 16, 16, 16, 0, T.address_of(S[ty * 16, 0]), 16, "row_major")
            for i in range(8):
                C[(1 - ty) * 16 + i * 2 + tx // 16, tx % 16] = S[(1 - ty) * 16 + i * 2 + tx // 16, tx % 16]


@pytest.mark.parametrize("target", ["example", "cuda"])
def test_a_fragment_store_into_shared_memory_is_followed_by_a_barrier(target):
    from tvm.tir.functor import post_order_visit as visit
    from tvm.tir.stmt import Evaluate

    kernel = lower(store_through_shared, target).kernels[0]
    syncs = []

    def note(n):
        if isinstance(n, Evaluate) and "storage_sync" in str(getattr(n.value, "op", "")):
            syncs.append(n)

    visit(kernel.body, note)
    assert syncs, "no barrier between the fragment store and the reads of other warps' rows"
    if target == "example":
        a = _inputs(shape=(16, 16))[0]
        got = _run(store_through_shared, target, a, out_shape=(32, 16))
        prod = a.astype("float32") @ a.astype("float32").T
        np.testing.assert_allclose(got, np.concatenate([prod, prod + 1]), rtol=1e-5, atol=1e-4)


def test_rows_not_16_bytes_apart_are_computed_per_thread_on_cuda():
    """PTX wmma needs rows a multiple of 16 bytes apart: a 1-d tile with rows 20 halves apart
    compiles for cuda without wmma (each thread computes the tile)."""

    @T.prim_func
    def odd_stride(A: T.Buffer((320,), "float16"), C: T.Buffer((16, 16), "float32")):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            Af = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
            Bf = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_b")
            Cf = T.alloc_buffer((16, 16), "float32", scope="wmma.accumulator")
            T.tvm_fill_fragment(Cf.data, 16, 16, 16, 0, T.float32(0))
            T.tvm_load_matrix_sync(Af.data, 16, 16, 16, 0, A.access_ptr("r"), 20, "row_major")
            T.tvm_load_matrix_sync(Bf.data, 16, 16, 16, 0, A.access_ptr("r"), 20, "row_major")
            T.tvm_mma_sync(Cf.data, 0, Af.data, 0, Bf.data, 0, Cf.data, 0)
            T.tvm_store_matrix_sync(Cf.data, 16, 16, 16, 0, C.access_ptr("w"), 16, "row_major")

    assert "wmma" not in tvm.compile(odd_stride, target="cuda").imports[0].inspect_source("cuda")
    a = np.random.default_rng(2).standard_normal(320).astype("float16")
    tile = a[: 16 * 20].reshape(16, 20)[:, :16].astype("float32")
    got = _run(odd_stride, "example", a, out_shape=(16, 16))
    np.testing.assert_allclose(got, tile @ tile, rtol=1e-4, atol=1e-3)


def test_threads_parse_fragment_kernels_at_once():
    """Each thread parses its own function: fragment operands named by one thread's ``.data``
    reads are never taken for another's (the parse state is per thread)."""
    import threading

    want = kernels.tensor_core_gemm().script()
    results: list = []

    def parse() -> None:
        for _ in range(6):
            try:
                results.append(kernels.tensor_core_gemm().script())
            except Exception as err:  # noqa: BLE001 (reported by the assertion below)
                results.append(err)

    threads = [threading.Thread(target=parse) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 24 and all(r == want for r in results), [r for r in results if r != want][:1]


def test_pointers_into_views_with_the_compact_strides_are_unravelled():
    """``T.tvm_access_ptr`` at an offset inside a buffer whose strides are its row-major ones
    (``strides=(32, 1)`` for (128, 32)) points at that element; other strides still say why
    they cannot."""

    def kernel(row_stride: int):
        @T.prim_func
        def f(A: T.Buffer((8192,), "float16")):
            S = T.decl_buffer((128, 32), "float16", data=A.data, strides=(row_stride, 1))
            T.evaluate(T.call_extern("int32", "use", T.tvm_access_ptr(T.type_annotation("float16"), S.data, 70, 8, 1)))

        return f

    assert '"address_of", S[2, 6])' in kernel(32).script()
    with pytest.raises(TVMScriptError, match="inside the strided view S"):
        kernel(40)
