"""Constants and 16-bit floats as every target computes them: negated integer constants wrap,
float calls on constants whose result is exact are folded (device compilers mistreated such
literals), a bfloat16 expression rounds after each operation, a float64 becomes a float16 in one
rounding, and a value bound by a Let prints once however deeply such bindings nest."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import tir as T
from tvm.tir.transform import simplify

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (pip install ml_dtypes) defines bfloat16")

pytestmark = pytest.mark.usefixtures("private_cache")


def test_negating_an_integer_constant_wraps():
    """-T.int32(-2**31) was refused ("does not fit its dtype"); integers wrap."""

    @T.prim_func
    def negated(A: T.Buffer((3,), "int32"), B: T.Buffer((1,), "int8"), C: T.Buffer((1,), "uint8")):
        A[0] = -T.int32(-2147483648)
        A[1] = -T.int32(5)
        A[2] = -T.int32(2147483647)
        B[0] = -T.int8(-128)
        C[0] = -T.uint8(2)

    a, b, c = np.zeros(3, "int32"), np.zeros(1, "int8"), np.zeros(1, "uint8")
    tvm.compile(negated, target="c")["negated"](a, b, c)
    assert a.tolist() == [-(2**31), -5, -(2**31) + 1] and b[0] == -128 and c[0] == 254


def test_exact_float_calls_on_constants_fold():
    """rint/trunc/floor/ceil/fabs of a constant and any one-operand float function of a NaN are
    folded; reinterpret of a float constant is its bits (a NaN is the quiet NaN 0x7fc00000)."""

    @T.prim_func
    def calls(A: T.Buffer((6,), "float64"), B: T.Buffer((3,), "float32"), C: T.Buffer((1,), "uint32")):
        A[0] = T.round(T.float64(1e300))
        A[1] = T.round(T.float64(2.5))
        A[2] = T.trunc(T.float64(-2.5))
        A[3] = T.floor(T.float64(-0.5))
        A[4] = T.ceil(T.float64(-0.5))
        A[5] = T.fabs(T.float64(-3.0))
        B[0] = T.trunc(T.float32("inf"))
        B[1] = T.exp(T.float32("nan"))
        B[2] = T.sigmoid(T.float32("nan"))
        C[0] = T.reinterpret("uint32", T.float32("nan"))

    folded = simplify(calls)
    stores = []
    tvm.tir.functor.post_order_visit(
        folded.body, lambda n: stores.append(n) if isinstance(n, tvm.tir.stmt.BufferStore) else None
    )
    assert all(isinstance(s.value, (tvm.tir.FloatImm, tvm.tir.IntImm)) for s in stores), [s.value for s in stores]
    a, b, c = np.zeros(6), np.zeros(3, "float32"), np.zeros(1, "uint32")
    tvm.compile(calls, target="c")["calls"](a, b, c)
    np.testing.assert_array_equal(a, [1e300, 2.0, -2.0, -1.0, -0.0, 3.0])
    assert np.signbit(a[4]) and b[0] == np.inf and np.isnan(b[1:]).all() and c[0] == 0x7FC00000


def test_bfloat16_rounds_after_every_operation():
    """The C printer computed a bfloat16 expression in float32 and rounded at the store only."""

    @T.prim_func
    def chain(a: T.Buffer((4,), "bfloat16"), b: T.Buffer((4,), "bfloat16"), c: T.Buffer((4,), "bfloat16"),
              o: T.Buffer((4,), "bfloat16"), p: T.Buffer((4,), "bfloat16")):  # fmt: skip
        for i in range(4):
            o[i] = a[i] * b[i] + c[i]
            p[i] = T.floordiv(a[i], b[i]) + c[i]

    bf = ml_dtypes.bfloat16
    a = np.array([1 + 2**-7, 1000.0, 3.0, 1.0], "float32").astype(bf)
    b = np.array([1 + 3 * 2**-7, 7.0, 0.30078125, 3.0], "float32").astype(bf)
    c = np.array([-1.0, 1.0, 1.0, 0.0], "float32").astype(bf)
    o, p = np.zeros(4, bf), np.zeros(4, bf)
    tvm.compile(chain, target="c")["chain"](a, b, c, o, p)
    np.testing.assert_array_equal(o.astype("float32"), (a * b + c).astype("float32"))
    np.testing.assert_array_equal(p.astype("float32"), (a // b + c).astype("float32"))  # floor_divide


def test_a_float64_becomes_a_float16_in_one_rounding():
    """float64 -> float32 -> float16 rounded twice: 2049.0000001 became 2048, NumPy gives 2050."""

    @T.prim_func
    def narrow(A: T.Buffer((6,), "float64"), B: T.Buffer((6,), "float16")):
        for i in range(6):
            B[i] = T.Cast("float16", A[i])

    a = np.array([1.0004882812509095, 2049.0000001, -1.0004882812509095, 65519.99, 1e300, np.nan])
    b = np.zeros(6, "float16")
    tvm.compile(narrow, target="c")["narrow"](a, b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(b, a.astype("float16"))


def test_nested_let_bindings_print_each_value_once():
    """Each bfloat16 operation's rounding binds its operand with a Let that it uses five times;
    pasting the value at each use made the text grow fivefold per nested operation (a WGSL shader
    of 15 MB that never finished compiling)."""
    sizes = []
    for depth in (4, 8):
        e = "a[i]"
        for _ in range(depth):
            e = f"({e} + b[i])"
        f = tvm.script.parse(
            f"""
@T.prim_func
def f(a: T.Buffer((4,), "bfloat16"), b: T.Buffer((4,), "bfloat16"), o: T.Buffer((4,), "bfloat16")):
    for i in range(4):
        o[i] = {e}
"""
        )
        f = tvm.tir.transform.legalize_bfloat16(f)
        sizes.append(len(tvm.compile(f, target="c").inspect_source()))
        bf = ml_dtypes.bfloat16
        x, o = np.ones(4, bf), np.zeros(4, bf)
        tvm.compile(f, target="c")["f"](x, x, o)
        np.testing.assert_array_equal(o.astype("float32"), np.full(4, depth + 1.0))
    assert sizes[1] < sizes[0] * 2, sizes


def test_folded_rounding_keeps_the_sign_of_zero_and_nan_converts_quietly():
    """round(-0.4) folded to +0.0 (C gives -0.0); a float64 NaN became the float16 0x7fff."""

    @T.prim_func
    def edges(A: T.Buffer((2,), "float32"), N: T.Buffer((1,), "float64"), H: T.Buffer((1,), "uint16")):
        A[0] = T.round(T.float32(-0.4))
        A[1] = T.nearbyint(T.float32(-0.5))
        H[0] = T.reinterpret("uint16", T.Cast("float16", N[0]))

    a, h = np.ones(2, "float32"), np.zeros(1, "uint16")
    tvm.compile(edges, target="c")["edges"](a, np.array([np.nan]), h)
    assert np.signbit(a).all() and (a == 0).all() and h[0] == 0x7E00


def test_bfloat16_in_a_condition_rounds_after_every_operation():
    """Conditions of `if` and `while` were computed in float32 throughout."""

    @T.prim_func
    def cond(a: T.Buffer((1,), "bfloat16"), b: T.Buffer((1,), "bfloat16"), o: T.Buffer((1,), "int32")):
        o[0] = 0
        if a[0] + b[0] - a[0] != b[0]:
            o[0] = 1

    bf = ml_dtypes.bfloat16
    a, b, o = np.array([256.0], bf), np.array([1.0], bf), np.zeros(1, "int32")
    tvm.compile(cond, target="c")["cond"](a, b, o)
    want = int((a + b - a)[0] != b[0])
    assert o[0] == want == 1
