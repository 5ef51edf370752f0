"""Vectors printed as OpenCL's own (vloadN, vstoreN, floatN arithmetic, convert_floatN), and
the stores that must stay lane by lane; each kernel also run on the device against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.testing import kernels
from tvm_backend_opencl import codegen

from tvm.tir.transform import lower

N = 256


def _source(func) -> str:
    target = tvm.target.Target("opencl")
    return codegen.generate_source(lower(func, target).kernels, target)


def _run(dev, func, *arrays: np.ndarray) -> list[np.ndarray]:
    lib = tvm.compile(func, target="opencl")
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    lib[func.global_symbol](*args)
    return [a.numpy() for a in args]


@T.prim_func
def mixed_lanes(a: T.handle, b: T.handle, c: T.handle):
    """A float vector from int lanes (a conversion), a per-lane constant vector and a broadcast."""
    A = T.match_buffer(a, (N,), "float32")
    B = T.match_buffer(b, (N,), "int32")
    C = T.match_buffer(c, (N,), "float32")
    for bx in T.thread_binding(N // 64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            at = T.ramp((bx * 16 + tx) * 4, 1, 4)
            C[at] = (A[at] + T.Cast("float32x4", B[at])) * T.float32x4(2) + T.Cast("float32x4", T.ramp(1, 1, 4))


@T.prim_func
def half_lanes(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (N,), "float16")
    C = T.match_buffer(c, (N,), "float16")
    for bx in T.thread_binding(N // 64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            at = T.ramp((bx * 16 + tx) * 4, 1, 4)
            C[at] = A[at] * A[at] + A[at]


@T.prim_func
def shift_left_in_place(a: T.handle):
    """A[i:i+4] = A[i+1:i+5]: the store reads its own buffer, so it stays lane by lane (every
    lane read first) and no vstore may write before the reads."""
    A = T.match_buffer(a, (N + 4,), "float32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            for i in range(N // 4):
                A[T.ramp(i * 4, 1, 4)] = A[T.ramp(i * 4 + 1, 1, 4)]


@T.prim_func
def strided_gather(a: T.handle, c: T.handle):
    """Loads two elements apart (a gather: the vector of its lanes) stored contiguously."""
    A = T.match_buffer(a, (2 * N,), "float32")
    C = T.match_buffer(c, (N,), "float32")
    for bx in T.thread_binding(N // 64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            i = (bx * 16 + tx) * 4
            C[T.ramp(i, 1, 4)] = A[T.ramp(i * 2, 2, 4)] + T.float32x4(1)


@T.prim_func
def strided_store(a: T.handle, c: T.handle):
    """Stores two elements apart: no vector store, one store per lane."""
    A = T.match_buffer(a, (N,), "float32")
    C = T.match_buffer(c, (2 * N,), "float32")
    for bx in T.thread_binding(N // 64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            i = (bx * 16 + tx) * 4
            C[T.ramp(i * 2, 2, 4)] = A[T.ramp(i, 1, 4)]


def test_vector_kernel_is_printed_with_opencl_vectors(dev):
    src = _source(kernels.vector_lanes(N, lanes=4, block=16))
    assert "vload4(0, A + " in src and "vstore4(" in src and "((float4)(1.0f))" in src, src
    a = np.random.default_rng(0).standard_normal(N).astype("float32")
    _, c = _run(dev, kernels.vector_lanes(N, lanes=4, block=16), a, np.zeros(N, "float32"))
    np.testing.assert_allclose(c, a * a + 1, rtol=1e-6)


@pytest.mark.parametrize("lanes", [2, 8, 16])
def test_every_opencl_width(dev, lanes):
    func = kernels.vector_lanes(N, lanes=lanes, block=N // (lanes * 2))
    assert f"vstore{lanes}(" in _source(func)
    a = np.arange(N, dtype="float32")
    _, c = _run(dev, func, a, np.zeros(N, "float32"))
    np.testing.assert_array_equal(c, a * a + 1)


def test_conversion_constants_and_broadcast(dev):
    src = _source(mixed_lanes)
    assert "convert_float4(vload4(0, B + " in src, src
    assert "((float4)(1.0f, 2.0f, 3.0f, 4.0f))" in src and "((float4)(2.0f))" in src, src
    rng = np.random.default_rng(1)
    a = rng.standard_normal(N).astype("float32")
    b = rng.integers(-1000, 1000, N).astype("int32")
    *_, c = _run(dev, mixed_lanes, a, b, np.zeros(N, "float32"))
    np.testing.assert_allclose(c, (a + b) * 2 + np.tile(np.arange(1, 5, dtype="float32"), N // 4), rtol=1e-6)


def test_store_reading_its_own_buffer_stays_lane_by_lane(dev):
    assert "vstore" not in _source(shift_left_in_place)
    a = np.arange(N + 4, dtype="float32")
    (out,) = _run(dev, shift_left_in_place, a.copy())
    np.testing.assert_array_equal(out, np.concatenate([a[1 : N + 1], a[N:]]))


def test_gather_is_a_vector_of_lanes(dev):
    src = _source(strided_gather)
    assert "vstore4(" in src and "vload4" not in src and "((float4)(A[" in src, src
    a = np.arange(2 * N, dtype="float32")
    _, c = _run(dev, strided_gather, a, np.zeros(N, "float32"))
    np.testing.assert_array_equal(c, a[::2] + 1)


def test_strided_store_is_scalar(dev):
    assert "vstore" not in _source(strided_store)
    a = np.arange(N, dtype="float32")
    _, c = _run(dev, strided_store, a, np.zeros(2 * N, "float32"))
    np.testing.assert_array_equal(c[::2], a)
    np.testing.assert_array_equal(c[1::2], 0)


def test_half_vectors_stay_scalar(dev):
    """float16 buffers go through vload_half/vstore_half, one element at a time."""
    src = _source(half_lanes)
    assert "vstore4" not in src and "vstore_half(" in src, src
    a = np.random.default_rng(2).standard_normal(N).astype("float16")
    _, c = _run(dev, half_lanes, a, np.zeros(N, "float16"))
    np.testing.assert_array_equal(c, a * a + a)


@T.prim_func
def extern_lanes(a: T.handle, c: T.handle):
    """Lanes that call an extern function stay one store each, in order."""
    A = T.match_buffer(a, (N,), "float32")
    C = T.match_buffer(c, (N,), "float32")
    for bx in T.thread_binding(N // 64, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            at = T.ramp((bx * 16 + tx) * 4, 1, 4)
            C[at] = T.call_pure_extern("float32x4", "fabs", A[at])


def test_extern_calls_stay_lane_by_lane(dev):
    assert "vstore" not in _source(extern_lanes)
    a = np.random.default_rng(3).standard_normal(N).astype("float32")
    _, c = _run(dev, extern_lanes, a, np.zeros(N, "float32"))
    np.testing.assert_array_equal(c, np.abs(a))


def test_a_deep_expression_stored_as_a_vector(dev):
    """Each level of a deep vector expression printed every lane's whole expression again
    (quadratic in the depth: 23 s at depth 128 with 64 lanes)."""
    e = "A[0:64]"
    for k in range(60):
        e = f"({e} * T.float32(0.5) + T.float32({k % 3}))"
    func = tvm.script.parse(
        f"""
@T.prim_func
def deep(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(1, thread="threadIdx.x"):
        B[0:64] = {e}
"""
    )
    assert "vload" in _source(func)
    a = np.arange(64, dtype="float32")
    want = a.copy()
    for k in range(60):
        want = want * np.float32(0.5) + np.float32(k % 3)
    _, b = _run(dev, func, a, np.zeros(64, "float32"))
    np.testing.assert_allclose(b, want, rtol=1e-6)


@T.prim_func
def volatile_private_run(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    """A private array stored at an index read from memory in a kernel with a barrier is
    volatile (PoCL's workaround), so its runs of loads and stores stay lane by lane."""
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        S = T.alloc_buffer((16,), "int32", scope="shared")
        L = T.alloc_buffer((4,), "int32", scope="local")
        L[0:4] = A[tx * 4 : tx * 4 + 4]
        L[T.bitwise_and(A[tx], 3)] = 7
        S[tx] = L[0] + L[1]
        T.tvm_storage_sync("shared")
        B[tx * 4 : tx * 4 + 4] = L[0:4] + T.Broadcast(S[(tx + 1) % 16], 4)


def test_volatile_private_arrays_are_not_vector_accessed(dev):
    src = _source(volatile_private_run)
    assert "volatile int L[4];" in src and "vload4(0, L" not in src and ", L + " not in src
    a = np.arange(64, dtype="int32")
    (_, b) = _run(dev, volatile_private_run, a, np.zeros(64, "int32"))
    local = a.reshape(16, 4).copy()
    local[np.arange(16), a[np.arange(16)] & 3] = 7
    shared = local[:, 0] + local[:, 1]
    np.testing.assert_array_equal(b, (local + shared[(np.arange(16) + 1) % 16][:, None]).reshape(-1))
