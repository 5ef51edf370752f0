"""tvm.compile on TVMScript kernels (the shared ones in script_kernels.py), checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.runtime import numpy_dtype
from tvm.script import tir as T

import script_kernels as K
from tvm.testing.kernels import reference_softmax


pytestmark = pytest.mark.usefixtures("private_cache")


def tensor(a):
    return tvm.runtime.tensor(a)


@pytest.mark.parametrize("dtype", list(K.ELEMENTWISE))
def test_script_elementwise(dtype):
    mod = tvm.compile(K.ELEMENTWISE[dtype], "c")
    n = 128
    rng = np.random.default_rng(1)
    if dtype == "bool":
        a, b = rng.random(n) > 0.5, rng.random(n) > 0.5
        want = a ^ b
    else:
        a = rng.uniform(0, 20, n).astype(numpy_dtype(dtype))
        b = rng.uniform(0, 20, n).astype(numpy_dtype(dtype))
        want = (a + b).astype(a.dtype)
    c = tvm.runtime.empty((n,), dtype)
    name = "ew_bool" if dtype == "bool" else "ew"
    mod[name](tensor(a), tensor(b), c)
    np.testing.assert_array_equal(c.numpy(), want)


def test_script_row_sum_and_softmax():
    a = np.random.default_rng(2).standard_normal((64, 128)).astype("float32")
    s = np.zeros(64, "float32")
    tvm.compile(K.row_sum, "c").row_sum(a, s)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5, atol=1e-5)
    b = np.zeros_like(a)
    tvm.compile(K.row_softmax, "c").row_softmax(a, b)
    np.testing.assert_allclose(b, reference_softmax(a), rtol=1e-5, atol=1e-7)


def test_script_symbolic_2d_half_with_scalar_shape():
    """``m`` is both a scalar parameter and a buffer dimension; ``n`` is an int64 shape var."""
    mod = tvm.compile(K.symbolic_2d, "c")
    for shape in ((1, 3), (5, 7), (16, 2)):
        a = np.random.default_rng(3).standard_normal(shape).astype("float16")
        b = np.zeros_like(a)
        mod.symbolic_2d(a, b, shape[1])
        np.testing.assert_array_equal(b, np.maximum(a, 0))
    with pytest.raises(ValueError, match="symbolic_2d: argument 'A' expects shape"):
        mod.symbolic_2d(np.zeros((2, 3), "float16"), np.zeros((2, 3), "float16"), 4)


def test_script_clamp_cast():
    mod = tvm.compile(K.clamp_cast, "c")
    a = np.linspace(-300, 300, 16).astype("float32")
    b = np.zeros(16, "int8")
    mod[mod._build_info.function_names[0]](a, b)
    np.testing.assert_array_equal(b, np.clip(a, -128, 127).astype("int8"))


@T.prim_func
def matmul_blocked(
    A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")
):
    for io in T.parallel(8):
        acc = T.alloc_buffer((16, 128), "float32", scope="local")
        for ii, j in T.grid(16, 128):
            acc[ii, j] = T.float32(0)
        for k in range(128):
            for ii in range(16):
                for j in T.vectorized(128):
                    acc[ii, j] = acc[ii, j] + A[io * 16 + ii, k] * B[k, j]
        for ii, j in T.grid(16, 128):
            C[io * 16 + ii, j] = acc[ii, j]


def test_script_tiled_matmul_local_buffer():
    mod = tvm.compile(matmul_blocked, "c")
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((128, 128)).astype("float32") for _ in range(2))
    c = np.zeros_like(a)
    mod.matmul_blocked(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
