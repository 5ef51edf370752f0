"""Legalization spells TIR's arithmetic semantics with plain operations: the legalized function
computes exactly what the original does (NumPy's integer division and modulo, including divisors
0 and -1 and the most negative value; floor division and modulo; min and max), on the CPU, for
every integer width and for floats; and no FloorDiv, FloorMod, Min or Max is left."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import tir as T
from tvm.tir import expr as E
from tvm.tir.functor import post_order_visit
from tvm.tir.transform.legalize import legalize_arithmetic

N = 64


def arithmetic(dtype: str):
    if np.dtype(dtype).kind == "f":
        return float_arithmetic(dtype)

    @T.prim_func
    def f(a: T.handle, b: T.handle, out: T.handle):
        A = T.match_buffer(a, (N,), dtype)
        B = T.match_buffer(b, (N,), dtype)
        O = T.match_buffer(out, (6, N), dtype)
        for i in range(N):
            O[0, i] = A[i] // B[i]
            O[1, i] = A[i] % B[i]
            O[2, i] = T.truncdiv(A[i], B[i])
            O[3, i] = T.truncmod(A[i], B[i])
            O[4, i] = T.min(A[i], B[i])
            O[5, i] = T.max(A[i], B[i])

    return f


def float_arithmetic(dtype: str):
    @T.prim_func
    def f(a: T.handle, b: T.handle, out: T.handle):
        A = T.match_buffer(a, (N,), dtype)
        B = T.match_buffer(b, (N,), dtype)
        O = T.match_buffer(out, (6, N), dtype)
        for i in range(N):
            O[0, i] = A[i] // B[i]
            O[1, i] = A[i] / B[i]
            O[2, i] = T.min(A[i], B[i])
            O[3, i] = T.max(A[i], B[i])
            O[4, i] = T.min(A[i] // B[i], B[i])
            O[5, i] = A[i]

    return f


def operands(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(N).astype(dtype) * 10
        b = rng.standard_normal(N).astype(dtype) * 3
        b[:4] = [1.5, -1.5, 2.0, -2.0]
        return a, b
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True)
    b = rng.integers(-9 if info.min < 0 else 0, 10, N).astype(dtype)
    special = [0, 1, info.max, info.min, 7]
    a[: len(special)] = special
    b[:8] = [0, 0, 0, 0, 0, 3, 5, 2] if info.min == 0 else [-1, -1, -1, -1, 0, 0, -3, 3]
    return a, b


@pytest.mark.parametrize(
    "dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64", "float32", "float64"]
)
def test_legalized_function_computes_the_same(dtype, private_cache):
    func = arithmetic(dtype)
    legal = legalize_arithmetic(func)
    left = {type(n).__name__ for n in _nodes(legal)}
    assert not left & {"FloorDiv", "FloorMod", "Min", "Max"}, left
    a, b = operands(dtype)
    results = []
    for f in (func, legal):
        out = np.zeros((6, N), dtype)
        tvm.compile(f, target="c")["f"](a, b, out)
        results.append(out)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(results[1], results[0], rtol=1e-6)
    else:
        np.testing.assert_array_equal(results[1], results[0])


def test_integer_divisors_reaching_division_are_never_zero_or_minus_one():
    legal = legalize_arithmetic(arithmetic("int32"))
    divisions = [n for n in _nodes(legal) if isinstance(n, (E.Div, E.Mod))]
    assert divisions
    for d in divisions:
        divisor = d.b
        while isinstance(divisor, E.Let):
            divisor = divisor.body
        if isinstance(divisor, E.Var):  # a let-bound safe divisor: find its definition
            divisor = _definition(legal, divisor)
        assert isinstance(divisor, E.Select) and isinstance(divisor.true_value, E.IntImm), divisor
        assert divisor.true_value.value == 1


def _nodes(func):
    found = []
    post_order_visit(func.body, found.append)
    return found


def _definition(func, var):
    for n in _nodes(func):
        if isinstance(n, E.Let) and n.var is var:
            return n.value
    raise AssertionError(f"{var} is not let-bound")
