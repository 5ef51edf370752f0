"""8- and 16-bit integers computed in 32 bits (``legalize_narrow_integers``): after the pass only
loads and stores of global buffers keep a narrow dtype, local arrays and scalar parameters are
32-bit, and the legalized kernel computes, bit for bit, what the original computes (NumPy's
wrapping results), checked on the CPU."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.testing import kernels
from tvm.testing import random_programs as rp
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.functor import StmtExprMutator, StmtExprVisitor, post_order_visit
from tvm.tir.transform import legalize_narrow_integers
from tvm.tir.transform.narrow_int import NARROW_INTEGERS


@T.prim_func
def scaled_sum(a: T.Buffer((64,), "int8"), b: T.Buffer((64,), "uint16"), k: T.int8, out: T.Buffer((64,), "int8")):
    acc = T.alloc_buffer((4,), "int16", scope="local")
    for i in range(64):
        acc[i % 4] = T.Cast("int16", a[i]) * T.Cast("int16", k) - T.Cast("int16", b[i])
        out[i] = T.Cast("int8", acc[i % 4] >> T.int16(1)) + a[i]


class _NarrowUses(StmtExprVisitor):
    """Every narrow-typed expression that is neither a global buffer's load under a widening cast
    nor a store's narrowing value."""

    def __init__(self):
        self.found: list[str] = []

    def visit_stmt(self, s):
        if isinstance(s, S.BufferStore) and isinstance(s.value, E.Cast):
            self._exprs(s.indices)
            self.visit_expr(s.value.value)
            return
        super().visit_stmt(s)

    def visit_expr(self, e):
        if isinstance(e, E.Cast) and isinstance(e.value, E.BufferLoad) and e.value.buffer.scope == "global":
            self._exprs(e.value.indices)
            return
        if getattr(e, "dtype", None) in NARROW_INTEGERS:
            self.found.append(f"{type(e).__name__} of {e.dtype}")
        super().visit_expr(e)

    def _exprs(self, xs):
        for x in xs:
            self.visit_expr(x)


def _narrow_uses(func) -> list[str]:
    finder = _NarrowUses()
    finder.visit_stmt(func.body)
    return finder.found


def test_only_global_loads_and_stores_stay_narrow():
    out = legalize_narrow_integers(scaled_sum)
    assert _narrow_uses(out) == []
    assert [p.dtype for p in out.params if p not in out.buffer_map] == ["int32"]
    assert [b.dtype for b in out.buffer_map.values()] == ["int8", "uint16", "int8"]
    allocations = []
    post_order_visit(out.body, lambda n: allocations.append(n.buffer.dtype) if isinstance(n, S.Allocate) else None)
    assert allocations in ([], ["int32"])  # the local array, widened (or removed by the lowering)
    assert legalize_narrow_integers(out) is out  # nothing left to do


def test_legalized_kernel_computes_what_the_original_does():
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, 64).astype("int8")
    b = rng.integers(0, 65536, 64).astype("uint16")
    want, got = (tvm.runtime.empty((64,), "int8") for _ in range(2))
    for func, out in ((scaled_sum, want), (legalize_narrow_integers(scaled_sum), got)):
        tvm.compile(func, target="c")["scaled_sum"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), -77, out)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


class _ThreadsAsLoops(StmtExprMutator):
    """Thread-bound loops as serial ones (the CPU target binds no threads; the kernels here have
    no barriers or shared memory, so their results are the same)."""

    def visit_For(self, s):
        out = super().visit_For(s)
        if out.kind is not S.ForKind.THREAD_BINDING:
            return out
        return S.For(out.loop_var, out.min, out.extent, S.ForKind.SERIAL, out.body, None, {}, out.span)


def _on_the_cpu(func):
    return dataclasses.replace(func, body=_ThreadsAsLoops().visit_stmt(func.body))


@pytest.mark.parametrize("dtype", NARROW_INTEGERS)
def test_wrapping_arithmetic_matches_numpy(dtype):
    rng = np.random.default_rng(2)
    info = np.iinfo(dtype)
    a, b = (rng.integers(info.min, info.max, 256, dtype=dtype, endpoint=True) for _ in range(2))
    a[:2], b[:2] = [info.max, info.min], [1, info.max]
    s = rng.integers(0, info.bits, 256).astype(dtype)
    out = tvm.runtime.empty((len(kernels.INTEGER_WRAPPING_ROWS), 256), dtype)
    tvm.compile(legalize_narrow_integers(_on_the_cpu(kernels.integer_wrapping(dtype))), target="c")["wrapping"](
        *(tvm.runtime.tensor(x) for x in (a, b, s)), out
    )
    np.testing.assert_array_equal(out.numpy(), kernels.integer_wrapping_reference(a, b, s))


def test_random_expressions_match_the_model():
    """Random expressions over every integer dtype, legalized, against the exact model."""
    dtypes = ["int32", "uint32", *NARROW_INTEGERS]
    rng, data = random.Random(8), np.random.default_rng(8)
    for case in range(40):
        tree = rp.random_expression(rng, rng.choice(dtypes), dtypes, rng.randrange(1, 5))
        inputs = rp.random_inputs(data, dtypes, 64)
        lib = tvm.compile(legalize_narrow_integers(rp.kernel(tree, dtypes, 64, threads=False)), target="c")
        out = tvm.runtime.empty((64,), tree[1])
        lib["expression"](*(tvm.runtime.tensor(inputs[d]) for d in dtypes), out)
        np.testing.assert_array_equal(
            out.numpy(), rp.expected(tree, inputs), err_msg=f"case {case}: {rp.describe(tree)}"
        )


@T.prim_func
def bit_views(a: T.Buffer((64,), "float16"), u: T.Buffer((64,), "uint8"), b: T.Buffer((64,), "int16"),
              c: T.Buffer((64,), "float16"), d: T.Buffer((64,), "int8")):  # fmt: skip
    for i in range(64):
        b[i] = T.reinterpret("int16", a[i]) + T.int16(1)
        c[i] = T.reinterpret("float16", b[i] - T.int16(1))
        d[i] = T.reinterpret("int8", u[i] + T.uint8(1))


def test_reinterpret_keeps_the_bits():
    """int8 <-> uint8 wraps its 32-bit value; int16 <-> float16 keeps a reinterpret the emitter
    spells (the CPU's C here), bit for bit, NaN payloads included."""
    bits = ((np.arange(64, dtype="uint32") * 1021 + 7) % 65536).astype("uint16")
    a, u = bits.view("float16"), (np.arange(64) * 5).astype("uint8")
    out = [tvm.runtime.empty((64,), t) for t in ("int16", "float16", "int8")]
    lib = tvm.compile(legalize_narrow_integers(bit_views), target="c")
    lib["bit_views"](tvm.runtime.tensor(a), tvm.runtime.tensor(u), *out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out[0].numpy(), bits.view("int16") + np.int16(1))
        np.testing.assert_array_equal(out[1].numpy().view("uint16"), bits)
        np.testing.assert_array_equal(out[2].numpy(), (u + np.uint8(1)).view("int8"))
