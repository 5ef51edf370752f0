"""Math functions on special values (NaN, ±0, ±inf, tiny, huge and large negative arguments),
compared with NumPy (C99's special cases) on the CPU targets and on each device present here.

* ``T.hypot`` of a NaN is NaN unless the other operand is infinite (it dropped a NaN first
  operand: ``hypot(nan, 1)`` was ``sqrt(2)``);
* ``T.acosh`` is NaN below 1 (large negative arguments gave -inf, 0 or inf);
* ``T.copysign(0.0, negative)`` is -0.0 (it was ``0.0 - |x|``, which is +0.0), and so are
  ``T.asinh(-0.0)`` and ``T.atanh(-0.0)``;
* ``sinh``, ``cosh``, ``atan`` and ``atan2`` on Vulkan and WebGPU, whose drivers' built-ins gave
  ``atan2(0, 0) = 3pi/4``, ``atan(nan) = 0``, ``sinh(1e-30) = 3e-8`` and ``sinh(89) = inf``.
"""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.backend.api import device_unavailable_reason
from tvm.script import tir as T
from tvm.tir.functor import post_order_visit
from tvm.tir.transform.legalize import legalize_arithmetic

CPU = ("llvm", "c")
DEVICES = ("example", "opencl", "vulkan", "webgpu", "hexagon")
#: the targets whose drivers' math built-ins the arithmetic legalization replaces (the other
#: targets' libraries get these special values right; the C target runs the legalized forms below)
LEGALIZED = ("vulkan", "webgpu")
#: dtypes a target has no buffers of (WebGPU has no float64)
NOT_THERE = {"webgpu": ("float64",)}
#: targets without float64 log/exp (Vulkan's GLSL.std.450 defines them for 16 and 32 bits only)
NO_FLOAT64_MATH = ("vulkan", "webgpu")


def _device(target: str) -> tvm.runtime.Device:
    """The device ``target`` runs on; skips (naming what is missing) when it is not here."""
    if target in CPU:
        return tvm.cpu()
    reason = device_unavailable_reason(target)
    if reason:
        pytest.skip(f"needs a {target} device (tvm-backend-{target} and its driver): {reason}")
    return tvm.device(target)


def _combos(targets: tuple[str, ...], dtypes: tuple[str, ...], skip: dict | None = None) -> list:
    skip = {**NOT_THERE, **(skip or {})}
    return [(t, d) for t in targets for d in dtypes if d not in skip.get(t, ())]


def _kernel(fn, dtype: str, n: int, arity: int, target: str):
    """``C[i] = fn(A[i])`` (or ``fn(A[i], B[i])``), a loop on the CPU, a thread per element on a device."""
    on_device = target not in CPU
    if arity == 1 and on_device:

        @T.prim_func
        def kernel(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), C: T.Buffer((n,), dtype)):
            for i in T.thread_binding(n, thread="threadIdx.x"):
                C[i] = fn(A[i])

    elif arity == 1:

        @T.prim_func
        def kernel(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), C: T.Buffer((n,), dtype)):
            for i in range(n):
                C[i] = fn(A[i])

    elif on_device:

        @T.prim_func
        def kernel(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), C: T.Buffer((n,), dtype)):
            for i in T.thread_binding(n, thread="threadIdx.x"):
                C[i] = fn(A[i], B[i])

    else:

        @T.prim_func
        def kernel(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), C: T.Buffer((n,), dtype)):
            for i in range(n):
                C[i] = fn(A[i], B[i])

    return kernel


def _np_dtype(dtype: str):
    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes (pip install ml_dtypes) defines bfloat16")
        return ml_dtypes.bfloat16
    return np.dtype(dtype)


def _run(fn, target: str, dtype: str, a, b=None) -> np.ndarray:
    """``fn`` of ``a`` (and ``b``) computed by a kernel for ``target``, as float64."""
    dev = _device(target)
    with np.errstate(over="ignore"):
        a = np.asarray(a, np.float64).astype(_np_dtype(dtype))
        b = a if b is None else np.asarray(b, np.float64).astype(_np_dtype(dtype))
    mod = tvm.compile(_kernel(fn, dtype, a.size, 1 if b is a else 2, target), target=target)
    c = tvm.runtime.empty(a.shape, dtype, dev)
    mod["kernel"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c)
    return c.numpy().astype(np.float64)


def _rounded(values, dtype: str) -> np.ndarray:
    """NumPy's float64 results rounded to ``dtype`` (16-bit floats compute in float32 first)."""
    with np.errstate(all="ignore"):
        wide = np.asarray(values, np.float64).astype("float64" if dtype == "float64" else "float32")
        return wide.astype(_np_dtype(dtype)).astype(np.float64)


def _assert_special(got: np.ndarray, want: np.ndarray, rtol: float) -> None:
    """The same NaNs, infinities and signed zeros; finite values within ``rtol``."""
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"NaNs: got {got}, want {want}")
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=f"infinities: got {got}, want {want}")
    ordered = ~np.isnan(want)  # a NaN's sign bit is unspecified
    np.testing.assert_array_equal(np.signbit(got[ordered]), np.signbit(want[ordered]), err_msg=f"signs: got {got}")
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=0)


def _rtol(dtype: str, target: str) -> float:
    """NumPy's precision of ``dtype``; the Vulkan/WebGPU drivers' ``exp`` and ``log`` are coarser."""
    if dtype in ("float16", "bfloat16"):
        return 2e-3 if dtype == "float16" else 1.6e-2
    if target in LEGALIZED:
        return 1e-5
    return 1e-6 if dtype == "float32" else 1e-14


ALL = CPU + DEVICES


@pytest.mark.parametrize(("target", "dtype"), _combos(ALL, ("float16", "float32", "float64")))
def test_hypot_of_nan_is_nan_unless_the_other_operand_is_infinite(target, dtype, private_cache):
    nan, inf = np.nan, np.inf
    a = [nan, 0.0, nan, 3.0, inf, nan, -inf, nan, 3.0, -0.0]
    b = [0.0, nan, 1.0, nan, nan, -inf, nan, inf, -4.0, 0.0]
    got = _run(T.hypot, target, dtype, a, b)
    np.testing.assert_array_equal(got, _rounded(np.hypot(a, b), dtype))
    assert not np.signbit(got).any(), got


@pytest.mark.parametrize(
    ("target", "dtype"), _combos(ALL, ("float16", "float32", "float64"), {t: ("float64",) for t in NO_FLOAT64_MATH})
)
def test_acosh_is_nan_below_one_however_negative(target, dtype, private_cache):
    if dtype == "float16":
        a = [-2.0, -100.0, -1e3, -1e4, -6e4, -65504.0, 0.5, -np.inf, 1.0, 2.0, 60000.0]
    else:
        huge = 1e300 if dtype == "float64" else 3e38
        a = [-2.0, -1e4, -1e8, -1e20, -1e30, -3e38, 0.5, -np.inf, 1.0, 2.0, huge]
    got = _run(T.acosh, target, dtype, a)
    with np.errstate(invalid="ignore"):
        want = _rounded(np.arccosh(_rounded(a, dtype)), dtype)
    _assert_special(got, want, _rtol(dtype, target))


#: where the language's ``0.0 - |x|`` gave +0.0 (Vulkan's and WebGPU's drivers negate, so they were right)
EXACT_SUBTRACTION = tuple(t for t in ALL if t not in LEGALIZED)


@pytest.mark.parametrize(("target", "dtype"), _combos(EXACT_SUBTRACTION, ("float16", "bfloat16", "float32", "float64")))
def test_copysign_gives_zero_the_sign_of_a_negative(target, dtype, private_cache):
    a = [0.0, -0.0, 0.0, -0.0, 2.0, -2.0, np.inf, 0.0]
    b = [-3.0, -3.0, -0.0, 0.0, -1.0, 0.0, -np.inf, np.inf]
    got = _run(T.copysign, target, dtype, a, b)
    want = np.copysign(a, b)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"got {got}")


@pytest.mark.parametrize(("target", "dtype"), _combos(CPU + ("example",), ("float32", "float64")))
@pytest.mark.parametrize(("fn", "reference"), [(T.asinh, np.arcsinh), (T.atanh, np.arctanh)], ids=["asinh", "atanh"])
def test_inverse_hyperbolic_functions_keep_the_sign_of_zero(target, dtype, fn, reference, private_cache):
    """``asinh(-0.0)`` and ``atanh(-0.0)`` were +0.0 (the sign came from ``x < 0``)."""
    a = [-0.0, 0.0, -0.5, 0.5, -2.0 if fn is T.asinh else -0.9, np.nan]
    got = _run(fn, target, dtype, a)
    _assert_special(got, _rounded(reference(np.asarray(a, dtype)), dtype), _rtol(dtype, target))


HYPERBOLIC_ARGS = {
    "float32": [0.0, -0.0, 1e-30, -1e-30, 1e-5, -1e-5, 0.3, -0.54, 0.56, 1.0, -2.5, 10.0, 89.0, -89.0, np.inf, -np.inf,
                np.nan],
    "float16": [0.0, -0.0, 1e-4, -1e-3, 0.3, -0.54, 0.56, 1.0, -2.5, 10.0, -11.0, 12.0, np.inf, -np.inf, np.nan],
}  # fmt: skip


@pytest.mark.parametrize(("target", "dtype"), _combos(LEGALIZED, ("float16", "float32")))
@pytest.mark.parametrize(("fn", "reference"), [(T.sinh, np.sinh), (T.cosh, np.cosh)], ids=["sinh", "cosh"])
def test_hyperbolic_functions_near_zero_and_near_overflow(target, dtype, fn, reference, private_cache):
    a = HYPERBOLIC_ARGS[dtype]
    got = _run(fn, target, dtype, a)
    with np.errstate(over="ignore"):
        want = _rounded(reference(_rounded(a, dtype)), dtype)
    _assert_special(got, want, _rtol(dtype, target))


ATAN_ARGS = [np.nan, 0.0, -0.0, 1e-30, -1e-30, 0.5, -2.0, 1e30, np.inf, -np.inf]
AXES = [0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize(("target", "dtype"), _combos(LEGALIZED, ("float16", "float32")))
def test_atan_of_nan_and_of_tiny_and_signed_zero_is_the_argument(target, dtype, private_cache):
    got = _run(T.atan, target, dtype, ATAN_ARGS)
    _assert_special(got, _rounded(np.arctan(_rounded(ATAN_ARGS, dtype)), dtype), 1e-3)


@pytest.mark.parametrize(("target", "dtype"), _combos(LEGALIZED, ("float16", "float32")))
def test_atan2_of_zeros_infinities_and_nans_is_cs(target, dtype, private_cache):
    y, x = (np.array(v, np.float64).ravel() for v in np.meshgrid(AXES, AXES, indexing="ij"))
    got = _run(T.atan2, target, dtype, y, x)
    want = _rounded(np.arctan2(y, x), dtype)
    special = ~np.isfinite(y) | ~np.isfinite(x) | (y == 0) | (x == 0)
    np.testing.assert_array_equal(got[special], want[special], err_msg=f"atan2({y[special]}, {x[special]})")
    ordered = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[ordered]), np.signbit(want[ordered]))
    np.testing.assert_allclose(got[~special], want[~special], rtol=1e-3)


def _calls(func) -> set[str]:
    names: set[str] = set()
    post_order_visit(func.body, lambda n: names.add(str(n.op)) if isinstance(n, tvm.tir.Call) else None)
    return {name.removeprefix("tir.") for name in names}


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize(
    ("fn", "reference", "arity"),
    [(T.sinh, np.sinh, 1), (T.cosh, np.cosh, 1), (T.atan, np.arctan, 1), (T.atan2, np.arctan2, 2)],
    ids=["sinh", "cosh", "atan", "atan2"],
)
def test_legalized_math_runs_exactly_on_the_cpu(dtype, fn, reference, arity, private_cache):
    """The Vulkan/WebGPU formulations, run by the C target: NumPy's results, without the drivers'
    ``sinh`` and ``cosh`` (which overflow from ``exp(|x|)``), with ``atan``/``atan2`` guarded."""
    y, x = (np.array(v, np.float64).ravel() for v in np.meshgrid(AXES + [89.0, 1e-30], AXES + [89.0, 1e-30]))
    legal = legalize_arithmetic(_kernel(fn, dtype, y.size, arity, "c"))
    calls = _calls(legal)
    assert not calls & {"sinh", "cosh"}, calls
    assert {"isnan"} <= calls if fn in (T.atan, T.atan2) else {"exp"} <= calls, calls
    a, b = _rounded(y, dtype).astype(dtype), _rounded(x, dtype).astype(dtype)
    c = np.zeros(y.size, dtype)
    tvm.compile(legal, target="c")["kernel"](a, b, c)
    with np.errstate(over="ignore"):
        wide = (a.astype("float32"), b.astype("float32"))
        want = _rounded(reference(*wide[:arity]), dtype)
    _assert_special(c.astype(np.float64), want, _rtol(dtype, "c"))


def _constant_zeros_kernel(on_device: bool):
    """Signed zeros from constant operands only (folded, or evaluated by the device compiler)."""
    if on_device:

        @T.prim_func
        def kernel(O: T.Buffer((4,), "float32")):
            for i in T.thread_binding(1, thread="threadIdx.x"):
                O[0] = T.copysign(T.float32(0.0), T.float32(-1.0))
                O[1] = T.atan2(T.float32(-0.0), T.float32(-0.0))
                O[2] = T.atan2(T.float32(-0.0), T.float32(1.0))
                O[3] = T.float32(-0.0) * T.float32(1.0)

    else:

        @T.prim_func
        def kernel(O: T.Buffer((4,), "float32")):
            O[0] = T.copysign(T.float32(0.0), T.float32(-1.0))
            O[1] = T.atan2(T.float32(-0.0), T.float32(-0.0))
            O[2] = T.atan2(T.float32(-0.0), T.float32(1.0))
            O[3] = T.float32(-0.0) * T.float32(1.0)

    return kernel


@pytest.mark.parametrize("target", _combos(ALL, ("float32",)), ids=lambda c: c[0])
def test_constant_operands_keep_the_sign_of_zero(target, private_cache):
    """With constant operands, Vulkan's and WebGPU's compilers folded ``0.0 * -1.0`` (copysign's
    negation) and ``-0.0 * 1.0`` to +0.0, so copysign(0, -1) and atan2(-0, -0) lost their sign."""
    target = target[0]
    dev = _device(target)
    out = tvm.runtime.empty((4,), "float32", dev)
    tvm.compile(_constant_zeros_kernel(target not in CPU), target=target)["kernel"](out)
    want = np.array([-0.0, -np.pi, -0.0, -0.0], "float32")
    got = out.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=f"got {got!r}")


def test_the_zoo_max_and_softmax_start_from_minus_infinity():
    """Their maximum started at -3.4e38: a row of -FLT_MAX (an attention mask) had a maximum
    larger than every element and a NaN softmax (NumPy: 0.125 each)."""
    from tvm.testing import kernels, tunables

    big = np.finfo(np.float32).max
    a = np.array([[-big] * 8, [-big, -3.401e38] + [-big] * 6, [1, 2, 3, 4, 5, 6, 7, 8]], np.float32)
    dev = tvm.device("example")
    out = tvm.runtime.empty((3,), "float32", dev)
    tvm.compile(kernels.row_max_blocks(3, 8, 4), target="example")["row_max_blocks"](tvm.runtime.tensor(a, dev), out)
    np.testing.assert_array_equal(out.numpy(), a.max(axis=1))
    expect = kernels.reference_softmax(a)
    for func, target, d in (
        (kernels.row_softmax(None, None, 4), "example", dev),
        (tunables.softmax_cpu(3, 8, 4), "c", tvm.cpu()),
    ):
        got = tvm.runtime.empty(a.shape, "float32", d)
        tvm.compile(func, target=target)[func.global_symbol](tvm.runtime.tensor(a, d), got)
        np.testing.assert_allclose(got.numpy(), expect, rtol=1e-6, atol=1e-7)
