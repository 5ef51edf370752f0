"""``T.undef()``: a store of an unspecified value (directly, in an expression, or through a let
variable) stores nothing; an unspecified index or condition is an error naming it."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.tir.transform import TIRVerifyError


def run(func) -> np.ndarray:
    a = tvm.runtime.tensor(np.array([7, 8], dtype="int32"))
    tvm.compile(func, target="c")[func.global_symbol](a)
    return a.numpy()


def test_stores_of_unspecified_values_store_nothing():
    @T.prim_func
    def partly(A: T.Buffer((2,), "int32")):
        A[0] = 1 + T.undef(dtype="int32")
        val: T.let[T.int32] = T.undef(dtype="int32")
        A[1] = val * 2
        A[0] = A[0] + 10

    np.testing.assert_array_equal(run(partly), [17, 8])


@pytest.mark.parametrize("where", ["store index", "load index", "condition"])
def test_an_unspecified_index_or_condition_is_an_error(where):
    @T.prim_func
    def store_index(A: T.Buffer((2,), "int32")):
        A[T.undef(dtype="int32")] = 5

    @T.prim_func
    def load_index(A: T.Buffer((2,), "int32")):
        A[0] = A[T.undef(dtype="int32")]

    @T.prim_func
    def condition(A: T.Buffer((2,), "int32")):
        if T.undef(dtype="int32") > 0:
            A[0] = 1

    func = {"store index": store_index, "load index": load_index, "condition": condition}[where]
    match = "used where its value matters" if where == "condition" else "T.undef\\(\\) in an index"
    with pytest.raises(TIRVerifyError, match=match):
        tvm.compile(func, target="c")
