"""bool in memory as bytes (``legalize_bool_storage``): global bool buffers become uint8 buffers of
0/1, local ones stay bool, and the legalized kernel computes what the original does."""

from __future__ import annotations

import numpy as np
import tvm
from tvm.script import tir as T
from tvm.tir import expr as E
from tvm.tir.functor import post_order_visit
from tvm.tir.transform import legalize_bool_storage


@T.prim_func
def flags(a: T.Buffer((64,), "float32"), m: T.Buffer((64,), "bool"), p: T.Buffer((64,), "bool")):
    keep = T.alloc_buffer((1,), "bool", scope="local")
    for i in range(64):
        keep[0] = m[i] and not (a[i] < T.float32(0))
        p[i] = keep[0] or a[i] > T.float32(1)


def _buffer_dtypes(func) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {}

    def visit(node):
        if isinstance(node, (E.BufferLoad,)):
            seen.setdefault(node.buffer.name, set()).add(node.buffer.dtype)

    post_order_visit(func.body, visit)
    return seen


def test_global_bool_buffers_become_bytes_and_local_ones_stay():
    out = legalize_bool_storage(flags)
    assert [b.dtype for b in out.buffer_map.values()] == ["float32", "uint8", "uint8"]
    assert _buffer_dtypes(out) == {"a": {"float32"}, "m": {"uint8"}, "keep": {"bool"}}
    assert legalize_bool_storage(out) is out  # nothing left to do


def test_legalized_kernel_computes_the_same_flags():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(64).astype("float32") * 2
    m = rng.integers(0, 2, 64).astype("bool")
    want = (m & ~(a < 0)) | (a > 1)
    lib = tvm.compile(legalize_bool_storage(flags), target="c")
    p = tvm.runtime.empty((64,), "uint8")
    lib["flags"](tvm.runtime.tensor(a), tvm.runtime.tensor(m.view("uint8")), p)
    np.testing.assert_array_equal(p.numpy(), want.astype("uint8"))
