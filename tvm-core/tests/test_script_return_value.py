"""``return x`` in a host prim_func gives the caller ``x`` (Apache TVM's host functions do this),
a bare ``return`` ends the function; a return inside a device kernel or a parallel loop is
refused."""

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.tir.transform.verify import TIRVerifyError


@T.prim_func
def sign(x: T.int32) -> T.int32:
    if x > 0:
        return 10
    else:
        return 20


@T.prim_func
def half(x: T.float32) -> T.float32:
    return x * T.float32(0.5)


@T.prim_func
def positive(x: T.int32) -> T.bool:
    return x > 0


def test_host_functions_return_scalars():
    mod = tvm.compile({"sign": sign, "half": half, "positive": positive}, target="c")
    assert mod["sign"](3) == 10 and mod["sign"](-3) == 20
    assert mod["half"](3.0) == 1.5
    assert mod["positive"](1) is True and mod["positive"](-1) is False


def test_a_kernel_cannot_return():
    with pytest.raises(
        (TIRVerifyError, tvm.script.TVMScriptError), match="a kernel cannot end the function or give it a value"
    ):

        @T.prim_func
        def kernel(A: T.Buffer((4,), "float32")) -> T.int32:
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                A[tx] = T.float32(1)
                return 1


def test_return_survives_printing_and_parsing():
    text = sign.script()
    assert "return 10" in text and "return 20" in text, text
    again = tvm.script.parse(text)
    assert tvm.compile(again, target="c")["sign"](5) == 10


@T.prim_func
def early_exit(A: T.Buffer((8,), "int32")):
    A[0] = 1
    return
    A[1] = 2


@T.prim_func
def until_the_first_big(A: T.Buffer((8,), "int32")):
    for i in range(8):
        if A[i] > 3:
            return
        A[i] = 5


def test_a_bare_return_ends_the_function():
    """It was dropped: the statements after it ran."""
    a = np.zeros(8, "int32")
    tvm.compile(early_exit, target="c")["early_exit"](a)
    np.testing.assert_array_equal(a, [1, 0, 0, 0, 0, 0, 0, 0])
    a = np.array([0, 0, 0, 4, 0, 0, 0, 0], "int32")
    tvm.compile(until_the_first_big, target="c")["until_the_first_big"](a)
    np.testing.assert_array_equal(a, [5, 5, 5, 4, 0, 0, 0, 0])
    assert "        return\n" in until_the_first_big.script()
    tvm.ir.assert_structural_equal(tvm.script.parse(until_the_first_big.script()), until_the_first_big)


@T.prim_func
def launch_unless_empty(A: T.Buffer((64,), "float32"), n: T.int32):
    if n == 0:
        return
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = A[tx] + T.float32(1)


def test_a_return_in_the_host_code_of_a_device_function_skips_its_kernels():
    mod = tvm.compile(launch_unless_empty, target="example")
    dev = tvm.device("example", 0)
    a = tvm.runtime.tensor(np.zeros(64, "float32"), dev)
    mod["launch_unless_empty"](a, 0)
    np.testing.assert_array_equal(a.numpy(), np.zeros(64, "float32"))
    mod["launch_unless_empty"](a, 1)
    np.testing.assert_array_equal(a.numpy(), np.ones(64, "float32"))
    with pytest.raises(TIRVerifyError, match="'return' in device code"), pytest.warns(Warning, match="one thread"):
        tvm.compile(early_exit, target="example")


def test_a_return_in_a_parallel_loop_is_refused():
    """OpenMP cannot leave a parallel loop by return (the C did not compile)."""
    for kind in ("parallel", "vectorized"):
        with pytest.raises(tvm.script.TVMScriptError, match=f"'return' in a {kind} loop"):

            @T.prim_func
            def find(A: T.Buffer((8,), "int32")) -> T.int32:
                for i in getattr(T, kind)(8):
                    if A[i] > 3:
                        return i
                return -1
