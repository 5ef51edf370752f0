"""Apache TVM's newer spellings parse: ``from tvm.script import tirx as T`` and
``@T.prim_func(s_tir=True)``; the kernel compiles and runs like one written with ``tir``."""

import numpy as np
import tvm
from tvm.script import tir
from tvm.script import tirx as T


def test_tirx_is_the_tir_namespace():
    import tvm.script.tirx as direct

    assert T is tir and direct is tir


@T.prim_func(s_tir=True)
def scale(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16,), "float32")
    B = T.match_buffer(b, (16,), "float32")
    for i in range(16):
        B[i] = A[i] * T.float32(3)


def test_s_tir_kernel_compiles_and_runs():
    mod = tvm.compile(scale, target="c")
    a = np.arange(16, dtype="float32")
    b = tvm.runtime.empty((16,), "float32")
    mod["scale"](tvm.runtime.tensor(a), b)
    np.testing.assert_array_equal(b.numpy(), a * 3)
