"""bfloat16 emulation (``legalize_bfloat16``): no bfloat16 arithmetic is left, and the emulated
kernel, compiled for the CPU, gives ml_dtypes' bfloat16 results bit for bit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.tir import expr as E
from tvm.tir.functor import StmtExprMutator, post_order_visit
from tvm.tir.transform import legalize_bfloat16

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (the bf16 extra) gives NumPy a bfloat16")


@T.prim_func
def fma_scaled(a: T.handle, b: T.handle, c: T.handle, s: T.bfloat16):
    n = T.int32()
    A = T.match_buffer(a, (n,), "bfloat16")
    B = T.match_buffer(b, (n,), "bfloat16")
    C = T.match_buffer(c, (n,), "bfloat16")
    for i in range(n):
        C[i] = A[i] * B[i] + s * T.bfloat16(0.3) - T.Cast("bfloat16", T.Cast("float32", A[i]) * T.float32(0.5))


def _bfloat16_ops(func) -> list[str]:
    """The bfloat16-typed nodes other than loads, stores' values and reinterprets."""
    found = []

    def visit(node):
        if isinstance(node, E.PrimExpr) and getattr(node, "dtype", "") == "bfloat16":
            if isinstance(node, E.BufferLoad):
                return
            if isinstance(node, E.Call) and node.op == "reinterpret":
                return
            found.append(type(node).__name__)

    post_order_visit(func.body, visit)
    return found


def test_no_bfloat16_arithmetic_is_left():
    assert _bfloat16_ops(fma_scaled)  # the kernel computes in bfloat16 before the pass
    out = legalize_bfloat16(fma_scaled)
    assert _bfloat16_ops(out) == []
    assert [p.dtype for p in out.params][-1] == "float32"


class _AsUint16(StmtExprMutator):
    """bfloat16 buffers as uint16 ones: what an emitter that stores bfloat16 as 16-bit integers
    sees (the C printer would compute in float instead, which is not what is tested here)."""

    def __init__(self):
        self.buffers = {}

    def mutate_buffer(self, b):
        if b.dtype != "bfloat16":
            return b
        if b not in self.buffers:
            self.buffers[b] = dataclasses.replace(b, dtype="uint16")
        return self.buffers[b]

    def visit_Call(self, e):
        out = super().visit_Call(e)
        return E.Call("uint16", out.op, out.args) if out.dtype == "bfloat16" else out

    def run(self, func):
        body = self.visit_stmt(func.body)
        buffer_map = {p: self.mutate_buffer(b) for p, b in func.buffer_map.items()}
        return dataclasses.replace(func, body=body, buffer_map=buffer_map)


def test_emulated_results_match_ml_dtypes_bit_for_bit():
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(0)
    a = rng.standard_normal(4096).astype(bf16)
    b = (rng.standard_normal(4096) * 100).astype(bf16)
    a[:4] = [np.inf, -np.inf, np.nan, 0.0]
    s = bf16(1.7)
    mod = tvm.compile(_AsUint16().run(legalize_bfloat16(fma_scaled)), target="c")
    c = np.zeros(4096, "uint16")
    mod["fma_scaled"](a.view("uint16"), b.view("uint16"), c, float(s))
    c = c.view(bf16)
    # each operation rounds to bfloat16, as NumPy computes it step by step
    expect = (a * b + s * bf16(0.3)) - (a.astype("float32") * np.float32(0.5)).astype(bf16)
    np.testing.assert_array_equal(c.view("uint16")[4:], expect.view("uint16")[4:])
    assert np.isnan(c[:4].astype("float32")).tolist() == np.isnan(expect[:4].astype("float32")).tolist()
