"""Arguments whose offsets, shape expressions, strides or pointers the host entry must check
(each of these wrote outside its argument, or crashed, before):

* an ``elem_offset`` that is a scalar argument or a size must be the tensor's ``byte_offset``
  (it was ignored: the kernel indexed ``data + off + i``, past a 4-element argument);
* a shape given as an expression of sizes is compared in 64 bits (``n * 3`` wrapped in int32
  and accepted a 2-element tensor for n = 1431655766);
* a 2-d shape mixing int64 and int32 sizes gets the 32-bit element-count check (its index
  ``2 * m + j`` wrapped, 2 GiB before the tensor);
* views of an argument with a variable ``elem_offset`` are checked against its memory, and
  views of an argument with negative strides are accepted inside it (one was never checked,
  the other always refused with a negative extent);
* a tensor passed for a ``T.handle`` parameter stands for its first element (``byte_offset``
  was dropped) and must be on the function's device (an OpenCL buffer handle was written as
  host memory).
"""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import ir as I
from tvm.script import tir as T
from tvm.testing.dlpack import HandMadeTensor


@T.prim_func
def fill_at_offset(a: T.handle, off: T.int32):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32", elem_offset=off)
    for i in range(n):
        A[i] = T.float32(1)


def _view(mem: np.ndarray, first: int, count: int) -> tvm.runtime.Tensor:
    """``count`` elements of ``mem`` from ``first``, as a view with a ``byte_offset``."""
    return tvm.runtime.from_dlpack(HandMadeTensor(mem.ctypes.data, (count,), byte_offset=first * 4, keep=mem))


def test_an_elem_offset_bound_by_another_argument_must_be_the_byte_offset(private_cache):
    f = tvm.compile(fill_at_offset, target="c")["fill_at_offset"]
    mem = np.zeros(16, "float32")
    for off in (8, 1 << 28, -1):
        with pytest.raises(ValueError, match=rf"argument 'A' declares elem_offset=off = {off}: it must be a view"):
            f(mem[:4], off)
    assert not mem.any()
    f(_view(mem, 8, 4), 8)  # a view 8 elements in, as declared
    np.testing.assert_array_equal(np.flatnonzero(mem), [8, 9, 10, 11])


@T.prim_func
def every_third(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "int8")
    C = T.match_buffer(c, (n * 3,), "int8")
    for i in range(n):
        C[i * 3] = A[i]


def test_a_shape_expression_is_compared_without_wrapping(private_cache):
    f = tvm.compile(every_third, target="c")["every_third"]
    a, c = np.ones(4, "int8"), np.zeros(12, "int8")
    f(a, c)
    np.testing.assert_array_equal(c[::3], a)
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, "int8"), (1431655766,), (0,), writeable=False)
    with pytest.raises(ValueError, match=r"argument 'C' expects shape \(n \* 3,\), got \(2,\)"):
        f(huge, np.zeros(2, "int8"))  # 3 * 1431655766 wraps to 2 in int32


@T.prim_func
def mixed_sizes(a: T.handle):
    n = T.int64()
    m = T.int32()
    A = T.match_buffer(a, (n, m), "int8")
    A[n - 1, m - 1] = T.int8(1)


def test_a_shape_mixing_int64_and_int32_sizes_is_indexed_in_64_bits(private_cache):
    """(n: int64, m: int32): the strides are int64, so a tensor past 2**31 elements is indexed
    right (it was refused)."""
    f = tvm.compile(mixed_sizes, target="c")["mixed_sizes"]
    small = np.zeros((3, 5), "int8")
    f(small)
    assert small[2, 4] == 1 and small.sum() == 1
    big = np.zeros((3, 2**30), "int8")  # 3 GiB of untouched pages
    f(big)
    assert big[2, -1] == 1


@T.prim_func
def view_at(a: T.handle, k: T.int32):
    n, e = T.int32(), T.int32()
    A = T.match_buffer(a, (n,), "float32", elem_offset=e)
    S = T.match_buffer(A[k : k + 4], (4,), "float32")
    for j in range(4):
        S[j] = T.float32(1)


@T.prim_func
def strided_view_at(a: T.handle, k: T.int32):
    n, s = T.int32(), T.int32()
    A = T.match_buffer(a, (n,), "float32", strides=(s,))
    S = T.match_buffer(A[k : k + 4], (4,), "float32")
    for j in range(4):
        S[j] = T.float32(1)


@pytest.mark.parametrize(
    ("func", "memory"), [(view_at, 8), (strided_view_at, 15)], ids=["variable_offset", "negative_stride"]
)
def test_views_of_an_argument_are_checked_against_its_memory(func, memory, private_cache):
    """The memory of an argument with stride -2 spans 15 elements (its gaps are its memory too)."""
    f = tvm.compile(func, target="c")[func.attrs["global_symbol"]]
    mem = np.zeros(16, "float32")
    arg = mem[4:12] if func is view_at else mem[::-2]  # 8 elements; the second with stride -2
    for k in (8, 1 << 28):
        with pytest.raises(IndexError, match=rf"the memory of buffer 'A' \(through its view 'S'\) has extent {memory}"):
            f(arg, k)
    assert not mem.any()
    f(arg, 2)
    want = np.zeros(8, "float32")
    want[2:6] = 1
    np.testing.assert_array_equal(arg, want)


@T.prim_func
def fill_pointer(A_data: T.handle("float32"), v: T.int32):
    A = T.decl_buffer(4, dtype="float32", data=A_data)
    for i in range(4):
        A[i] = T.Cast("float32", v)


def test_a_tensor_for_a_pointer_parameter_starts_at_its_byte_offset(private_cache):
    f = tvm.compile(fill_pointer, target="c")["fill_pointer"]
    mem = np.zeros(8, "float32")
    f(_view(mem, 4, 4), 7)
    np.testing.assert_array_equal(mem, [0, 0, 0, 0, 7, 7, 7, 7])
    elsewhere = tvm.runtime.from_dlpack(HandMadeTensor(mem.ctypes.data, (4,), device=(4, 0), keep=mem))
    with pytest.raises(ValueError, match=r"fill_pointer: argument 'A_data' expects a tensor on cpu, got one on"):
        f(elsewhere, 1)
    np.testing.assert_array_equal(mem, [0, 0, 0, 0, 7, 7, 7, 7])


@T.prim_func
def first_of_strided(a: T.handle):
    n, s = T.int32(), T.int32()
    A = T.match_buffer(a, (n,), "float32", strides=(s,))
    A[0] = T.float32(1)


def test_an_array_dlpack_cannot_export_is_named(private_cache):
    """NumPy refuses strides that are no multiple of the item size with a bare BufferError."""
    f = tvm.compile(first_of_strided, target="c")["first_of_strided"]
    odd = np.ndarray((4,), dtype="float32", buffer=np.zeros(64, "uint8"), strides=(6,))
    with pytest.raises(BufferError, match=r"argument 0 \(ndarray\) cannot be passed as a tensor: DLPack only"):
        f(odd)


def test_a_view_of_an_empty_strided_argument_is_refused(private_cache):
    """An argument with strides and no element had a memory of one element for its views."""
    f = tvm.compile(strided_view_at, target="c")["strided_view_at"]
    with pytest.raises(IndexError, match=r"the memory of buffer 'A' \(through its view 'S'\) has extent 0"):
        f(np.zeros(0, "float32"), 0)


@T.prim_func
def int64_rows(a: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, 4), "int8")
    A[n - 1, 3] = T.int8(1)


def test_int64_rows_of_a_constant_width_are_not_counted_in_32_bits(private_cache):
    """(n: int64, 4) is indexed in 64 bits: it was refused past 2**31 elements with a hint to
    declare T.int64() sizes, which it does."""
    f = tvm.compile(int64_rows, target="c")["int64_rows"]
    rows = np.zeros(2**29 + 1, "int32").view("int8").reshape(-1, 4)  # 2**31 + 4 bytes, untouched pages
    f(rows)
    assert rows[-1, 3] == 1


@T.prim_func
def int64_rows_int32_row(a: T.handle, r: T.int32):
    n = T.int64()
    A = T.match_buffer(a, (n, 65536), "int8")
    A[r, 65535] = T.int8(1)


def test_an_int32_row_of_int64_rows_is_indexed_in_64_bits(private_cache):
    """(n: int64, 65536) indexed with an int32 row: the flat index r * 65536 + 65535 was an int32
    product, which wrapped past row 32767 (a write 2 GiB before the argument: a segfault)."""
    f = tvm.compile(int64_rows_int32_row, target="c")["int64_rows_int32_row"]
    rows = np.zeros((32769, 65536), "int8")  # 2**31 + 65536 bytes, untouched pages
    f(rows, 32768)
    assert rows[32768, 65535] == 1 and rows[32767, 65535] == 0


@T.prim_func
def rows_through_a_let_pointer(B: T.Buffer((3, 4), "float32"), width: T.int32):
    for i in range(3):
        p: T.handle("float32") = T.address_of(B[i, 0])
        V = T.decl_buffer((width,), "float32", data=p)
        for j in range(width):
            V[j] = T.float32(i + 1)


@I.ir_module
class RowsThroughASubroutine:
    @T.prim_func(private=True)
    def fill(b_ptr: T.handle("float32"), n: T.int32, value: T.float32):
        V = T.decl_buffer((n,), "float32", data=b_ptr)
        for j in range(n):
            V[j] = value

    @T.prim_func
    def main(B: T.Buffer((3, 4), "float32"), width: T.int32):
        for i in range(3):
            RowsThroughASubroutine.fill(T.address_of(B[i, 0]), width, T.float32(i + 1))


@pytest.mark.parametrize("how", ["let", "subroutine"])
def test_a_view_at_an_element_through_a_handle_is_checked_against_its_buffer(private_cache, how):
    """``p = T.address_of(B[i, 0])`` then ``T.decl_buffer(..., data=p)`` (also a called function's
    pointer parameter, as Apache TVM writes row helpers): the view's accesses went unchecked, and
    the last row's wrote past B."""
    f = tvm.compile(rows_through_a_let_pointer, "c") if how == "let" else tvm.compile(RowsThroughASubroutine, "c")
    memory = np.zeros(16, "float32")
    f(memory[:12].reshape(3, 4), 4)
    np.testing.assert_array_equal(memory[:12].reshape(3, 4), [[1] * 4, [2] * 4, [3] * 4])
    with pytest.raises(
        IndexError, match=r"the memory of buffer 'B' \(through its view 'V'\) has extent 12, got index 12"
    ):
        f(memory[:12].reshape(3, 4), 6)
    assert not memory[12:].any()


@T.prim_func
def copy_rows_of_unit_stride(a: T.handle, b: T.handle):
    n, m, s0 = T.int32(), T.int32(), T.int32()
    A = T.match_buffer(a, (n, m), "float32", strides=[s0, 1])
    B = T.match_buffer(b, (n, m), "float32", strides=[m * 2, 1])
    for i, j in T.grid(n, m):
        B[i, j] = A[i, j]


def test_a_stride_other_than_declared_is_named_and_an_empty_view_has_any(private_cache):
    """A stride mismatch read "expects shape (n, m), got (3, 4) (stride 1 mismatch)", naming
    neither stride; an empty view, which reaches no element, was refused for its strides."""
    f = tvm.compile(copy_rows_of_unit_stride, "c")["copy_rows_of_unit_stride"]
    base, out = np.arange(60, dtype="float32").reshape(6, 10), np.zeros((3, 8), "float32")
    with pytest.raises(ValueError, match=r"argument 'A' has stride 3 in dimension 1; the function declares stride 1$"):
        f(base[::2, ::3], out[:, :4])
    with pytest.raises(
        ValueError, match=r"argument 'B' has stride 8 in dimension 0; the function declares stride m \* 2 = 4$"
    ):
        f(base[:3, :2], out[:, :2])
    f(base[:0, ::2], out[:0, :5])
    f(base[:3, :4], out[:, :4])
    np.testing.assert_array_equal(out[:, :4], base[:3, :4])


@T.prim_func
def flat_of_two_sizes(a: T.handle, b: T.handle, m: T.int32):
    n = T.int32()
    A = T.match_buffer(a, (n * m,), "int8")
    B = T.match_buffer(b, (n,), "int8")
    B[0] = A[0]


def test_a_size_past_the_dtype_of_its_expression_says_so(private_cache):
    """(n * m,) of int32 sizes given 2**31 elements was reported as "dimension 0 mismatch"."""
    f = tvm.compile(flat_of_two_sizes, "c")["flat_of_two_sizes"]
    big = np.zeros(2**31, "int8")  # untouched pages
    with pytest.raises(ValueError, match=r"dimension 0 is past what int32 \(the dtype of its size\) holds; declare"):
        f(big, np.zeros(2**16, "int8"), 2**15)


@I.ir_module
class RowsOfAnyWidth:
    @T.prim_func(private=True)
    def fill(b_ptr: T.handle("float32"), n: T.int32):
        V = T.decl_buffer((n,), "float32", data=b_ptr)
        for j in range(n):
            V[j] = T.float32(7)

    @T.prim_func
    def main(b: T.handle):
        n, m = T.int32(), T.int32()
        B = T.match_buffer(b, (n, m), "float32")
        for i in range(n):
            RowsOfAnyWidth.fill(T.address_of(B[i, 0]), m)


def test_the_address_of_an_empty_rows_start_is_no_access(private_cache):
    """``T.address_of(B[i, 0])`` of a row of 0 elements was checked as a read of B[i, 0]."""
    f = tvm.compile(RowsOfAnyWidth, "c")
    f(np.zeros((3, 0), "float32"))
    rows = np.zeros((3, 4), "float32")
    f(rows)
    assert (rows == 7).all()


@T.prim_func
def view_with_its_own_offset(A: T.Buffer((4, 16), "float32")):
    for i in range(4):
        p = T.address_of(A[i, 4])
        V = T.decl_buffer((8,), "float32", data=p, elem_offset=-4)  # V[j] is A[i, j]
        for j in range(8):
            V[j] = T.float32(1)


@T.prim_func
def rows_as_bytes(A: T.Buffer((4, 8), "float32")):
    for i in range(4):
        p = T.address_of(A[i, 0])
        V = T.decl_buffer((32,), "uint8", data=p)
        for j in range(32):
            V[j] = T.uint8(0)


@T.prim_func
def address_past_an_empty_row(B: T.Buffer((3, 0), "float32"), out: T.Buffer((3,), "uint64")):
    for i in range(3):
        out[i] = T.reinterpret("uint64", T.address_of(B[i, 0]))


def test_views_at_a_let_bound_element_keep_their_offset_and_dtype(private_cache):
    """A view's own elem_offset was replaced by the element's (it wrote A[i, 4:12]), and a byte
    view over a float element was refused."""
    a = np.zeros((4, 16), "float32")
    tvm.compile(view_with_its_own_offset, "c")(a)
    assert (a[:, :8] == 1).all() and not a[:, 8:].any()
    rows = np.ones((4, 8), "float32")
    tvm.compile(rows_as_bytes, "c")(rows)
    assert not rows.any()
    tvm.compile(address_past_an_empty_row, "c")(np.zeros((3, 0), "float32"), np.zeros(3, "uint64"))


@T.prim_func
def address_at(A: T.Buffer((4, 4), "float32"), out: T.Buffer((1,), "uint64"), i: T.int32, j: T.int32):
    out[0] = T.reinterpret("uint64", T.address_of(A[i, j]))


def test_an_address_may_be_one_past_the_buffers_end_and_no_further(private_cache):
    f = tvm.compile(address_at, "c")
    a, out = np.zeros((4, 4), "float32"), np.zeros(1, "uint64")
    f(a, out, 4, 0)  # the buffer's end
    f(a, out, 3, 4)  # the same address
    with pytest.raises(IndexError, match=r"the address of an element of buffer 'A' \(its element count, plus 1\)"):
        f(a, out, 4, 3)


def test_none_for_a_pointer_the_function_accesses_is_refused(private_cache):
    """None became a NULL pointer the kernel then wrote through (a segfault)."""
    f = tvm.compile(fill_pointer, target="c")["fill_pointer"]
    with pytest.raises(ValueError, match=r"fill_pointer: argument 'A_data' is None, but the function reads or writes"):
        f(None, 1)


def test_a_tensor_for_a_pointer_must_hold_what_the_function_accesses(private_cache):
    """A tensor passed for a pointer parameter was written past its end (a 2-element array given
    4 elements) and read as compact memory when strided; both are refused by name now."""
    f = tvm.compile(fill_pointer, target="c")["fill_pointer"]
    memory = np.zeros(8, "float32")
    with pytest.raises(ValueError, match=r"argument 'A_data' holds 8 bytes, and the function accesses 16 bytes"):
        f(memory[:2], 7)
    with pytest.raises(ValueError, match=r"argument 'A_data' must be a contiguous \(row-major compact\) tensor"):
        f(memory[::2], 7)
    assert not memory.any()
    f(memory[:4], 7)
    np.testing.assert_array_equal(memory, [7, 7, 7, 7, 0, 0, 0, 0])


@T.prim_func
def rows_through_thread_views(a: T.handle):
    X = T.match_buffer(a, (16, 4), "float32")
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        with T.block("row"):
            V = T.match_buffer(X[tx, 0:4], (4,), "float32")
            for j in range(4):
                V[j] = V[j] + T.float32(j)


@T.prim_func
def two_views_of_a_pointer(A_data: T.handle("float32"), v: T.int32):
    A = T.decl_buffer(2, dtype="float32", data=A_data)
    B = T.decl_buffer(2, dtype="float32", data=A_data, elem_offset=6)
    for i in T.thread_binding(2, thread="threadIdx.x"):
        A[i] = T.Cast("float32", v)
        B[i] = T.Cast("float32", v + 1)


def test_a_kernel_takes_its_arguments_whole_whatever_views_it_makes():
    """A kernel's argument was the first view its body made of the memory: a view at the thread's
    offset (the usual tiling form) made the thread index a kernel parameter, and a second view of
    a pointer reaching further was never checked against the tensor passed."""
    dev = tvm.device("example")
    x = tvm.runtime.tensor(np.zeros((16, 4), "float32"), dev)
    tvm.compile(rows_through_thread_views, target="example")(x)
    np.testing.assert_array_equal(x.numpy(), np.tile(np.arange(4, dtype="float32"), (16, 1)))
    f = tvm.compile(two_views_of_a_pointer, target="example")["two_views_of_a_pointer"]
    with pytest.raises(ValueError, match=r"argument 0 is 16 bytes of device memory, the kernel accesses 8 elements"):
        f(tvm.runtime.tensor(np.zeros(4, "float32"), dev), 7)
    t = tvm.runtime.tensor(np.zeros(8, "float32"), dev)
    f(t, 7)
    np.testing.assert_array_equal(t.numpy(), [7, 7, 0, 0, 0, 0, 8, 8])
