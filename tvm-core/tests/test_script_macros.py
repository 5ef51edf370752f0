"""``@T.macro`` and ``@T.inline`` (Apache TVM's macros): a function whose statements are parsed
where a prim_func calls it, with its parameters bound to the call's arguments. Each kernel here
is compiled and run against NumPy; the errors name the macro, the line in it and the call."""

import inspect

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm.script import TVMScriptError

N = 8
SOURCE_INDEX = 3


def run_cpu(func, *arrays):
    """Runs ``func`` on the CPU over copies of ``arrays``; their values afterwards."""
    mod = tvm.compile(func, target="llvm")
    tensors = [tvm.runtime.tensor(np.array(a)) for a in arrays]
    mod(*tensors)
    return [t.numpy() for t in tensors]


def line_of(func, text):
    """The file line of the first line of ``func``'s source that contains ``text``."""
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, line in enumerate(lines) if text in line)


@T.macro
def copy_from_source_index(A, B):
    B[0] = A[SOURCE_INDEX]


@T.macro
def scale(A, n, factor):
    for i in range(n):
        A[i] = A[i] * factor


@T.macro(hygienic=False)
def bump_at_k(A):
    A[k] = A[k] + T.float32(1)  # noqa: F821 - the caller's name, the macro is not hygienic


def test_a_macro_places_its_statements_and_is_hygienic():
    @T.prim_func
    def kernel(A: T.Buffer((N,), "float32"), B: T.Buffer((1,), "float32")):
        for SOURCE_INDEX in range(2):  # the macro's SOURCE_INDEX is the module's, not this loop's
            copy_from_source_index(A, B)
        scale(A, N, T.float32(2))
        k = 5  # noqa: F841 - read by the macro that is not hygienic
        bump_at_k(A)

    a = np.arange(N, dtype="float32")
    out_a, out_b = run_cpu(kernel, a, np.zeros(1, "float32"))
    expected = a * 2
    expected[5] += 1
    np.testing.assert_array_equal(out_b, [a[SOURCE_INDEX]])
    np.testing.assert_array_equal(out_a, expected)


def test_a_hygienic_macro_keeps_definition_values_and_inline_reads_them_at_the_call():
    offset = 1

    @T.macro
    def add_offset_at_definition(A):
        for i in range(N):
            A[i] = A[i] + T.float32(offset)

    @T.inline
    def add_offset_at_call(B):
        for i in range(N):
            B[i] = B[i] + T.float32(offset)

    offset = 10  # noqa: F841 - read by the T.inline at the call

    @T.prim_func
    def kernel(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")):
        add_offset_at_definition(A)
        add_offset_at_call(B)

    out_a, out_b = run_cpu(kernel, np.zeros(N, "float32"), np.zeros(N, "float32"))
    np.testing.assert_array_equal(out_a, np.full(N, 1, "float32"))
    np.testing.assert_array_equal(out_b, np.full(N, 10, "float32"))


@T.inline
def add_products(i, *args, t1, **kwargs):
    kwargs["t3"][i, args[0]] = kwargs["t3"][i, args[0]] + t1[i, args[1]] * kwargs["t2"][args[0], args[1]]


def test_a_macro_takes_star_args_keyword_only_and_star_star_kwargs():
    @T.prim_func
    def matmul(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
        for i, j, k in T.grid(4, 4, 4):
            add_products(i, j, k, t1=A, t2=B, t3=C)

    a, b = np.random.rand(4, 4).astype("float32"), np.random.rand(4, 4).astype("float32")
    *_, c = run_cpu(matmul, a, b, np.zeros((4, 4), "float32"))
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


def test_macros_defined_inside_a_kernel_see_its_names_and_may_recurse():
    @T.prim_func
    def kernel(A: T.Buffer((N,), "int32"), B: T.Buffer((N,), "int32")):
        for x in range(N):

            @T.inline
            def add(c):
                A[x] = A[x] + c

            @T.inline
            def add_twice_then_scale(c):
                add(c)
                add(c + c)
                scale(A, 1, 1)  # a module-level macro from a nested one

            add_twice_then_scale(1)
            add_twice_then_scale(2)

            @T.macro
            def count_down(c):
                if c > 0:
                    count_down(c - 1)
                B[x] = B[x] + c

            count_down(4)

    out_a, out_b = run_cpu(kernel, np.zeros(N, "int32"), np.zeros(N, "int32"))
    np.testing.assert_array_equal(out_a, np.full(N, 1 + 2 + 2 + 4, "int32"))
    np.testing.assert_array_equal(out_b, np.full(N, 4 + 3 + 2 + 1, "int32"))


class Staging:
    """A kernel-building object whose method is a macro (as Apache TVM's kernel libraries write)."""

    def __init__(self, target):
        self.target = target

    @T.inline
    def load_tripled(self, source):
        for i in range(N):
            self.target[i] = source[i] * T.float32(3)


def test_a_macro_method_of_an_object_made_in_the_kernel():
    @T.prim_func
    def kernel(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")):
        staging = T.meta_var(Staging(B))
        staging.load_tripled(A)

    a = np.arange(N, dtype="float32")
    _, b = run_cpu(kernel, a, np.zeros(N, "float32"))
    np.testing.assert_array_equal(b, a * 3)


@T.macro
def row_sums(A, S, rows, cols):
    for r in range(rows):
        total = T.float32(0)
        for c in range(cols):
            total = total + A[r, c]  # a name assigned again: a mutable scalar inside the macro
        S[r] = total


@T.macro
def matmul_blocks(A, B, C):
    for li, lj, lk in T.grid(4, 4, 4):
        with T.sblock("C"):
            i, j, k = T.axis.remap("SSR", [li, lj, lk])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


@T.macro
def masked_copy(
    source: T.Buffer, target: T.Buffer, n: T.int32, mask: T.Buffer | None = None, scale: T.float32 | None = None
):
    for i in range(n):
        if mask is not None:  # decided while parsing: a Python value
            if mask[i] != 0:
                target[i] = source[i] * (scale if scale is not None else T.float32(1))
        else:
            target[i] = source[i]


def test_optional_parameters_annotated_as_in_apache_tvms_kernel_libraries():
    """``T.Buffer | None`` and ``T.float32 | None`` annotations (Python evaluates them when the
    macro is defined) are the annotations themselves."""

    @T.prim_func
    def kernel(
        A: T.Buffer((N,), "float32"),
        M: T.Buffer((N,), "int32"),
        B: T.Buffer((N,), "float32"),
        C: T.Buffer((N,), "float32"),
    ):
        masked_copy(A, B, N, M, T.float32(3))
        masked_copy(A, C, N)

    a, m = np.arange(N, dtype="float32"), np.array([1, 0] * (N // 2), "int32")
    *_, b, c = run_cpu(kernel, a, m, np.full(N, -1, "float32"), np.zeros(N, "float32"))
    np.testing.assert_array_equal(b, np.where(m != 0, a * 3, -1))
    np.testing.assert_array_equal(c, a)


def test_macro_bodies_hold_blocks_reductions_and_mutable_scalars():
    @T.prim_func
    def kernel(
        A: T.Buffer((4, 4), "float32"),
        B: T.Buffer((4, 4), "float32"),
        C: T.Buffer((4, 4), "float32"),
        S: T.Buffer((4,), "float32"),
    ):
        matmul_blocks(A, B, C)
        row_sums(C, S, 4, 4)

    a, b = np.random.rand(4, 4).astype("float32"), np.random.rand(4, 4).astype("float32")
    *_, c, s = run_cpu(kernel, a, b, np.full((4, 4), 7, "float32"), np.zeros(4, "float32"))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    np.testing.assert_allclose(s, (a @ b).sum(axis=1), rtol=1e-5)


@T.macro
def reverse_through_shared(A, B, tx):
    S = T.alloc_buffer((64,), "float32", scope="shared")
    S[tx] = A[tx]
    T.tvm_storage_sync("shared")
    B[tx] = S[63 - tx]


def test_a_macro_in_a_thread_bound_kernel_with_shared_memory():
    @T.prim_func
    def reverse(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            reverse_through_shared(A, B, tx)

    mod = tvm.compile(reverse, target="example")
    dev = tvm.device("example", 0)
    a = np.random.rand(64).astype("float32")
    b = tvm.runtime.tensor(np.zeros(64, "float32"), dev)
    mod["reverse"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_array_equal(b.numpy(), a[::-1])


# ------------------------------------------------------------------------------- errors


@T.macro
def reads_an_undefined_name(A):
    A[0] = undefined_name  # noqa: F821 - the error under test


@T.macro
def without_end(A):
    without_end(A)


@T.macro
def returns_a_value(A):
    return A[0]


def test_an_error_in_a_macro_names_its_line_and_the_call():
    def build():
        @T.prim_func
        def kernel(A: T.Buffer((N,), "float32")):
            reads_an_undefined_name(A)

    with pytest.raises(TVMScriptError, match="name 'undefined_name' is not defined") as err:
        build()
    assert err.value.lineno == reads_an_undefined_name.source.start + 2  # below @T.macro and the def
    assert "A[0] = undefined_name" in err.value.text
    call = line_of(build, "reads_an_undefined_name(A)")
    assert f"(in T.macro 'reads_an_undefined_name', called at {__file__}:{call})" in str(err.value)


@T.macro
def stores_past_the_end(B):
    B[N] = T.float32(2)


@T.macro
def calls_a_macro_that_stores_past_the_end(B):
    stores_past_the_end(B)


def test_a_compile_error_in_a_macro_names_its_line_and_every_call():
    """Compile-time refusals (an index out of bounds) named the macro's line only."""

    @T.prim_func
    def kernel(A: T.Buffer((N,), "float32")):
        calls_a_macro_that_stores_past_the_end(A)

    with pytest.raises(tvm.error.InternalError, match="out-of-bounds access") as err:
        tvm.compile(kernel, "c")
    source = open(__file__).read().split("\n")
    inner = source.index("    stores_past_the_end(B)") + 1
    outer = source.index("        calls_a_macro_that_stores_past_the_end(A)") + 1
    lines = str(err.value).split("\n")
    assert "B[N] = T.float32(2)" in lines[2]
    assert lines[4:] == [
        f"(in T.macro 'stores_past_the_end', called at {__file__}:{inner})",
        f"(in T.macro 'calls_a_macro_that_stores_past_the_end', called at {__file__}:{outer})",
    ]


def test_a_hygienic_macro_does_not_see_the_callers_names():
    def build():
        @T.prim_func
        def kernel(A: T.Buffer((N,), "float32")):
            undefined_name = T.float32(1)  # noqa: F841 - the caller's, invisible to the macro
            reads_an_undefined_name(A)

    with pytest.raises(TVMScriptError, match="name 'undefined_name' is not defined"):
        build()


def test_a_macro_call_with_wrong_arguments_is_located_at_the_call():
    def build():
        @T.prim_func
        def kernel(A: T.Buffer((N,), "float32")):
            scale(A, N)

    with pytest.raises(TVMScriptError, match="T.macro 'scale': missing a required argument: 'factor'") as err:
        build()
    assert err.value.lineno == line_of(build, "scale(A, N)")


def test_a_macro_that_never_stops_calling_itself_is_refused():
    def build():
        @T.prim_func
        def kernel(A: T.Buffer((N,), "float32")):
            without_end(A)

    with pytest.raises(TVMScriptError, match="expands 64 macros deep") as err:
        build()
    message = str(err.value)
    assert message.count("(in T.macro 'without_end'") == 5  # the four innermost, then the kernel's call
    assert f"called at {__file__}:{line_of(build, 'without_end(A)')})" in message


@pytest.mark.parametrize(
    "body, message",
    [
        ("returns_a_value(A)", "'return' in T.macro 'returns_a_value'"),
        ("x = scale(A, 8, 2.0)", "T.macro 'scale' gives statements, not a value: call it on a line of its own"),
        ("A[0] = scale(A, 8, 2.0)", "T.macro 'scale' gives statements, not a value"),
        ("if scale(A, 8, 2.0):\n        A[0] = 1.0", "T.macro 'scale' gives statements, not a value"),
    ],
)
def test_a_macro_gives_statements_not_values(body, message):
    source = f"""
@T.prim_func
def kernel(A: T.Buffer(({N},), "float32")):
    {body}
"""
    with pytest.raises(TVMScriptError, match=message):
        tvm.script.from_source(source, extra_vars={"returns_a_value": returns_a_value, "scale": scale})


def test_names_a_macro_binds_stay_inside_it():
    @T.macro
    def binds_t(A):
        t = A[0]
        A[1] = t

    def build():
        @T.prim_func
        def kernel(A: T.Buffer((N,), "float32")):
            binds_t(A)
            A[2] = t  # noqa: F821 - the macro's name, gone after it

    with pytest.raises(TVMScriptError, match="name 't' is not defined"):
        build()


def test_misuses_of_the_decorators_say_what_to_do():
    with pytest.raises(TypeError, match="call it inside a @T.prim_func"):
        scale(None, 1, 1)
    with pytest.raises(ValueError, match="@T.macro takes no positional arguments"):
        T.macro(True)
    with pytest.raises(TVMScriptError, match="must be a @T.macro or @T.inline"):
        tvm.script.from_source(
            """
@T.prim_func
def kernel(A: T.Buffer((8,), "float32")):
    def plain():
        A[0] = 1.0
    plain()
"""
        )
    namespace = {"T": T}
    with pytest.raises(TVMScriptError, match="cannot read the source of 'made_by_exec'"):
        exec("@T.macro\ndef made_by_exec(A):\n    A[0] = 1\n", namespace)


@T.macro(hygienic=False)
def sums_into_own_s(A, C):
    s = T.float32(0)  # the macro's own s: the caller's is shadowed, not overwritten
    for j in range(4):
        s = s + A[j]
    C[0] = s


def fill_through_a_helper(A, value):
    """A Python helper the kernel calls; the macro it runs places its statements in the kernel."""
    scale(A, 4, value)
    return value + T.float32(1)


def test_names_a_macro_assigns_shadow_the_callers_and_helpers_may_run_macros():
    """A macro's accumulator of the same name as the caller's mutable scalar wrote into the
    caller's (D was 6, not 101); a macro run by a Python helper had its statements dropped."""

    @T.prim_func
    def kernel(A: T.Buffer((4,), "float32"), C: T.Buffer((1,), "float32"), D: T.Buffer((2,), "float32")):
        s = T.float32(100)
        s = s + T.float32(1)
        sums_into_own_s(A, C)
        D[0] = s
        D[1] = fill_through_a_helper(A, T.float32(3))  # A scaled by 3 first, then D[1] = 4

    a = np.arange(4, dtype="float32")
    out_a, c, d = run_cpu(kernel, a, np.zeros(1, "float32"), np.zeros(2, "float32"))
    assert c[0] == a.sum() and d.tolist() == [101, 4]
    np.testing.assert_array_equal(out_a, a * 3)


@T.macro
def add_to_parameter(A, acc):
    acc = acc + A[0]  # rebinding a parameter, as Python allows
    A[1] = acc


def test_a_macro_may_rebind_its_parameters_and_the_callers_names():
    @T.prim_func
    def kernel(A: T.Buffer((4,), "float32")):
        x = A[0] + T.float32(1)

        @T.macro
        def double_into(i):
            x = A[i] * T.float32(2)  # the macro's own x
            A[i] = x

        add_to_parameter(A, T.float32(10))
        double_into(2)
        A[3] = x

    (out,) = run_cpu(kernel, np.array([1, 0, 5, 0], "float32"))
    assert out.tolist() == [1, 11, 10, 2]


def test_decorator_misuses_and_allocations_used_before_they_are_buffers():
    with pytest.raises(ValueError, match=r"write @T.inline or @T.inline\(\)$"):
        T.inline(True)
    with pytest.raises(TypeError, match="decorates a function written with def"):
        T.macro(lambda A: None)

    class Staging:
        def __init__(self, like):
            self.local = T.alloc_buffer(like.shape, like.dtype)

    with pytest.raises(TVMScriptError, match=r"T.alloc_buffer\(...\) has no 'shape' until it is a buffer: assign it"):

        @T.prim_func
        def kernel(A: T.Buffer((4,), "float32")):
            staging = T.meta_var(Staging(A))
            A[0] = T.float32(staging.local.shape[0])


def test_a_macro_defined_in_a_module_class_is_called_through_the_class():
    from tvm.script import ir as I

    @I.ir_module
    class Mod:
        @T.macro
        def bump(A, i):
            A[i] = A[i] + T.float32(1)

        @T.prim_func
        def main(A: T.Buffer((N,), "float32")):
            for i in range(N):
                Mod.bump(A, i)

    assert list(Mod.functions) == ["main"]
    a = np.arange(N, dtype="float32")
    (out,) = run_cpu(Mod, a)
    np.testing.assert_array_equal(out, a + 1)

    @I.ir_module
    class Nested:  # a macro of the class calls another of its macros through the class
        @T.macro
        def bump(A, i):
            A[i] = A[i] + T.float32(1)

        @T.macro
        def bump_twice(A, i):
            Nested.bump(A, i)
            Nested.bump(A, i)

        @T.prim_func
        def main(A: T.Buffer((N,), "float32")):
            for i in range(N):
                Nested.bump_twice(A, i)

    (out,) = run_cpu(Nested, a)
    np.testing.assert_array_equal(out, a + 2)

    with pytest.raises(TVMScriptError, match="Late.bump is a macro defined below this function: define it above"):

        @I.ir_module
        class Late:
            @T.prim_func
            def main(A: T.Buffer((N,), "float32")):
                Late.bump(A, 0)

            @T.macro
            def bump(A, i):
                A[i] = A[i] + T.float32(1)


@T.macro
def count_into(C):
    C[0] = C[0] + 1


def counted_test(C, k):
    """A helper whose macro call would have to run each time the condition it gives is tested."""
    count_into(C)
    return k[0] < 3


def counted_value(C, v):
    count_into(C)
    return v


def test_a_macro_run_where_its_statements_would_run_at_the_wrong_time_is_refused():
    """A macro run (by a Python helper) in a while loop's condition placed its statements once
    before the loop, though the condition is tested at each iteration; one in an arm of
    ``x if c else y`` (or a later operand of ``and`` / ``or``, an arm of ``T.if_then_else``) ran
    whichever arm was taken. Both are refused at the call, saying why and what to write."""

    def kernel_with(statement):
        source = (
            "@T.prim_func\n"
            "def f(C: T.Buffer((1,), 'int32'), B: T.Buffer((4,), 'int32'), k: T.Buffer((1,), 'int32')):\n"
            f"    for i in range(4):\n        {statement}\n"
        )
        names = {"counted_test": counted_test, "counted_value": counted_value}
        return tvm.script.from_source(source, extra_vars=names)

    cases = {
        "while counted_test(C, k):\n            k[0] = k[0] + 1": (
            "T.macro 'count_into' is expanded while the condition of a while loop is parsed: its statements "
            "would run once, before the loop, not at each test of the condition",
            "call the macro in the loop's body instead",
        ),
        "B[i] = counted_value(C, i) if i < 2 else 7": ("in an arm of a conditional expression", "use an if statement"),
        "B[i] = 7 if i < 2 else counted_value(C, i)": ("in an arm of a conditional expression", "whichever arm"),
        "B[i] = T.if_then_else(i < 2, counted_value(C, i), 7)": ("in an arm of T.if_then_else", "use an if statement"),
        "B[i] = T.Cast('int32', i < 2 and counted_test(C, k))": ("in an operand of 'and' / 'or' after the first", ""),
        "B[i] = T.Cast('int32', i < 2 or counted_test(C, k))": ("in an operand of 'and' / 'or' after the first", ""),
    }
    for statement, (reason, fix) in cases.items():
        with pytest.raises(TVMScriptError) as err:
            kernel_with(statement)
        assert reason in err.value.reason and fix in err.value.reason, (statement, err.value.reason)
        call = "counted_test(C, k)" if "counted_test" in statement else "counted_value(C, i)"
        assert err.value.lineno == 4 and err.value.text[err.value.offset - 1 :].startswith(call), statement

    with pytest.raises(TVMScriptError, match="expanded while the condition of a while loop is parsed") as err:

        @T.prim_func
        def kernel(C: T.Buffer((1,), "int32"), k: T.Buffer((1,), "int32")):
            while counted_test(C, k):
                k[0] = k[0] + 1

    assert err.value.filename == __file__ and err.value.text.strip() == "while counted_test(C, k):"
    assert err.value.text[err.value.offset - 1 :].startswith("counted_test(C, k)")  # the call that ran it


@T.macro
def count_twice_into(C):
    count_into(C)
    count_into(C)


def test_macros_whose_statements_run_where_they_are_placed_still_work():
    """Helpers running macros in an if statement's condition, an assignment, a loop's extent,
    a loop's or a branch's body, ``T.Select`` (which evaluates both arms) and the rewrites the
    refusal suggests: each macro runs as many times as NumPy counts."""

    one = lambda: T.Buffer((1,), "int32")  # noqa: E731

    @T.prim_func
    def kernel(C: one(), B: T.Buffer((4,), "int32"), k: one(), W: one(), E: one(), R: one(), S: one()):
        for i in range(4):
            if counted_value(C, i) < 2:  # the condition is evaluated once per iteration: 4 runs
                B[i] = counted_value(C, i) + 10  # 2 runs
            else:
                B[i] = 7 if True else counted_value(C, i)  # a Python condition: the other arm is not parsed
        k[0] = 0
        go = counted_test(W, k)  # the rewrite of the while loop: 4 tests, 4 runs
        while go:
            k[0] = k[0] + 1
            go = counted_test(W, k)
        for j in range(counted_value(E, 3)):  # the extent is evaluated once: 1 run
            count_twice_into(R)  # 6 runs
        B[3] = T.Select(k[0] > 0, counted_value(S, 1), 2)  # both arms are evaluated: 1 run
        B[3] = B[3] + (T.int32(1) if True and counted_test(S, k) else 0)  # Python `True and` decides nothing

    arrays = [np.zeros(1, "int32"), np.zeros(4, "int32")] + [np.zeros(1, "int32") for _ in range(5)]
    c, b, k, w, e, r, s = (x.tolist() for x in run_cpu(kernel, *arrays))
    assert (c, b, k, w, e, r, s) == ([6], [10, 11, 7, 1], [3], [4], [1], [6], [2])


@T.macro
def stores_a_fraction(B):
    B[0] = T.float32(1.5)


def test_a_warning_in_a_macro_names_its_line_and_the_call():
    """Warnings named the macro's line only (errors name the call too)."""
    with pytest.warns(tvm.script.TVMScriptWarning, match="the fraction is dropped") as caught:

        @T.prim_func
        def kernel(A: T.Buffer((N,), "int32")):
            stores_a_fraction(A)

    message = str(caught[0].message)
    source = open(__file__).read().split("\n")
    call = source.index("            stores_a_fraction(A)") + 1
    assert "B[0] = T.float32(1.5)" in message
    assert message.endswith(f"(in T.macro 'stores_a_fraction', called at {__file__}:{call})"), message
