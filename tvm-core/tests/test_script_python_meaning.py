"""Kernels keep the meaning of the Python they are written in, or are refused where TIR cannot:
a name the kernel binds is never a global of that name, ``/`` of integers is not C's, a guard on
the left of ``and`` / ``or`` guards the right, an index or a chained comparison's middle operand
is evaluated once, an integer condition means ``!= 0`` everywhere, and what cannot be kept
(a fraction returned as an int, a float kept in an int, a slice counted from the end) is refused
by name."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T

#: A module global that a kernel's own name of the same spelling must not reach.
t = 5


def parse(text: str):
    return tvm.script.parse(text, {"T": T})


def test_a_name_bound_in_an_ended_block_is_never_a_global():
    text = """
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((1,), "int32")):
    for i in range(4):
        t = A[i]
    B[0] = t
"""
    with pytest.raises(TVMScriptError, match="name 't' is not defined here: it is defined only inside a block"):
        tvm.script.parse(text, {"T": T, "t": t})


def test_true_division_of_integers_is_refused_with_the_choices():
    with pytest.raises(TVMScriptError, match=r"'/' of two integers: Python's gives a float and C's truncates"):
        parse("""
@T.prim_func
def f(A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "float32")):
    B[0] = A[0] / 2
""")


@T.prim_func
def guarded_by_and(A: T.Buffer((8,), "int32"), B: T.Buffer((16,), "int32")):
    for i in range(16):
        if i < 8 and A[i] > 0:  # A[i] is read only where i < 8
            B[i] = 1
        if i >= 8 or A[i] == 0:
            B[i] = B[i] + 10


def test_the_left_side_of_and_or_guards_the_right():
    a = np.arange(8, dtype="int32")
    b = np.zeros(16, "int32")
    tvm.compile(guarded_by_and, target="c")(a, b)
    want = np.zeros(16, "int32")
    want[1:8] = 1
    want[0] += 10
    want[8:] += 10
    np.testing.assert_array_equal(b, want)


def test_an_updated_element_and_a_chained_comparison_evaluate_a_call_once():
    func = parse("""
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((1,), "int32")):
    A[T.call_extern("int32", "rand") % 4] += 100
    if 0 <= T.call_extern("int32", "rand") % 2 <= 0:
        B[0] = 1
""")
    assert func.script().count('"rand"') == 2  # one per statement, not one per use
    a = np.array([0, 10, 20, 30], "int32")
    before = a.copy()
    tvm.compile(func, target="c")(a, np.zeros(1, "int32"))
    assert (a != before).sum() == 1 and (a - before).sum() == 100  # one element, its own value + 100


@T.prim_func
def integer_conditions(A: T.Buffer((2,), "int32"), B: T.Buffer((4,), "int32")):
    if not A[1]:
        B[0] = 1
    if A[0] and A[1] == 0:
        B[1] = 1
    B[2] = T.Select(A[0] or A[1], 1, 0)
    i = A[0]
    while i:
        i = i - 1
        B[3] = B[3] + 1


def test_an_integer_condition_means_not_zero_everywhere():
    b = np.zeros(4, "int32")
    tvm.compile(integer_conditions, target="c")(np.array([3, 0], "int32"), b)
    np.testing.assert_array_equal(b, [1, 1, 1, 3])


REFUSED = {
    "'s' was first assigned the Python number 0, so it holds int32, but is assigned a value of dtype float32": """
@T.prim_func
def f(B: T.Buffer((1,), "float32")):
    s = 0
    s = 65536.0
    B[0] = s * s
""",
    "the function returns int32, and 2.5 has a fraction": """
@T.prim_func
def f() -> T.int32:
    return 2.5
""",
    "a negative slice bound counts from the end in Python": """
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    A[-4:] = A[0:4]
""",
    "a slice with a negative step is not supported": """
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    A[4:8] = A[3::-1]
""",
    "reversed(range(...)) is not supported: count down with range(stop - 1, start - 1, -1)": """
@T.prim_func
def f(A: T.Buffer((8,), "int32")):
    for i in reversed(range(8)):
        A[i] = i
""",
}


@pytest.mark.parametrize("message", list(REFUSED))
def test_what_python_means_and_tir_cannot_keep_is_refused(message):
    with pytest.raises(TVMScriptError, match=re.escape(message)):
        parse(REFUSED[message])


def test_an_assert_without_a_message_names_its_condition():
    func = parse("""
@T.prim_func
def f(A: T.Buffer((1,), "int32")):
    assert A[0] > 0
    A[0] = 1
""")
    with pytest.raises(RuntimeError, match=r"assertion failed: A\[0\] > 0"):
        tvm.compile(func, target="c")(np.zeros(1, "int32"))


def test_a_float_returned_as_an_int_warns_that_the_fraction_is_dropped():
    with pytest.warns(UserWarning, match="returning a float32 value from a function that returns int32"):
        parse("""
@T.prim_func
def f(x: T.float32) -> T.int32:
    return x * T.float32(2.5)
""")


def test_a_name_the_function_assigns_later_is_not_the_global_before():
    text = """
@T.prim_func
def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        if i > 0:
            B[i] = t
        t = A[i]
"""
    with pytest.raises(TVMScriptError, match="name 't' has no value here: the function assigns it"):
        tvm.script.parse(text, {"T": T, "t": t})
    func = parse("""
@T.prim_func
def g(A: T.Buffer((8,), "int32")):
    A[-0:4] = A[4:8]
""")  # -0 is 0
    a = np.arange(8, dtype="int32")
    tvm.compile(func, target="c")(a)
    np.testing.assert_array_equal(a[:4], [4, 5, 6, 7])


@T.macro(hygienic=False)
def _bump():
    s += 1  # noqa: F821, F841 - the caller's name


def test_a_macro_updating_the_callers_let_is_refused_not_ignored():
    with pytest.raises(TVMScriptError, match="cannot update 's': TIR variables are immutable"):

        @T.prim_func
        def caller(A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")):
            s = A[0]
            _bump()
            B[0] = s
