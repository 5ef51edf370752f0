"""loop_bound: the upper bound on one thread's loop iterations a code generator writes for
runtimes whose driver ends long-running threads (tvm::runtime::CheckLoopIterationBound)."""

from __future__ import annotations

import tvm
from tvm.codegen.device_module import loop_bound
from tvm.driver import lower
from tvm.script import tir as T
from tvm.testing import kernels


def _kernel(func) -> tvm.tir.PrimFunc:
    (kernel,) = lower(func, tvm.target.Target("example")).kernels
    return kernel


def test_nested_constant_loops_count_every_iteration() -> None:
    @T.prim_func
    def f(out: T.Buffer((4,), "int32")):
        for tx in T.thread_binding(2, thread="threadIdx.x"):
            for i in range(3):
                for j in range(16):
                    for a in range(100):
                        out[tx] = out[tx] + 1
                    for b in range(7):
                        out[tx] = out[tx] + 2

    # each loop entry costs extent + 1 passes (the last one leaves it): 4 + 3*17 + 48*101 + 48*8;
    # the thread-bound loop is not a loop of the kernel
    assert loop_bound(_kernel(f)) == str(4 + 3 * 17 + 48 * 101 + 48 * 8)


def test_symbolic_extents_become_products_of_scalar_arguments() -> None:
    kernel = _kernel(kernels.serial_row_sum())
    positions = {p.name: i for i, p in enumerate(kernel.params)}
    assert loop_bound(kernel) == f"1+${positions['n']}"


def test_divisions_and_thread_dependent_extents_are_bounded_from_above() -> None:
    @T.prim_func
    def f(a: T.handle, n: T.int32):
        A = T.match_buffer(a, (n + 16,), "float32")  # k stays below it: no run-time index check
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            for k in range((n + 15) // 16 - tx):  # at most (n + 15) / 16 iterations
                for r in range(T.min(n, 4)):  # at most 4
                    A[k] = A[k] + T.float32(1)

    kernel = _kernel(f)
    n = next(i for i, p in enumerate(kernel.params) if p.name == "n")
    # k: (n + 15) / 16 + 1 passes; r: (n + 15) / 16 * (4 + 1); (6n + 106) / 16 in eighths, rounded up
    assert loop_bound(kernel) == f"(60+3*${n})/8"


def test_loops_with_a_step_are_bounded_by_their_trips() -> None:
    @T.prim_func
    def f(a: T.Buffer((4,), "int32"), n: T.int32):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            for i in range(0, n, 4):
                a[0] = a[0] + 1

    kernel = _kernel(f)
    n = next(i for i, p in enumerate(kernel.params) if p.name == "n")
    # (n - 1) / 4 + 1 trips + 1 pass, the subtracted constant dropped (an upper bound), rounded up
    assert loop_bound(kernel) == f"(11+${n})/4"


def test_arguments_subtracted_or_divided_by_have_no_bound() -> None:
    """``n - m`` may exceed ``n`` (m may be negative) and ``n // s`` is bounded by nothing the
    polynomial can say: such kernels say "?" (a warning where a driver ends long threads)."""

    @T.prim_func
    def f(a: T.Buffer((4,), "int32"), n: T.int32, m: T.int32):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            for i in range(n - m):
                a[0] = a[0] + 1

    @T.prim_func
    def g(a: T.Buffer((4,), "int32"), n: T.int32, s: T.int32):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            for i in T.serial(0, n, step=s):
                a[0] = a[0] + 1

    stepped = lower(g, tvm.target.Target("example")).kernels[-1]  # after the one that zeroes assert records
    assert loop_bound(_kernel(f)) == "?" and loop_bound(stepped) == "?"


def test_extents_read_from_memory_have_no_bound() -> None:
    @T.prim_func
    def f(a: T.Buffer((4,), "int32")):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            for k in range(a[0]):
                a[1] = a[1] + k

    assert loop_bound(_kernel(f)) == "?"
