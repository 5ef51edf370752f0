"""``T.call_packed``: host code calls a global function registered with tvm-ffi, passing buffers
as tensors, handles as pointers and numbers as numbers; the callee's effect and errors arrive."""

import os

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm.script import tir as T

_seen = []


@tvm_ffi.register_global_func("testing.tvm_core.scale_in_place", override=True)
def _scale_in_place(tensor, data, n, factor):
    view = np.from_dlpack(tensor)
    _seen.append((view.shape, str(view.dtype), data is not None, n, factor))
    view *= factor


@tvm_ffi.register_global_func("testing.tvm_core.fail", override=True)
def _fail():
    raise ValueError("the callback failed")


@T.prim_func
def scaled(A: T.Buffer((4, 3), "float32"), n: T.int32):
    A[0, 0] = A[0, 0] + T.float32(1)
    T.call_packed("testing.tvm_core.scale_in_place", A, A.data, n, T.float32(2.5))
    A[3, 2] = A[3, 2] + T.float32(1)


def test_the_callee_sees_the_buffer_as_a_tensor_and_writes_through_it():
    a = np.ones((4, 3), "float32")
    tvm.compile(scaled, target="c")["scaled"](a, 7)
    want = np.full((4, 3), 2.5, "float32")
    want[0, 0], want[3, 2] = 5.0, 3.5
    np.testing.assert_array_equal(a, want)
    assert _seen[-1] == ((4, 3), "float32", True, 7, 2.5)


def test_a_string_argument_arrives_as_a_string():
    """A string (Apache TVM's tests pass a file name so) arrived as an opaque pointer."""
    got = []
    tvm_ffi.register_global_func("testing.tvm_core.record", lambda *args: got.append(args), override=True)

    @T.prim_func
    def named(A: T.Buffer((2,), "float32")):
        T.call_packed("testing.tvm_core.record", 'log "1".txt', 7, A[0])

    tvm.compile(named, target="c")(np.array([1.5, 0], "float32"))
    assert got == [('log "1".txt', 7, 1.5)]


def test_an_unregistered_function_and_a_failing_callee_raise():
    @T.prim_func
    def missing(A: T.Buffer((4,), "float32")):
        T.call_packed("testing.tvm_core.not_registered", A)

    @T.prim_func
    def failing(A: T.Buffer((4,), "float32")):
        T.call_packed("testing.tvm_core.fail")

    with pytest.raises(RuntimeError, match="no global function 'testing.tvm_core.not_registered' is registered"):
        tvm.compile(missing, target="c")["missing"](np.ones(4, "float32"))
    with pytest.raises(ValueError, match="the callback failed"):
        tvm.compile(failing, target="c")["failing"](np.ones(4, "float32"))


@tvm_ffi.register_global_func("testing.tvm_core.rows", override=True)
def _rows(tensor):
    _seen.append(np.from_dlpack(tensor).copy())


@T.prim_func
def region(A: T.Buffer((4, 8), "float32")):
    S = T.match_buffer(A[2:4, 0:8], (2, 8), "float32")
    T.call_packed("testing.tvm_core.rows", S)


def test_a_view_of_a_region_starts_where_the_region_does():
    a = np.arange(32, dtype="float32").reshape(4, 8)
    tvm.compile(region, target="c")["region"](a)
    np.testing.assert_array_equal(_seen[-1], a[2:4])


def test_a_call_inside_a_kernel_is_refused():
    @T.prim_func
    def in_kernel(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                T.call_packed("testing.tvm_core.rows", A)

    with pytest.raises(tvm.tir.transform.TIRVerifyError, match="T.call_packed calls a host function"):
        tvm.compile(in_kernel, target="example")


def _resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@T.prim_func
def scratch_then_fail(A: T.Buffer((4,), "float32"), fail_assert: T.int32):
    S = T.alloc_buffer((1 << 20,), "float32")  # 4 MiB: a heap buffer
    for i in range(1 << 20):
        S[i] = T.float32(1)
    A[0] = S[5]
    assert fail_assert == 0, "asked to fail"
    T.call_packed("testing.tvm_core.fail")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads resident memory from /proc (Linux)")
def test_heap_buffers_are_freed_when_a_call_or_an_assert_fails():
    f = tvm.compile(scratch_then_fail, target="c")["scratch_then_fail"]
    a = np.zeros(4, "float32")
    for fail_assert in (0, 1):  # the callee raises / the assert fails
        with pytest.raises((ValueError, RuntimeError)):
            f(a, fail_assert)
    before = _resident_bytes()
    for k in range(120):
        with pytest.raises(RuntimeError if k % 2 else ValueError):
            f(a, k % 2)
    assert a[0] == 1
    # 120 leaked buffers would be 480 MiB
    assert _resident_bytes() - before < 64 << 20


def test_a_static_handle_is_one_slot_per_call_site_kept_across_calls():
    import ctypes

    slots = []
    tvm_ffi.register_global_func(
        "testing.tvm_core.keep_slot", lambda h, tag: slots.append((h.value, tag)), override=True
    )

    @T.prim_func
    def cached(A: T.Buffer((2,), "int32")):
        T.call_packed("testing.tvm_core.keep_slot", T.call_intrin("handle", "tirx.tvm_static_handle"), A[0])
        T.call_packed("testing.tvm_core.keep_slot", T.call_intrin("handle", "tirx.tvm_static_handle"), A[1])

    f = tvm.compile(cached, target="c")["cached"]
    a = tvm.runtime.tensor(np.array([10, 20], dtype="int32"))
    f(a)
    f(a)
    (first, _), (second, _), (first_again, _), (second_again, _) = slots
    assert [t for _, t in slots] == [10, 20, 10, 20]
    assert first != second and (first, second) == (first_again, second_again)
    assert ctypes.c_void_p.from_address(first).value is None  # NULL until a callee stores there
