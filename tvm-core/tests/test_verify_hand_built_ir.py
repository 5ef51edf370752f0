"""IR built by hand through ``tvm.tir`` that TVMScript never produces is refused by the verifier
with what is wrong, instead of a loop that never ends, a C compiler's error dump or a value
silently changed."""

from __future__ import annotations

import pytest

import tvm
from tvm import tir
from tvm.tir.transform.verify import TIRVerifyError, verify


def _store_loop(k: tir.Var, lo: tir.PrimExpr, ext: tir.PrimExpr, kind=tir.ForKind.SERIAL, tag=None) -> tir.PrimFunc:
    o = tir.Var("O", "handle")
    out = tir.decl_buffer((256,), "int32", name="O")
    index = tir.Cast("int32", k)
    body = tir.For(k, lo, ext, kind, tir.BufferStore(out, index + tir.const(1, "int32"), (index,)), tag)
    return tir.PrimFunc([o], body, buffer_map={o: out})


@pytest.mark.parametrize("kind", [tir.ForKind.SERIAL, tir.ForKind.PARALLEL, tir.ForKind.UNROLLED])
def test_a_loop_variable_too_narrow_for_its_values_is_refused(kind):
    """An int8 variable counting to 200 wrapped at 127: the CPU loop never ended and wrote before
    its buffer, device threads wrote before theirs."""
    k = tir.Var("k", "int8")
    with pytest.raises(TIRVerifyError, match=r"loop variable 'k' of int8 cannot take the loop's values 0 to 199"):
        verify(_store_loop(k, tir.const(0, "int8"), tir.const(200, "int32"), kind))
    with pytest.raises(TIRVerifyError, match=r"values 100 to 199"):
        verify(_store_loop(k, tir.const(100, "int8"), tir.const(100, "int8"), kind))
    verify(_store_loop(k, tir.const(0, "int8"), tir.const(128, "int32"), kind))  # 0 to 127 fit


def test_a_loop_variable_narrower_than_a_symbolic_bound_is_refused():
    n = tir.Var("n", "int32")

    def with_n(func: tir.PrimFunc) -> tir.PrimFunc:
        return tir.PrimFunc([*func.params, n], func.body, buffer_map=func.buffer_map)

    with pytest.raises(TIRVerifyError, match=r"'k' of int16 cannot hold every value of its extent n \(int32\)"):
        verify(with_n(_store_loop(tir.Var("k", "int16"), tir.const(0, "int16"), n)))
    verify(with_n(_store_loop(tir.Var("k", "int64"), tir.const(0, "int64"), n)))


def test_a_let_expression_of_another_dtype_is_refused():
    """``Let(v_int32, A[i] * 1.5, ...)`` truncated the value into v without a word."""
    a, o = tir.Var("A", "handle"), tir.Var("O", "handle")
    A, O = tir.decl_buffer((4,), "float32", name="A"), tir.decl_buffer((4,), "float32", name="O")
    i, v = tir.Var("i", "int32"), tir.Var("v", "int32")
    value = tir.Let(v, A[i] * tir.const(1.5, "float32"), tir.Cast("float32", v))
    body = tir.For(i, tir.const(0, "int32"), tir.const(4, "int32"), tir.ForKind.SERIAL, tir.BufferStore(O, value, (i,)))
    with pytest.raises(TIRVerifyError, match=r"let 'v' has dtype int32 but its value is float32"):
        verify(tir.PrimFunc([a, o], body, buffer_map={a: A, o: O}))


@pytest.mark.parametrize(
    "constant, message",
    [
        (tir.IntImm("bool", 2), r"the bool constant 2 is neither 0 nor 1"),
        (tir.FloatImm("int32", 1.5), r"the float constant 1.5 has the dtype int32"),
        (tir.IntImm("float32", 1), r"the integer constant 1 has the dtype float32"),
        (tir.FloatImm("float32", 1e40), r"the constant 1e\+40 does not fit float32"),
        (tir.FloatImm("float16", 1e10), r"does not fit float16"),
    ],
)
def test_a_constant_its_dtype_cannot_hold_is_refused(constant, message):
    o = tir.Var("O", "handle")
    out = tir.decl_buffer((1,), "float64", name="O")
    body = tir.BufferStore(out, tir.Cast("float64", constant), (tir.const(0, "int32"),))
    with pytest.raises(TIRVerifyError, match=message):
        verify(tir.PrimFunc([o], body, buffer_map={o: out}))


def test_one_buffer_for_two_parameters_or_two_allocations_is_refused():
    """Both reached the C compiler as redefinitions."""
    a1, a2 = tir.Var("a1", "handle"), tir.Var("a2", "handle")
    A = tir.decl_buffer((4,), "float32", name="A")
    store = tir.BufferStore(A, tir.const(1.0, "float32"), (tir.const(0, "int32"),))
    with pytest.raises(TIRVerifyError, match=r"parameters 'a1' and 'a2' share buffer 'A'"):
        verify(tir.PrimFunc([a1, a2], store, buffer_map={a1: A, a2: A}))
    tmp = tir.decl_buffer((4,), "float32", name="tmp", scope="local")
    use = tir.BufferStore(tmp, tir.const(1.0, "float32"), (tir.const(0, "int32"),))
    twice = tir.SeqStmt([tir.Allocate(tmp, use), tir.Allocate(tmp, use)])
    with pytest.raises(TIRVerifyError, match=r"buffer 'tmp' is allocated twice"):
        verify(tir.PrimFunc([], twice, buffer_map={}))


def test_a_parameter_buffer_of_a_negative_size_or_another_scope_is_refused():
    a = tir.Var("a", "handle")
    store = lambda buf: tir.BufferStore(buf, tir.const(1.0, "float32"), (tir.const(0, "int32"),))  # noqa: E731
    negative = tir.decl_buffer((-4,), "float32", name="N")
    with pytest.raises(TIRVerifyError, match=r"buffer parameter 'a' has the negative size -4"):
        verify(tir.PrimFunc([a], store(negative), buffer_map={a: negative}))
    shared = tir.decl_buffer((4,), "float32", name="S", scope="shared")
    with pytest.raises(TIRVerifyError, match=r"buffer parameter 'a' has scope 'shared'"):
        verify(tir.PrimFunc([a], store(shared), buffer_map={a: shared}))


def test_an_assert_of_an_unknown_error_kind_is_refused():
    body = tir.AssertStmt(tir.const(True, "bool"), "never", tir.Evaluate(tir.const(0, "int32")), kind="FooError")
    with pytest.raises(TIRVerifyError, match=r"unknown error kind 'FooError'"):
        verify(tir.PrimFunc([], body, buffer_map={}))


def test_a_hand_built_loop_of_a_fitting_narrow_variable_runs():
    import numpy as np

    k = tir.Var("k", "uint8")
    lib = tvm.compile(_store_loop(k, tir.const(0, "uint8"), tir.const(200, "int32")), target="c")
    out = np.zeros(256, "int32")
    lib(out)
    np.testing.assert_array_equal(out[:200], np.arange(1, 201))


def test_an_expression_reusing_its_parts_past_the_limit_is_refused_at_once():
    """``e = e + e`` twenty times is 41 distinct nodes and a million written out: every pass walked
    it as a tree (minutes to compile); a dozen times compiles and runs."""
    import numpy as np

    def doubled(depth: int) -> tir.PrimFunc:
        i = tir.Var("i", "int32")
        a, b = tir.Var("A", "handle"), tir.Var("B", "handle")
        A, B = tir.decl_buffer((8,), "float32", name="A"), tir.decl_buffer((8,), "float32", name="B")
        e = A[i]
        for _ in range(depth):
            e = e + e
        loop = tir.For(i, tir.const(0, "int32"), tir.const(8, "int32"), tir.ForKind.SERIAL, tir.BufferStore(B, e, (i,)))
        return tir.PrimFunc([a, b], loop, buffer_map={a: A, b: B})

    with pytest.raises(
        TIRVerifyError,
        match=r"reuse their parts so much that written out an expression holds [\d,]+ operations \(\d+ distinct\)",
    ):
        tvm.compile(doubled(20), target="c")
    out = np.zeros(8, "float32")
    tvm.compile(doubled(12), target="c")(np.ones(8, "float32"), out)
    np.testing.assert_array_equal(out, 2.0**12)


def test_a_size_variable_only_inside_an_expression_says_why_it_is_unbound():
    """``(n * 32,)`` cannot bind n from an argument: the error said only "used but not defined"."""
    source = """
@T.prim_func
def main(a: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n * 32,), "float32")
    A[T.min(T.int64(0), n)] = T.float32(0)
"""
    from tvm.script import TVMScriptError
    from tvm.script import tir as T

    with pytest.raises(TVMScriptError, match=r"'n' is used but not defined: it appears only inside n \* T.int64\(32\)"):
        tvm.script.parse(source, extra_vars={"T": T})


def test_a_part_reused_by_many_statements_is_no_blow_up():
    """A ``T.meta_var`` index shared by a thousand unrolled statements grows linearly: only one
    expression written out past the limit (exponential reuse) is refused."""
    from tvm.tir.transform.verify import check_tree_size

    o = tir.Var("O", "handle")
    out = tir.decl_buffer((4096,), "float32", name="O")
    index = tir.const(0, "int32")
    for k in range(200):  # one shared index of 400 nodes
        index = index + tir.const(k % 3, "int32")
    stores = [tir.BufferStore(out, tir.const(1.0, "float32"), (index + tir.const(k, "int32"),)) for k in range(1000)]
    check_tree_size(tir.PrimFunc([o], tir.SeqStmt(stores), buffer_map={o: out}))


def test_a_reused_expression_stored_by_many_statements_is_refused_in_all():
    """Below the limit of one expression (65,535 nodes, 16 distinct) but stored by a hundred
    statements: a second of compile time each."""
    from tvm.tir.transform.verify import check_tree_size

    o = tir.Var("O", "handle")
    out = tir.decl_buffer((128,), "float32", name="O")
    e = out[tir.const(0, "int32")]
    for _ in range(15):
        e = e + e
    stores = [tir.BufferStore(out, e, (tir.const(k, "int32"),)) for k in range(100)]
    with pytest.raises(TIRVerifyError, match=r"its expressions hold more than 1,000,000 operations"):
        check_tree_size(tir.PrimFunc([o], tir.SeqStmt(stores), buffer_map={o: out}))
