"""TIR built by hand through the Python API, as Apache TVM's users build it: node constructors
convert Python numbers and operator objects where Apache TVM's do and refuse the rest where the
node is made (naming the node and field); ``/`` of two integer expressions is refused as
TVMScript refuses it; a function built with ``decl_buffer`` equals its own parsed script; and
the printed script of a deeply nested expression reads back."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm import tir
from tvm.script import tir as T
from tvm.script.diagnostics import TVMScriptError


def _copy_function(n: int = 4, dtype: str = "float32"):
    """Parameters ``a``, ``b`` with buffers ``A``, ``B`` of ``n`` elements and a loop variable."""
    A = tir.decl_buffer((n,), dtype, name="A")
    B = tir.decl_buffer((n,), dtype, name="B")
    a, b = tir.Var("A", "handle"), tir.Var("B", "handle")
    return A, B, a, b, tir.Var("i", "int32")


def _compile_c(f: tir.PrimFunc):
    return tvm.compile(f, target="c")


# --------------------------------------------------------------------------- operator objects


def test_call_takes_an_op_object_as_its_name():
    A, B, a, b, i = _copy_function()
    call = tir.Call("float32", tvm.ir.Op.get("tir.exp"), [A[i]])
    assert call.op == "tir.exp" and isinstance(call.args, tuple)
    assert tir.Call("float32", tvm.ir.Op.get("tirx.exp"), [A[i]]).op == "tir.exp"
    f = tir.PrimFunc(
        [a, b], tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(B, call, [i])), buffer_map={a: A, b: B}
    )
    x, y = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    _compile_c(f)(x, y)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def test_call_refuses_an_operator_that_is_neither_a_name_nor_an_op():
    with pytest.raises(TypeError, match=r"tir\.Call: op must be an operator name .* got int 3"):
        tir.Call("float32", 3, [])
    with pytest.raises(TypeError, match=r"tir\.Call: args\[0\] must be a PrimExpr"):
        tir.Call("float32", "tir.exp", [None])


def test_call_converts_python_arguments():
    call = tir.Call("int32", "tir.call_extern", ["abs", -3])
    assert isinstance(call.args[0], tir.StringImm) and call.args[0].value == "abs"
    assert isinstance(call.args[1], tir.IntImm) and call.args[1].dtype == "int32"


# --------------------------------------------------------------------------- Python numbers


def test_for_bounds_and_store_values_take_the_dtypes_around_them():
    A, B, a, b, i = _copy_function(dtype="float16")
    loop = tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(B, 1.0, [i]))
    assert (loop.min.dtype, loop.extent.dtype, loop.min.value, loop.extent.value) == ("int32", "int32", 0, 4)
    assert isinstance(loop.body.value, tir.FloatImm) and loop.body.value.dtype == "float16"
    wide = tir.For(tir.Var("k", "int64"), 0, 4, tir.ForKind.SERIAL, tir.Evaluate(0))
    assert wide.min.dtype == wide.extent.dtype == "int64"
    store = tir.BufferStore(B, A[i], [0])
    assert isinstance(store.indices, tuple) and store.indices[0].dtype == "int32"
    load = tir.BufferLoad(A, [1])
    assert isinstance(load.indices[0], tir.IntImm) and load.dtype == "float16"


def test_expression_nodes_convert_python_numbers():
    i = tir.Var("i", "int32")
    x = tir.Var("x", "float32")
    assert isinstance(tir.Add(i, 1).b, tir.IntImm) and tir.Add(i, 1).b.dtype == "int32"
    assert tir.Mul(2, x).a.dtype == "float32" and tir.Add(i, 1).dtype == "int32"
    assert tir.Add(1, 2).dtype == "int32"  # a node of two numbers, not folded (Apache's T.Add(1, 2))
    assert tir.Cast("float32", 3).value.dtype == "int32"
    select = tir.Select(i < 2, 1, 2)
    assert select.dtype == "int32" and select.false_value.value == 2
    assert tir.Select(True, x, 1).false_value.dtype == "float32"
    assert tir.Select(True, x, 1).condition.dtype == "bool"
    v = tir.Var("v", "int8")
    assert tir.Let(v, 3, v).value.dtype == "int8"
    assert tir.LetStmt(v, 3, tir.Evaluate(0)).value.dtype == "int8"
    assert tir.Evaluate(0).value.dtype == "int32"
    assert tir.IfThenElse(True, tir.Evaluate(0)).condition.dtype == "bool"
    assert tir.While(False, tir.Evaluate(0)).condition.dtype == "bool"
    assert tir.AssertStmt(True, tir.StringImm("m"), tir.Evaluate(0)).message == "m"


def test_for_kind_as_apache_tvms_enum_number():
    i = tir.Var("i", "int32")
    kinds = [tir.For(i, 0, 4, k, tir.Evaluate(0)).kind for k in (0, 1, 2, 3, "unroll")]
    assert kinds == [
        tir.ForKind.SERIAL,
        tir.ForKind.PARALLEL,
        tir.ForKind.VECTORIZED,
        tir.ForKind.UNROLLED,
        tir.ForKind.UNROLLED,
    ]
    assert tir.For(i, 0, 4, 4, tir.Evaluate(0), thread_tag="threadIdx.x").kind is tir.ForKind.THREAD_BINDING
    with pytest.raises(TypeError, match=r"tir\.For: kind must be a ForKind .* got int 7"):
        tir.For(i, 0, 4, 7, tir.Evaluate(0))
    with pytest.raises(TypeError, match=r"got bool True"):
        tir.For(i, 0, 4, True, tir.Evaluate(0))


def test_a_function_of_python_numbers_compiles_and_runs():
    A, B, a, b, i = _copy_function()
    body = tir.SeqStmt(
        [
            tir.Evaluate(0),
            tir.For(i, 0, 4, 0, tir.BufferStore(B, tir.Add(A[i], 1.0), [i])),
            tir.IfThenElse(True, tir.BufferStore(B, 7.0, [0])),
        ]
    )
    f = tir.PrimFunc([a, b], body, buffer_map={a: A, b: B})
    x, y = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    _compile_c(f)(x, y)
    np.testing.assert_array_equal(y, [7.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda i, B: tir.For(i, 0, 4, 0, None), r"tir\.For: body must be a tir\.Stmt, got NoneType None"),
        (lambda i, B: tir.For(i, None, 4, 0, tir.Evaluate(0)), r"tir\.For: min must be a PrimExpr"),
        (lambda i, B: tir.For(1, 0, 4, 0, tir.Evaluate(0)), r"tir\.For: loop_var must be a tir\.Var"),
        (lambda i, B: tir.IfThenElse(True, None), r"tir\.IfThenElse: then_case must be a tir\.Stmt"),
        (lambda i, B: tir.IfThenElse(True, tir.Evaluate(0), 3), r"else_case must be a tir\.Stmt or None"),
        (lambda i, B: tir.AssertStmt(True, 42, tir.Evaluate(0)), r"tir\.AssertStmt: message must be a str"),
        (lambda i, B: tir.SeqStmt([tir.Evaluate(0), None]), r"tir\.SeqStmt: seq\[1\] must be a tir\.Stmt"),
        (lambda i, B: tir.SeqStmt([i + 1]), r"wrap an expression in tir\.Evaluate"),
        (lambda i, B: tir.BufferStore(B, "one", [i]), r"tir\.BufferStore: value must be a PrimExpr .* got str"),
        (lambda i, B: tir.BufferStore(B, 1.0, [None]), r"tir\.BufferStore: indices\[0\] must be a PrimExpr"),
        (lambda i, B: tir.BufferStore("B", 1.0, [i]), r"tir\.BufferStore: buffer must be a tir\.Buffer"),
        (lambda i, B: tir.Add(i, None), r"tir\.Add: b must be a PrimExpr or a Python number, got NoneType"),
        (lambda i, B: tir.Select(i < 1, "a", 2), r"tir\.Select: true_value must be a PrimExpr"),
        (lambda i, B: tir.Let(i, 1, None), r"tir\.Let: body must be a PrimExpr"),
        (lambda i, B: tir.LetStmt(i, 1, None), r"tir\.LetStmt: body must be a tir\.Stmt"),
        (lambda i, B: tir.Allocate(B, None), r"tir\.Allocate: body must be a tir\.Stmt"),
        (lambda i, B: tir.While(True, None), r"tir\.While: body must be a tir\.Stmt"),
        (lambda i, B: tir.Evaluate(None), r"tir\.Evaluate: value must be a PrimExpr"),
        (lambda i, B: tir.PrimFunc([], None), r"tir\.PrimFunc: body must be a tir\.Stmt"),
        (lambda i, B: tir.PrimFunc(["A"], tir.Evaluate(0)), r"tir\.PrimFunc: params must be a list of tir\.Vars"),
    ],
)
def test_what_cannot_be_converted_is_refused_where_the_node_is_made(build, message):
    _, B, _, _, i = _copy_function()
    with pytest.raises(TypeError, match=message):
        build(i, B)


# --------------------------------------------------------------------------- structural equality


def test_a_function_built_with_decl_buffer_equals_its_parsed_script():
    @T.prim_func(private=True)
    def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i]

    A, B, a, b, i = _copy_function()
    built = tir.PrimFunc([a, b], tir.For(i, 0, 4, 0, tir.BufferStore(B, A[i], [i])), buffer_map={a: A, b: B})
    assert built.script() == main.script()
    assert tvm.ir.structural_equal(built, tvm.script.parse(built.script()))
    assert tvm.ir.structural_equal(built, main) and tvm.ir.structural_equal(main, built)
    tvm.ir.assert_structural_equal(built, main)
    swapped = tir.PrimFunc([a, b], tir.For(i, 0, 4, 0, tir.BufferStore(A, B[i], [i])), buffer_map={a: A, b: B})
    assert not tvm.ir.structural_equal(swapped, main)


def test_a_buffer_data_var_used_in_the_body_stands_for_its_parameter():
    A, B, a, b, i = _copy_function()
    view = tir.decl_buffer((2,), "float32", name="V", data=A.data)  # a view of A's memory
    built = tir.PrimFunc([a, b], tir.For(i, 0, 2, 0, tir.BufferStore(B, view[i], [i])), buffer_map={a: A, b: B})
    assert tvm.ir.structural_equal(built, tvm.script.parse(built.script()))
    other = tir.decl_buffer((2,), "float32", name="V", data=B.data)  # a view of B's memory
    built_b = tir.PrimFunc([a, b], tir.For(i, 0, 2, 0, tir.BufferStore(B, other[i], [i])), buffer_map={a: A, b: B})
    assert not tvm.ir.structural_equal(built, built_b)


# --------------------------------------------------------------------------- '/' and promotion


def _parser_division_message() -> str:
    source = (
        "@T.prim_func\n"
        "def main(A: T.Buffer((4,), 'int32'), B: T.Buffer((4,), 'int32')):\n"
        "    for i in range(4):\n"
        "        B[i] = A[i] / 2\n"
    )
    with pytest.raises(TVMScriptError) as err:
        tvm.script.from_source(source)
    return str(err.value)


def test_true_division_of_two_integer_expressions_is_refused_as_tvmscript_refuses_it():
    A, _, _, _, i = _copy_function(dtype="int32")
    for build in (lambda: A[i] / 2, lambda: 7 / i, lambda: A[i] / i, lambda: tir.const(7) / tir.const(2)):
        with pytest.raises(TypeError) as err:
            build()
        assert tir.expr.INTEGER_TRUE_DIVISION in str(err.value)
    assert tir.expr.INTEGER_TRUE_DIVISION in _parser_division_message()


def test_a_float_operand_keeps_true_division():
    X, _, _, _, i = _copy_function()
    e = X[i] / 2
    assert isinstance(e, tir.Div) and e.dtype == "float32" and e.b.dtype == "float32"
    q = i / 2.0  # an integer expression next to a Python float is promoted, as TVMScript does
    assert isinstance(q, tir.Div) and q.dtype == "float32" and isinstance(q.a, tir.Cast)
    assert (tir.const(7.0) / 2).value == 3.5


def test_an_integer_expression_next_to_a_python_float_is_promoted_as_tvmscript_promotes_it():
    @T.prim_func(private=True)
    def scale(IA: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = IA[i] * 0.5 + 2.7

    IA = tir.decl_buffer((4,), "int32", name="IA")
    B = tir.decl_buffer((4,), "float32", name="B")
    ia, b, i = tir.Var("IA", "handle"), tir.Var("B", "handle"), tir.Var("i", "int32")
    value = IA[i] * 0.5 + 2.7
    assert value.dtype == "float32" and value.a.a.dtype == "float32"
    built = tir.PrimFunc([ia, b], tir.For(i, 0, 4, 0, tir.BufferStore(B, value, [i])), buffer_map={ia: IA, b: B})
    tvm.ir.assert_structural_equal(built, scale)
    assert (i < 0.5).a.dtype == "float32" and (0.5 * i).dtype == "float32"
    x, y = np.array([-7, -3, 3, 7], "int32"), np.zeros(4, "float32")
    _compile_c(built)(x, y)
    np.testing.assert_allclose(y, x * np.float32(0.5) + np.float32(2.7), rtol=1e-6)


def test_integer_arithmetic_with_python_integers_is_unchanged():
    i = tir.Var("i", "int64")
    assert (i + 1).dtype == "int64" and (i // 2).dtype == "int64" and (3 - i).dtype == "int64"
    assert (tir.const(7) // 2).value == 3


# --------------------------------------------------------------------------- printing deep expressions


def _deep_function(depth: int, right: bool):
    A, B, a, b, i = _copy_function(8)
    e = A[i]
    for _ in range(depth):
        e = tir.Sub(A[i], e) if right else tir.Sub(e, A[i])
    return tir.PrimFunc([a, b], tir.For(i, 0, 8, 0, tir.BufferStore(B, e, [i])), buffer_map={a: A, b: B})


def _max_nesting(text: str) -> int:
    depth = deepest = 0
    for c in text:
        depth += c in "([{"
        depth -= c in ")]}"
        deepest = max(deepest, depth)
    return deepest


@pytest.mark.parametrize("depth, right", [(250, True), (1000, False)])
def test_the_script_of_a_deeply_nested_expression_reads_back(depth, right):
    f = _deep_function(depth, right)
    source = f.script()
    assert max(_max_nesting(line) for line in source.splitlines()) < 100
    assert "T.meta_var(" in source
    tvm.ir.assert_structural_equal(tvm.script.parse(source), f)


def test_a_shallow_expression_prints_on_one_line():
    source = _deep_function(20, True).script()
    assert "meta_var" not in source and source.count("\n") == 4


def test_a_deep_expression_used_twice_in_a_statement_is_bound_once():
    A, B, a, b, i = _copy_function(8)
    e = A[i]
    for _ in range(40):
        e = tir.Sub(A[i], e)
    both = tir.Add(tir.Mul(e, A[i]), tir.Mul(e, A[i]))
    f = tir.PrimFunc([a, b], tir.For(i, 0, 8, 0, tir.BufferStore(B, both, [i])), buffer_map={a: A, b: B})
    source = f.script()
    assert source.count("T.meta_var(") == 1 and source.count("deep") == 3  # bound, then used twice
    tvm.ir.assert_structural_equal(tvm.script.parse(source), f)


def test_a_python_number_a_field_cannot_hold_is_refused_at_construction():
    """``tir.Add(7, 2**40)`` held an int32 2**40; the error came at compile time naming int32."""
    with pytest.raises(TypeError, match=r"tir.Add: b 1099511627776 does not fit int32, the dtype it takes here"):
        tir.Add(tir.const(7, "int32"), 2**40)


def test_a_parameter_handle_used_beside_its_buffer_prints_as_the_buffers_data():
    """The handle was printed by its own name, which the script never defines."""
    A = tir.decl_buffer((4,), "float32", name="A")
    a = tir.Var("a", "handle")
    f = tir.PrimFunc([a], tir.Evaluate(tir.Call("int32", "tir.call_extern", ["use", a])), buffer_map={a: A})
    text = f.script()
    assert '"use", A.data)' in text
    assert tvm.ir.structural_equal(f, tvm.script.parse(text))


def test_numpy_scalars_convert_as_the_python_numbers_they_hold():
    """Sizes and factors computed with NumPy were refused by operators and constructors."""
    i = tir.Var("i", "int32")
    assert tvm.ir.structural_equal(i + np.int64(3), i + 3)
    assert tvm.ir.structural_equal(i * np.float32(0.5), i * 0.5)
    assert tvm.ir.structural_equal(tir.Add(i, np.int8(4)), tir.Add(i, 4))
    loop = tir.For(i, np.int64(0), np.int64(8), tir.ForKind.SERIAL, tir.Evaluate(0))
    assert loop.extent.dtype == "int32" and loop.extent.value == 8
