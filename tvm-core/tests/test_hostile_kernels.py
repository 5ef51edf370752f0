"""Kernels and calls that used to crash, hang or run silently wrong: each now compiles and runs
correctly or fails with a Python exception naming the problem."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.codegen.c_family import CodegenError
from tvm.tir.transform import TIRVerifyError


def _compile(f):
    return tvm.compile(f, target="c")


# --------------------------------------------------------------------------- constant bounds
def test_constant_index_past_the_end_is_a_compile_error_with_the_line() -> None:
    @T.prim_func
    def k(a: T.handle):
        A = T.match_buffer(a, (16,), "float32")
        A[100000000] = T.float32(1)

    with pytest.raises(
        TIRVerifyError,
        match=r"dimension 0 of buffer 'A' has extent 16 \(valid indices: \[0, 15\]\), got index 100000000",
    ) as err:
        _compile(k)
    assert "A[100000000] = T.float32(1)" in str(err.value)


def test_negative_constant_index_is_a_compile_error() -> None:
    @T.prim_func
    def k(a: T.handle):
        A = T.match_buffer(a, (16,), "float32")
        A[3] = A[-5]

    with pytest.raises(TIRVerifyError, match=r"got index -5"):
        _compile(k)


def test_loop_running_past_a_constant_shape_names_the_loop_range() -> None:
    @T.prim_func
    def k(a: T.handle):
        A = T.match_buffer(a, (4, 16), "float32")
        for i, j in T.grid(4, 4096):
            A[i, j] = T.float32(1)

    with pytest.raises(
        TIRVerifyError, match=r"dimension 1 of buffer 'A' has extent 16 .*got indices 0 to 4095 \(j in \[0, 4095\]\)"
    ):
        _compile(k)


def test_store_into_a_zero_size_buffer_is_a_compile_error() -> None:
    @T.prim_func
    def k(a: T.handle):
        A = T.match_buffer(a, (0,), "float32")
        A[0] = T.float32(1)

    with pytest.raises(TIRVerifyError, match=r"has extent 0 \(valid indices: none\), got index 0"):
        _compile(k)


def test_grid_times_block_larger_than_the_buffer_is_a_compile_error() -> None:
    @T.prim_func
    def k(a: T.handle):
        A = T.match_buffer(a, (1024,), "float32")
        for bx in T.thread_binding(100, thread="blockIdx.x"):
            for tx in T.thread_binding(256, thread="threadIdx.x"):
                A[bx * 256 + tx] = T.float32(0)

    with pytest.raises(TIRVerifyError, match=r"got indices 0 to 25599 \(bx in \[0, 99\], tx in \[0, 255\]\)"):
        tvm.tir.transform.lower(k, tvm.target.Target("opencl"))


def test_guarded_and_in_bounds_accesses_still_compile_and_run() -> None:
    """A condition may be what keeps an access in bounds: those are left to the program; split,
    modulo and clamped indices whose range is inside the shape compile."""

    @T.prim_func
    def k(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (16,), "float32")
        B = T.match_buffer(b, (4, 4), "float32")
        for i in range(32):
            if i < 16:
                A[i] = T.float32(2) * B[i // 4, i % 4]
        for i in range(64):
            B[i // 16, T.min(i % 16, 3)] = B[i % 4, (i + 1) % 4] + T.Select(i < 16, A[i % 16], T.float32(0))

    b = np.arange(16, dtype="float32").reshape(4, 4)
    a = np.zeros(16, "float32")
    want_a = 2 * b.reshape(-1)
    want_b = b.copy()
    for i in range(64):
        want_b[i // 16, min(i % 16, 3)] = want_b[i % 4, (i + 1) % 4] + (want_a[i % 16] if i < 16 else 0)
    _compile(k)["k"](a, b)
    np.testing.assert_array_equal(a, want_a)
    np.testing.assert_array_equal(b, want_b)


def test_accesses_through_lets_and_under_simple_conditions_are_judged() -> None:
    """A let of a known range is followed, and an ``if`` comparing variables with constants
    bounds them for its branch: these accesses would write past the buffers at run time."""

    @T.prim_func
    def through_a_let(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(16, thread="blockIdx.x"):
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                idx = bx * 4 + tx
                if T.likely(idx < 64):
                    A[idx * 2 + 1] = T.float32(1)

    with pytest.raises(TIRVerifyError, match=r"buffer 'A' has extent 64 .* got indices 1 to 127"):
        tvm.tir.transform.lower(through_a_let, tvm.target.Target("example"))

    @T.prim_func
    def narrowed(A: T.Buffer((32,), "float32")):
        for i in range(256):
            k = i // 2
            if k < 16 and i >= 0:
                A[k * 2] = T.float32(k)

    a = np.zeros(32, "float32")
    _compile(narrowed)["narrowed"](a)
    np.testing.assert_array_equal(a[::2], np.arange(16))


def test_a_block_buffer_indexed_relative_to_its_block_holds_the_block_region() -> None:
    """Apache TVM's cache_read writes a block's buffer with extent 1 in a dimension indexed by the
    block's own index: the buffer is the region the block touches (compaction), not an access
    past the end; and ``vi - i * 16`` with ``vi = i * 16 + x`` stays inside a 16-wide buffer."""

    @T.prim_func
    def block_relative(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        for i in T.thread_binding(16, thread="blockIdx.x"):
            with T.sblock("outer"):
                vi = T.axis.spatial(16, i)
                A_shared = T.sblock_alloc_buffer([1, 16], dtype="float32", scope="shared")
                for ax1 in range(16):
                    A_shared[vi, ax1] = A[vi, ax1]
                for j in T.thread_binding(16, thread="threadIdx.x"):
                    B[vi, j] = A_shared[vi, 15 - j] * T.float32(2)

    a = np.random.default_rng(11).random((16, 16), dtype="float32")
    dev = tvm.device("example")
    out = tvm.runtime.empty((16, 16), "float32", dev)
    tvm.compile(block_relative, target="example")["block_relative"](tvm.runtime.tensor(a, dev), out)
    np.testing.assert_allclose(out.numpy(), a[:, ::-1] * 2)

    @T.prim_func
    def row_relative_cpu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):  # the same on the CPU, where shared memory is ordinary memory
            with T.sblock("outer"):
                vi = T.axis.spatial(16, i)
                A_shared = T.sblock_alloc_buffer([1, 16], dtype="float32", scope="shared")
                for ax1 in range(16):
                    A_shared[vi, ax1] = A[vi, ax1]
                for j in range(16):
                    with T.sblock("inner"):
                        vj = T.axis.reduce(16, j)
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A_shared[vi, vj]

    b = np.zeros(16, "float32")
    _compile(row_relative_cpu)["row_relative_cpu"](a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)

    @T.prim_func
    def tile_relative(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        for i0, j0 in T.grid(4, 4):
            with T.sblock("tile"):
                i, j = T.axis.remap("SS", [i0, j0])
                A_local = T.sblock_alloc_buffer((16, 16), scope="local")
                for x, y in T.grid(16, 16):
                    with T.sblock("load"):
                        vi = T.axis.spatial(64, i * 16 + x)
                        vj = T.axis.spatial(64, j * 16 + y)
                        A_local[vi - i * 16, vj - j * 16] = A[vi, vj]
                for x, y in T.grid(16, 16):
                    with T.sblock("store"):
                        vi = T.axis.spatial(64, i * 16 + x)
                        vj = T.axis.spatial(64, j * 16 + y)
                        B[vi, vj] = A_local[vi - i * 16, vj - j * 16] + T.float32(1)

    a = np.random.default_rng(12).random((64, 64), dtype="float32")
    b = np.zeros((64, 64), "float32")
    _compile(tile_relative)["tile_relative"](a, b)
    np.testing.assert_allclose(b, a + 1)


def test_else_branches_and_equalities_are_judged_too() -> None:
    """``if i == 0 ... elif i < 64`` leaves [1, 63] to the ``elif`` branch: a read of column 63 of
    a 63-column buffer there (one of Apache TVM's test kernels does it) is refused; in-bounds
    if/elif/else chains compile and run."""

    @T.prim_func
    def past_the_end(P: T.Buffer((4, 63), "int8"), Q: T.Buffer((4, 1), "int8"), C: T.Buffer((4, 64), "int8")):
        for r in range(4):
            for i in range(64):
                if i == 0:
                    C[r, i] = Q[r, 0]
                elif i < 64:
                    C[r, i] = P[r, i]

    with pytest.raises(
        TIRVerifyError, match=r"buffer 'P' has extent 63 \(valid indices: \[0, 62\]\), got indices 1 to 63"
    ) as e:
        _compile(past_the_end)
    assert "C[r, i] = P[r, i]" in str(e.value)  # the statement reading it, not the loop

    @T.prim_func
    def concat(P: T.Buffer((4, 63), "int8"), Q: T.Buffer((4, 1), "int8"), C: T.Buffer((4, 128), "int8")):
        for r in range(4):
            for i in range(128):
                if i == 0:
                    C[r, i] = Q[r, 0]
                elif not (i >= 64):
                    C[r, i] = P[r, i - 1]
                elif i != 127:
                    C[r, i] = P[r, i - 64] + T.int8(1)
                else:
                    C[r, i] = Q[r, 0]

    p = np.arange(4 * 63, dtype="int8").reshape(4, 63)
    q = np.full((4, 1), 7, "int8")
    c = np.zeros((4, 128), "int8")
    _compile(concat)["concat"](p, q, c)
    want = np.concatenate([q, p, p[:, :63] + 1, q], axis=1)
    np.testing.assert_array_equal(c, want)


def test_a_condition_on_other_variables_does_not_hide_an_out_of_bounds_column() -> None:
    """``T.if_then_else(row < 127, A[row, col], 0)`` with ``col`` in [0, 127] of a 127-column
    buffer: the condition says nothing about ``col`` (one of Apache TVM's test kernels reads
    column 127 so); a condition on the index's own variables still keeps it in bounds."""

    @T.prim_func
    def padded(A: T.Buffer((127, 127), "float32"), B: T.Buffer((128, 128), "float32")):
        for r, c in T.grid(128, 128):
            B[r, c] = T.if_then_else(r < 127, A[r, c], T.float32(0))

    with pytest.raises(TIRVerifyError, match=r"dimension 1 of buffer 'A' has extent 127 .* got indices 0 to 127"):
        _compile(padded)

    @T.prim_func
    def guarded(A: T.Buffer((127, 127), "float32"), B: T.Buffer((128, 128), "float32")):
        for r, c in T.grid(128, 128):
            B[r, c] = T.if_then_else(r < 127 and c < 127, A[r, c], T.float32(0))

    a = np.random.default_rng(5).random((127, 127), dtype="float32")
    b = np.zeros((128, 128), "float32")
    _compile(guarded)["guarded"](a, b)
    np.testing.assert_array_equal(b, np.pad(a, ((0, 1), (0, 1))))


def test_a_condition_on_a_sum_of_loop_variables_does_not_hide_an_out_of_bounds_row() -> None:
    """``if j * 8 + k < 60: A[i * 64 + j * 8 + k]``: the condition bounds j * 8 + k (which takes
    every value up to 59), so the index reaches 7 * 64 + 59 = 507 of a 256-row buffer (one of
    Apache TVM's test kernels writes so and corrupted the heap); where the condition keeps the
    index inside, the kernel compiles and runs."""

    @T.prim_func
    def diagonal(B: T.Buffer((256, 256), "float32")):
        for i in range(8):
            for j, k in T.grid(8, 8):
                if j * 8 + k < 60:
                    B[i * 64 + j * 8 + k, i * 64 + j * 8 + k] = T.float32(1)

    with pytest.raises(TIRVerifyError, match=r"dimension 0 of buffer 'B' has extent 256 .* got indices 0 to 507"):
        _compile(diagonal)

    @T.prim_func
    def in_rows(B: T.Buffer((480,), "float32"), C: T.Buffer((256,), "float32")):
        for i in range(8):
            for j, k in T.grid(8, 8):
                if j * 8 + k < 60:
                    B[i * 60 + j * 8 + k] = T.float32(1)
                if i * 64 + j * 8 + k < 256:
                    C[i * 64 + j * 8 + k] = T.float32(2)

    b, c = np.zeros(480, "float32"), np.zeros(256, "float32")
    _compile(in_rows)["in_rows"](b, c)
    np.testing.assert_array_equal(b, np.ones(480, "float32"))
    np.testing.assert_array_equal(c, np.full(256, 2, "float32"))


# --------------------------------------------------------------------------- 64-bit loops
def test_loop_bounds_past_int32_get_a_64_bit_loop_variable() -> None:
    """range(2**32 + 5, 2**32 + 9) used to get an int32 variable that wrapped and looped forever."""

    @T.prim_func
    def k(a: T.handle):
        A = T.match_buffer(a, (4,), "int64")
        for i in range(2**32 + 5, 2**32 + 9):
            A[i - (2**32 + 5)] = i
        for i in T.parallel(2**32 + 5, 2**32 + 9):
            A[i - (2**32 + 5)] = A[i - (2**32 + 5)] + i

    a = np.zeros(4, "int64")
    _compile(k)["k"](a)
    np.testing.assert_array_equal(a, 2 * np.arange(2**32 + 5, 2**32 + 9, dtype="int64"))


def test_loop_bounds_past_int64_are_a_parse_error() -> None:
    with pytest.raises(Exception, match=r"do not fit a 64-bit integer"):

        @T.prim_func
        def k(a: T.handle):
            A = T.match_buffer(a, (4,), "int64")
            for i in range(2**64):
                A[0] = T.int64(1)


# --------------------------------------------------------------------------- legal calls
@T.prim_func
def _add_one(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        B[i] = A[i] + T.float32(1)


def test_read_only_numpy_inputs_are_accepted() -> None:
    x = np.arange(5, dtype="float32")
    x.setflags(write=False)
    y = np.zeros(5, "float32")
    _compile(_add_one)["_add_one"](x, y, 5)
    np.testing.assert_array_equal(y, np.arange(5, dtype="float32") + 1)
    t = tvm.runtime.tensor(x)
    np.testing.assert_array_equal(t.numpy(), x)


def test_a_kernel_writing_into_a_read_only_array_leaves_it_unchanged_and_raises() -> None:
    """Read-only arrays travel as copies: the owner's memory is never written, and a call that
    wrote into the copy raises instead of dropping its result (one that wrote the values already
    there lost nothing)."""
    x = np.zeros(5, "float32")
    y = np.arange(5, dtype="float32")
    y.setflags(write=False)
    with pytest.raises(ValueError, match="argument 1 is a read-only NumPy array and the function wrote into it"):
        _compile(_add_one)["_add_one"](x, y, 5)
    np.testing.assert_array_equal(y, np.arange(5, dtype="float32"))
    _compile(_add_one)["_add_one"](y - 1, y, 5)  # y + 1 - 1: the same values
    out = np.frombuffer(np.zeros(5, "float32").tobytes(), "float32")  # read-only, as from bytes
    with pytest.raises(ValueError, match="argument 1 is a read-only"):
        _compile(_add_one)["_add_one"](x, out, 5)


@T.prim_func
def _bf16_double(A: T.Buffer((4,), "bfloat16"), B: T.Buffer((4,), "bfloat16"), C: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i] * T.bfloat16(2)
        C[i] = T.Cast("float32", A[i])


def test_ml_dtypes_arrays_are_accepted_and_written() -> None:
    """NumPy cannot export ml_dtypes' bfloat16 through DLPack (the call raised NumPy's
    BufferError): such arrays travel as tensor copies, and what the kernel writes comes back."""
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (pip install ml_dtypes) makes bfloat16 arrays")
    a = np.arange(4).astype(ml_dtypes.bfloat16)
    b, c = np.zeros(4, ml_dtypes.bfloat16), np.zeros(4, "float32")
    _compile(_bf16_double)["_bf16_double"](a, b, c)
    np.testing.assert_array_equal(b.astype("float32"), [0, 2, 4, 6])
    np.testing.assert_array_equal(c, [0, 1, 2, 3])
    a.setflags(write=False)
    _compile(_bf16_double)["_bf16_double"](a, b[::-1], c)  # a reversed view is written through too
    np.testing.assert_array_equal(b.astype("float32"), [6, 4, 2, 0])


def test_zero_size_arrays_are_accepted() -> None:
    _compile(_add_one)["_add_one"](np.zeros(0, "float32"), np.zeros(0, "float32"), 0)
    z = np.zeros((0, 3), "float32")[:, ::2]  # strided, but empty: compact
    t = tvm.runtime.tensor(z)
    assert t.shape == (0, 2)


# --------------------------------------------------------------------------- arguments and allocations
@T.prim_func
def shifted(A: T.Buffer((4,), "int32"), s: T.int32, t: T.int8, u: T.uint32):
    for i in range(4):
        A[i] = s + T.Cast("int32", t) + T.Cast("int32", u % T.uint32(7))


def test_a_scalar_argument_its_dtype_cannot_hold_is_a_value_error_not_a_wrapped_value() -> None:
    f = _compile(shifted)["shifted"]
    a = tvm.runtime.tensor(np.zeros(4, "int32"))
    f(a, -5, 127, 4294967295)
    np.testing.assert_array_equal(a.numpy(), np.full(4, -5 + 127 + 4294967295 % 7))
    for args, dtype in [
        ((2**31, 0, 0), "int32"),
        ((0, 300, 0), "int8"),
        ((0, 0, -1), "uint32"),
        ((0, 0, 2**64), "uint32"),
    ]:
        with pytest.raises(ValueError, match=rf"does not fit its dtype {dtype}"):
            f(a, *args)


@T.prim_func
def wide(A: T.Buffer((1,), "uint64"), x: T.uint64, y: T.int64) -> T.uint64:
    A[0] = x + T.Cast("uint64", y)
    return A[0]


def test_uint64_arguments_and_results_cover_their_whole_range() -> None:
    """Python ints past int64 arrive as ffi.BigInt: a uint64 parameter takes them up to 2**64 - 1
    (they were refused with "expects an int ..., got ffi.BigInt"), a uint64 result past int64 is
    returned as one (it came back negative), and int64 parameters refuse them by name."""
    f = _compile(wide)["wide"]
    a = np.zeros(1, "uint64")
    for x in (0, 5, 2**63 - 1, 2**63, 2**64 - 1, np.uint64(2**64 - 2)):
        assert f(a, x, 0) == int(x) and a[0] == int(x), x
    assert f(a, 2**64 - 2, 1) == 2**64 - 1
    for x, y, words in [
        (2**64, 0, "'x' does not fit its dtype uint64"),
        (-1, 0, "'x' does not fit its dtype uint64"),
        (0, 2**63, "'y' does not fit its dtype int64"),
    ]:
        with pytest.raises(ValueError, match=words):
            f(a, x, y)
    with pytest.raises(TypeError, match=r"argument 'x' \(#1\) expects an int \(uint64\), got float"):
        f(a, 1.5, 0)


@T.prim_func
def scratch(B: T.Buffer((8,), "float32"), m: T.int64):
    for p in T.parallel(8):
        C = T.alloc_buffer((m,), "float32")
        C[0] = T.float32(p)
        B[p] = C[0] * T.float32(2)


@T.prim_func
def serial_scratch(B: T.Buffer((8,), "float32"), m: T.int64):
    C = T.alloc_buffer((m,), "float32")
    for p in range(8):
        C[0] = T.float32(p)
        B[p] = C[0]


def test_an_allocation_that_fails_or_overflows_is_a_memory_error_also_in_a_parallel_loop() -> None:
    b = tvm.runtime.tensor(np.zeros(8, "float32"))
    f = _compile(scratch)["scratch"]
    f(b, 4)
    np.testing.assert_array_equal(b.numpy(), np.arange(8) * 2)
    for f, m in [(f, 2**60), (_compile(serial_scratch)["serial_scratch"], 2**62 + 16)]:
        with pytest.raises(MemoryError, match="cannot allocate buffer C: its size is negative, overflows"):
            f(b, m)


@T.prim_func
def checked_rows(A: T.Buffer((8,), "int32"), limit: T.int32):
    for i in T.parallel(8):
        assert i < limit, "row past the limit"
        A[i] = i


def test_an_assert_inside_a_parallel_loop_raises_after_the_loop() -> None:
    f = _compile(checked_rows)["checked_rows"]
    a = tvm.runtime.tensor(np.zeros(8, "int32"))
    f(a, 8)
    np.testing.assert_array_equal(a.numpy(), np.arange(8))
    with pytest.raises(RuntimeError, match="row past the limit"):
        f(a, 5)


def test_a_tensor_past_32_bit_indices_for_a_kernel_with_32_bit_sizes_is_refused() -> None:
    @T.prim_func
    def corner(a: T.handle):
        n, m = T.int32(), T.int32()
        A = T.match_buffer(a, (n, m), "uint8")
        A[n - 1, m - 1] = T.uint8(7)

    mod = _compile(corner)
    assert "tvm_count_exceeds(2, (const int64_t[]){t_A->shape[0], t_A->shape[1]}, 2147483647LL)" in mod.inspect_source()
    a = tvm.runtime.tensor(np.zeros((3, 5), "uint8"))
    mod["corner"](a)
    assert a.numpy()[-1, -1] == 7


def test_an_unroll_longer_than_compilers_take_is_a_plain_loop() -> None:
    @T.prim_func
    def long_unroll(A: T.Buffer((1,), "int32")):
        for i in T.unroll(1 << 20):
            A[0] = A[0] + 1

    mod = _compile(long_unroll)
    assert "#pragma GCC unroll" not in mod.inspect_source()
    a = tvm.runtime.tensor(np.zeros(1, "int32"))
    mod["long_unroll"](a)
    assert a.numpy()[0] == 1 << 20


# --------------------------------------------------------------------------- malformed scripts
MALFORMED = {
    "buffer as a sequence": (
        "for i, j in T.grid(*A):\n        A[0] = A[1]",
        "buffer 'A' is not a sequence",
    ),
    "pointer stored as a number": ("A[0] = T.Cast('handle', A[1])", r"a cast between a pointer \(handle\) and float32"),
    "float slice bound": (
        "B = T.match_buffer(A[0.5:8], (4,))\n    B[0] = T.float32(1)",
        "non-integer elem_offset",
    ),
    "string elem_offset": (
        'B = T.decl_buffer((4,), "float32", data=A.data, elem_offset="x")\n    B[0] = T.float32(1)',
        "non-integer elem_offset",
    ),
    "string as a view's size": (
        'B = T.decl_buffer(("int4",), "float32", data=A.data)\n    B[0] = T.float32(1)',
        "variable 'int4' is used but not defined",
    ),
    "zero vector lanes": ('B = T.alloc_buffer((4,), "int32x0")\n    B[0] = B[1]', "vector lanes must be 2 to 64"),
    "one vector lane": (
        'B = T.alloc_buffer((4,), "float16x1", scope="local")\n    B[0] = B[1]',
        "vector lanes must be 2 to 64; one lane is the scalar 'float16'",
    ),
    "a call of an unknown dtype": (
        'T.evaluate(T.call_extern("float128", "some_function"))',
        "the result of call_extern: unsupported dtype 'float128'",
    ),
    "global_symbol not a name": (
        'T.func_attr({"global_symbol": 3})\n    A[0] = T.float32(1)',
        "global_symbol must be a name",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_scripts_are_refused_with_their_line(case: str) -> None:
    body, words = MALFORMED[case]
    source = f'@T.prim_func\ndef f(A: T.Buffer((16,), "float32")):\n    {body}\n'
    with pytest.raises(tvm.script.TVMScriptError, match=words) as err:
        tvm.script.parse(source)
    assert 'File "<tvmscript>", line' in str(err.value)


@pytest.mark.parametrize(
    "signature, words",
    [
        ('A: T.Buffer((16,), "handle")', "buffer parameter 'A' has dtype handle"),
        ('A: T.Buffer((16,), "float32"), n: T.float32x4', "scalar parameter 'n' has the vector dtype float32x4"),
        ('A: T.Buffer((2**63,), "float32")', "the constant 9223372036854775808 does not fit its dtype int64"),
    ],
)
def test_malformed_signatures_are_refused(signature: str, words: str) -> None:
    source = f"@T.prim_func\ndef f({signature}):\n    T.evaluate(0)\n"
    with pytest.raises(tvm.script.TVMScriptError, match=words):
        tvm.script.parse(source)


def test_an_always_failing_check_twice_in_one_scope_compiles() -> None:
    """A buffer of size n * 0 makes both checks below always fail; each failure is its own C block."""

    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), n: T.int32):
        B = T.alloc_buffer(n * 0, "float32")
        B[0] = A[0]
        A[1] = B[0]

    with pytest.raises(IndexError, match="buffer 'B'"):
        _compile(f)["f"](np.zeros(16, "float32"), 3)


def test_a_size_made_of_a_legalized_intrinsic_compiles() -> None:
    @T.prim_func
    def f(A: T.Buffer((T.popcount(6),), "float32")):
        A[1] = T.float32(1)

    a = np.zeros(2, "float32")
    _compile(f)["f"](a)
    np.testing.assert_array_equal(a, [0, 1])


def test_call_packed_inside_a_vectorized_loop_is_refused_by_name() -> None:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in T.vectorized(4):
            T.call_packed("testing.anything", A[i])

    with pytest.raises(CodegenError, match="T.call_packed cannot be inside a parallel or vectorized loop"):
        _compile(f)


def test_float32_constants_are_written_as_their_float32_values() -> None:
    """1e-320 is 0 in float32: written as it is, CUDA's compiler refuses the literal."""

    @T.prim_func
    def f(A: T.Buffer((2,), "float32")):
        A[0] = T.float32(1e-320)
        A[1] = T.float32(1e-40)

    mod = _compile(f)
    assert "1e-320" not in mod.inspect_source()
    a = np.ones(2, "float32")
    mod["f"](a)
    np.testing.assert_array_equal(a, np.array([1e-320, 1e-40], dtype="float32"))
