"""float16 arithmetic computed in float32 and rounded per operation (``legalize_float16``): no
float16 arithmetic is left, and CPU kernels give NumPy's float16 results bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.tir import expr as E
from tvm.tir.functor import post_order_visit
from tvm.tir.transform import legalize_float16

N = 4096


@T.prim_func
def mixed_ops(A: T.Buffer((N,), "float16"), B: T.Buffer((N,), "float16"), C: T.Buffer((N,), "float16")):
    for i in range(N):
        C[i] = A[i] * A[i] + A[i] / T.float16(3) - B[i] * T.float16(0.7)


@T.prim_func
def math_ops(A: T.Buffer((N,), "float16"), C: T.Buffer((N,), "float16")):
    for i in range(N):
        C[i] = T.sqrt(T.fabs(A[i])) + T.exp(A[i] * T.float16(0.5)) * T.max(A[i], T.float16(0))


def _float16_arithmetic(func) -> list[str]:
    """float16-typed operations (not loads, casts, constants or variables)."""
    found = []

    def visit(node):
        if isinstance(node, (E.BinaryOp, E.Call)) and getattr(node, "dtype", "") == "float16":
            found.append(type(node).__name__)

    post_order_visit(func.body, visit)
    return found


def test_no_float16_arithmetic_is_left():
    assert _float16_arithmetic(mixed_ops)  # the kernel computes in float16 before the pass
    assert _float16_arithmetic(legalize_float16(mixed_ops)) == []
    assert _float16_arithmetic(legalize_float16(math_ops)) == []
    once = legalize_float16(mixed_ops)
    assert legalize_float16(once) is once  # nothing left to rewrite


def _run_cpu(func, *arrays):
    lib = tvm.compile(func, target="c")
    args = [tvm.runtime.tensor(a) for a in arrays]
    lib[func.global_symbol](*args)
    return args[-1].numpy()


def test_cpu_float16_matches_numpy_bit_for_bit():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(N) * 4).astype("float16")
    b = rng.standard_normal(N).astype("float16")
    out = _run_cpu(mixed_ops, a, b, np.zeros(N, "float16"))
    want = a * a + a / np.float16(3) - b * np.float16(0.7)
    np.testing.assert_array_equal(out.view("uint16"), want.view("uint16"))


def test_cpu_float16_math_is_rounded_like_numpy():
    a = np.random.default_rng(1).standard_normal(N).astype("float16")
    out = _run_cpu(math_ops, a, np.zeros(N, "float16"))
    with np.errstate(over="ignore"):
        want = np.sqrt(np.abs(a)) + np.exp(a * np.float16(0.5)) * np.maximum(a, np.float16(0))
    # sqrt and the arithmetic are correctly rounded; exp is the C library's float exp, rounded
    np.testing.assert_allclose(out.astype("float32"), want.astype("float32"), rtol=2**-10, atol=0)
    exact = np.sqrt(np.abs(a))
    got = _run_cpu(sqrt_only, a, np.zeros(N, "float16"))
    np.testing.assert_array_equal(got.view("uint16"), exact.view("uint16"))


@T.prim_func
def floor_quotients(A: T.Buffer((4,), "float16"), C: T.Buffer((4,), "float16")):
    for i in range(4):
        C[i] = A[i] // T.float16(0.1)


def test_a_floor_division_is_numpys_floor_divide():
    """float16 ``a // b`` is NumPy's: computed in float32 and rounded once. The floor of the
    quotient rounded to float16 differs: 6.098 / 0.1 rounds to 61.0 in float16, its floor division
    is 60.0."""
    a = np.array([6.098, 1.0, -6.098, 0.25], "float16")
    got = _run_cpu(floor_quotients, a, np.zeros(4, "float16"))
    np.testing.assert_array_equal(got, a // np.float16(0.1))
    assert got[0] == 60 and np.floor(a / np.float16(0.1))[0] == 61


@T.prim_func
def sqrt_only(A: T.Buffer((N,), "float16"), C: T.Buffer((N,), "float16")):
    for i in range(N):
        C[i] = T.sqrt(T.fabs(A[i]))


@pytest.mark.parametrize("kind", ["cuda", "rocm", "example", "hexagon", "opencl"])
def test_backends_that_store_float16_declare_the_pass(kind):
    try:
        target_kind = tvm.target.Target(kind).kind
    except Exception as err:  # noqa: BLE001 - the backend's wheel is not installed here
        pytest.skip(f"target kind {kind} is not installed: {err}")
    names = [getattr(p, "__name__", repr(p)) for p in target_kind.passes]
    assert any("legalize_float16" in n or "legalize_half" in n for n in names), names
