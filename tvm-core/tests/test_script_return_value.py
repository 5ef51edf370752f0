"""``return x`` in a host prim_func gives the caller ``x`` (Apache TVM's host functions do this);
a return value inside a device kernel is refused."""

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
    with pytest.raises((TIRVerifyError, tvm.script.TVMScriptError), match="device kernels cannot return values"):

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
