"""Python's ``&``, ``|``, ``^``, ``~``, ``<<`` and ``>>`` on expressions outside the parser (a
helper a kernel calls, a kernel factory's configuration) mean what they mean in a kernel:
bitwise on integers, logical on bools; two constants fold as Apache TVM folds them. ``&`` on two
integers built a logical ``And`` before (a helper's ``x & 3`` gave 0 or 1), and ``1 << n`` with a
constant ``n`` raised TypeError."""

import operator

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.tir import IntImm, Var

OPERATORS = {
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}


def low_bits(x):
    return x & 3


def masked_or_shifted(x, y):
    return (x | 16) ^ (y << 2) ^ (~x >> 1)


@T.prim_func
def bit_helpers(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    for i in range(64):
        B[i] = low_bits(A[i])
        C[i] = masked_or_shifted(A[i], B[i])


def test_helpers_a_kernel_calls_compute_bitwise_on_integers():
    a = np.arange(-32, 32, dtype="int32") * 37
    b, c = np.zeros(64, "int32"), np.zeros(64, "int32")
    tvm.compile(bit_helpers, target="llvm")(a, b, c)
    np.testing.assert_array_equal(b, a & 3)
    np.testing.assert_array_equal(c, (a | 16) ^ ((a & 3) << 2) ^ (~a >> 1))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
@pytest.mark.parametrize("symbol", list(OPERATORS))
def test_two_constants_fold_as_numpy_computes(dtype, symbol):
    info = np.iinfo(dtype)
    bits = info.bits
    pairs = [(info.max, 1), (info.min, 3), (5, bits - 1), (info.max // 3, 2)]
    for x, y in pairs:
        folded = OPERATORS[symbol](IntImm(dtype, int(x)), IntImm(dtype, int(y)))
        assert isinstance(folded, IntImm) and folded.dtype == dtype, folded
        with np.errstate(over="ignore"):
            expected = OPERATORS[symbol](np.array(x, dtype), np.array(y, dtype)).astype(dtype)
        assert folded.value == int(expected), (x, symbol, y)
    assert (~IntImm(dtype, 5)).value == int(~np.array(5, dtype))


def test_a_python_number_on_the_left_takes_the_expressions_dtype():
    n = T.int64(32)
    assert (1 << n) == IntImm("int64", 2**32) and (1 << n).dtype == "int64"
    assert (n & (n - 1)) == 0 and bool((n & (n - 1)) == 0)  # a power of two, as a factory checks
    assert (6 & n).value == 0 and (2 | n).value == 34 and (3 ^ n).value == 35 and (256 >> T.int64(4)).value == 16


def test_a_shift_by_the_width_or_more_is_left_to_run_time():
    shifted = T.int32(1) << 40
    assert not isinstance(shifted, IntImm)
    assert shifted.op == "shift_left"


def test_on_variables_integers_are_bitwise_and_bools_logical():
    x, b, c = Var("x", "int32"), Var("b", "bool"), Var("c", "bool")
    assert (x & 3).op == "bitwise_and" and (3 | x).op == "bitwise_or" and (~x).op == "bitwise_not"
    assert isinstance(b & c, tvm.tir.And) and isinstance(b | c, tvm.tir.Or) and isinstance(~b, tvm.tir.Not)
    with pytest.raises(TypeError, match="bitwise_and expects integer arguments, got float32"):
        Var("f", "float32") & 1


def test_xor_of_two_bools_is_logical_as_in_numpy():
    """``^`` of two bools was refused ("bitwise_xor expects integer arguments, got bool") while
    ``&``, ``|`` and ``~`` were logical: it is ``NE``, in Python and in a kernel; with an integer
    it is bitwise on int32, as ``&`` is."""
    b, c = Var("b", "bool"), Var("c", "bool")
    assert isinstance(b ^ c, tvm.tir.NE) and (b ^ c).dtype == "bool"
    assert isinstance(b ^ True, tvm.tir.NE) and isinstance(False ^ c, tvm.tir.NE)
    assert (b ^ 1).op == "bitwise_xor" and (b ^ 1).dtype == "int32"
    # like And / Or of two bool constants (no bool operation is folded), an NE that runs as NumPy says
    assert isinstance(T.bool(True) ^ T.bool(False), tvm.tir.NE)

    def flip(p, q):  # a helper a kernel calls
        return p ^ q

    @T.prim_func
    def kernel(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "int32"), x: T.int32):
        for i in range(8):
            if (i < 4) ^ (x > 0):
                B[i] = 1
            C[i] = T.Cast("int32", flip(A[i] > 2, (i % 2 == 0)) ^ T.bool(True))

    a = np.array([0, 5, 1, 7, 3, 2, 9, 0], "int32")
    i = np.arange(8)
    for x in (0, 1):
        b, c = np.zeros(8, "int32"), np.zeros(8, "int32")
        tvm.compile(kernel, target="llvm")(a, b, c, x)
        np.testing.assert_array_equal(b, ((i < 4) ^ (x > 0)).astype("int32"))
        np.testing.assert_array_equal(c, ((a > 2) ^ (i % 2 == 0) ^ True).astype("int32"))
