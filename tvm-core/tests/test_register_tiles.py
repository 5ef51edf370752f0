"""Register tiles on the CPU (tvm.codegen.register_tiles): a local buffer updated only in
vectorized loops is printed as an array of vectors, and the loops a vector at a time; anything
else keeps the plain array. Every kernel is compared against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.codegen.register_tiles import vector_bytes_of
from tvm.script import tir as T
from tvm.testing import tunables
from tvm.tune import isa_features


def _runs_here(target: str) -> bool:
    """Whether this CPU has the vector ISA ``target`` compiles for."""
    return isa_features(tvm.target.Target(target)) <= isa_features(tvm.target.Target("c -mcpu=native"))


def _tile_declared(src: str, name: str = "acc") -> bool:
    return any(
        line.strip().endswith("];") and f" {name}[" in line and "x" in line.split()[0] for line in src.splitlines()
    )


@pytest.mark.parametrize(
    "mr, nr, dtype, target",
    [
        (4, 16, "float32", "c -mcpu=haswell"),
        (8, 32, "float32", "c -mcpu=skylake-avx512"),
        (2, 8, "float64", "c"),
        (4, 4, "float32", "c"),
        (1, 64, "float32", "c -mcpu=haswell"),
    ],
)
def test_the_zoo_matmul_keeps_its_accumulators_as_vectors(mr, nr, dtype, target):
    if not _runs_here(target):
        pytest.skip(f"this CPU lacks the vector ISA of '{target}'")
    mod = tvm.compile(tunables.matmul_cpu(64, 64, 48, mr, nr, dtype), target)
    rng = np.random.default_rng(mr * nr)
    a, b = rng.standard_normal((64, 48)).astype(dtype), rng.standard_normal((48, 64)).astype(dtype)
    c = np.zeros((64, 64), dtype)
    mod["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-4)
    src = mod.inspect_source()
    assert _tile_declared(src) and "#pragma omp simd" in src  # B's packing loop stays a simd loop


@T.prim_func
def scaled_rows(A: T.Buffer((4, 16), "float32"), s: T.float32, B: T.Buffer((4, 16), "float32")):
    acc = T.alloc_buffer((4, 16), "float32", scope="local")
    for i in T.unroll(4):
        for j in T.vectorized(16):
            acc[i, j] = s
        for j in T.vectorized(16):
            acc[i, j] = acc[i, j] * A[i, j]
            acc[i, j] = acc[i, j] - A[i, j] / s
    for i in range(4):
        for j in T.vectorized(16):
            B[i, j] = acc[i, j]


def test_each_statement_of_a_vector_loop_sees_the_one_before_and_broadcasts_keep_their_bits():
    """Two stores in one vectorized loop run in order; a broadcast scalar keeps a negative zero
    and a NaN's payload (a splat, not an addition to zero)."""
    mod = tvm.compile(scaled_rows, "c")  # no -mcpu: no fused multiply-add, NumPy's roundings
    assert _tile_declared(mod.inspect_source())
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 16)).astype("float32")
    for s in (np.float32(1.5), np.float32(-0.0), np.uint32(0x7FC01234).view(np.float32)):
        b = np.zeros((4, 16), "float32")
        mod["scaled_rows"](a, s, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            expect = (s * a) - a / s
        np.testing.assert_array_equal(b.view("uint32"), expect.astype("float32").view("uint32"))


@T.prim_func
def read_as_scalars(A: T.Buffer((16,), "float32"), B: T.Buffer((1,), "float32")):
    acc = T.alloc_buffer((16,), "float32", scope="local")
    for j in T.vectorized(16):
        acc[j] = A[j] * T.float32(2)
    B[0] = T.float32(0)
    for j in range(16):
        B[0] = B[0] + acc[j]


@T.prim_func
def uneven_lanes(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
    acc = T.alloc_buffer((6,), "float32", scope="local")
    for j in T.vectorized(6):
        acc[j] = A[j] + T.float32(1)
    for j in T.vectorized(6):
        B[j] = acc[j]


@T.prim_func
def maximum_in_loop(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    acc = T.alloc_buffer((16,), "float32", scope="local")
    for j in T.vectorized(16):
        acc[j] = T.max(A[j], T.float32(0))
    for j in T.vectorized(16):
        B[j] = acc[j]


@T.prim_func
def integer_tile(A: T.Buffer((16,), "int32"), B: T.Buffer((16,), "int32")):
    acc = T.alloc_buffer((16,), "int32", scope="local")
    for j in T.vectorized(16):
        acc[j] = A[j] * 3
    for j in T.vectorized(16):
        B[j] = acc[j]


@pytest.mark.parametrize(
    "func, expect",
    [
        (read_as_scalars, lambda a: np.array([np.sum(a * 2, dtype="float32")], "float32")),
        (uneven_lanes, lambda a: a[:6] + 1),
        (maximum_in_loop, lambda a: np.maximum(a, 0)),
        (integer_tile, lambda a: a * 3),
    ],
    ids=["scalar-reads", "lanes-not-a-multiple", "unsupported-operation", "integer"],
)
def test_buffers_that_are_no_register_tile_stay_plain_arrays(func, expect):
    mod = tvm.compile(func, "c")
    src = mod.inspect_source()
    assert not _tile_declared(src) and "acc[" in src and "__attribute__((aligned(64)))" in src
    params = func.params
    shape_a = func.buffer_map[params[0]].shape
    dtype = func.buffer_map[params[0]].dtype
    a = np.arange(-5, int(shape_a[0].value) - 5).astype(dtype)
    out_buf = func.buffer_map[params[1]]
    b = np.zeros(tuple(int(d.value) for d in out_buf.shape), out_buf.dtype)
    mod[func.global_symbol](a, b)
    np.testing.assert_allclose(b, expect(a), rtol=1e-6)


def test_vector_width_follows_the_compiled_isa():
    assert vector_bytes_of(None) == 16
    assert vector_bytes_of("haswell") == 32
    assert vector_bytes_of("skylake-avx512") == 64
    assert vector_bytes_of("x86-64") == 16


@T.prim_func
def carried(A: T.Buffer((9,), "float32"), B: T.Buffer((8,), "float32")):
    acc = T.alloc_buffer((8,), "float32", scope="local")
    for j in T.vectorized(8):
        acc[j] = B[j]
    for j in T.vectorized(8):
        A[j + 1] = A[j] + acc[j]


def test_a_value_carried_from_lane_to_lane_keeps_the_scalar_loop():
    """A[j + 1] = A[j] + acc[j] reads what the previous lane wrote: a vector at a time it read
    the old values ([1, 2, 2, 3, ...]); such a loop is printed element by element."""
    mod = tvm.compile(carried, "c")
    a = np.zeros(9, "float32")
    a[0] = 1
    b = np.arange(1, 9, dtype="float32")
    mod["carried"](a, b)
    np.testing.assert_array_equal(a, np.r_[1, 1 + np.cumsum(b)].astype("float32"))


@T.prim_func
def index_reads_written(A: T.Buffer((16,), "float32"), B: T.Buffer((20,), "float32")):
    acc = T.alloc_buffer((16,), "float32", scope="local")
    for j in T.vectorized(16):
        acc[j] = A[j]
    for j in T.vectorized(16):
        B[T.floormod(T.Cast("int32", B[0]), 4) + j] = acc[j]


@T.prim_func
def impure_invariant(B: T.Buffer((16,), "float32")):
    acc = T.alloc_buffer((16,), "float32", scope="local")
    for j in T.vectorized(16):
        acc[j] = T.Cast("float32", T.call_extern("int32", "rand"))
    for j in T.vectorized(16):
        B[j] = acc[j]


@T.prim_func
def too_large(A: T.Buffer((4096,), "float64"), B: T.Buffer((4096,), "float64")):
    acc = T.alloc_buffer((4096,), "float64", scope="local")
    for j in T.vectorized(4096):
        acc[j] = A[j] * T.float64(2)
    for j in T.vectorized(4096):
        B[j] = acc[j]


def test_what_a_vector_at_a_time_could_change_keeps_the_scalar_loop():
    """An index reading the buffer the loop writes (each iteration sees the one before), a call
    in a broadcast value (once per iteration, not per vector), a tile past 32 vector registers
    (a full unroll the C compiler took minutes over): each keeps the plain array and loop."""
    a = np.arange(2, 18, dtype="float32")
    b = np.zeros(20, "float32")
    mod = tvm.compile(index_reads_written, "c")
    assert not _tile_declared(mod.inspect_source())
    mod["index_reads_written"](a, b)
    expect = np.zeros(20, "float32")
    for j in range(16):
        expect[int(expect[0]) % 4 + j] = a[j]
    np.testing.assert_array_equal(b, expect)
    mod = tvm.compile(impure_invariant, "c")
    assert not _tile_declared(mod.inspect_source())
    out = np.zeros(16, "float32")
    mod["impure_invariant"](out)
    assert len(set(out.tolist())) == 16  # rand() once per element
    mod = tvm.compile(too_large, "c")
    assert not _tile_declared(mod.inspect_source())
    x, y = np.arange(4096, dtype="float64"), np.zeros(4096, "float64")
    mod["too_large"](x, y)
    np.testing.assert_array_equal(y, x * 2)
