"""Apache TVM's Python names around a kernel (tvm.tirx, tvm.ir, tvm.tir.build, with Target,
PassContext, calling a module, typed asserts, tvm.error, tvm.testing's helpers, tempdir): code
written for Apache TVM runs here as it is."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import tvm
import tvm.testing
from tvm.script import tir as T
from tvm.script.diagnostics import TVMScriptError
from tvm.tir.transform.verify import TIRVerifyError


@T.prim_func
def add_one(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        B[i] = A[i] + T.float32(1)


def _run_add_one(lib) -> np.ndarray:
    a = np.arange(6, dtype="float32")
    b = np.zeros(6, "float32")
    lib(a, b)
    return b


def test_tirx_is_tir_with_every_submodule():
    import tvm.tirx
    import tvm.tirx.transform
    from tvm.tirx import PrimFunc, const

    assert tvm.tirx is tvm.tir and tvm.tirx.transform is tvm.tir.transform
    assert PrimFunc is tvm.tir.PrimFunc and const(3).value == 3
    assert tvm.tir.__spec__.name == "tvm.tir"  # the real module keeps its own spec


def test_ir_names_are_the_tir_ones():
    from tvm.ir.module import IRModule

    assert tvm.ir.IRModule is IRModule is tvm.IRModule is tvm.tir.IRModule
    mod = tvm.IRModule.from_expr(add_one)
    assert "add_one" in mod and len(mod) == 1
    tvm.ir.assert_structural_equal(mod["add_one"], add_one)
    assert "def add_one" in mod.script()


def test_modules_compare_by_structure():
    """Two modules written differently (Apache TVM's tutorial: block axes spelled out, with
    T.reads/T.writes, and the concise form) are structurally equal; a renamed or changed function
    is not."""
    from tvm.script import ir as I

    @I.ir_module
    class Long:
        @T.prim_func
        def scale(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
            for i in range(8):
                for j in range(8):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i)
                        vj = T.axis.spatial(8, j)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)

    @I.ir_module
    class Concise:
        @T.prim_func
        def scale(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

    @I.ir_module
    class Tripled:
        @T.prim_func
        def scale(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(3)

    assert tvm.ir.structural_equal(Long, Concise)
    tvm.ir.assert_structural_equal(Long, Concise)
    assert not tvm.ir.structural_equal(Long, Tripled)
    assert not tvm.ir.structural_equal(Long, tvm.IRModule({"other": Concise["scale"]}))
    assert not tvm.ir.structural_equal(Long, Concise["scale"])
    with pytest.raises(ValueError, match=r"(?s)not structurally equal.*T\.float32\(3\.0\)"):
        tvm.ir.assert_structural_equal(Long, Tripled)


def test_all_and_any_build_one_condition():
    x = tvm.tir.Var("x", "int32")
    assert isinstance(tvm.tir.all(x > 0, x < 10, x != 5), tvm.tir.And)
    assert isinstance(tvm.tir.any(x < 0, x > 10), tvm.tir.Or)
    with pytest.raises(ValueError, match="at least one condition"):
        tvm.tir.all()


@T.prim_func
def c_division(
    A: T.Buffer((6,), "int32"), B: T.Buffer((6,), "int32"), C: T.Buffer((6,), "int32"), X: T.Buffer((6,), "float32")
):
    for i in range(6):
        C[i] = tvm.tir.div(A[i], B[i]) + tvm.tir.indexmod(A[i], 4) * 100
        X[i] = tvm.tir.div(T.Cast("float32", A[i]), T.float32(4))


def test_expression_builders_of_the_tir_module():
    """Apache TVM's tvm.tir functions written inside a kernel or used to build expressions:
    C's division (rounding towards zero), index arithmetic, and the math and bit functions
    TVMScript has as T.<name>."""
    lib = tvm.compile(c_division, target="c")
    a, b = np.array([7, -7, 9, -9, 0, 5], "int32"), np.array([2, 2, -4, -4, 3, 5], "int32")
    c, x = tvm.runtime.empty((6,), "int32"), tvm.runtime.empty((6,), "float32")
    lib["c_division"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c, x)
    np.testing.assert_array_equal(c.numpy(), np.trunc(a / b).astype("int32") + (a % 4) * 100)
    np.testing.assert_array_equal(x.numpy(), a.astype("float32") / 4)
    n, f = tvm.tir.Var("n", "int32"), tvm.tir.Var("f", "float32")
    assert isinstance(tvm.tir.indexdiv(n, 4), tvm.tir.FloorDiv) and isinstance(tvm.tirx.ceildiv(n, 4), tvm.tir.FloorDiv)
    for name in ("isnan", "isinf", "log1p", "tan", "atan2", "hypot", "copysign"):
        args = (f, f) if name in ("atan2", "hypot", "copysign") else (f,)
        assert isinstance(getattr(tvm.tir, name)(*args), tvm.tir.PrimExpr), name
    assert tvm.tir.call_extern("int32", "g", n).op == "call_extern" and tvm.tir.likely(n < 3) is not None
    assert tvm.tir.shift_left(n, 2).dtype == "int32" and tvm.tir.popcount(n).dtype == "int32"
    from tvm.tir.transform.simplify import simplify_expr

    for a, b in ((7, 2), (7, -2), (-7, 2), (-7, -2), (6, -2), (0, -3)):
        want = -(-a // b)  # ceil(a / b)
        folded = simplify_expr(tvm.tir.ceildiv(tvm.tir.IntImm("int32", a), b))
        assert tvm.tir.ceildiv(a, b) == want and folded.value == want, (a, b)
    with pytest.raises(TypeError, match="divides integers"):
        tvm.tir.ceildiv(f, 2)


def test_tir_build_and_a_module_called_as_its_one_function():
    lib = tvm.tir.build(add_one, target="llvm")
    np.testing.assert_array_equal(_run_add_one(lib), np.arange(6, dtype="float32") + 1)
    with pytest.raises(ValueError, match="pipeline"):
        tvm.tir.build(add_one, target="c", pipeline="opt")


def test_exported_library_of_one_function_is_callable(tmp_path):
    path = str(tmp_path / "add_one.so")
    tvm.compile(add_one, "c").export_library(path)
    lib = tvm.runtime.load_module(path)
    np.testing.assert_array_equal(_run_add_one(lib), np.arange(6, dtype="float32") + 1)


def test_module_of_two_functions_has_no_entry():
    mod = tvm.IRModule({"first": add_one, "second": add_one.with_attr("global_symbol", "second")})
    lib = tvm.compile(mod, "c")
    np.testing.assert_array_equal(_run_add_one(lib["second"]), np.arange(6, dtype="float32") + 1)
    with pytest.raises(AttributeError, match="main"):
        lib(np.zeros(1, "float32"), np.zeros(1, "float32"))


def test_with_target_sets_the_default_target():
    assert tvm.target.Target.current() is None
    with tvm.target.Target("c") as outer:
        assert tvm.target.Target.current() is outer
        with tvm.target.Target("llvm") as inner:
            assert tvm.target.Target.current() is inner
            lib = tvm.compile(add_one)
        assert tvm.target.Target.current() is outer
    assert tvm.target.Target.current() is None
    np.testing.assert_array_equal(_run_add_one(lib), np.arange(6, dtype="float32") + 1)
    assert tvm.device_from_target("llvm") == tvm.cpu(0)


def test_pass_context_is_accepted_and_says_its_config_has_no_effect():
    with pytest.warns(UserWarning, match="'tir.test_only_switch' has no effect"):
        ctx = tvm.transform.PassContext(opt_level=3, config={"tir.test_only_switch": True})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reported once per key
        tvm.transform.PassContext(config={"tir.test_only_switch": True})
    with ctx:
        assert tvm.transform.PassContext.current() is ctx
        lib = tvm.compile(add_one, "c")
    np.testing.assert_array_equal(_run_add_one(lib), np.arange(6, dtype="float32") + 1)
    with pytest.raises(ValueError, match="opt_level"):
        tvm.transform.PassContext(opt_level=7)


def test_assert_raises_the_kind_it_names():
    @T.prim_func
    def check(x: T.int32):
        assert x > 0, ("ValueError", ["x must be ", "positive"])
        assert x < 10, ("IndexError", ["x too large"])
        assert x != 5, "five"

    lib = tvm.compile(check, "c")
    lib(3)
    with pytest.raises(ValueError, match="x must be positive"):
        lib(0)
    with pytest.raises(IndexError, match="^x too large$"):  # its own message, not a bounds check's
        lib(12)
    with pytest.raises(RuntimeError, match="five"):
        lib(5)
    text = check.script()
    assert '("ValueError", ["x must be positive"])' in text and ('"five"' in text or "'five'" in text)
    tvm.ir.assert_structural_equal(tvm.script.parse(text), check)


def test_assert_of_an_unknown_kind_is_refused():
    with pytest.raises(TVMScriptError, match="unknown error kind 'OopsError'"):

        @T.prim_func
        def check(x: T.int32):
            assert x > 0, ("OopsError", ["no"])


@pytest.mark.parametrize(
    "value, dtype",
    [(300, "int8"), (-1, "uint8"), (2**32, "uint32"), (2**64, "uint64"), (65520.0, "float16"), (3.5e39, "float32")],
)
def test_constants_that_do_not_fit_their_dtype_are_refused(value, dtype):
    with pytest.raises(ValueError, match=f"does not fit in {dtype}"):
        tvm.tir.const(value, dtype)


def test_constants_that_fit_and_numpy_scalars():
    assert tvm.tir.const(-128, "int8").value == -128 and tvm.tir.const(65504.0, "float16").value == 65504.0
    c = tvm.tir.const(65519.0, "float16")  # the value as written; computed with as np.float16 has it
    assert c.value == 65519.0 and c.dtype_value == 65504.0
    assert tvm.tir.const(float("inf"), "float16").value == float("inf")
    assert tvm.tir.const(2**31).dtype == "int64" and tvm.tir.const(-(2**31)).dtype == "int32"
    assert tvm.tir.const(3.5e39).dtype == "float64" and tvm.tir.const(1.5).dtype == "float32"
    c = tvm.tir.const(np.float32(-3.4028235e38))
    assert c.dtype == "float32" and c.value == float(np.float32(-3.4028235e38))
    assert tvm.tir.const(np.int8(5)).dtype == "int8"


def test_error_classes_catch_the_compilers_refusals():
    @T.prim_func
    def oob(A: T.Buffer((4,), "float32")):
        A[4] = T.float32(0)

    try:  # `except` itself (it looks at the classes' real bases)
        tvm.compile(oob, "c")
    except tvm.error.InternalError as err:
        assert isinstance(err, TIRVerifyError) and isinstance(err, ValueError)
    else:
        raise AssertionError("no error")
    try:
        tvm.compile(oob, "c")
    except tvm.error.TVMError:
        pass
    with pytest.raises(tvm.error.DiagnosticError, match="not defined"):

        @T.prim_func
        def unknown_name(A: T.Buffer((4,), "float32")):
            A[0] = undefined_name  # noqa: F821

    assert issubclass(TVMScriptError, tvm.error.TVMError) and not issubclass(KeyError, tvm.error.TVMError)


def test_testing_helpers():
    t = tvm.runtime.tensor(np.ones(3, "float32"))
    tvm.testing.assert_allclose(t, np.ones(3, "float32"))
    with pytest.raises(AssertionError):
        tvm.testing.assert_allclose(t, np.zeros(3, "float32"))
    assert tvm.testing.device_enabled("llvm") and tvm.testing.env.has_llvm()
    assert tvm.testing.env.has_cudnn() is False and tvm.testing.env.has_llvm_min_version(10) is False
    assert ("llvm", tvm.cpu(0)) in tvm.testing.enabled_targets()
    assert tvm.testing.run_with_gpu_lock(lambda: 7) == 7


def test_a_test_file_written_for_apache_tvm_runs(tmp_path):
    """tvm.testing.parameter, fixture and main, in a file run as a script."""
    test_file = tmp_path / "test_written_for_apache.py"
    test_file.write_text(
        textwrap.dedent(
            """
            import numpy as np
            import pytest
            import tvm
            import tvm.testing
            from tvm.script import tirx as T
            from tvm.testing import env

            target = tvm.testing.parameter("llvm", "c")

            @tvm.testing.fixture
            def size():
                return 5

            @pytest.mark.skipif(not env.has_llvm(), reason="need llvm")
            def test_add(target, size):
                @T.prim_func
                def func(A: T.Buffer((5,), "float32"), B: T.Buffer((5,), "float32")):
                    for i in range(5):
                        B[i] = A[i] * T.float32(2)

                lib = tvm.compile(func, target=target)
                a = tvm.runtime.tensor(np.arange(size, dtype="float32"))
                b = tvm.runtime.tensor(np.zeros(size, "float32"))
                lib(a, b)
                tvm.testing.assert_allclose(b, np.arange(size, dtype="float32") * 2)

            if __name__ == "__main__":
                tvm.testing.main()
            """
        )
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", str(test_file), "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0 and "2 passed" in proc.stdout, proc.stdout + proc.stderr


def test_tempdir_helpers():
    d = tvm.support.utils.tempdir()
    path = d.relpath("x.txt")
    with open(path, "w") as f:
        f.write("x")
    assert d.listdir() == ["x.txt"]
    d.remove()
    assert not os.path.exists(path)
    from tvm.contrib import utils

    with utils.tempdir() as d2:
        folder = d2.path
        assert os.path.isdir(folder)
    assert not os.path.exists(folder)
    # without an import of its own (a fresh process: this one imported it above)
    code = (
        "import os, tvm; d = tvm.contrib.utils.tempdir(); assert os.path.isdir(d.path); print(tvm.contrib.cc.__name__)"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "tvm.contrib.cc", proc.stdout + proc.stderr


def test_global_functions():
    name = "testing.apache_api_echo"
    tvm.register_global_func(name, lambda x: x + 1, override=True)
    assert tvm.get_global_func(name)(1) == 2
    assert tvm.get_global_func("testing.no_such_function", allow_missing=True) is None


def test_nd_is_the_older_name_of_runtime_tensors():
    a = tvm.nd.array(np.arange(3, dtype="float32"), tvm.cpu(0))
    assert isinstance(a, tvm.nd.NDArray) and isinstance(a, tvm.runtime.Tensor)
    np.testing.assert_array_equal(a.numpy(), [0, 1, 2])
    assert tuple(tvm.nd.empty((2,), "int32").shape) == (2,)
    with pytest.raises(AttributeError, match="tvm.runtime.tensor"):
        tvm.nd.no_such_function  # noqa: B018


def test_wrong_arguments_to_the_python_names_are_named():
    with pytest.raises(TypeError, match="from_expr takes a PrimFunc"):
        tvm.IRModule.from_expr(tvm.tir.const(1))
    with pytest.raises(TypeError, match="dict of name -> PrimFunc"):
        tvm.IRModule([add_one])
    with pytest.raises(ValueError, match="needs its 'kind'"):
        tvm.target.Target({"mcpu": "x"})
    with pytest.raises(TypeError, match="config must be a dict"):
        tvm.transform.PassContext(config=3)
    with pytest.raises(TypeError, match="required_pass must be a list"):
        tvm.transform.PassContext(required_pass=3)
    with pytest.raises(ValueError, match="not a bool constant"):
        tvm.tir.const(1.5, "bool")
    assert tvm.tir.const(True, "float32").value == 1.0 and tvm.tir.const(1, np.dtype("int8")).dtype == "int8"
    with pytest.raises(ValueError, match="has a fraction"):
        tvm.tir.const(1.5, "int32")
    assert tvm.tir.const(2.0, "int32").dtype == "int32"


def test_typed_assert_parts_must_be_known_when_written():
    with pytest.raises(TVMScriptError, match="message parts must be strings"):

        @T.prim_func
        def check(A: T.Buffer((4,), "int32")):
            assert A[0] > 0, ("ValueError", ["A[0] is ", A[0]])


def test_python_arithmetic_on_integer_constants_folds():
    c = tvm.tir.const
    assert (c(3) + 4).value == 7 and (c(3) * c(5)).value == 15 and (10 - c(4)).value == 6
    assert (c(-7) // 2).value == -4 and (c(-7) % 3).value == 2 and (c(3) < 4).dtype == "bool"
    assert isinstance(c(1) // 0, tvm.tir.FloorDiv)  # its run-time meaning (0), not a Python error
    assert int(c(2**30) * 4) == 0 and int(c(255, "uint8") + c(1, "uint8")) == 0  # wraps as at run time
    assert int(c(2**31 - 1) + 1) == -(2**31) and float(c(1.5)) == 1.5
    assert isinstance(c(100, "int8") + 200, tvm.tir.Add)  # 200 is no int8: left to the verifier
    assert isinstance(c(3, "int64") + c(4), tvm.tir.Add)  # two dtypes: the verifier's business
    x = tvm.tir.Var("x", "int32")
    assert isinstance(x + 1, tvm.tir.Add)


def test_python_arithmetic_on_float_constants_and_the_helpers_fold():
    """As in Apache TVM, operators and ``tvm.tir`` helpers on two constants give the constant,
    computed as the machine computes it (float32 rounded once per operation; float16 is left to
    the compiler, which computes it on the target's terms)."""
    c, tir = tvm.tir.const, tvm.tir
    third = c(1.0, "float32") / c(3.0, "float32")
    assert third.value == float(np.float32(1) / np.float32(3))
    assert (c(16777216.0, "float32") + c(1.0, "float32")).value == 16777216.0  # float32, not double
    assert (c(0.1, "float64") * 3).value == 0.1 * 3
    assert (c(1.5, "float32") < c(2.5, "float32")).value == 1
    assert isinstance(c(1.0, "float16") + c(2.0, "float16"), tvm.tir.Add)
    assert tir.floordiv(c(-7), c(2)).value == -4 and tir.truncdiv(c(-7), 2).value == -3
    assert tir.truncmod(c(-7), 2).value == -1 and tir.floormod(c(-7), 2).value == 1
    assert tir.min(c(3), c(4)).value == 3 and tir.max(c(3.0), c(4.0)).value == 4.0
    assert isinstance(tir.floordiv(c(1), c(0)), tvm.tir.FloorDiv)


def test_type_objects_of_the_newer_api():
    """``expr.ty`` and ``buffer.ty``, and PrimType / PointerType taken wherever a dtype goes."""
    from tvm.ir import PointerType, PrimType

    x = tvm.tir.Var("x", PrimType("int64"))
    assert x.dtype == "int64" and x.ty == "int64" and x.ty == PrimType("int64") and x.ty.dtype.bits == 64
    assert tvm.tir.const(3).ty.dtype == "int32" and tvm.ir.is_prim_expr(x) and not tvm.ir.is_prim_expr(3)
    assert PrimType("float32x4").dtype.lanes == 4 and not PrimType("float32x4").is_scalar()
    assert tvm.tir.const(2, x.ty).dtype == "int64" and (x + 1).astype(PrimType("int32")).dtype == "int32"
    buf = tvm.tir.decl_buffer((4, 8), PrimType("float16"), name="B")
    assert buf.ty.dtype == PrimType("float16") and [int(e) for e in buf.ty.shape] == [4, 8]
    assert int(buf.ty.elem_offset) == 0 and buf.ty.scope == "global"
    p = tvm.tir.Var("p", PointerType(PrimType("float32"), "shared"))
    assert p.dtype == "handle" and p.ty.element_type == "float32" and p.ty.storage_scope == "shared"
    with pytest.raises(ValueError, match="unsupported dtype 'float31'"):
        PrimType("float31")
    assert T.call_extern("void", "f", 1).ty == PrimType("void")
    e4m3 = "float8_e4m3fn"  # both are 1.0 in float8: compared as the machine compares them
    c = tvm.tir.const
    assert (c(1.01, e4m3) > c(1.0, e4m3)).value == 0 and c(1.01, e4m3).equal(c(1.0, e4m3)).value == 1


def test_decl_buffer_strides_and_subclassed_scopes():
    buf = tvm.tir.decl_buffer((2, 4), "float32", strides=[4, 1])
    assert all(isinstance(s, tvm.tir.IntImm) for s in buf.strides)

    class MyTarget(tvm.target.Target):
        pass

    with MyTarget("c") as t:
        assert tvm.target.Target.current() is t


def test_importing_a_package_this_project_does_not_provide_says_what_to_use():
    """``from tvm import te`` said only "cannot import name 'te'", as a broken installation does."""
    import importlib

    with pytest.raises(ModuleNotFoundError, match="No module named 'tvm.te': tensor expressions .* TVMScript"):
        from tvm import te  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="No module named 'tvm.relax': Relax"):
        importlib.import_module("tvm.relax.frontend")
    assert not hasattr(tvm, "rpc")
    assert importlib.import_module("tvm.tirx.transform") is importlib.import_module("tvm.tir.transform")
    # also those below a real package, and the schedule API (the documentation promised these)
    with pytest.raises(
        ModuleNotFoundError, match=r"No module named 'tvm.s_tir': the schedule API \(tvm.s_tir.Schedule\)"
    ):
        from tvm.s_tir import Schedule  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match="No module named 'tvm.target.codegen': LLVM's target queries"):
        from tvm.target import codegen  # noqa: F401
    assert importlib.import_module("tvm.target").Target("c").kind.name == "c"


def test_comparisons_python_helpers_write_are_expressions():
    """``==`` / ``!=`` on expressions build EQ / NE as in Apache TVM (they were Python's identity:
    a helper's ``T.Select(v == 0, ...)`` got a constant False), promoting as TVMScript's own
    ``==`` does; their truth value is identity, and constants fold to a constant whose truth
    value is its value."""
    import numpy as np

    from tvm import tir
    from tvm.script import tir as T

    x, flag = tir.Var("x", "int32"), tir.Var("flag", "bool")
    assert type(x == 1).__name__ == "EQ" and not (x == 1) and (x == x) and not (x != x)
    assert bool(tir.const(3) == 3) and not (tir.const(3) != 3) and isinstance(tir.const(3) == 3, tir.IntImm)
    assert (flag != 0).dtype == "bool" and x not in [tir.Var("x", "int32")] and x != None  # noqa: E711
    assert (tir.const(3, "int64") == tir.const(3, "int32")) and not (tir.const(True, "bool") != True)  # noqa: E712

    def same(a, b):
        return a == b

    with pytest.raises(tvm.error.TVMError, match="different dtypes float16 and bfloat16"):

        @T.prim_func
        def mixed(A: T.Buffer((2,), "float16"), B: T.Buffer((2,), "bfloat16"), C: T.Buffer((2,), "int32")):
            for i in range(2):
                C[i] = T.Select(same(A[i], B[i]), 1, 2)

    def zero_to_42(v):
        return T.Select(v == 0, T.int32(42), v)

    def square_and_small(n, i):
        return (n == 4) & (i < n)

    @T.prim_func
    def g(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
        for i in range(4):
            B[i] = zero_to_42(A[i]) + T.Cast("int32", square_and_small(A.shape[0], i)) * 100

    a, b = np.array([0, 5, 0, 7], "int32"), np.zeros(4, "int32")
    tvm.compile(g, target="c")(a, b)
    np.testing.assert_array_equal(b, [142, 105, 142, 107])
