"""A store converts its value to the buffer's type, as Apache TVM's parser does (a float value
stored into an integer buffer warns: the fraction is dropped); ``T.assume`` is a hint with no
effect, also inside ``T.evaluate``."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptWarning
from tvm.script import tir as T


def test_stores_convert_to_the_buffer_type_and_float_to_int_warns():
    with pytest.warns(TVMScriptWarning, match="float32 value into int32 buffer B converts it") as record:

        @T.prim_func
        def convert(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
            for i in range(4):
                T.evaluate(T.assume(i < 4))
                T.assume(i >= 0)
                A[i] = i + 1
                B[i] = A[i] * T.float32(1.5)

    assert len(record) == 1 and "B[i] = A[i] * T.float32(1.5)" in str(record[0].message)
    a, b = tvm.runtime.empty((4,), "float32"), tvm.runtime.empty((4,), "int32")
    tvm.compile(convert, target="c")["convert"](a, b)
    np.testing.assert_array_equal(a.numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(b.numpy(), (np.arange(1, 5, dtype="float32") * 1.5).astype("int32"))
