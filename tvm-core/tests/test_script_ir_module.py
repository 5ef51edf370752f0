"""``@I.ir_module`` classes: their prim_funcs compile into one library and each runs."""

import numpy as np
import pytest
import tvm
from tvm.script import ir as I
from tvm.script import tir as T


@I.ir_module
class Module:
    @T.prim_func
    def double(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] * T.float32(2)

    @T.prim_func(private=True)
    def negate(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = -A[i]


def test_module_functions_compile_together_and_run():
    assert isinstance(Module, tvm.tir.IRModule) and sorted(n for n, _ in Module.items()) == ["double", "negate"]
    lib = tvm.compile(Module, target="c")
    a = np.arange(8, dtype="float32")
    for name, want in (("double", a * 2), ("negate", -a)):
        b = tvm.runtime.empty((8,), "float32")
        lib[name](tvm.runtime.tensor(a), b)
        np.testing.assert_array_equal(b.numpy(), want)


def test_a_class_without_functions_is_an_error():
    with pytest.raises(TypeError, match="defines no @T.prim_func"):

        @I.ir_module
        class Empty:
            x = 1
