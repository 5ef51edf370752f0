"""print(f) parses back to a structurally equal function, for every kernel family and for
lowered (flattened, split) functions."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tvm
from tvm import tir
from tvm.script import tir as T
from tvm.target import Target
from tvm.target.target import TargetKind, register_target_kind, unregister_target_kind
from tvm.tir.analysis import structural_equal
from tvm.tir.dtype import SCALAR_DTYPES

import script_kernels as K

FAMILIES = {
    "row_sum": K.row_sum,
    "row_softmax": K.row_softmax,
    "tiled_matmul": K.tiled_matmul,
    "two_kernels": K.two_kernels,
    "symbolic_2d": K.symbolic_2d,
    "clamp_cast": K.clamp_cast,
    "gelu_like": K.gelu_like,
}


@pytest.fixture
def testgpu():
    register_target_kind(TargetKind("testgpu", 12, "test", ("gpu",), {}, codegen=lambda k, t: None))
    yield Target("testgpu")
    unregister_target_kind("testgpu")


def roundtrip(f: tir.PrimFunc) -> tir.PrimFunc:
    text = tir.script(f)
    g = tvm.script.parse(text)
    assert structural_equal(f, g), text
    assert tir.script(g) == text  # printing is a fixed point
    return g


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_elementwise_roundtrip(dtype):
    roundtrip(K.ELEMENTWISE[dtype])


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_roundtrip(name):
    g = roundtrip(FAMILIES[name])
    assert g.attrs == FAMILIES[name].attrs


def test_script_method_and_private():
    text = K.clamp_cast.script()
    assert text.startswith("@T.prim_func(private=True)\n")
    assert "global_symbol" not in tvm.script.parse(text).attrs


def test_custom_global_symbol_kept():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "other_name"})
        A[0] = T.float32(1)

    assert 'T.func_attr({"global_symbol": "other_name"})' in f.script()
    roundtrip(f)


def test_structural_inequality_detected():
    @T.prim_func
    def a(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    @T.prim_func
    def b(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(2)

    assert not structural_equal(a, b)
    assert structural_equal(a, tvm.script.parse(a.script()))


def test_name_clashes_are_renamed():
    i = tir.Var("i", "int32")
    i2 = tir.Var("i", "int32")
    A = tir.Buffer("A", (4, 4), "float32")
    body = tir.For(
        i,
        tir.const(0),
        tir.const(4),
        tir.ForKind.SERIAL,
        tir.For(
            i2,
            tir.const(0),
            tir.const(4),
            tir.ForKind.SERIAL,
            tir.BufferStore(A, tir.FloatImm("float32", 0.0), (i, i2)),
        ),
    )
    f = tir.PrimFunc([A.data], body, {A.data: A}, {"global_symbol": "z"}, "z")
    text = f.script()
    assert "for i_1 in" in text
    roundtrip(f)


def test_loop_with_nonzero_min_and_annotations():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in T.serial(2, n, annotations={"pragma_unroll": 4}):
            A[i] = T.float32(0)
        for j in T.parallel(n, 16):
            A[j] = T.float32(1)

    g = roundtrip(f)
    assert "annotations" in g.script()


def test_assert_if_else_select_let_roundtrip():
    @T.prim_func
    def f(A: T.Buffer((8,), "int32"), n: T.int32):
        assert n > 0, "n must be positive"
        for i in range(8):
            k = i * 2 - 1
            if k >= 0 and not (k > 100):
                A[i] = T.Select(k < n, k, n)
            else:
                A[i] = T.truncdiv(k, 2) + T.truncmod(k, 3) + (k >> 1) + T.if_then_else(i == 0, -1, 1)

    roundtrip(f)


@pytest.mark.parametrize("name", ["row_softmax", "row_sum", "symbolic_2d", "clamp_cast"])
def test_lowered_cpu_roundtrip(name):
    low = tir.transform.lower(FAMILIES[name], Target("c"))
    roundtrip(low.host)


@pytest.mark.parametrize("name", ["tiled_matmul", "two_kernels", "gelu_like"])
def test_lowered_device_roundtrip(name, testgpu):
    low = tir.transform.lower(FAMILIES[name], testgpu)
    roundtrip(low.host)
    for k in low.kernels:
        roundtrip(k)


def test_scoped_let_and_allocate_inside_sequence():
    A = tir.Buffer("A", (4,), "float32")
    x = tir.Var("x", "float32")
    tmp = tir.Buffer("tmp", (1,), "float32", scope="local")
    let = tir.LetStmt(x, A[0], tir.BufferStore(A, x, (tir.const(1),)))
    alloc = tir.Allocate(tmp, tir.BufferStore(tmp, A[1], (tir.const(0),)))
    body = tir.SeqStmt((let, alloc, tir.BufferStore(A, A[2], (tir.const(3),))))
    f = tir.PrimFunc([A.data], body, {A.data: A}, {"global_symbol": "s"}, "s")
    text = roundtrip(f).script()
    assert text.count("if True:") == 2


@pytest.mark.parametrize("name", sorted(FAMILIES) + ["elementwise_float32"])
def test_printed_text_is_a_plain_python_module(name, tmp_path, monkeypatch):
    """The printed script works as a .py file without ``from __future__ import annotations``:
    symbolic shapes use T.handle + T.match_buffer, so annotations never name body variables."""
    f = FAMILIES.get(name) or K.ELEMENTWISE["float32"]
    path = tmp_path / f"printed_{name}.py"
    path.write_text("from tvm.script import tir as T\n\n" + f.script())
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    mod = importlib.import_module(path.stem)
    assert structural_equal(getattr(mod, f.name), f)


def _shared_kernels():
    from tvm.testing import kernels as TK

    return {
        "vector_add": lambda: TK.vector_add("float16"),
        "halves_as_floats": lambda: TK.halves_as_floats(),  # a view of an allocation's memory
        "row_sum": lambda: TK.row_sum(7, 100),
        "row_softmax": lambda: TK.row_softmax(5, 33),
        "matmul_tiled": lambda: TK.matmul_tiled(16, 24, 32),
        # sizes left as None are symbolic (the OpenCL tests and benchmark use these)
        "row_sum_symbolic_rows": lambda: TK.row_sum(cols=128, block=128),
        "row_softmax_symbolic": lambda: TK.row_softmax(),
        "matmul_tiled_symbolic": lambda: TK.matmul_tiled(tile=16),
    }


@pytest.mark.parametrize("name", sorted(_shared_kernels()))
def test_shared_testing_kernels_roundtrip_and_lower(name, testgpu):
    """The kernels every backend's tests use (tvm.testing.kernels) round-trip and lower."""
    f = _shared_kernels()[name]()
    roundtrip(f)
    low = tir.transform.lower(f, testgpu)
    assert len(low.kernels) == 1
    roundtrip(low.host)
    roundtrip(low.kernels[0])


def test_shared_testing_kernels_name_and_symbolic_sizes():
    """``name=`` sets the exported name; a size left as None is a symbolic shape variable."""
    from tvm.testing import kernels as TK

    f = TK.matmul_tiled(tile=16, name="matmul")
    assert f.name == f.global_symbol == "matmul"
    shapes = [tuple(d.name for d in f.buffer_map[p].shape) for p in f.params]
    assert shapes == [("M", "K"), ("K", "N"), ("M", "N")]
    assert TK.vector_add().global_symbol == "vector_add"
    fixed = TK.row_sum(4, 128)
    assert [d.value for d in fixed.buffer_map[fixed.params[0]].shape] == [4, 128]
    with pytest.raises(AssertionError, match="multiples of tile"):
        TK.matmul_tiled(16, 20, 16, tile=16)


def test_views_of_an_allocations_memory_are_printed():
    """A view over an allocation (not a parameter) was used but never declared in the text."""

    @T.prim_func
    def bits_of(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
        tmp = T.alloc_buffer((8,), "float32")
        bits = T.decl_buffer((8,), "int32", data=tmp.data)
        for i in range(8):
            tmp[i] = A[i]
        for i in range(8):
            B[i] = bits[i]

    assert 'bits = T.Buffer((8,), "int32", data=tmp.data)' in bits_of.script()
    roundtrip(bits_of)


def test_a_module_prints_as_an_ir_module_class_and_parses_back():
    """IRModule.script() printed its functions one after another, and parse kept the first."""
    from tvm.script import ir as I

    @I.ir_module
    class Module:
        I.module_attrs({"version": 3, "tags": ["a", "b"]})

        @T.prim_func
        def one(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

        @T.prim_func(private=True)
        def two(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(2)

    text = Module.script()
    assert text.startswith("@I.ir_module\nclass Module:\n    I.module_attrs(")
    again = tvm.script.parse(text)
    assert list(again.functions) == ["one", "two"] and again.attrs == {"version": 3, "tags": ["a", "b"]}
    tvm.ir.assert_structural_equal(again, Module)
    with pytest.raises(tvm.script.TVMScriptError, match=r"the text defines 2 functions \(one, two\)"):
        tvm.script.parse(Module["one"].script() + "\n" + Module["two"].script())


def test_functions_and_targets_deep_copy_and_pickle():
    """copy.deepcopy and pickle of a PrimFunc raised 'Add is immutable'; a device Target did not
    pickle (its kind's functions were looked up under a name pickle cannot resolve)."""
    import copy
    import pickle

    from tvm.testing import kernels as TK

    for f in (K.row_softmax, TK.row_softmax(5, 33)):
        for again in (copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
            tvm.ir.assert_structural_equal(again, f)
    for spec in ("c", "opencl", "cuda -arch=sm_80 -max_num_threads=512"):
        target = Target(spec)
        again = pickle.loads(pickle.dumps(target))
        assert again.kind.name == target.kind.name and again.attrs == target.attrs, spec


def test_expressions_thousands_of_operations_deep_compile():
    """About 250 chained additions raised a bare RecursionError (Python's 1,000 frames)."""
    import numpy as np

    A = tir.Buffer("A", (4,), "float32")
    e = A[1]
    for _ in range(2000):
        e = e + A[1]
    f = tir.PrimFunc([A.data], tir.BufferStore(A, e, (tir.const(0),)), {A.data: A}, {"global_symbol": "deep"})
    a = np.ones(4, "float32")
    tvm.compile(f, target="c")["deep"](a)
    assert a[0] == 2001
    roundtrip(f)
    for _ in range(8000):
        e = e + A[1]
    deeper = tir.PrimFunc([A.data], tir.BufferStore(A, e, (tir.const(0),)), {A.data: A}, {"global_symbol": "deeper"})
    with pytest.raises(RecursionError, match="tvm.compile: an expression or statement is nested too deeply"):
        tvm.compile(deeper, target="c")


def test_names_python_reserves_and_odd_function_names_round_trip():
    """A buffer named 'range' shadowed the loops' range(); one named 'class' (a keyword) printed
    invalid Python; a function named 'my-kernel' printed as main and lost its name."""
    A = tir.Buffer("range", (4,), "float32")
    B = tir.Buffer("class", (4,), "float32")
    i = tir.Var("i", "int32")
    body = tir.For(
        i, tir.IntImm("int32", 0), tir.IntImm("int32", 4), tir.ForKind.SERIAL, tir.BufferStore(B, A[i] * 2.0, (i,))
    )
    f = tir.PrimFunc([A.data, B.data], body, {A.data: A, B.data: B}, {"global_symbol": "my-kernel"})
    g = roundtrip(f)
    assert g.global_symbol == "my-kernel"
    assert "range_1" in f.script() and "class_1" in f.script()


def test_a_cross_thread_reduction_without_serial_axes_round_trips():
    """Its init ran under 'if 0 == 0:', which the parser folds away: the text did not parse back
    to an equal function."""
    from tvm.testing import kernels as TK

    f = TK.partly_scheduled_softmax()
    assert "0 == 0" not in f.script()
    roundtrip(f)


def test_buffers_over_a_handle_parameter_or_a_let_are_declared():
    """A buffer declared on a handle (a parameter, a let) was used in the text but never declared."""

    @T.prim_func
    def on_param(A_ptr: T.handle("float32")):
        A = T.decl_buffer((8,), "float32", data=A_ptr)
        for i in range(8):
            A[i] = A[i] + T.float32(1)

    @T.prim_func
    def on_let(A_ptr: T.handle("float32")):
        p: T.let[T.handle("float32")] = A_ptr
        A = T.decl_buffer((1,), "float32", data=p)
        A[0] = T.float32(42)

    assert 'A = T.Buffer((8,), "float32", data=A_ptr)' in on_param.script()
    roundtrip(on_param)
    roundtrip(on_let)


def test_a_view_whose_offset_names_a_loop_variable_is_declared_inside_the_loop():
    """A region matched inside a loop was declared at the top, before its loop variable existed."""

    @T.prim_func
    def rows(A: T.Buffer((4, 16), "float32")):
        for vi in range(4):
            Row = T.decl_buffer((16,), "float32", data=A.data, elem_offset=vi * 16)
            for j in range(16):
                Row[j] = T.float32(0)

    text = rows.script()
    assert text.index("for vi in range(4):") < text.index("Row = T.Buffer")
    roundtrip(rows)


def test_loops_nested_past_python_limit_print_as_a_grid():
    """22 nested loops printed as 22 nested `for`s, which Python refuses inside a module class."""
    from tvm.script import ir as I

    extents = ", ".join(["1"] * 22)
    names = ", ".join(f"i{k}" for k in range(22))
    module = tvm.script.parse(
        f"""
@I.ir_module
class Module:
    @T.prim_func
    def deep(A: T.Buffer((2,), "float32")):
        for {names} in T.grid({extents}):
            A[i0 + i21] = A[i0 + i21] + T.float32(1)
"""
    )
    text = module.script()
    assert "T.grid(" in text
    tvm.ir.assert_structural_equal(tvm.script.parse(text), module)
    with pytest.raises(tvm.script.TVMScriptError, match="syntax error: too many statically nested blocks"):
        body = "".join("    " * (k + 2) + f"for i{k} in range(1):\n" for k in range(22))
        tvm.script.parse(f"@I.ir_module\nclass M:\n    @T.prim_func\n    def f():\n{body}" + "    " * 24 + "pass\n")
    assert I.ir_module  # the module text names I


def test_shape_variables_inside_shape_expressions_compare_equal():
    """Two parses of one text compared unequal when a shape variable first appeared in `n + 1`."""
    text = """
@T.prim_func
def f(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n + 1,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        B[i] = A[i + 1]
"""
    assert structural_equal(tvm.script.parse(text), tvm.script.parse(text))


def test_targets_in_attributes_print_every_attribute_and_the_host():
    """A target attribute printed as str(Target) ("cuda -arch=None"), read back as arch 'None'."""
    target = Target({"kind": "c", "keys": ["cpu"]}, host="c")

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        T.func_attr({"target": T.target("c")})
        A[0] = T.float32(1)

    f = f.with_attr("target", target)
    text = f.script()
    assert "T.target({" in text and '"host": {"kind": "c"' in text, text
    again = tvm.script.parse(text).attrs["target"]
    assert again.export() == target.export()
    assert str(Target({"kind": "c", "note": None, "keys": ["a", "b"]})) == "c -keys=a,b"


def test_a_loop_variable_keeps_its_dtype_under_a_range_of_another():
    """An int32 thread index over an int64 extent came back int64 (its arithmetic changed)."""

    @T.prim_func
    def f(B: T.Buffer((4,), "int32")):
        bx = T.launch_thread("blockIdx.x", T.int64(4))
        B[bx] = T.Select(bx * 1073741824 < 0, 1, 0)

    g = tvm.script.parse(f.script())
    loops = []
    tvm.tir.functor.post_order_visit(g.body, lambda n: loops.append(n) if isinstance(n, tvm.tir.stmt.For) else None)
    assert [x.loop_var.dtype for x in loops] == ["int32"]


def test_a_module_text_parses_with_checks_off():
    """parse(module_text, check_well_formed=False) still checked the module's functions."""
    text = """
@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        A[m] = T.float32(0)
"""
    with pytest.raises(tvm.script.TVMScriptError, match="'m'"):
        tvm.script.parse(text, extra_vars={"m": tvm.tir.Var("m", "int32")})
    module = tvm.script.parse(text, extra_vars={"m": tvm.tir.Var("m", "int32")}, check_well_formed=False)
    assert "m = T.int32()" in module.script()


def _parses_back(source: str) -> tir.PrimFunc:
    """``source`` parsed, printed and parsed again: the second function."""
    return tvm.script.parse(tvm.script.parse(source).script())


def test_printed_values_that_were_not_python_parse_back():
    """Loop annotations printed with repr() (``IntImm(...)``, ``inf``), attribute floats as
    ``inf``, strings with control characters written raw and a negative NaN printed positive."""
    for given in ('{"hint": T.int32(16)}', '{"extent_hint": n + 1}', '{"weight": 1e999}'):
        _parses_back(f"""
@T.prim_func
def f(A: T.Buffer((4,), "int32"), n: T.int32):
    for i in T.serial(4, annotations={given}):
        A[i] = i
""")
    g = _parses_back("""
@T.prim_func
def g(A: T.Buffer((4,), "float32")):
    T.func_attr({"limits": [1e999, -1e999]})
    assert A[0] == T.float32(0), "carriage\\rreturn\\x00 and \\"quotes\\""
    A[0] = -T.float32("nan")
""")
    assert g.attrs["limits"] == [float("inf"), float("-inf")]
    assert "carriage\\rreturn\\x00" in g.script()
    nan = next(n for n in _all_nodes(g) if isinstance(n, tir.FloatImm) and math.isnan(n.value))
    assert math.copysign(1.0, nan.value) < 0


def _all_nodes(f: tir.PrimFunc) -> list:
    from tvm.tir.functor import post_order_visit

    found: list = []
    post_order_visit(f.body, found.append)
    return found


def test_int32_constants_computed_together_keep_wrapping():
    """``2147483647 + 1`` left by inlining printed as two bare numbers, which Python adds without
    wrapping: the function read back computed 2147483648, past int32, instead of -2147483648."""
    f = tvm.script.parse("""
@T.prim_func
def f(A: T.Buffer((2,), "int32")):
    A[0] = 1
""")
    store = f.body
    total = tir.Add(tir.IntImm("int32", 2147483647), tir.IntImm("int32", 1))
    original = f.with_body(tir.BufferStore(store.buffer, total, store.indices))
    again = tvm.script.parse(original.script())
    for func in (original, again):
        out = tvm.runtime.tensor(np.zeros(2, "int32"))
        tvm.compile(func, target="llvm")(out)
        assert out.numpy()[0] == -(2**31), func.script()


def test_names_python_reads_as_one_are_printed_apart():
    """Python reads identifiers in NFKC form: a variable named "\\ufb01" (the ligature) and one
    named "fi" printed as written became one variable, and a buffer named a fullwidth "T"
    shadowed the T namespace."""
    one = tir.IntImm("int32", 1)
    A = tir.Buffer("A", (1,), "int32")
    ligature, plain = tir.Var("\ufb01", "int32"), tir.Var("fi", "int32")
    body = tir.LetStmt(
        ligature,
        one,
        tir.LetStmt(plain, tir.IntImm("int32", 2), tir.BufferStore(A, ligature, (tir.IntImm("int32", 0),))),
    )
    f = tir.PrimFunc([A.data], body, {A.data: A}, {"global_symbol": "k"}, "k")
    g = tvm.script.parse(f.script())
    assert structural_equal(f, g), f.script()
    out = np.zeros(1, "int32")
    tvm.compile(g, target="llvm")["k"](out)
    assert out[0] == 1
    B = tir.Buffer("\uff34", (1,), "float32")  # a fullwidth T
    h = tir.PrimFunc(
        [B.data],
        tir.BufferStore(B, tir.FloatImm("float32", 1.0), (tir.IntImm("int32", 0),)),
        {B.data: B},
        {"global_symbol": "h"},
        "h",
    )
    assert structural_equal(h, tvm.script.parse(h.script()))


def test_a_buffers_alignment_is_printed():
    g = _parses_back("""
@T.prim_func
def g(A: T.Buffer((4,), "float32", align=128)):
    S = T.alloc_buffer((4,), "float32", align=256)
    S[0] = A[0]
    A[1] = S[0]
""")
    assert "align=128" in g.script() and "align=256" in g.script()


def test_an_assert_false_prints_and_parses_back_and_fails_when_reached():
    """`assert T.bool(False)` printed as `assert False`, which the parser refused as statically
    false: the text did not parse back. Both are an assert that fails when it runs."""
    import numpy as np

    src = (
        "@T.prim_func\n"
        'def f(A: T.Buffer((1,), "int32"), n: T.int32):\n'
        "    if n > 0:\n"
        '        assert T.bool(False), "n must not be positive"\n'
        "    A[0] = n\n"
    )
    func = tvm.script.parse(src)
    again = tvm.script.parse(func.script())
    assert structural_equal(func, again)
    mod = tvm.compile(again, "c")
    a = np.zeros(1, "int32")
    mod["f"](a, -3)
    assert a[0] == -3
    with pytest.raises(RuntimeError, match="n must not be positive"):
        mod["f"](a, 2)


def test_a_thread_launched_with_an_int64_constant_extent_round_trips():
    src = (
        "@T.prim_func\n"
        'def f(A: T.Buffer((T.int64(64),), "float32"), B: T.Buffer((T.int64(64),), "float32")):\n'
        '    bx = T.env_thread("blockIdx.x")\n'
        "    T.launch_thread(bx, T.int64(2))\n"
        '    tx = T.env_thread("threadIdx.x")\n'
        "    T.launch_thread(tx, T.int64(32))\n"
        '    B[T.Cast("int64", bx) * T.int64(32) + T.Cast("int64", tx)] = '
        'A[T.Cast("int64", bx) * T.int64(32) + T.Cast("int64", tx)] + T.float32(1)\n'
    )
    func = tvm.script.parse(src)
    assert structural_equal(func, tvm.script.parse(func.script()))


ROUND_TRIPS = {
    "a constant condition before 'and'": """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    for i in range(8):
        A[i] = T.if_then_else(T.LT(0, 1) and i < 4, A[i], T.float32(0))
""",
    "an int64 zero element offset": """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32", elem_offset=T.int64(0))
    for i in range(8):
        B[i] = A[i]
        A[i] = B[i] * T.float32(2)
""",
    "threads launched over an int64 size": """
@T.prim_func
def f(a: T.handle):
    m = T.int64()
    A = T.match_buffer(a, (m,), "float32")
    bx = T.launch_thread("blockIdx.x", m)
    A[bx] = A[bx] + T.float32(1)
""",
    "a vector negated": """
@T.prim_func
def f(A: T.Buffer((8,), "float32")):
    A[0:4] = -A[0:4]
""",
    "a module function called with float constants": """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(a: T.float32, b: T.float32) -> T.float32:
        return a + b

    @T.prim_func
    def main(A: T.Buffer((1,), "float32")):
        A[0] = Module.add(T.float32(1.5), T.float32(2.0))
""",
    "a module function called with constants": """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(a: T.int32, b: T.int32) -> T.int32:
        return a + b

    @T.prim_func
    def main(A: T.Buffer((8,), "int32")):
        n: T.let[T.int32] = Module.add(4, 4)
        for i in range(n):
            A[i] = i
""",
}


@pytest.mark.parametrize("what", list(ROUND_TRIPS))
def test_printed_text_parses_back_to_the_same_function(what):
    """Texts from Apache TVM's tests whose printed form parsed back to another function: a
    folded constant, an int32 offset or size where the first parse kept int64, a vector
    constant read back as a broadcast call."""
    parsed = tvm.script.from_source(ROUND_TRIPS[what])
    funcs = [parsed] if isinstance(parsed, tir.PrimFunc) else [parsed[name] for name in ("main",)]
    for func in funcs:
        again = tvm.script.from_source(func.script())
        assert structural_equal(again, func), func.script()


def _one(value):
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(value)

    return main


def test_a_module_prints_each_function_under_its_key_and_keeps_its_attributes():
    """Two functions both written ``def main`` printed as two ``def main``, of which the parse
    kept one; a function named T made the text unparseable; an infinite or TIR-valued module
    attribute became a comment."""
    first, second = _one(1.0), _one(2.0)
    named_t = tir.PrimFunc(first.params, first.body, first.buffer_map, {"global_symbol": "T"}, "T")
    module = tir.IRModule({"first": first, "second": second, "T": named_t}, {"limit": float("inf"), "n": 5})
    again = tvm.script.parse(module.script())
    assert sorted(again.functions) == sorted(["first", "second", "T_fn"])
    assert again["T_fn"].global_symbol == "T"
    assert structural_equal(again["second"], second)
    assert dict(again.attrs) == {"limit": float("inf"), "n": 5}


def test_names_python_would_read_otherwise_and_annotations_round_trip():
    """A function named "ﬁ" read back as "fi" (its exported symbol changed); a scalar named
    float hid the printed float("inf"); loop annotations holding an expression or a NaN made
    a text unequal to itself."""
    n = tir.Var("float", "float32")
    A = tir.Buffer("A", (4,), "float32")
    i = tir.Var("i", "int32")
    loop = tir.For(i, tir.const(0), tir.const(4), tir.stmt.ForKind.SERIAL, tir.BufferStore(A, n, (i,)), None,
                   {"weight": float("inf"), "nan": float("nan")})  # fmt: skip
    f = tir.PrimFunc([A.data, n], loop, {A.data: A}, {"global_symbol": "\ufb01"}, "\ufb01")
    again = tvm.script.parse(f.script())
    assert again.global_symbol == "\ufb01" and structural_equal(again, f)
    text = """
@T.prim_func
def g(A: T.Buffer((4,), "float32"), n: T.int32):
    for i in T.serial(4, annotations={"hint": n + 1}):
        A[i] = T.float32(1)
"""
    assert structural_equal(tvm.script.parse(text), tvm.script.parse(text))


def test_operations_on_constants_and_identity_casts_read_back_as_they_were():
    """The parser folds T.int32(3) + 4, which the compiler leaves in some lowerings, and
    T.popcount of an unsigned value cast it to its own dtype, which the parser drops."""
    A = tir.Buffer("A", (2,), "int32")
    B = tir.Buffer("B", (1,), "uint8")
    body = tir.SeqStmt(
        (
            tir.BufferStore(A, tir.Add(tir.const(3), tir.const(4)), (tir.const(0),)),
            tir.BufferStore(A, tir.Min(tir.const(3), tir.const(4)), (tir.const(1),)),
            tir.BufferStore(B, tvm.tir.op.popcount(tir.BufferLoad(B, (tir.const(0),))), (tir.const(0),)),
        )
    )
    f = tir.PrimFunc([A.data, B.data], body, {A.data: A, B.data: B}, {"global_symbol": "consts"})
    roundtrip(f)
    a, b = np.zeros(2, "int32"), np.array([0b1011], "uint8")
    tvm.compile(f, target="c")(a, b)
    assert list(a) == [7, 3] and b[0] == 3


def test_a_parameter_named_only_by_a_loop_hint_is_a_kernel_parameter():
    @T.prim_func
    def hinted(A: T.Buffer((4,), "int32"), n: T.int32):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for i in T.serial(4, annotations={"extent_hint": n + 1}):
                A[i] = i

    (kernel,) = tvm.tir.transform.lower(hinted, tvm.target.Target("example")).kernels
    assert [p.name for p in kernel.params] == ["A", "n"]
    assert structural_equal(tvm.script.parse(kernel.script()), kernel)


def test_module_keys_that_are_names_keep_them_and_plain_attributes_read_back_as_written():
    f1, f2 = _one(1.0), _one(2.0)
    module = tir.IRModule({"a-b": f1, "a_b": f2}, {"s": {1, 2}, "b": b"xy", "n": np.int32(3), "nan": float("nan")})
    again = tvm.script.parse(module.script())
    assert structural_equal(again["a_b"], f2)  # the key that is a name keeps it, whatever the order
    assert again.attrs["s"] == {1, 2} and again.attrs["b"] == b"xy" and again.attrs["n"] == 3
    assert math.isnan(again.attrs["nan"])
    A = tir.Buffer("A", (1,), "float32")
    div = tir.PrimFunc([A.data], tir.BufferStore(A, tir.Div(tir.const(1.0, "float32"), tir.const(2.0, "float32")),
                                                 (tir.const(0),)), {A.data: A}, {"global_symbol": "half"})  # fmt: skip
    roundtrip(div)
