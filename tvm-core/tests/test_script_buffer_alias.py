"""``T.decl_buffer(..., data=X.data)`` and ``T.alloc_buffer(..., data=X.data)`` are views of
``X``'s memory, as in Apache TVM: writes through them reach ``X`` (they used to allocate fresh
memory silently, losing the writes)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T
from tvm.tir import stmt as S
from tvm.tir.functor import post_order_visit


@T.prim_func
def through_decl_buffer(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 4), "float32")
    B = T.match_buffer(b, (16,), "float32")
    A_flat = T.decl_buffer((16,), "float32", data=A.data)
    for i in range(16):
        A_flat[i] = A_flat[i] * T.float32(2)
    for i in range(16):
        B[i] = A[i // 4, i % 4] + T.float32(1)


@T.prim_func
def through_alloc_buffer(a: T.handle):
    A = T.match_buffer(a, (8,), "int32")
    tmp = T.alloc_buffer((8,), "int32")
    tmp_view = T.alloc_buffer((2, 4), "int32", data=tmp.data)
    for i in range(8):
        tmp[i] = A[i] * 3
    for i in range(2):
        for j in range(4):
            A[i * 4 + j] = tmp_view[i, j] + 1


def _allocations(func) -> int:
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, S.Allocate) else None)
    return len(found)


def test_decl_buffer_with_data_aliases_the_parameter():
    assert _allocations(through_decl_buffer) == 0
    a = np.arange(16, dtype="float32").reshape(4, 4)
    b = np.zeros(16, "float32")
    expect_a = a * 2
    tvm.compile(through_decl_buffer, target="c")["through_decl_buffer"](a, b)
    np.testing.assert_array_equal(a, expect_a)
    np.testing.assert_array_equal(b, expect_a.reshape(-1) + 1)


def test_alloc_buffer_with_data_aliases_the_allocation():
    assert _allocations(through_alloc_buffer) == 1  # tmp only; tmp_view is a view of it
    a = np.arange(8, dtype="int32")
    expect = a * 3 + 1
    tvm.compile(through_alloc_buffer, target="c")["through_alloc_buffer"](a)
    np.testing.assert_array_equal(a, expect)


def test_a_view_at_an_element_address_and_t_let_with_where():
    # T.decl_buffer(..., data=T.address_of(A[2, 0])) views row 2 of A; T.Let(body, where={x: v})
    @T.prim_func
    def f(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
        x = T.float32()
        for i, j in T.grid(4, 8):
            C[i, j] = T.Let(5.0 * x + T.cast(j, "float32"), where={x: T.cast(i + 1, "float32")})
        row = T.decl_buffer((8,), "float32", data=T.address_of(A[2, 0]))
        for j in range(8):
            row[j] = row[j] + C[0, j]

    a = np.random.default_rng(0).random((4, 8), dtype="float32")
    A, C = tvm.runtime.tensor(a), tvm.runtime.empty((4, 8), "float32")
    tvm.compile(f, target="c")["f"](A, C)
    i, j = np.meshgrid(np.arange(4), np.arange(8), indexing="ij")
    np.testing.assert_allclose(C.numpy(), 5.0 * (i + 1) + j)
    want = a.copy()
    want[2] += 5.0 + np.arange(8)
    np.testing.assert_allclose(A.numpy(), want, rtol=1e-6)


def test_a_view_at_an_element_of_another_dtype_is_refused():
    with pytest.raises(TVMScriptError, match="a view at an element of A \\(float32\\) must have that dtype"):

        @T.prim_func
        def g(A: T.Buffer((8,), "float32")):
            B = T.decl_buffer((4,), "int32", data=T.address_of(A[4]))
            B[0] = 1


def _half_bits_as_float(scope: str):
    @T.prim_func
    def view(A: T.Buffer((2,), "float32"), B: T.Buffer((4,), "float16")):
        S = T.alloc_buffer((4,), "float16", scope=scope)
        for i in range(4):
            S[i] = B[i]
        V = T.decl_buffer((2,), "float32", data=S.data)
        A[0] = V[0]
        A[1] = V[1]

    return view


@pytest.mark.parametrize("scope", ["global", "shared", "local"])
def test_a_cpu_view_in_another_dtype_reads_the_bytes_written(scope):
    """Written as float16 and read as float32 through a view, the C compiler's strict-aliasing
    rule let it read before the writes (garbage or zeros on the CPU, for global and shared
    buffers); the CPU build turns that rule off."""
    a, b = np.zeros(2, "float32"), np.array([1, 2, 3, 4], "float16")
    tvm.compile(_half_bits_as_float(scope), target="c")["view"](a, b)
    np.testing.assert_array_equal(a, b.view("float32"))
