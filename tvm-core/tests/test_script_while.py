"""``while``, ``break`` and ``continue``: parsed into TIR's While/Break/Continue, printed back,
compiled to C and run (on the CPU and on the example device), compared with NumPy; misuse is a
clear error."""

import math
import re

import numpy as np
import pytest
import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T


@T.prim_func
def collatz_steps(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16,), "int32")
    B = T.match_buffer(b, (16,), "int32")
    for i in range(16):
        x = T.alloc_buffer((1,), "int32", scope="local")
        x[0] = A[i]
        B[i] = 0
        while x[0] != 1:
            if x[0] % 2 == 0:
                x[0] = x[0] // 2
            else:
                x[0] = 3 * x[0] + 1
            B[i] = B[i] + 1


def collatz(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_while_loop_on_the_cpu():
    a = np.arange(1, 17, dtype="int32")
    b = tvm.runtime.empty((16,), "int32")
    tvm.compile(collatz_steps, target="c")["collatz_steps"](tvm.runtime.tensor(a), b)
    np.testing.assert_array_equal(b.numpy(), [collatz(int(v)) for v in a])


@T.prim_func
def first_negative(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 32), "float32")
    B = T.match_buffer(b, (4,), "int32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            B[bx] = -1
            for k in range(32):
                if A[bx, k] >= T.float32(0):
                    continue
                B[bx] = k
                break


def test_break_and_continue_in_a_kernel():
    dev = tvm.device("example")
    a = np.random.rand(4, 32).astype("float32")
    a[0, 5] = a[0, 9] = -1
    a[2, 31] = -2
    b = tvm.runtime.empty((4,), "int32", dev)
    tvm.compile(first_negative, target="example")["first_negative"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_array_equal(b.numpy(), [5, -1, 31, -1])


def test_loops_print_and_parse_back():
    text = collatz_steps.script()
    assert "while " in text, text
    again = tvm.script.parse(text)
    assert tvm.tir.structural_equal(again, collatz_steps)
    assert "break" in first_negative.script() and "continue" in first_negative.script()


def test_break_outside_a_loop_or_in_a_parallel_one_is_refused():
    source = """
from tvm.script import tir as T

@T.prim_func
def outside(A: T.Buffer((4,), "float32")):
    A[0] = T.float32(1)
    break
"""
    with pytest.raises(TVMScriptError, match="'break' outside a loop"):
        tvm.script.parse(source)  # Python itself would not compile this function

    with pytest.raises(TVMScriptError, match="'continue' in a parallel loop"):

        @T.prim_func
        def parallel(A: T.Buffer((4,), "float32")):
            for i in T.parallel(4):
                if A[i] > T.float32(0):
                    continue
                A[i] = T.float32(0)


@T.prim_func
def heap_in_loop(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (8,), "float32")
    B = T.match_buffer(b, (8,), "float32")
    for i in range(8):
        big = T.alloc_buffer((20000,), "float32")  # over the stack limit: on the heap
        big[0] = A[i]
        if A[i] < T.float32(0):
            continue
        B[i] = big[0] * T.float32(2)


def test_continue_frees_the_iterations_heap_buffers():
    lib = tvm.compile(heap_in_loop, target="c")
    src = lib.inspect_source()
    assert "free(big);" in src[: src.index("continue;")].rsplit("{", 1)[-1], src  # freed, then continue
    a = np.array([1, -1, 2, -2, 3, -3, 4, -4], "float32")
    b = tvm.runtime.tensor(np.zeros(8, "float32"))
    lib["heap_in_loop"](tvm.runtime.tensor(a), b)
    np.testing.assert_array_equal(b.numpy(), np.where(a < 0, 0, a * 2))


@T.prim_func
def single_trip(A: T.Buffer((2,), "int32")):
    for i in T.serial(1):
        if A[i] > 5:
            break
        A[i] = A[i] + 1
    for j in T.serial(1):
        if A[j + 1] > 5:
            continue
        A[j + 1] = A[j + 1] + 1


def test_a_one_trip_loop_with_break_keeps_its_loop():
    """The simplifier removes one-trip loops, but not one whose break/continue needs it."""
    mod = tvm.compile(single_trip, target="c")
    for start, want in (([1, 9], [2, 9]), ([9, 1], [9, 2])):
        a = tvm.runtime.tensor(np.array(start, "int32"))
        mod["single_trip"](a)
        np.testing.assert_array_equal(a.numpy(), want)


def test_a_counter_assigned_again_in_the_loop_changes_as_in_python():
    """``i = T.int32(0)`` then ``i = i + 1`` in the loop: the name holds a changing value (a
    one-element local buffer), so the loop ends; ``+=`` on such a name works too."""

    @T.prim_func
    def bump_until_large(A: T.Buffer((10,), "int32"), B: T.Buffer((1,), "int32")):
        i = T.int32(0)
        total = T.int32(0)
        while i < 10:
            if A[i] > 5:
                break
            A[i] = A[i] + 1
            total += A[i]
            i = i + 1
        B[0] = total

    a = np.array([1, 2, 3, 9, 1, 1, 1, 1, 1, 1], dtype="int32")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.empty((1,), "int32")
    tvm.compile(bump_until_large, target="c")["bump_until_large"](ta, tb)
    expect = a.copy()
    expect[:3] += 1
    np.testing.assert_array_equal(ta.numpy(), expect)
    assert tb.numpy()[0] == expect[:3].sum()


def test_a_counter_started_from_a_python_number():
    """``s = 0`` (a Python int, as such loops are usually written) then ``s += A[i]`` and
    ``j = j + 1``: the name holds int32 (a Python float: float32); they were refused as
    immutable. A float assigned to one started from an int would lose its fraction: refused."""

    @T.prim_func
    def sums(
        A: T.Buffer((8,), "int32"),
        F: T.Buffer((8,), "float32"),
        B: T.Buffer((2,), "int32"),
        C: T.Buffer((1,), "float32"),
    ):
        s = 0
        for i in range(8):
            s += A[i]
        j = 0
        while j < 3:
            j = j + 1
        f = 0.0
        for i in range(8):
            f = f + F[i]
        B[0] = s
        B[1] = j
        C[0] = f

    b, c = np.zeros(2, "int32"), np.zeros(1, "float32")
    tvm.compile(sums, target="c")["sums"](np.arange(8, dtype="int32"), np.full(8, 0.5, "float32"), b, c)
    assert list(b) == [28, 3] and c[0] == 4.0
    with pytest.raises(
        TVMScriptError, match=r"'s' was first assigned the Python number 0, so it holds int32.*s = T.float32\(0.0\)"
    ):

        @T.prim_func
        def truncating(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "float32")):
            s = 0
            for i in range(8):
                s = s + A[i]
            B[0] = s


@pytest.mark.parametrize(
    "dtype, start, spelling",
    [("int64", "0", "T.int64(0)"), ("float64", "0.0", "T.float64(0.0)"), ("uint32", "0", "T.uint32(0)")],
)
def test_a_name_started_with_a_number_refuses_values_it_cannot_hold(dtype, start, spelling):
    """``s = 0`` holds int32 and ``s = 0.0`` float32: an int64 or float64 value added to it, or a
    uint32 one kept in it, would be narrowed at every step (an int64 sum of 8 for 3298534883336, a
    uint32 maximum of 7 for 3000000000), so the compile says how to start it; started that way,
    it computes what NumPy does."""
    text = f"""
@T.prim_func
def total(A: T.Buffer((4,), "{dtype}"), B: T.Buffer((1,), "{dtype}")):
    s = {start}
    for i in range(4):
        {"if A[i] > s: s = A[i]" if dtype == "uint32" else "s += A[i]"}
    B[0] = s
"""
    holder = "float32" if "." in start else "int32"
    message = f"so it holds {holder}, but is assigned a value of dtype {dtype} here; start it as s = {spelling}"
    with pytest.raises(TVMScriptError, match=re.escape(message)):
        tvm.script.from_source(text)
    func = tvm.script.from_source(text.replace(f"s = {start}", f"s = {spelling}"))
    a = np.array(
        [2**41, 3, 2**40, 5]
        if dtype == "int64"
        else [1.0, 1e-9, 2e-9, 3.0]
        if dtype == "float64"
        else [3_000_000_000, 1, 2, 3],
        dtype,
    )
    b = np.zeros(1, dtype)
    tvm.compile(func, target="c")(a, b)
    assert b[0] == (a.max() if dtype == "uint32" else a.sum(dtype=dtype))


def test_while_true_needs_a_way_out():
    @T.prim_func
    def first_above(A: T.Buffer((8,), "int32"), B: T.Buffer((1,), "int32")):
        k = 0
        while True:
            if A[k] > 4 or k == 7:
                break
            k = k + 1
        B[0] = k

    b = np.zeros(1, "int32")
    tvm.compile(first_above, target="c")["first_above"](np.arange(8, dtype="int32"), b)
    assert b[0] == 5
    with pytest.raises(TVMScriptError, match="'while True' without a break or return in its body never ends"):

        @T.prim_func
        def forever(A: T.Buffer((1,), "int32")):
            while True:
                A[0] = A[0] + 1


@T.prim_func
def first_negative_flag(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "int32")):
    found = False
    k = -1
    for i in range(8):
        if not found and A[i] < T.float32(0):
            found = True
            k = i
    B[0] = k


def test_a_bool_flag_assigned_again_holds_a_changing_value():
    a = np.array([3, 2, 0, -1, 5, -2, 1, 0], "float32")
    b = np.zeros(1, "int32")
    tvm.compile(first_negative_flag, target="c")(a, b)
    assert b[0] == 3


def test_a_name_assigned_only_in_branches_says_where_to_assign_it():
    text = """
@T.prim_func
def pick(A: T.Buffer((1,), "int32")):
    if A[0] > 0:
        x = 1
    else:
        x = 2
    A[0] = x
"""
    with pytest.raises(
        TVMScriptError,
        match="name 'x' is not defined here: it is defined only inside a block.*assign it before that block",
    ):
        tvm.script.from_source(text)


@pytest.mark.parametrize(
    "start, dtype, spelling",
    [("-math.inf", "int64", 'T.min_value("int64")'), ("-math.inf", "float64", 'T.float64(float("-inf"))'),
     ("0.0", "int32", "T.int32(0)")],
)  # fmt: skip
def test_the_suggested_start_is_python_that_works(start, dtype, spelling):
    text = f"""
@T.prim_func
def top(A: T.Buffer((4,), "{dtype}"), B: T.Buffer((1,), "{dtype}")):
    m = {start}
    for i in range(4):
        if A[i] > m:
            m = A[i]
    B[0] = m
"""
    with pytest.raises(TVMScriptError, match=re.escape(f"start it as m = {spelling}")):
        tvm.script.parse(text, {"T": T, "math": math})
    func = tvm.script.parse(text.replace(f"m = {start}", f"m = {spelling}"), {"T": T, "math": math})
    a = np.array([3, 16777217, -5, 7], dtype)
    b = np.zeros(1, dtype)
    tvm.compile(func, target="c")(a, b)
    assert b[0] == a.max()
