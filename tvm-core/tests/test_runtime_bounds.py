"""Indices known only at run time (read from memory, or a scalar argument that sizes no buffer)
are compared with the buffer's extents before the access on CPU targets: a bad one raises
IndexError naming the function, the buffer, the dimension, the extent and the index, instead of
reading or writing outside the buffer."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest
import tvm
from tvm.script import tir as T


def _run(f, *args):
    """Compile ``f`` for the CPU and call it on ``args`` (NumPy arrays become tensors)."""
    mod = tvm.compile(f, target="c")
    tensors = [tvm.runtime.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
    mod[f.global_symbol](*tensors)
    return [t.numpy() if hasattr(t, "numpy") else t for t in tensors]


def _source(f) -> str:
    return tvm.compile(f, target="c").inspect_source()


@T.prim_func
def gather(A: T.Buffer((10,), "float32"), idx: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[idx[i]]


@T.prim_func
def parallel_scatter(A: T.Buffer((10,), "float32"), idx: T.Buffer((64,), "int32"), B: T.Buffer((64,), "float32")):
    for i in T.parallel(64):
        A[idx[i]] = B[i]


A10 = np.arange(10, dtype="float32")


def test_indices_read_from_memory_within_bounds_give_numpys_result() -> None:
    idx = np.array([9, 0, 3, 3], dtype="int32")
    out = _run(gather, A10.copy(), idx, np.zeros(4, "float32"))[2]
    np.testing.assert_array_equal(out, A10[idx])


@pytest.mark.parametrize("bad", [-3, 10, 2**31 - 1])
def test_an_index_read_from_memory_outside_the_buffer_is_an_index_error(bad: int) -> None:
    idx = np.array([1, bad, 2, 3], dtype="int32")
    with pytest.raises(
        IndexError,
        match=rf"out-of-bounds access in gather: dimension 0 of buffer 'A' has extent 10, got index {bad} ",
    ):
        _run(gather, A10.copy(), idx, np.zeros(4, "float32"))


def test_a_bad_index_inside_a_parallel_loop_is_raised_after_the_loop() -> None:
    idx = np.arange(64, dtype="int32") % 10
    a = _run(parallel_scatter, np.zeros(10, "float32"), idx, np.ones(64, "float32"))[0]
    np.testing.assert_array_equal(a, np.ones(10, "float32"))
    idx[37] = 1000
    with pytest.raises(IndexError, match=r"parallel_scatter: dimension 0 of buffer 'A' has extent 10, got index 1000"):
        _run(parallel_scatter, np.zeros(10, "float32"), idx, np.ones(64, "float32"))


def test_the_index_array_is_checked_before_the_index_it_holds() -> None:
    @T.prim_func
    def twice(A: T.Buffer((10,), "float32"), outer: T.Buffer((4,), "int32"), inner: T.Buffer((4,), "int32")):
        for i in range(4):
            A[outer[inner[i]]] = T.float32(1)

    with pytest.raises(IndexError, match=r"dimension 0 of buffer 'outer' has extent 4, got index 4 "):
        _run(twice, A10.copy(), np.array([0, 1, 2, 99], "int32"), np.array([0, 4, 1, 1], "int32"))
    with pytest.raises(IndexError, match=r"dimension 0 of buffer 'A' has extent 10, got index 99 "):
        _run(twice, A10.copy(), np.array([0, 1, 2, 99], "int32"), np.array([0, 3, 1, 1], "int32"))


def test_each_dimension_is_named() -> None:
    @T.prim_func
    def rows(A: T.Buffer((3, 5), "int32"), col: T.Buffer((3,), "int32"), B: T.Buffer((3,), "int32")):
        for i in range(3):
            B[i] = A[i, col[i]]

    a = np.arange(15, dtype="int32").reshape(3, 5)
    np.testing.assert_array_equal(_run(rows, a, np.array([4, 0, 2], "int32"), np.zeros(3, "int32"))[2], [4, 5, 12])
    with pytest.raises(IndexError, match=r"dimension 1 of buffer 'A' has extent 5, got index 5 "):
        _run(rows, a, np.array([4, 5, 2], "int32"), np.zeros(3, "int32"))


def test_an_access_under_a_condition_is_checked_only_where_the_condition_holds() -> None:
    @T.prim_func
    def guarded(A: T.Buffer((10,), "float32"), idx: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = T.if_then_else(idx[i] >= 0 and idx[i] < 10, A[idx[i]], T.float32(-1))

    out = _run(guarded, A10.copy(), np.array([2, -3, 12, 9], "int32"), np.zeros(4, "float32"))[2]
    np.testing.assert_array_equal(out, [2, -1, -1, 9])


def test_let_bound_indices_and_loop_bounds_read_from_memory_are_checked() -> None:
    @T.prim_func
    def counted(A: T.Buffer((8,), "int32"), count: T.Buffer((1,), "int32"), at: T.Buffer((1,), "int32")):
        k = at[0]
        A[k] = -1
        for j in range(count[0]):
            A[j] = j

    out = _run(counted, np.zeros(8, "int32"), np.array([3], "int32"), np.array([7], "int32"))[0]
    np.testing.assert_array_equal(out, [0, 1, 2, 0, 0, 0, 0, -1])
    with pytest.raises(IndexError, match=r"counted: dimension 0 of buffer 'A' has extent 8, got index 8 "):
        _run(counted, np.zeros(8, "int32"), np.array([3], "int32"), np.array([8], "int32"))
    with pytest.raises(IndexError, match=r"got index 8 "):
        _run(counted, np.zeros(8, "int32"), np.array([100], "int32"), np.array([0], "int32"))


def test_a_while_condition_is_checked_on_every_pass() -> None:
    @T.prim_func
    def walk(link: T.Buffer((8,), "int32"), at: T.Buffer((1,), "int32"), steps: T.Buffer((1,), "int32")):
        while link[at[0]] >= 0:
            at[0] = link[at[0]]
            steps[0] = steps[0] + 1

    chain = np.array([1, 2, 3, -1, 0, 0, 0, 0], "int32")
    out = _run(walk, chain, np.array([0], "int32"), np.zeros(1, "int32"))
    assert (out[1][0], out[2][0]) == (3, 3)
    chain[2] = 9  # the third pass's condition reads link[9]
    with pytest.raises(IndexError, match=r"walk: dimension 0 of buffer 'link' has extent 8, got index 9 "):
        _run(walk, chain, np.array([0], "int32"), np.zeros(1, "int32"))


def test_a_scalar_argument_that_sizes_no_buffer_is_checked_where_it_indexes() -> None:
    @T.prim_func
    def window(A: T.Buffer((10,), "float32"), start: T.int32, B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i + start]

    np.testing.assert_array_equal(_run(window, A10.copy(), 6, np.zeros(4, "float32"))[2], A10[6:10])
    with pytest.raises(IndexError, match=r"window: dimension 0 of buffer 'A' has extent 10, got index 10 "):
        _run(window, A10.copy(), 7, np.zeros(4, "float32"))


def test_a_vectorized_loop_with_a_bad_index_raises_after_the_loop() -> None:
    @T.prim_func
    def vgather(A: T.Buffer((10,), "float32"), idx: T.Buffer((16,), "int32"), B: T.Buffer((16,), "float32")):
        for i in T.vectorized(16):
            B[i] = A[idx[i]]

    idx = np.arange(16, dtype="int32") % 10
    np.testing.assert_array_equal(_run(vgather, A10.copy(), idx, np.zeros(16, "float32"))[2], A10[idx])
    idx[15] = -1
    with pytest.raises(IndexError, match=r"vgather: dimension 0 of buffer 'A' has extent 10, got index -1 "):
        _run(vgather, A10.copy(), idx, np.zeros(16, "float32"))


def test_kernels_whose_indices_are_bounded_at_compile_time_get_no_run_time_check() -> None:
    @T.prim_func
    def copy(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in range(n):
            B[i] = A[i]

    @T.prim_func
    def hashed(A: T.Buffer((8,), "int32"), keys: T.Buffer((16,), "int32")):
        for i in range(16):
            A[T.floormod(keys[i], 8)] = i

    for f in (copy, hashed):
        assert '"IndexError"' not in _source(f)
    assert '"IndexError"' in _source(gather)


def test_a_narrowing_cast_is_not_taken_for_a_bound() -> None:
    @T.prim_func
    def wrapped(A: T.Buffer((256,), "float32"), idx: T.Buffer((1,), "int32"), B: T.Buffer((1,), "float32")):
        B[0] = A[T.Cast("int8", T.floormod(idx[0], 256))]

    assert _run(wrapped, np.tile(A10, 26)[:256].copy(), np.array([127], "int32"), np.zeros(1, "float32"))[2][0] == 7
    with pytest.raises(IndexError, match=r"buffer 'A' has extent 256, got index -128 "):
        _run(wrapped, np.zeros(256, "float32"), np.array([128], "int32"), np.zeros(1, "float32"))


def test_an_index_that_wraps_in_its_dtype_is_not_proven_by_its_exact_value() -> None:
    """``i * 400`` for an int16 i in [100, 102) is 40000 exactly, inside the 41000 elements, but
    -25536 as int16 computes it: the proof dropped the check and the CPU wrote before A."""

    @T.prim_func
    def wraps16(A: T.Buffer((41000,), "float32")):
        for i in range(T.int16(100), T.int16(102)):
            A[i * T.int16(400)] = T.float32(7)

    @T.prim_func
    def fits16(A: T.Buffer((41000,), "float32")):
        for i in range(T.int16(10), T.int16(12)):
            A[i * T.int16(400)] = T.float32(7)

    memory = np.zeros(100000, "float32")
    with pytest.raises(IndexError, match=r"buffer 'A' has extent 41000, got index -25536 "):
        tvm.compile(wraps16, target="c")(tvm.runtime.from_dlpack(memory[50000:91000]))
    assert not memory.any()
    assert '"IndexError"' not in _source(fits16)  # 41000 is past int16, but i * 400 <= 4400 cannot wrap


def test_an_allocation_size_read_from_memory_is_checked() -> None:
    @T.prim_func
    def sized(B: T.Buffer((4,), "float32"), idx: T.Buffer((2,), "int32")):
        C = T.alloc_buffer((idx[idx[0]],), "float32")
        for i in range(4):
            C[i % 1] = T.float32(1)
            B[i] = C[0]

    np.testing.assert_array_equal(_run(sized, np.zeros(4, "float32"), np.array([1, 8], "int32"))[0], np.ones(4))
    with pytest.raises(IndexError, match=r"buffer 'idx' has extent 2, got index 268435456 "):
        _run(sized, np.zeros(4, "float32"), np.array([1 << 28, 0], "int32"))


@T.prim_func
def copy_into(a: T.handle, b: T.handle):
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for i in range(n):
        B[i] = A[i]


def test_a_loop_over_one_arguments_size_that_indexes_another_is_checked() -> None:
    out = _run(copy_into, A10.copy(), np.zeros(12, "float32"))[1]
    np.testing.assert_array_equal(out[:10], A10)
    with pytest.raises(IndexError, match=r"copy_into: dimension 0 of buffer 'B' has extent 4, got index 4 "):
        _run(copy_into, A10.copy(), np.zeros(4, "float32"))


def test_the_last_element_of_an_empty_buffer_is_an_index_error() -> None:
    @T.prim_func
    def last(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (1,), "float32")
        B[0] = A[n - 1]

    assert _run(last, A10.copy(), np.zeros(1, "float32"))[1][0] == 9
    with pytest.raises(IndexError, match=r"buffer 'A' has extent 0, got index -1 "):
        _run(last, np.zeros(0, "float32"), np.zeros(1, "float32"))


def test_guards_and_tiles_over_symbolic_sizes_are_proven_and_get_no_check() -> None:
    @T.prim_func
    def tiled(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for io in range((n + 15) // 16):
            for ii in range(16):
                if io * 16 + ii < n:
                    B[io * 16 + ii] = A[io * 16 + ii]
        for j in range(n // 4):
            for k in range(4):
                B[j * 4 + k] = B[j * 4 + k] * T.float32(2)
        for s in range(n):
            if s >= 1:
                B[s - 1] = B[s - 1] + T.float32(1)

    assert '"IndexError"' not in _source(tiled)
    expect = A10.copy()
    expect[:8] *= 2  # n // 4 * 4 = 8 elements doubled
    expect[:9] += 1
    np.testing.assert_array_equal(_run(tiled, A10.copy(), np.zeros(10, "float32"))[1], expect)


def test_a_buffer_sized_by_a_scalar_argument_is_checked_where_a_constant_loop_walks_it() -> None:
    @T.prim_func
    def scratch(B: T.Buffer((4,), "float32"), m: T.int32):
        C = T.alloc_buffer((m,), "float32")
        for i in range(4):
            C[i] = T.float32(i)
        for i in range(4):
            B[i] = C[i]

    np.testing.assert_array_equal(_run(scratch, np.zeros(4, "float32"), 4)[0], np.arange(4))
    with pytest.raises(IndexError, match=r"buffer 'C' has extent 2, got index 2 "):
        _run(scratch, np.zeros(4, "float32"), 2)


def test_views_of_a_buffer_at_a_run_time_offset_are_checked_against_its_memory() -> None:
    @T.prim_func
    def region(A: T.Buffer((16,), "float32"), k: T.int32):
        S = T.match_buffer(A[k : k + 4], (4,), "float32")
        for j in range(4):
            S[j] = T.float32(1)

    @T.prim_func
    def alias(A: T.Buffer((16,), "float32"), k: T.int32):
        B = T.decl_buffer((4,), "float32", data=A.data, elem_offset=k)
        for j in range(4):
            B[j] = T.float32(2)

    for f, value in ((region, 1), (alias, 2)):
        a = _run(f, np.zeros(16, "float32"), 12)[0]
        np.testing.assert_array_equal(a, np.r_[np.zeros(12), np.full(4, value)])
        with pytest.raises(IndexError, match=r"the memory of buffer 'A' \(through its view '\w'\) has extent 16, got "):
            _run(f, np.zeros(16, "float32"), 13)


def test_a_constant_elem_offset_of_an_argument_must_be_its_byte_offset() -> None:
    @T.prim_func
    def shifted(a: T.handle):
        A = T.match_buffer(a, (4,), "float32", elem_offset=1 << 24)
        for i in range(4):
            A[i] = T.float32(1)

    with pytest.raises(ValueError, match=r"argument 'A' declares elem_offset=16777216: .* got byte_offset 0"):
        _run(shifted, np.zeros(4, "float32"))


# --------------------------------------------------------------------------- where proofs must not reach
@T.prim_func
def chase(A: T.Buffer((10,), "int32"), nxt: T.Buffer((8,), "int32"), out: T.Buffer((1,), "int32")):
    i = T.alloc_buffer((1,), "int32")  # on the heap: the failing check reads it before it is freed
    i[0] = 0
    while A[nxt[i[0]]] > 0:
        i[0] = i[0] + 1
        out[0] = out[0] + 1


def test_a_failing_index_that_reads_a_heap_buffer_is_reported_before_the_buffer_is_freed() -> None:
    nxt = np.arange(8, dtype="int32")
    ones = np.ones(10, "int32")
    ones[4] = 0
    assert _run(chase, ones, nxt, np.zeros(1, "int32"))[2][0] == 4
    nxt[0] = 99
    with pytest.raises(IndexError, match=r"buffer 'A' has extent 10, got index 99 "):
        _run(chase, np.ones(10, "int32"), nxt, np.zeros(1, "int32"))


def test_a_value_read_before_a_store_is_not_taken_for_the_memory_after_it() -> None:
    @T.prim_func
    def stale(A: T.Buffer((1,), "int32"), B: T.Buffer((4,), "int32")):
        x = A[0]
        if 0 <= x and x < 4:
            A[0] = x + 10
            B[A[0]] = 7

    with pytest.raises(IndexError, match=r"buffer 'B' has extent 4, got index 12 "):
        _run(stale, np.array([2], "int32"), np.zeros(4, "int32"))


def test_loop_bounds_read_from_memory_are_read_once() -> None:
    @T.prim_func
    def rebound(A: T.Buffer((10,), "int32"), idx: T.Buffer((1,), "int32"), n: T.Buffer((1,), "int32")):
        for i in range(A[idx[0]]):
            idx[0] = 1000000  # the bound is not read again
            n[0] = n[0] + 1

    assert _run(rebound, np.full(10, 3, "int32"), np.array([0], "int32"), np.zeros(1, "int32"))[2][0] == 3


@pytest.mark.parametrize("case", ["uint64", "shift", "floormod", "narrow"])
def test_wrapping_and_division_by_a_zero_size_are_not_taken_for_bounds(case: str) -> None:
    @T.prim_func
    def wide(A: T.Buffer((10,), "int32"), idx: T.Buffer((1,), "uint64")):
        A[idx[0]] = 1

    @T.prim_func
    def shifted(a: T.handle):
        n = T.int32()
        B = T.match_buffer(a, (n,), "int32")
        for i in range(n):
            B[T.shift_right(T.shift_left(i, 16), 16)] = 1  # wraps for i >= 32768

    @T.prim_func
    def modulo(a: T.handle, b: T.handle):
        n, m = T.int32(), T.int32()
        A = T.match_buffer(a, (n,), "int32")
        B = T.match_buffer(b, (m,), "int32")
        for i in range(n):
            B[T.floormod(i, m)] = A[i]

    @T.prim_func
    def narrow(A: T.Buffer((256,), "int32")):
        for i in range(200):
            A[T.Cast("int8", i)] = 1

    run, match = {
        "uint64": (lambda: _run(wide, np.zeros(10, "int32"), np.array([2**32 + 3], "uint64")), "got index 4294967299"),
        "shift": (lambda: _run(shifted, np.zeros(40000, "int32")), "extent 40000, got index -32768"),
        "floormod": (lambda: _run(modulo, np.arange(8, dtype="int32"), np.zeros(0, "int32")), "extent 0, got index 0"),
        "narrow": (lambda: _run(narrow, np.zeros(256, "int32")), "extent 256, got index -128"),
    }[case]
    with pytest.raises(IndexError, match=match):
        run()


def test_a_view_of_a_strided_argument_is_checked_against_its_memory() -> None:
    @T.prim_func
    def strided_view(a: T.handle, k: T.int32):
        n, s0 = T.int32(), T.int32()
        A = T.match_buffer(a, (n,), "float32", strides=(s0,))
        S = T.match_buffer(A[k : k + 4], (4,), "float32")
        for j in range(4):
            S[j] = T.float32(1)

    np.testing.assert_array_equal(_run(strided_view, np.zeros(8, "float32"), 4)[0], np.r_[np.zeros(4), np.ones(4)])
    with pytest.raises(IndexError, match=r"the memory of buffer 'A' \(through its view 'S'\) has extent 8"):
        _run(strided_view, np.zeros(8, "float32"), 100000000)


def test_a_heap_buffer_past_32_bit_indices_is_refused_before_it_is_allocated() -> None:
    @T.prim_func
    def square(a: T.handle, o: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "int8")
        O = T.match_buffer(o, (1,), "int8")
        C = T.alloc_buffer((n, n), "int8")
        for i, j in T.grid(n, n):
            C[i, j] = A[i]
        O[0] = C[n - 1, n - 1]

    assert _run(square, np.full(3, 5, "int8"), np.zeros(1, "int8"))[1][0] == 5
    with pytest.raises(ValueError, match=r"buffer 'C' has a negative size or more than 2147483647 elements"):
        _run(square, np.zeros(65537, "int8"), np.zeros(1, "int8"))


def test_a_heap_buffer_whose_64_bit_sizes_multiply_past_int64_or_are_negative_is_refused() -> None:
    """(n, n) with n = 2**32 flattened to n * n, which wrapped to 0 elements: the allocation
    succeeded and the indices, inside the declared shape, wrote far past it."""

    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), n: T.int64, m: T.int64):
        B = T.alloc_buffer((n, m), "float32")
        for i in range(T.int64(8)):
            B[i % n, i % m] = A[i]
        for i in range(T.int64(8)):
            A[i] = B[i % n, i % m] + T.float32(1)

    mod = tvm.compile(f, target="c")
    a = np.arange(8, dtype="float32")
    mod["f"](a, 3, 5)
    np.testing.assert_array_equal(a, np.arange(8) + 1)
    for n, m in ((2**32, 2**32), (2**62, 4), (-3, -3), (5, -2)):
        with pytest.raises(ValueError, match=r"buffer 'B' has a negative size or more than 9223372036854775807"):
            mod["f"](a, n, m)


def _alternating_index(name: str) -> Callable[[], int]:
    """Loads a C function ``name()`` answering 1, then 100, then 1 ... (a next index that is in
    bounds once and out of bounds the next time); returns a counter of its calls."""
    import ctypes

    from tvm.contrib import cc

    source = (
        "static int calls = 0;\n"
        f'__attribute__((visibility("default"))) int {name}(void) {{ return (calls++ % 2) ? 100 : 1; }}\n'
        f'__attribute__((visibility("default"))) int {name}_calls(void) {{ return calls; }}\n'
    )
    path, _ = cc.compile_shared(source, name=name)
    return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)[f"{name}_calls"]


def test_an_index_that_calls_an_external_function_calls_it_once() -> None:
    """The check and the access use one value of ``next_index()``: checking one call and indexing
    with another would store past the buffer."""
    _alternating_index("tvm_test_next_index")

    @T.prim_func
    def store_then_load(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
        A[T.call_extern("int32", "tvm_test_next_index")] = 7
        B[0] = A[T.call_extern("int32", "tvm_test_next_index")]

    mod = tvm.compile(store_then_load, "c")
    assert mod.inspect_source().count("tvm_test_next_index()") == 2  # once per statement
    a, b = np.zeros(4, "int32"), np.zeros(4, "int32")
    with pytest.raises(IndexError, match="got index 100"):
        mod["store_then_load"](a, b)
    np.testing.assert_array_equal(a, [0, 7, 0, 0])  # the first call's index, 1


def test_a_call_in_an_index_under_a_condition_runs_once_and_only_where_it_held() -> None:
    """Under ``T.if_then_else``, ``and`` or a ``Let``, the call runs exactly when it ran before,
    once: the check and the load see its one value."""
    calls = _alternating_index("tvm_test_next_index_if")

    @T.prim_func
    def conditional(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), n: T.int32):
        B[0] = T.if_then_else(n > 0, A[T.call_extern("int32", "tvm_test_next_index_if")], -1)
        B[1] = T.Cast("int32", n > 1 and A[T.call_extern("int32", "tvm_test_next_index_if")] > 0)

    @T.prim_func
    def let_bound(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
        x = T.int32()
        B[2] = T.let(x, T.call_extern("int32", "tvm_test_next_index_if"), A[x])

    f = tvm.compile(conditional, "c")["conditional"]
    a, b = np.array([5, 6, 7, 8], "int32"), np.zeros(4, "int32")
    f(a, b, 0)  # neither condition holds: no call
    assert calls() == 0 and list(b[:2]) == [-1, 0]
    f(a, b, 1)  # the first call answers 1: B[0] = A[1]
    assert calls() == 1 and list(b[:2]) == [6, 0]
    with pytest.raises(IndexError, match="got index 100"):
        f(a, b, 1)  # the second answers 100: refused, not read past A
    assert calls() == 2
    with pytest.raises(IndexError, match="got index 100"):
        f(a, b, 2)  # 1 for B[0], then 100 for B[1]
    assert calls() == 4 and b[0] == 6
    g = tvm.compile(let_bound, "c")["let_bound"]
    g(a, b)  # 1
    assert calls() == 5 and b[2] == 6
    with pytest.raises(IndexError, match="got index 100"):
        g(a, b)
    assert calls() == 6


def test_a_device_kernel_with_only_proven_indices_and_pure_bit_intrinsics_records_nothing():
    """T.popcount and T.clz lower through a reinterpret, a pure intrinsic: the kernel's indices
    are proven, so no error buffer is allocated, zeroed by an extra launch and read back."""

    @T.prim_func
    def bits(A: T.Buffer((128,), "int32"), B: T.Buffer((128,), "int32"), C: T.Buffer((128,), "int32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                B[bx * 32 + tx] = T.popcount(A[bx * 32 + tx])
                C[bx * 32 + tx] = T.clz(A[bx * 32 + tx])

    mod = tvm.compile(bits, target="example")
    assert "index_errors" not in mod.inspect_source()
    dev = tvm.device("example")
    a = np.arange(-64, 64, dtype="int32") * 12345
    b, c = tvm.runtime.empty((128,), "int32", dev), tvm.runtime.empty((128,), "int32", dev)
    mod["bits"](tvm.runtime.tensor(a, dev), b, c)
    u = a.view("uint32").astype("uint64")
    np.testing.assert_array_equal(b.numpy(), [bin(int(x)).count("1") for x in u])
    np.testing.assert_array_equal(c.numpy(), [32 - int(x).bit_length() for x in u])


def test_a_condition_whose_int32_arithmetic_can_wrap_proves_nothing() -> None:
    """`if b * 8 < 64: A[b * 8]` over `b < n`: for b = 2**28, b * 8 wraps to -2**31 and passes
    the condition; taken as a fact about the unwrapped value it 'proved' the index, and the
    store wrote 8 GiB before A. Such a condition is no fact now; the check stays."""

    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), n: T.int32):
        for b in range(n):
            if b * 8 < 64:
                A[b * 8] = T.float32(1)

    @T.prim_func
    def widened(A: T.Buffer((64,), "float32"), n: T.int32):
        for b in range(n):
            if T.Cast("int64", b * 8) < T.int64(64):  # the cast widens a product that already wrapped
                A[b * 8] = T.float32(1)

    for func in (f, widened):
        mod = tvm.compile(func, target="c")
        a = np.zeros(64, "float32")
        mod[func.global_symbol](a, 3)
        np.testing.assert_array_equal(np.nonzero(a)[0], [0, 8, 16])
        with pytest.raises(IndexError, match=r"buffer 'A' has extent 64, got index -2147483648"):
            mod[func.global_symbol](a, 2**28 + 1)

    @T.prim_func
    def g(A: T.Buffer((64,), "float32"), n: T.int32):
        for b in T.thread_binding(n, thread="blockIdx.x"):
            for t in T.thread_binding(8, thread="threadIdx.x"):
                if b * 8 + t < 64:
                    A[b * 8 + t] = T.float32(1)

    dev = tvm.device("example")
    mod = tvm.compile(g, target="example")
    assert "index_errors" in mod.inspect_source()  # b * 8 + t may wrap: checked in the kernel
    a = tvm.runtime.tensor(np.zeros(64, "float32"), dev)
    mod["g"](a, 3)
    np.testing.assert_array_equal(a.numpy(), np.r_[np.ones(24), np.zeros(40)])
