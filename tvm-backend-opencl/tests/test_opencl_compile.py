"""tvm.compile(..., target="opencl") end to end beyond the conformance suite
(test_opencl_conformance.py): math, comparisons, scalars, dynamic local memory, threads, half
storage, integer division; generated OpenCL C run on the device and compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from opencl_testing import rand
from tvm.script import tir as T

import opencl_kernels as K
from tvm.testing.kernels import reference_softmax

pytestmark = pytest.mark.usefixtures("no_fallback")


def _compile(func):
    mod = tvm.compile(func, target="opencl")
    assert [m.kind for m in mod.imports] == ["opencl"]
    return mod


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_intrinsics(dev, dtype):
    if dtype == "float64" and "cl_khr_fp64" not in dev.attr("device_extensions").split():
        pytest.skip(f"{dev.name} has no cl_khr_fp64")
    mod = _compile(K.unary_math(dtype))
    a = rand(256, dtype)
    B = tvm.runtime.empty((256,), dtype, dev)
    mod["um"](tvm.runtime.tensor(a, dev), B)
    expect = np.exp(a) * 0.5 + np.sqrt(np.abs(a)) - np.tanh(a) + np.floor(a)
    np.testing.assert_allclose(B.numpy(), expect, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-6)


def test_compare_and_bool_buffers(dev):
    mod = _compile(K.compare_select)
    a, b = rand(128, "float32", 1), rand(128, "float32", 2)
    M = tvm.runtime.empty((128,), "bool", dev)
    C = tvm.runtime.empty((128,), "float32", dev)
    mod["compare_select"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), M, C)
    np.testing.assert_array_equal(M.numpy(), a < b)
    np.testing.assert_array_equal(C.numpy(), np.minimum(a, b))


def test_scalar_parameters(dev):
    mod = _compile(K.axpy)
    n = 77
    x, y = rand(n, "float32", 1), rand(n, "float32", 2)
    Z = tvm.runtime.empty((n,), "float32", dev)
    mod["axpy"](Z, tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), 2.5, 3)
    np.testing.assert_allclose(Z.numpy(), 2.5 * x + y + 3, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("w", [1, 16, 100])
def test_dynamic_local_memory(dev, w):
    mod = _compile(K.dyn_reverse)
    kernel_params = mod.imports[0].inspect_source()
    assert "__local uchar*" in kernel_params
    x = np.arange(3 * w, dtype="int32").reshape(3, w)
    Y = tvm.runtime.empty((3, w), "int32", dev)
    mod["dyn_reverse"](tvm.runtime.tensor(x, dev), Y)
    np.testing.assert_array_equal(Y.numpy(), x[:, ::-1])


def test_float16_storage_without_fp16(dev):
    mod = _compile(K.half_cast)
    a = rand(256, "float32")
    B = tvm.runtime.empty((256,), "float16", dev)
    C = tvm.runtime.empty((256,), "float32", dev)
    mod["half_cast"](tvm.runtime.tensor(a, dev), B, C)
    h = (a * 3).astype("float16")[::-1]
    np.testing.assert_array_equal(B.numpy(), h)
    np.testing.assert_array_equal(C.numpy(), h.astype("float32") + 1)


def test_concurrent_launches_from_threads(dev):
    import threading

    mod = _compile(K.elementwise("float32"))
    a = tvm.runtime.tensor(np.ones(1000, "float32"), dev)
    outs = [tvm.runtime.empty((1000,), "float32", dev) for _ in range(4)]
    errors = []

    def work(out):
        try:
            for _ in range(25):
                mod["ew"](a, a, out)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for o in outs:
        np.testing.assert_array_equal(o.numpy(), np.full(1000, 2, "float32"))


def test_sliced_tensor_is_rejected_not_crashing(dev):
    """A tensor view with a byte offset cannot be a cl_mem: a clear error, never a crash."""
    mod = _compile(K.elementwise("float32"))
    full = tvm.runtime.tensor(np.zeros(8, "float32"), dev)
    import tvm_ffi

    try:
        view = tvm_ffi.from_dlpack(full)  # zero-copy alias; same buffer, no offset: must work
    except Exception:  # noqa: BLE001 - DLPack of device tensors may be unsupported
        return
    mod["ew"](view, view, view)


def test_integer_floor_division_and_int64(dev):
    mod = _compile(K.int_ops)
    rng = np.random.default_rng(3)
    a = rng.integers(-100, 100, 64).astype("int32")
    b = rng.choice([-7, -3, -1, 1, 2, 5], 64).astype("int32")
    out = {k: tvm.runtime.empty((64,), "int64" if k == "X" else "int32", dev) for k in "DMX"}
    mod["int_ops"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), out["D"], out["M"], out["X"])
    np.testing.assert_array_equal(out["D"].numpy(), a // b + a // 4)
    np.testing.assert_array_equal(out["M"].numpy(), a % b + a % 8)
    np.testing.assert_array_equal(out["X"].numpy(), a.astype("int64") * 4000000000 + (a ^ b))


def test_more_math_unroll_and_predicates(dev):
    mod = _compile(K.more_math)
    assert "#pragma unroll" in mod.imports[0].inspect_source()
    a = rand(128, "float32")
    a[0] = 0.0  # 0/0 is nan
    B = tvm.runtime.empty((128,), "float32", dev)
    C = tvm.runtime.empty((128,), "float32", dev)
    mod["more_math"](tvm.runtime.tensor(a, dev), B, C)
    from math import erf

    expect = (
        1 / (1 + np.exp(-a))
        + 1 / np.sqrt(np.abs(a) + 1)
        + np.abs(a) ** 1.5
        + np.arctan2(a, 2)
        + np.vectorize(erf)(a)
        + np.log1p(np.abs(a))
        + np.exp2(a)
        + np.rint(a * 3)
        + 1.5
    )
    np.testing.assert_allclose(B.numpy(), expect.astype("float32"), rtol=1e-4, atol=1e-4)
    with np.errstate(invalid="ignore"):
        pred = np.isnan(a / a).astype("float32")
    np.testing.assert_allclose(C.numpy(), pred + np.fmod(a, np.float32(0.7)), rtol=1e-5, atol=1e-6)


def test_compile_for_detected_target(dev):
    target = tvm.target.detect_target_from_device(dev)
    mod = tvm.compile(K.softmax, target=target)
    x = rand((3, 50), "float32")
    Y = tvm.runtime.empty((3, 50), "float32", dev)
    mod["softmax"](tvm.runtime.tensor(x, dev), Y)
    np.testing.assert_allclose(Y.numpy(), reference_softmax(x), rtol=1e-5, atol=1e-7)


def test_float16_scalar_parameter_is_passed_as_the_float_it_is_printed_as(dev):
    """A float16 scalar parameter is printed as `float`, so its arg type says float32: the runtime
    packs arg types one way for every backend (4 bytes here, not a 2-byte half)."""
    from tvm_backend_opencl import codegen

    from tvm.script import tir as T
    from tvm.tir.transform import lower

    @T.prim_func
    def scale16(a: T.handle, s: T.float16):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float16")
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    A[bx * 64 + tx] = A[bx * 64 + tx] * s

    (entry,) = codegen.function_table(lower(scale16, tvm.target.Target("opencl")).kernels)
    assert "float32" in entry[1] and "float16" not in entry[1], entry
    mod = _compile(scale16)
    a = np.linspace(-2, 2, 100).astype("float16")
    A = tvm.runtime.tensor(a, dev)
    mod["scale16"](A, 1.5)
    np.testing.assert_allclose(A.numpy().astype("float32"), (a * np.float16(1.5)).astype("float32"), rtol=1e-3)


def test_local_memory_over_the_device_limit_is_a_compile_error_for_the_detected_target(dev):
    """Static __local memory past the device's limit (PoCL: 512 KiB): compiling for the detected
    target is an error naming the kernel, the amount and the limit. (The runtime also checks
    before a launch where the driver reports a kernel's local memory; PoCL does not.)"""
    from tvm.script import tir as T
    from tvm.tir.transform.verify import TIRVerifyError

    limit = dev.max_shared_memory_per_block
    words = limit // 4 * 2  # twice the device's local memory

    @T.prim_func
    def big_local(a: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            S = T.alloc_buffer((words,), "float32", scope="shared")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                for i in range(words // 64):  # every element used: the buffer keeps its size
                    S[i * 64 + tx] = T.float32(1)
                A[tx] = S[tx]

    target = tvm.target.detect_target_from_device(dev)
    with pytest.raises(
        TIRVerifyError,
        match=rf"needs {words * 4} bytes of static shared memory \(S\); target 'opencl' allows at most {limit}",
    ):
        tvm.compile(big_local, target=target)


def test_local_memory_past_a_cpu_devices_stack_is_a_compile_error():
    """PoCL keeps a work-group's private memory on one thread's stack: 64 KiB per work-item for
    128 work-items overflowed it and crashed the process; the target refuses it instead."""
    from tvm.testing.kernels import per_thread_array
    from tvm.tir.transform.verify import TIRVerifyError

    with pytest.raises(
        TIRVerifyError, match=r"needs 65536 bytes of local memory per thread \(R\), 8388608 for its 128"
    ):
        tvm.compile(per_thread_array(128, 16384), target="opencl")


@T.prim_func
def _reindexed_private_array(a: T.handle, o: T.handle):
    A = T.match_buffer(a, (128,), "int32")
    O = T.match_buffer(o, (128,), "int32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        S = T.alloc_buffer((32,), "int32", scope="shared")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            L = T.alloc_buffer((4,), "int32", scope="local")
            for j in range(4):
                L[j] = A[(bx * 32 + tx + j) % 128] * (j + 1)
            L[L[1] & 3] = 7
            S[tx] = L[2]
            T.tvm_storage_sync("shared")
            O[bx * 32 + tx] = S[(tx + 6) % 32]


def test_private_array_stored_at_a_loaded_index_in_a_kernel_with_a_barrier(dev):
    """A store into a private array at an index read from memory, then a load of the array, in a
    kernel with a barrier: PoCL 3.1's work-group vectorizer read the element as it was before
    the store (49 of these 128 wrong) until such arrays were declared volatile."""
    mod = _compile(_reindexed_private_array)
    assert "volatile int L[4];" in mod.imports[0].inspect_source()
    a = np.random.default_rng(5).integers(-(2**31), 2**31, 128, dtype=np.int64).astype("int32")
    L = np.stack([(a[(np.arange(128) + j) % 128].astype(np.int64) * (j + 1)).astype("int32") for j in range(4)], 1)
    L[np.arange(128), L[:, 1] & 3] = 7
    out = tvm.runtime.empty((128,), "int32", dev)
    mod["_reindexed_private_array"](tvm.runtime.tensor(a, dev), out)
    want = L[:, 2].reshape(4, 32)[:, (np.arange(32) + 6) % 32].reshape(-1)
    np.testing.assert_array_equal(out.numpy(), want)


def test_pow_of_constants_with_a_nan_runs(dev):
    """PoCL's compiler crashed the process on ``pow(1.0f, NAN)`` of constants: NaN constants
    are chosen at run time in OpenCL C (C99 and NumPy: pow(1, nan) is 1, pow(nan, nan) NaN)."""
    nan = T.float32(float("nan"))

    @T.prim_func
    def pow_nan(o: T.handle):
        O = T.match_buffer(o, (2,), "float32")
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            O[0] = T.pow(T.float32(1.0), nan)
            O[1] = T.pow(nan, nan)

    mod = _compile(pow_nan)
    assert "get_group_id(0) != (size_t)-1 ? NAN : 0.0f" in mod.imports[0].inspect_source()
    out = tvm.runtime.empty((2,), "float32", dev)
    mod["pow_nan"](out)
    assert out.numpy()[0] == 1.0 and np.isnan(out.numpy()[1])
