"""Math intrinsics on edge values, compared with NumPy on the CPU targets and on each device
present here (the defects an intrinsic x dtype x target matrix found):

* ``T.ldexp`` is exact (C's ``ldexp``): ``ldexp(0, 1000)`` and ``ldexp(inf, -1000)`` were NaN
  (``0 * inf`` of two out-of-range factors), ``ldexp(2**-149, 270)`` was inf;
* ``T.isnan``/``T.isinf``/``T.isfinite`` of a vector test every lane (they tested lane 0 only);
* ``T.copysign``, ``T.hypot``, ``T.asinh``, ``T.acosh``, ``T.atanh`` and ``T.ldexp`` of vectors
  compute lane by lane (they were refused with wrong or internal messages);
* ``fmod(-0.0, y)`` keeps the sign of zero and ``floormod`` by a subnormal is finite on Vulkan
  and WebGPU (it was +0.0 and ±inf);
* ``T.asinh``/``T.atanh`` of bfloat16 compile for WebGPU (an internal "no type for uint16");
* float ``T.floordiv`` is NumPy's ``floor_divide`` (it was ``floor(a / b)``: ``1e-45 // -2`` was
  -0.0 and ``inf // 1`` inf; a 16-bit float quotient was rounded to 16 bits before its floor,
  which differed from NumPy for one random pair in 25).
"""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import tir as T
from tvm.tir.transform.legalize import legalize_arithmetic

# the targets, their device lookup (skipping with the reason) and the dtype helpers of the
# special-values tests
from test_math_special_values import ALL, CPU, _combos, _device, _np_dtype  # noqa: E402

FLOATS = ("float16", "bfloat16", "float32", "float64")
#: threads per block on a device (Vulkan allows 256)
BLOCK = 16


def _binary_kernel(fn, a_dtype: str, b_dtype: str, c_dtype: str, n: int, on_device: bool):
    """``C[i] = fn(A[i], B[i])``: a loop on the CPU, blocks of ``BLOCK`` threads on a device."""
    if on_device:

        @T.prim_func
        def kernel(A: T.Buffer((n,), a_dtype), B: T.Buffer((n,), b_dtype), C: T.Buffer((n,), c_dtype)):
            for bx in T.thread_binding(n // BLOCK, thread="blockIdx.x"):
                for tx in T.thread_binding(BLOCK, thread="threadIdx.x"):
                    C[bx * BLOCK + tx] = fn(A[bx * BLOCK + tx], B[bx * BLOCK + tx])

    else:

        @T.prim_func
        def kernel(A: T.Buffer((n,), a_dtype), B: T.Buffer((n,), b_dtype), C: T.Buffer((n,), c_dtype)):
            for i in range(n):
                C[i] = fn(A[i], B[i])

    return kernel


def _padded(*arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays repeated up to a multiple of ``BLOCK`` elements."""
    n = -(-arrays[0].size // BLOCK) * BLOCK
    return [np.resize(a, n) for a in arrays]


def _run_binary(fn, target: str, a: np.ndarray, b: np.ndarray, c_dtype: str, legalize: bool = False) -> np.ndarray:
    dev = _device(target)
    a, b = _padded(a, b)
    kernel = _binary_kernel(fn, str(a.dtype), str(b.dtype), c_dtype, a.size, target not in CPU)
    if legalize:
        kernel = legalize_arithmetic(kernel)
    mod = tvm.compile(kernel, target=target)
    c = tvm.runtime.empty(a.shape, c_dtype, dev)
    mod["kernel"](tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), c)
    return c.numpy().astype(np.float64)


def _assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Bit for bit up to the NaN payload: the same values, NaNs and signs of zero."""
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"{what}: got {got[~same]}, want {want[~same]} at {np.flatnonzero(~same)}"


# ---------------------------------------------------------------------------------------- ldexp

EXPONENTS = [0, 1, -1, 24, -24, 30, -30, 127, -127, 128, -128, 149, -149, 270, -270, 1000, -1000, 1074, -1074,
             2098, -2098, 5000, -5000, 2**31 - 1, -(2**31)]  # fmt: skip


def _ldexp_args(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    import ml_dtypes

    info = ml_dtypes.finfo(_np_dtype(dtype))
    tiny, sub = float(info.tiny), float(info.smallest_subnormal)
    xs = [0.0, -0.0, 1.0, -1.5, 0.7, np.inf, -np.inf, np.nan, float(info.max), -tiny, sub, 3 * sub, -1e-3]
    x, n = (v.ravel() for v in np.meshgrid(np.array(xs), np.array(EXPONENTS, np.int64)))
    return x.astype(_np_dtype(dtype)), n.astype(np.int32)


@pytest.mark.parametrize(("target", "dtype"), _combos(ALL, FLOATS))
def test_ldexp_is_exact_for_every_value_and_exponent(target, dtype, private_cache):
    pytest.importorskip("ml_dtypes", reason="ml_dtypes (pip install ml_dtypes) describes the float formats")
    x, n = _ldexp_args(dtype)
    got = _run_binary(T.ldexp, target, x, n, dtype)
    x, n = _padded(x, n)
    with np.errstate(all="ignore"):  # float64 holds every product of a 16/32-bit float, rounded once
        exact = np.ldexp(x.astype(np.float64), np.clip(n, -5000, 5000))
        want = exact if dtype == "float64" else exact.astype(_np_dtype(dtype)).astype(np.float64)
    _assert_same(got, want, f"ldexp({x.astype(np.float64)}, {n})")


# ----------------------------------------------------------------------------- vector arguments


def _vector_kernel(body, dtype: str, out_dtype: str, rows: int, on_device: bool):
    """``O[i, :] = body(A[i, :], B[i, :])`` on ``dtype`` vectors of 4 lanes (one thread per row)."""
    vec, out = f"{dtype}x4", f"{out_dtype}x4"
    if on_device:

        @T.prim_func
        def kernel(A: T.Buffer((rows,), vec), B: T.Buffer((rows,), vec), O: T.Buffer((rows,), out)):
            for i in T.thread_binding(rows, thread="threadIdx.x"):
                O[i] = body(A[i], B[i])

    else:

        @T.prim_func
        def kernel(A: T.Buffer((rows,), vec), B: T.Buffer((rows,), vec), O: T.Buffer((rows,), out)):
            for i in range(rows):
                O[i] = body(A[i], B[i])

    return kernel


def _run_vector(body, target: str, a: np.ndarray, b: np.ndarray, out_dtype: str) -> np.ndarray:
    dev = _device(target)
    rows = a.size // 4
    mod = tvm.compile(_vector_kernel(body, str(a.dtype), out_dtype, rows, target not in CPU), target=target)
    o = tvm.runtime.empty((rows, 4), out_dtype, dev)
    mod["kernel"](tvm.runtime.tensor(a.reshape(rows, 4), dev), tvm.runtime.tensor(b.reshape(rows, 4), dev), o)
    return o.numpy().ravel()


SPECIALS = np.array([1.0, np.nan, -2.0, np.inf, -np.inf, 0.0, -0.0, np.nan, 3e38, -1e-45, 5.0, -np.inf], np.float32)


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize(
    ("fn", "reference"),
    [(T.isnan, np.isnan), (T.isinf, np.isinf), (T.isfinite, np.isfinite)],
    ids=["isnan", "isinf", "isfinite"],
)
def test_vector_predicates_test_every_lane(target, fn, reference, private_cache):
    got = _run_vector(lambda a, b: fn(a), target, SPECIALS, SPECIALS, "bool")
    np.testing.assert_array_equal(got, reference(SPECIALS))


def test_vector_predicates_have_a_bool_vector_type():
    x = tvm.tir.Var("x", "float32x4")
    assert T.isnan(x).dtype == "boolx4"
    assert T.isfinite(tvm.tir.Var("k", "int32x2")).dtype == "boolx2"
    assert T.isinf(tvm.tir.Var("y", "float16")).dtype == "bool"


VECTOR_A = np.array([0.5, -0.0, 2.0, -3.0, 1e30, -1e-30, 0.9, -0.25], np.float32)
VECTOR_B = np.array([-1.0, 2.0, -0.0, 4.0, 1e30, 3.0, -0.5, 0.0], np.float32)


def _np_ldexp(a, b):
    return np.ldexp(a, np.array([3, -2, 100, -149, 1, 0, 5, -1]))


@pytest.mark.parametrize("target", [t for t in ALL if t != "webgpu"] + ["webgpu"])
@pytest.mark.parametrize(
    ("body", "reference"),
    [
        (T.copysign, np.copysign),
        (T.hypot, np.hypot),
        (lambda a, b: T.asinh(a), lambda a, b: np.arcsinh(a)),
        (lambda a, b: T.acosh(b), lambda a, b: np.arccosh(b)),
        (lambda a, b: T.atanh(a), lambda a, b: np.arctanh(a)),
        (lambda a, b: T.ldexp(a, T.int32x4(0)), lambda a, b: a),  # a scalar-typed exponent broadcast
        (
            lambda a, b: T.ldexp(a, T.Cast("int32x4", T.ramp(0, 1, 4)) * 3 - 2),
            lambda a, b: np.ldexp(a, np.tile(np.arange(4) * 3 - 2, 2)),
        ),
    ],
    ids=["copysign", "hypot", "asinh", "acosh", "atanh", "ldexp_zero", "ldexp_ramp"],
)
def test_composite_math_of_vectors_lane_by_lane(target, body, reference, private_cache):
    got = _run_vector(body, target, VECTOR_A, VECTOR_B, "float32")
    with np.errstate(all="ignore"):
        want = reference(VECTOR_A.astype(np.float64), VECTOR_B.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"got {got}, want {want}")
    ordered = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[ordered]), np.signbit(want[ordered]), err_msg=f"got {got}")
    np.testing.assert_allclose(got[ordered], want[ordered], rtol=1e-5)


# --------------------------------------------------------------------- float floormod and fmod

EDGES = [0.0, -0.0, 1.0, -1.0, 2.5, -7.0, 1e-45, -1e-45, 3e-39, 1e30, -3e38, np.inf, -np.inf, np.nan]


def _grid(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    a, b = (v.ravel() for v in np.meshgrid(np.array(EDGES), np.array(EDGES + [-2.0, -3.0, 0.5])))
    with np.errstate(all="ignore"):
        return a.astype(_np_dtype(dtype)), b.astype(_np_dtype(dtype))


def _numpy_in_float32(reference, a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """NumPy's result (16-bit floats computed in float32 and rounded once, as NumPy does)."""
    wide = "float64" if dtype == "float64" else "float32"
    with np.errstate(all="ignore"):
        out = reference(a.astype(wide), b.astype(wide))
        return out.astype(_np_dtype(dtype)).astype(np.float64)


def _exactly_computable(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where Vulkan's and WebGPU's native remainder ``a - b * trunc(a / b)`` is exact (see
    docs/status.md, known gaps): a non-finite operand or quotient, a quotient below 1, a power of
    two ``|b|`` (which the legalization handles), or a ``b`` of few bits and a quotient below 2**16."""
    with np.errstate(all="ignore"):
        q = np.abs(a.astype(np.float64) / b.astype(np.float64))
    m = np.abs(b.astype(np.float64))
    mantissa = np.where(np.isfinite(m), np.frexp(m)[0], 0.0) * 2.0**53
    significant = np.array([53 - (int(v) & -int(v)).bit_length() + 1 if v else 0 for v in mantissa])
    power_of_two = (m > 0) & (significant == 1)
    return ~np.isfinite(q) | (q < 1) | power_of_two | ((significant <= 4) & (q < 2**16)) | ~np.isfinite(m)


@pytest.mark.parametrize(("target", "dtype"), _combos(("vulkan", "c"), FLOATS))
@pytest.mark.parametrize(
    ("fn", "reference"),
    [(T.floormod, np.mod), (T.truncmod, np.fmod), (T.fmod, np.fmod), (T.floordiv, np.floor_divide)],
    ids=["floormod", "truncmod", "fmod", "floordiv"],
)
def test_legalized_float_remainders_match_numpy(target, dtype, fn, reference, private_cache):
    """Vulkan computes the legalized forms; the C target runs them from the pass (WebGPU's
    differ at zero divisors and subnormals: docs/status.md, known gaps)."""
    a, b = _grid(dtype)
    got = _run_binary(fn, target, a, b, dtype, legalize=target == "c")
    a, b = _padded(a, b)
    want = _numpy_in_float32(reference, a, b, dtype)
    keep = _exactly_computable(a, b)
    _assert_same(got[keep], want[keep], f"{fn.__name__}({a[keep].astype(np.float64)}, {b[keep].astype(np.float64)})")


def _dt_bits(dtype: str) -> int:
    return 16 if dtype in ("float16", "bfloat16") else int(dtype[-2:])


def _floor_division_args(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The edge grid and random pairs over twenty binades, many with quotients of 2**10 and more."""
    a, b = _grid(dtype)
    rng = np.random.default_rng(7)
    x, y = (rng.standard_normal(256) * np.exp2(rng.integers(-10, 10, 256)) for _ in range(2))
    with np.errstate(all="ignore"):
        return np.concatenate([a, x.astype(a.dtype)]), np.concatenate([b, y.astype(b.dtype)])


@pytest.mark.parametrize(("target", "dtype"), _combos(ALL, FLOATS))
def test_float_floor_division_is_numpys(target, dtype, private_cache):
    """Where Vulkan's and WebGPU's native remainder is exact, everywhere on the other targets."""
    a, b = _floor_division_args(dtype)
    got = _run_binary(T.floordiv, target, a, b, dtype)
    a, b = _padded(a, b)
    want = _numpy_in_float32(np.floor_divide, a, b, dtype)
    wide = _dt_bits(dtype) == 16  # computed in float32, where Vulkan's and WebGPU's remainder is exact enough
    keep = _exactly_computable(a, b) if target in ("vulkan", "webgpu") and not wide else np.ones(a.shape, bool)
    _assert_same(got[keep], want[keep], f"floordiv({a[keep].astype(np.float64)}, {b[keep].astype(np.float64)})")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_floor_division_of_constants_folds_to_numpys(dtype):
    """The compiler folds ``c1 // c2`` to what the kernels compute (it floored the rounded quotient)."""
    a, b = _floor_division_args(dtype)
    for x, y in zip(a[b != 0], b[b != 0]):
        folded = tvm.tir.const(float(x), dtype) // tvm.tir.const(float(y), dtype)
        assert isinstance(folded, tvm.tir.FloatImm), folded
        with np.errstate(all="ignore"):
            want = np.floor_divide(x, y)
        got = np.array(folded.value, dtype)
        _assert_same(got.reshape(1), want.reshape(1), f"{x!r} // {y!r}")


@pytest.mark.parametrize("target", ("webgpu", "vulkan", "llvm"))
@pytest.mark.parametrize(("fn", "reference"), [(T.asinh, np.arcsinh), (T.atanh, np.arctanh)], ids=["asinh", "atanh"])
def test_inverse_hyperbolic_functions_of_bfloat16(target, fn, reference, private_cache):
    a = np.array([0.0, -0.0, 0.5, -0.75, 2.0, -30.0, 0.99, np.nan] * 2, np.float64)
    if fn is T.atanh:
        a = np.clip(a, -0.99, 0.99)
    x = a.astype(_np_dtype("bfloat16"))
    got = _run_binary(lambda u, v: fn(u), target, x, x, "bfloat16")
    with np.errstate(all="ignore"):
        want = reference(x.astype(np.float32)).astype(_np_dtype("bfloat16")).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ordered = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[ordered]), np.signbit(want[ordered]), err_msg=f"got {got}")
    np.testing.assert_allclose(got[ordered], want[ordered], rtol=1.6e-2)


# ------------------------------------------------------------ floats to narrower integers

C_FAMILY = ("llvm", "c", "example", "opencl", "hexagon")


@pytest.mark.parametrize("target", C_FAMILY)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "uint32"])
def test_a_float_outside_a_narrow_integer_keeps_its_low_bits(target, dtype, private_cache):
    """Out of the integer's range C leaves the conversion undefined, and clang (PoCL, Hexagon)
    kept 300.0 as a uint8 of 300; the C-family targets convert through int32 (int64 for uint32)
    as NumPy does on x86 (docs/status.md: outside int32, and on Vulkan and WebGPU, which
    saturate, the results differ)."""
    a = np.array([1e6, -1e6, 300.0, 40000.0, -1.0, 65535.0, -129.5, 3e9 if dtype == "uint32" else 7.0], "float32")
    got = _run_binary(lambda x, y: T.Cast("float64", T.Cast(dtype, x)), target, a, a, "float64")
    want = a.astype("int64").astype(dtype).astype("float64")
    np.testing.assert_array_equal(got[: a.size], want)
