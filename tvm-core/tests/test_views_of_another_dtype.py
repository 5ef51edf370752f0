"""A view of a buffer's memory as another dtype (``T.decl_buffer(..., data=A.data)``,
``T.match_buffer`` of a region as another dtype) reads and writes the same bytes, over a
parameter as over an allocation, and its run-time bounds check counts bytes."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import tir as T

pytestmark = pytest.mark.usefixtures("private_cache")


@T.prim_func
def bits_of_param(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
    Ai = T.decl_buffer((4,), "int32", data=A.data)
    for i in range(4):
        B[i] = Ai[i]
    Ai[3] = -1082130432  # the bits of -1.0


@T.prim_func
def bytes_of_param(A: T.Buffer((4,), "float32"), B: T.Buffer((16,), "uint8")):
    V = T.decl_buffer((16,), "uint8", data=A.data)
    for i in range(16):
        B[i] = V[i]


@T.prim_func
def wide_view(A: T.Buffer((4,), "float32"), B: T.Buffer((3,), "float64"), n: T.int32):
    V = T.decl_buffer((3,), "float64", data=A.data)
    for i in range(n):
        B[i] = V[i]


def test_a_view_of_a_parameter_reads_and_writes_its_bytes():
    """A view over a parameter's memory converted the values (it printed the parameter's own
    float pointer); one over an allocation was right."""
    a = np.array([1.0, -2.0, 0.5, 3.0], "float32")
    b = np.zeros(4, "int32")
    tvm.compile(bits_of_param, target="c")["bits_of_param"](a, b)
    np.testing.assert_array_equal(b, np.array([1.0, -2.0, 0.5, 3.0], "float32").view("int32"))
    assert a[3] == -1.0


def test_the_bounds_check_of_a_view_counts_bytes():
    """A uint8 view of all 16 bytes of four floats was refused at byte 4; a float64 view reading
    past the 16 bytes was let through up to its 4th element."""
    a = np.array([1.0, -2.0, 0.5, 3.25], "float32")
    b = np.zeros(16, "uint8")
    tvm.compile(bytes_of_param, target="c")["bytes_of_param"](a, b)
    np.testing.assert_array_equal(b, a.view("uint8"))
    mod = tvm.compile(wide_view, target="c")
    out = np.zeros(3)
    mod["wide_view"](a, out, 2)
    np.testing.assert_array_equal(out[:2], a.view("float64"))
    with pytest.raises(IndexError, match="the memory of buffer 'A' \\(through its view 'V', as bytes\\)"):
        mod["wide_view"](a, out, 3)
