"""Flat indices past int32: a buffer whose constant shape holds more than 2**31 - 1 elements is
indexed in int64 (``r * 65540 + j`` must not wrap in 32 bits), a target without int64 refuses it
by name, and a strided view whose strides reach past int32 while its indices are int32 is refused
at launch.

The large tensors are zero-copy views of ``np.zeros`` memory (calloc'ed: only the pages a kernel
touches cost RAM), and the checks read a few elements of them, never the whole array."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tir as T

R, C = 65536, 65540  # 2**32 + 262144 elements of uint8: every dimension fits int32, the count does not


@T.prim_func
def write_row(A: T.Buffer((65536, 65540), "uint8"), r: T.int32):
    for j in range(65536, 65540):
        A[r, j] = T.uint8(7)


@pytest.mark.parametrize("target", ["c", "llvm"])
@pytest.mark.parametrize("row", [40000, 65535])
def test_constant_shape_past_int32_is_indexed_in_int64(target: str, row: int) -> None:
    """Row 40000 starts past 2**31 (an int32 index wraps negative), row 65535 past 2**32 (it wraps
    to row 3): the kernel writes exactly ``A[row, C-4:]``."""
    mod = tvm.compile(write_row, target=target)
    assert "int64_t" in next(line for line in mod.inspect_source().splitlines() if "7U" in line)
    host = np.zeros((R, C), "uint8")
    mod(tvm.runtime.from_dlpack(host), row)
    assert host[row, C - 4 :].tolist() == [7, 7, 7, 7]
    assert not host[row, C - 64 : C - 4].any()
    assert not host[row - 1, C - 64 :].any()
    wrapped = (row * C + C - 4) % 2**32
    if wrapped != row * C + C - 4:  # where the 32-bit index would have written (row 3)
        wr, wc = divmod(wrapped, C)
        assert not host[wr, wc : wc + 4].any()


@T.prim_func
def write_through_a_view(A: T.Buffer((65536, 65540), "uint8"), r: T.int32):
    Sub = T.match_buffer(A[r : r + 2, 0:4], (2, 4), "uint8")
    for j in range(4):
        Sub[1, j] = T.uint8(7)


@pytest.mark.parametrize("row", [39999, 65534])
def test_a_view_of_such_a_buffer_starts_in_int64(row: int) -> None:
    """A ``T.match_buffer`` region of the big buffer: its start (``r * 65540``) was computed in
    32 bits, so the view wrote into row 2 (or was refused as out of bounds)."""
    mod = tvm.compile(write_through_a_view, target="llvm")
    host = np.zeros((R, C), "uint8")
    mod(tvm.runtime.from_dlpack(host), row)
    assert host[row + 1, :4].tolist() == [7, 7, 7, 7]
    assert not host[row, :4].any() and not host[2, C - 64 :].any()


@T.prim_func
def through_local(B: T.Buffer((4,), "uint8"), r: T.int32):
    A = T.alloc_buffer((65536, 32769), "uint8")
    for j in range(4):
        A[r, j] = T.uint8(r % 200 + j)
    for j in range(4):
        B[j] = A[r, j]


def test_constant_allocation_past_int32_is_indexed_in_int64() -> None:
    """A 2**31 + 65536 byte allocation (lazily backed by the allocator) written and read at its
    last row, where an int32 index would have been negative."""
    mod = tvm.compile(through_local, target="c")
    src = mod.inspect_source()
    assert "2147549184LL" in src  # its size, as an int64 constant
    assert "(((int64_t)(r)) * 32769LL)" in src
    out = tvm.runtime.tensor(np.zeros(4, "uint8"))
    mod(out, 65535)
    assert out.numpy().tolist() == [135, 136, 137, 138]


@T.prim_func
def partly_symbolic(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 65536, 32769), "uint8")
    for i in range(n):
        A[i, 0, 0] = T.uint8(1)


def test_symbolic_shape_keeps_its_launch_check() -> None:
    """A symbolic int32 dimension keeps its 32-bit index and the launch-time count check (a
    constant part past int32 folds to an int64 constant, not a wrapped int32 one)."""
    mod = tvm.compile(partly_symbolic, target="c")
    assert "2147549184LL" in mod.inspect_source()
    empty = np.zeros((0, 65536, 32769), "uint8")
    mod(tvm.runtime.from_dlpack(empty))  # no element: nothing to index
    one = np.lib.stride_tricks.as_strided(np.zeros(1, "uint8"), shape=(1, 65536, 32769), strides=(0, 0, 0))
    with pytest.raises(ValueError, match="argument 'A' has more than 2147483647 elements"):
        mod(tvm.runtime.from_dlpack(one))


@T.prim_func
def strided_row(a: T.handle, r: T.int32):
    n = T.int32()
    m = T.int32()
    s0 = T.int32()
    A = T.match_buffer(a, (n, m), "uint8", strides=[s0, 1])
    for j in range(m):
        A[r, j] = T.uint8(7)


@T.prim_func
def strided_row_int64(a: T.handle, r: T.int32):
    n = T.int32()
    m = T.int32()
    s0 = T.int64()
    A = T.match_buffer(a, (n, m), "uint8", strides=[s0, 1])
    for j in range(m):
        A[r, j] = T.uint8(7)


def _column_slice() -> np.ndarray:
    """A (120000, 16) view with row stride 40000: 1.9 M elements whose strides reach 4.8e9; no
    memory behind it (the kernel must refuse it before any access)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, "uint8"), shape=(120000, 16), strides=(40000, 1))


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_strided_view_reaching_past_int32_is_refused(target: str) -> None:
    mod = tvm.compile(strided_row, target=target)
    with pytest.raises(
        ValueError,
        match=r"strided_row: argument 'A' has strides that reach element 4799960015, which 32-bit indices "
        r"do not reach; declare its strides with T.int64\(\) sizes",
    ):
        mod(tvm.runtime.from_dlpack(_column_slice()), 110000)


def test_strided_view_within_int32_runs() -> None:
    mod = tvm.compile(strided_row, target="c")
    big = np.zeros((1000, 40), "uint8")
    mod(tvm.runtime.from_dlpack(big[:, :16]), 999)
    assert big[999, :16].tolist() == [7] * 16 and not big[999, 16:].any() and not big[:999].any()


def test_strided_view_with_int64_strides_runs() -> None:
    """Declared with an int64 stride, the same view is indexed in 64 bits and runs."""
    mod = tvm.compile(strided_row_int64, target="c")
    big = np.zeros((120000, 40000), "uint8")
    mod(tvm.runtime.from_dlpack(big[:, :16]), 110000)
    assert big[110000, :16].tolist() == [7] * 16
    assert not big[110000, 16:64].any() and not big[109999, -64:].any()
    assert not big[2625, 32704:].any()  # where the 32-bit index would have written


@T.prim_func
def device_write(A: T.Buffer((65536, 32769), "uint8")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            A[65535, 32765 + tx] = T.uint8(7)


def _flat_index_dtypes(func) -> set:
    dtypes: set = set()

    def visit(node) -> None:
        if isinstance(node, (tvm.tir.BufferStore, tvm.tir.BufferLoad)):
            dtypes.update(i.dtype for i in node.indices)

    tvm.tir.functor.post_order_visit(func.body, visit)
    return dtypes


def test_device_kernel_with_int64_is_indexed_in_int64() -> None:
    """A device target with int64 (opencl by default) flattens the buffer's indices in int64
    (lowering only: no device is needed)."""
    lowered = tvm.tir.transform.lower(device_write, tvm.target.Target("opencl"))
    assert _flat_index_dtypes(lowered.kernels[0]) == {"int64"}


def test_device_kernel_without_int64_is_refused_by_name() -> None:
    """Without int64 the buffer is refused at compile time with its name, element count and fix,
    not with the flattened size as an unexplained int32 constant."""
    target = tvm.target.Target("opencl -supports_int64=false")
    with pytest.raises(tvm.tir.transform.TIRVerifyError) as info:
        tvm.tir.transform.lower(device_write, target)
    message = str(info.value)
    assert "buffer 'A' (shape (65536, 32769)) has 2147549184 elements" in message
    assert "target 'opencl' has no int64" in message and "split it into buffers" in message


def test_opencl_compile_of_the_kernel() -> None:
    pytest.importorskip("tvm_backend_opencl", reason="needs tvm-backend-opencl")
    tvm.compile(device_write, target="opencl")  # compiles without running: no device needed
