"""Integer arithmetic wraps to its dtype's width on the CPU, as TIR and NumPy define it: the
8- and 16-bit dtypes (which C computes in int) and the signed ones (whose overflow C leaves
undefined, so that an optimizer may fold ``x + 1 > x`` to true) included."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tvm
from tvm.script import tir as T
from tvm.testing import kernels
from tvm.tir.functor import StmtExprMutator
from tvm.tir.stmt import For, ForKind

N = 256
DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


class _Serial(StmtExprMutator):
    """Thread-bound loops as serial ones: the zoo's device kernel as a CPU function."""

    def visit_For(self, s: For):
        s = super().visit_For(s)
        return For(s.loop_var, s.min, s.extent, ForKind.SERIAL, s.body) if s.thread_tag else s


def cpu_wrapping(dtype: str):
    func = kernels.integer_wrapping(dtype, N)
    return func.with_body(_Serial().visit_stmt(func.body))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cpu_integer_arithmetic_wraps_like_numpy(dtype, private_cache):
    rng = np.random.default_rng(7)
    info = np.iinfo(dtype)
    a, b = (rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True) for _ in range(2))
    a[:4] = np.array([info.max, info.min, info.max, 0], dtype)
    b[:4] = np.array([1, info.max, info.max, info.min], dtype)
    s = rng.integers(0, info.bits, N).astype(dtype)
    mod = tvm.compile(cpu_wrapping(dtype), target="c")
    out = tvm.runtime.empty((len(kernels.INTEGER_WRAPPING_ROWS), N), dtype)
    mod["wrapping"](*(tvm.runtime.tensor(x) for x in (a, b, s)), out)
    want = kernels.integer_wrapping_reference(a, b, s)
    for row, what in enumerate(kernels.INTEGER_WRAPPING_ROWS):
        np.testing.assert_array_equal(out.numpy()[row], want[row], err_msg=f"{dtype}: {what}")


def test_indices_and_loop_bounds_stay_plain_c():
    """Only values wrap: element indices and loop bounds are printed as plain C arithmetic, so
    the C compiler optimizes addressing as before."""
    source = tvm.compile(cpu_wrapping("int32"), target="c").inspect_source()
    assert "O[(256 + i)] = ((int32_t)((uint32_t)(A[i]) - (uint32_t)(B[i])));" in source
    assert "int32_t i = ((bx * 64) + tx);" in source and "for (int32_t tx = 0; tx < 64; ++tx)" in source


@T.prim_func
def scaled_then_divided(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32"), C: T.Buffer((64,), "int32")):
    for i in range(4):
        B[i] = (A[i] * 4) // 4 + (A[i] * 6) % 3 + (A[i] * 8 + 4) // 4 + (A[i] * 12) % 4
    for i in range(16):
        C[(i * 8) // 2] = i


def test_simplifier_keeps_wrapping_values_and_simplifies_indices(private_cache):
    """``(x * 4) // 4`` is ``x`` only where ``x * 4`` cannot wrap: the simplifier leaves such
    values alone (so the results are NumPy's) and still simplifies indices."""
    from tvm.tir.transform import simplify

    text = simplify(scaled_then_divided).script()
    assert re.search(r"C\[(\w+) \* 4\] = \1\n", text), text  # the index simplified
    assert "A[i] * 4 // 4" in text and "% 4" not in text, text  # values only where they cannot wrap
    a = np.array([2**30, 5, -(2**30) - 7, 2**29 + 3], "int32")
    mod = tvm.compile(scaled_then_divided, target="c")
    b, c = tvm.runtime.empty((4,), "int32"), tvm.runtime.tensor(np.zeros(64, "int32"))
    mod["scaled_then_divided"](tvm.runtime.tensor(a), b, c)
    with np.errstate(over="ignore"):
        i4, i6, i8, i12 = (a * np.int32(k) for k in (4, 6, 8, 12))
        want = i4 // 4 + i6 % 3 + (i8 + 4) // 4 + i12 % 4
    np.testing.assert_array_equal(b.numpy(), want)
    np.testing.assert_array_equal(c.numpy()[::4][:16], np.arange(16))


def test_constant_bitwise_operations_and_shifts_fold_wrapped():
    from tvm.tir import op
    from tvm.tir.expr import IntImm
    from tvm.tir.transform import simplify_expr

    u32, i8 = (lambda v: IntImm("uint32", v)), (lambda v: IntImm("int8", v))
    assert simplify_expr(op.shift_left(u32(3222122509), u32(26))).value == (3222122509 << 26) & 0xFFFFFFFF
    assert simplify_expr(op.shift_right(i8(-128), i8(3))).value == -16  # arithmetic for signed
    assert simplify_expr(op.shift_left(i8(100), i8(1))).value == -56
    assert simplify_expr(op.bitwise_not(IntImm("uint8", 5))).value == 250
    assert simplify_expr(op.bitwise_xor(u32(0xF0F0F0F0), u32(0xFFFF0000))).value == 0x0F0FF0F0
    shifted_too_far = simplify_expr(op.shift_left(u32(1), u32(32)))
    assert not isinstance(shifted_too_far, IntImm)  # left as written: no meaning everywhere


def test_random_integer_expressions_on_the_cpu(private_cache):
    """Random expressions over every integer dtype (the conformance suite runs the same on each
    device backend) against the exact model of :mod:`tvm.testing.random_programs`."""
    import random

    from tvm.testing import random_programs as rp

    rng, data = random.Random(27), np.random.default_rng(27)
    for case in range(40):
        tree = rp.random_expression(rng, rng.choice(DTYPES), DTYPES, rng.randrange(1, 5))
        inputs = rp.random_inputs(data, DTYPES, 64)
        mod = tvm.compile(rp.kernel(tree, DTYPES, 64, threads=False), target="c")
        out = tvm.runtime.empty((64,), tree[1])
        mod["expression"](*(tvm.runtime.tensor(inputs[d]) for d in DTYPES), out)
        np.testing.assert_array_equal(
            out.numpy(), rp.expected(tree, inputs), err_msg=f"case {case}: {rp.describe(tree)}"
        )


@T.prim_func
def narrow_and_counter_values(
    A: T.Buffer((4,), "int8"),
    Bd: T.Buffer((4,), "int8"),
    U: T.Buffer((4,), "uint8"),
    L: T.Buffer((256,), "int32"),
    O: T.Buffer((6, 8), "int32"),
):
    for i in range(8):
        O[0, i] = T.Cast("int32", T.Cast("int8", i) * T.int8(100))  # narrow, from the loop variable
        O[1, i] = T.Select(i * 1000000000 > 0, 1, 0)  # int32 loop-variable arithmetic that wraps
        O[2, i] = L[T.Cast("int32", U[i % 4] + T.uint8(100))]  # a narrow value as an index
        O[3, i] = L[T.Cast("int32", (A[i % 4] * T.int8(4)) // T.int8(2)) + 128]  # no (x*4)//2 -> x*2
        O[4, i] = T.Cast("int32", A[i % 4] // Bd[i % 4])  # -128 // -1 wraps to -128
        O[5, i] = T.Cast("int32", T.truncdiv(A[i % 4], Bd[i % 4]))


def test_narrow_values_and_loop_variable_arithmetic_wrap(private_cache):
    """Found in review: 8-bit arithmetic over a loop variable, int32 loop-variable arithmetic that
    leaves its range, a narrow value used as an index, the simplifier inside such an index, and
    an 8-bit division of -128 by -1 all wrap as NumPy does."""
    a, d = np.array([40, 1, -128, 3], "int8"), np.array([-1, 1, -1, 2], "int8")
    u, table = np.array([200, 1, 156, 3], "uint8"), np.arange(256, dtype="int32") * 3
    out = tvm.runtime.empty((6, 8), "int32")
    tvm.compile(narrow_and_counter_values, target="c")["narrow_and_counter_values"](
        *(tvm.runtime.tensor(x) for x in (a, d, u, table)), out
    )
    i = np.arange(8)
    with np.errstate(over="ignore"):
        want = [
            (i.astype("int8") * np.int8(100)).astype("int32"),
            ((i * 1_000_000_000).astype("int64").astype("uint32").view("int32") > 0).astype("int32"),
            table[(u[i % 4] + np.uint8(100)).astype("int32")],
            table[((a[i % 4] * np.int8(4)) // np.int8(2)).astype("int32") + 128],
            (a[i % 4] // d[i % 4]).astype("int32"),
            np.trunc(a[i % 4].astype("float64") / d[i % 4]).astype("int64").astype("int8").astype("int32"),
        ]
    for row, expected in enumerate(want):
        np.testing.assert_array_equal(out.numpy()[row], expected, err_msg=f"row {row}")


@T.prim_func
def divisor_folding_to_zero(A: T.Buffer((64,), "uint32"), B: T.Buffer((64,), "uint32")):
    for i in T.thread_binding(64, thread="threadIdx.x"):
        B[i] = T.truncdiv(A[i], T.Cast("uint32", T.int16(0)) // T.uint32(7))


@T.prim_func
def divisor_folding_to_zero_cpu(A: T.Buffer((64,), "uint32"), B: T.Buffer((64,), "uint32")):
    for i in range(64):
        B[i] = T.truncdiv(A[i], T.Cast("uint32", T.int16(0)) // T.uint32(7))


@pytest.mark.parametrize("target, func", [("llvm", divisor_folding_to_zero_cpu), ("example", divisor_folding_to_zero)])
def test_a_divisor_that_folds_to_zero_divides_as_tir_defines(target, func):
    """A divisor that is zero only once constants fold compiled for the CPU (giving 0) but was
    refused on device targets ("by the constant zero", a check meant for what the author wrote)."""
    dev = tvm.cpu() if target == "llvm" else tvm.device(target, 0)
    a = tvm.runtime.tensor(np.arange(64, dtype="uint32"), dev)
    b = tvm.runtime.tensor(np.full(64, 7, "uint32"), dev)
    tvm.compile(func, target=target)[func.global_symbol](a, b)
    np.testing.assert_array_equal(b.numpy(), np.zeros(64, "uint32"))
