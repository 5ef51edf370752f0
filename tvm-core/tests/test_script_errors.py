"""TVMScript errors name the file and line, show the source line with a caret, and say why."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm.script import TVMScriptError
from tvm.script import tir as T

HERE = __file__


def line_of(marker: str) -> int:
    """1-based line of this file containing ``marker`` (a unique comment)."""
    with open(HERE) as f:
        for n, line in enumerate(f, 1):
            if marker in line and "line_of(" not in line:
                return n
    raise AssertionError(marker)


def check(err: TVMScriptError, marker: str, *words: str):
    msg = str(err)
    n = line_of(marker)
    assert err.lineno == n, msg
    assert HERE in msg and f"line {n}" in msg, msg
    src = open(HERE).read().splitlines()[n - 1].strip()
    assert src in msg, msg
    lines = msg.splitlines()
    caret = lines[-1]
    assert caret.strip() == "^", msg
    assert lines[-2].strip() == src
    for w in words:
        assert w in msg, msg


def test_is_value_error_subclass():
    assert issubclass(TVMScriptError, ValueError)


def test_unknown_name():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = A[i] + undefined_thing  # noqa: F821  #E-unknown

    check(e.value, "#E-unknown", "undefined_thing", "not defined")
    # the caret sits under the offending name
    lines = str(e.value).splitlines()
    assert lines[-2].index("undefined_thing") == lines[-1].index("^")


def test_a_typo_in_a_block_annotation_is_named():
    """T.reads / T.writes / T.block_attr are not evaluated (the lowering needs no regions), but a
    name in them that is not defined is a typo worth the line."""
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in range(8):
                with T.block("b"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A_typo[vi])  # noqa: F821  #E-reads-typo
                    A[vi] = 1.0

    check(e.value, "#E-reads-typo", "A_typo", "not defined")

    @T.prim_func
    def g(A: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("b"):
                vi = T.axis.spatial(8, i)
                T.reads([A[j] for j in range(vi, vi + 1)], A[vi : vi + 1])
                T.writes(A[vi], S[0])  # noqa: F821
                T.block_attr({"note": vi, "key": lambda k: k})
                S = T.alloc_buffer((1,), "float32")  # below the annotation naming it
                S[0] = 2.0
                A[vi] = S[0]

    a = np.zeros(8, "float32")
    tvm.compile(g, target="c")(a)
    np.testing.assert_array_equal(a, 2.0)


def test_apache_names_not_implemented_say_what_to_do_instead():
    with pytest.raises(TVMScriptError, match="T.tvm_bmma_sync .* 1-bit tensor-core fragments"):

        @T.prim_func
        def g(A: T.Buffer((4,), "int32")):
            T.evaluate(T.tvm_bmma_sync(A.data, 0, A.data, 0, A.data, 0, A.data, 0))


def test_float_index():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = A[T.float32(1)]  # E-floatidx

    check(e.value, "# E-floatidx", "index", "float32")


def test_store_nonintegral_literal_into_int():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(B: T.Buffer((4,), "int32")):
            for i in range(4):
                B[i] = 1.5  # E-lit

    check(e.value, "# E-lit", "1.5")


def test_wrong_arity():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.exp(A[i], A[i])  # E-arity

    check(e.value, "# E-arity", "exp", "argument")


def test_exp_of_int():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "int32")):
            for i in range(4):
                A[i] = T.exp(A[i])  # E-expint

    check(e.value, "# E-expint", "float", "int32")


def test_reassignment_of_a_parameter_is_refused_but_a_local_name_may_change():
    """A name assigned again holds a changing value, as in Python (a one-element local buffer);
    a parameter stays immutable."""

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            x = A[i]
            x = x + T.float32(1)
            x *= T.float32(2)
            A[i] = x

    a = np.arange(4, dtype="float32")
    t = tvm.runtime.tensor(a)
    tvm.compile(f, target="c")["f"](t)
    np.testing.assert_array_equal(t.numpy(), (a + 1) * 2)


def test_reassign_param():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), n: T.int32):
            n = n + 1  # E-param
            A[0] = T.float32(0)

    check(e.value, "# E-param", "'n' is already defined")


def test_a_declaration_again_declares_another_variable():
    """``s = T.int32()`` again (Apache TVM's printer declares a view's stride variables at the top
    and where the view is matched) makes a new variable; a parameter stays immutable."""

    @T.prim_func
    def f(a: T.handle):
        s = T.int32()
        A = T.match_buffer(a, (8, 4), "float32")
        for i in range(2):
            with T.block("b"):
                s = T.int32()
                V = T.match_buffer(A[i * 4 : i * 4 + 4, 0:4], (4, 4), "float32", strides=(s, 1))
                V[1, 2] = T.float32(1)

    lib = tvm.compile(f, target="c")
    a = tvm.runtime.tensor(np.zeros((8, 4), "float32"))
    lib["f"](a)
    want = np.zeros((8, 4), "float32")
    want[[1, 5], 2] = 1
    np.testing.assert_array_equal(a.numpy(), want)

    @T.prim_func
    def two(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        n = T.int32()  # another n, from here on
        B = T.match_buffer(b, (n,), "float32")
        A[0] = T.float32(1)
        B[0] = T.float32(2)

    x, y = tvm.runtime.tensor(np.zeros(4, "float32")), tvm.runtime.tensor(np.zeros(6, "float32"))
    tvm.compile(two, target="c")["two"](x, y)  # two sizes, one each
    assert x.numpy()[0] == 1 and y.numpy()[0] == 2
    with pytest.raises(TVMScriptError, match="'n' is already defined"):

        @T.prim_func
        def g(A: T.Buffer((4,), "float32"), n: T.int32):
            n = T.int32()  # noqa: F841 (refused: a parameter)
            A[0] = T.float32(0)


def test_wrong_rank():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i in range(4):
                A[i] = T.float32(0)  # E-rank

    check(e.value, "# E-rank", "2 dimension")


def test_init_outside_a_block():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.init():  # E-init
                    A[i] = T.float32(0)

    check(e.value, "# E-init", "T.init() belongs inside a 'with T.block")


def test_attr_errors_name_the_problem():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.attr(A.data, "thread_extent", 1)  # E-attr

    check(e.value, "# E-attr", 'needs a thread tag such as "threadIdx.x" or a T.env_thread variable')
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def g(A: T.Buffer((4,), "float32")):
            T.attr(0, "no_such_key", 1)  # E-attr-key

    check(e.value, "# E-attr-key", "T.attr key 'no_such_key' is not supported")


def test_non_bool_condition():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                if A[i]:  # E-cond
                    A[i] = T.float32(0)

    check(e.value, "# E-cond", "boolean", "float32")  # an integer condition means != 0, as in Python


def test_bad_thread_tag():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.thread_binding(4, thread="threadIdx.w"):  # E-tag
                A[i] = T.float32(0)

    check(e.value, "# E-tag", "threadIdx.w")


def test_match_buffer_needs_handle():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(n: T.int32):
            A = T.match_buffer(n, (4,), "float32")  # E-match
            A[0] = T.float32(0)

    check(e.value, "# E-match", "T.handle")


def test_missing_annotation():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A):  # E-anno
            pass

    check(e.value, "# E-anno", "annotation")


def test_while_unsupported():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            while True:  # E-while
                pass

    check(e.value, "# E-while", "while")


def test_slice_unsupported():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = A[0:2]  # E-slice

    check(e.value, "# E-slice", "slice")


def test_errors_from_source_text():
    src = """@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.nonexistent_fn(A[i])
"""
    with pytest.raises(TVMScriptError) as e:
        tvm.script.parse(src, filename="kernel.py")
    msg = str(e.value)
    assert "kernel.py" in msg and "line 4" in msg and "T.nonexistent_fn(A[i])" in msg
    assert e.value.lineno == 4


def test_syntax_error_from_source_text():
    with pytest.raises(TVMScriptError) as e:
        tvm.script.parse("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32')):\n    for i in range(4)\n        pass\n")
    assert e.value.lineno == 3 and "syntax error" in str(e.value)


def test_well_formedness_checked_at_parse_time():
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4,), "int32")):
            A[0] = A[1] // 0  # E-div

    check(e.value, "# E-div", "by the constant zero")

    @T.prim_func(check_well_formed=False)
    def g(A: T.Buffer((4,), "int32")):
        A[0] = A[1] // 0

    assert g.body is not None


def test_a_thread_index_bound_again_inside_its_loop_is_the_same_thread():
    # Apache TVM's schedules nest loops bound to one thread index (a cooperative copy inside a
    # thread-bound loop): the inner loop runs on the same threads; a larger extent is an error
    @T.prim_func
    def same(A: T.Buffer((4,), "float32")):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            for ty in T.thread_binding(2, thread="threadIdx.x"):
                A[ty] = T.float32(1)

    dev = tvm.device("example")
    a = tvm.runtime.tensor(np.zeros(4, "float32"), dev)
    tvm.compile(same, target="example")["same"](a)
    np.testing.assert_array_equal(a.numpy(), [1, 1, 0, 0])  # threads 0 and 1 only, once each
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def wider(A: T.Buffer((8,), "float32")):
            for tx in T.thread_binding(2, thread="threadIdx.x"):
                for ty in T.thread_binding(4, thread="threadIdx.x"):  # E-wider
                    A[ty] = T.float32(0)

    check(e.value, "# E-wider", "with extent 4, more than the enclosing loop's 2")


def test_strides_of_another_rank_are_refused():
    """One stride for a 2-d buffer used to index it by its first coordinate only (a silently
    wrong result): refused, naming the buffer and the counts."""
    with pytest.raises(TVMScriptError) as e:

        @T.prim_func
        def f(A: T.Buffer((4, 4), "int32")):
            X = T.alloc_buffer([4, 4], dtype="int32", strides=[1])  # E-strides
            for i, j in T.grid(4, 4):
                X[i, j] = i * 4 + j
            for i, j in T.grid(4, 4):
                A[i, j] = X[i, j]

    check(e.value, "# E-strides", "buffer X: 1 stride(s) for 2 dimension(s)")


@pytest.mark.parametrize(
    "dtype, what",
    [
        ("float8_e4m3fnuz", "an 8-bit float other than float8_e4m3fn and float8_e5m2"),
        ("float4_e2m1fn", "a 4- or 6-bit float"),
        ("int4", "a sub-byte integer"),
    ],
)
def test_low_precision_dtypes_say_they_are_not_supported_and_what_to_do(dtype, what):
    with pytest.raises(ValueError, match=rf"dtype '{dtype}' \({what}\) is not supported by this implementation; "):
        T.Buffer((8,), dtype)  # a parameter's annotation

    with pytest.raises(TVMScriptError, match=rf"T.alloc_buffer: dtype '{dtype}' .* (store|pack) .*\n.*line"):

        @T.prim_func
        def g(B: T.Buffer((8,), "float32")):
            A = T.alloc_buffer((8,), dtype)
            B[0] = T.Cast("float32", A[0])


def test_a_statement_given_a_wrong_argument_says_where():
    with pytest.raises(TVMScriptError) as info:

        @T.prim_func
        def axis_of_a_buffer(a: T.handle):
            A = T.match_buffer(a, (16, 16), "float32")
            for i, j in T.grid(16, 16):
                with T.block():
                    vi = T.axis.S(i, A)  # marker: axis of a buffer
                    A[vi, j] = T.float32(0)

    check(info.value, "marker: axis of a buffer", "cannot make a constant from Buffer")


def test_a_target_of_no_installed_backend_says_where():
    with pytest.raises(TVMScriptError) as info:

        @T.prim_func
        def unknown_target(A: T.Buffer((4,), "float32")):
            T.func_attr({"target": T.target("no_such_target_kind")})  # marker: unknown target
            A[0] = T.float32(0)

    check(info.value, "marker: unknown target", "no_such_target_kind", "not installed")


def test_text_nested_past_pythons_parser_is_a_tvmscript_error():
    """CPython's parser raises MemoryError when its stack runs out: it escaped bare."""
    body = "    x = " + "(" * 250 + "1" + ")" * 250 + "\n"
    for depth in range(90):
        body = " " * 4 + f"if x > {depth}:\n" + "\n".join("    " + line for line in body.splitlines()) + "\n"
    src = '@T.prim_func\ndef f(A: T.Buffer((1,), "int32")):\n    x = 0\n' + body
    with pytest.raises(tvm.script.TVMScriptError, match="nests too deeply for Python's parser"):
        tvm.script.parse(src)


def test_python_errors_in_a_module_class_body_name_the_line():
    src = (
        "@I.ir_module\n"
        "class Mod:\n"
        "    @T.prim_func\n"
        '    def f(A: T.Buffer((4,), "float32")):\n'
        "        A[0] = T.float32(1)\n"
        "\n"
        '    T.call_packed("f", A.data)\n'
    )
    with pytest.raises(tvm.script.TVMScriptError, match="line 7: the @I.ir_module class body raised NameError"):
        tvm.script.parse(src)


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "S = T.alloc_buffer((1 << 65537,), 'float32')\n    S[0] = T.float32(1)",
            "the constant \\(a 65538-bit integer\\)",
        ),
        ("A[0] = A[1] * T.writes(2)", "cannot combine a block annotation \\(T.reads, T.writes"),
        (
            "B = T.reads(A, (4,), 'float32')\n    B[0] = A[0]",
            "only buffer elements can be assigned, not a block annotation",
        ),
    ],
)
def test_messages_name_what_the_user_wrote_not_the_parsers_classes(body, message):
    src = f'@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n    {body}\n'
    with pytest.raises(tvm.script.TVMScriptError, match=message) as info:
        tvm.script.parse(src)
    assert "_Ignored" not in str(info.value) and "_Region" not in str(info.value)


def test_a_region_used_as_a_value_is_named_as_a_region():
    src = '@T.prim_func\ndef f(A: T.Buffer((4, 8), "float32")):\n    A[0, 0] = T.Cast("float32", A[2:4, 0:8])\n'
    with pytest.raises(tvm.script.TVMScriptError, match="a buffer region \\(such as A\\[0:4\\]\\), which is no value"):
        tvm.script.parse(src)


def test_a_modules_own_check_is_not_blamed_on_its_class_body():
    from tvm.tir.transform.verify import TIRVerifyError

    src = (
        "@I.ir_module\n"
        "class Mod:\n"
        "    @T.prim_func\n"
        '    def main(A: T.Buffer(16, "float32")):\n'
        "        Mod.sub(A.data)\n"
        "\n"
        "    @T.prim_func(private=True)\n"
        '    def sub(A_data: T.handle("float32"), n: T.int32):\n'
        "        T.evaluate(0)\n"
    )
    with pytest.raises(TIRVerifyError, match="main calls sub with 1 argument\\(s\\); it takes 2") as info:
        tvm.script.parse(src)
    assert "class body" not in str(info.value)
