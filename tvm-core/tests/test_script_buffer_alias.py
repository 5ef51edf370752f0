"""``T.decl_buffer(..., data=X.data)`` and ``T.alloc_buffer(..., data=X.data)`` are views of
``X``'s memory, as in Apache TVM: writes through them reach ``X`` (they used to allocate fresh
memory silently, losing the writes)."""

from __future__ import annotations

import numpy as np
import tvm
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
