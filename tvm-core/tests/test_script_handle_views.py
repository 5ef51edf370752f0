"""A buffer declared over a ``T.handle("float32")`` parameter (``T.decl_buffer(..., data=A_data)``,
as Apache TVM's lowered functions write it) compiles to C that casts the ``void*`` and runs."""

import numpy as np
import tvm
from tvm.script import tir as T


@T.prim_func
def fill(A_data: T.handle("float32"), n: T.int32):
    A = T.decl_buffer(16, dtype="float32", data=A_data)
    A[0] = T.float32(42)
    for i in range(1, 16):
        A[i] = A[i - 1] + T.Cast("float32", n)


def test_buffer_over_a_handle_parameter():
    mod = tvm.compile(fill, target="c")
    a = tvm.runtime.tensor(np.zeros(16, "float32"))
    mod["fill"](a, 3)
    np.testing.assert_array_equal(a.numpy(), 42 + 3 * np.arange(16, dtype="float32"))


@T.prim_func
def fill_through_let(A_data: T.handle("float32")):
    alias: T.let[T.handle("float32")] = A_data
    A = T.decl_buffer(4, "float32", data=alias)
    for i in range(4):
        A[i] = T.float32(7)


def test_buffer_over_a_let_bound_handle():
    a = tvm.runtime.tensor(np.zeros(4, "float32"))
    tvm.compile(fill_through_let, target="c")["fill_through_let"](a)
    np.testing.assert_array_equal(a.numpy(), np.full(4, 7, "float32"))
