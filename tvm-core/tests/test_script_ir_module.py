"""``@I.ir_module`` classes: their prim_funcs compile into one library and each runs."""

import numpy as np
import pytest
import tvm
from tvm.script import ir as I
from tvm.script import TVMScriptError
from tvm.script import tir as T


@I.ir_module
class Module:
    @T.prim_func
    def double(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] * T.float32(2)

    @T.prim_func(private=True)
    def negate(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = -A[i]


def test_module_functions_compile_together_and_run():
    assert isinstance(Module, tvm.tir.IRModule) and sorted(n for n, _ in Module.items()) == ["double", "negate"]
    lib = tvm.compile(Module, target="c")
    a = np.arange(8, dtype="float32")
    for name, want in (("double", a * 2), ("negate", -a)):
        b = tvm.runtime.empty((8,), "float32")
        lib[name](tvm.runtime.tensor(a), b)
        np.testing.assert_array_equal(b.numpy(), want)


def test_a_class_without_functions_is_an_empty_module():
    @I.ir_module
    class Empty:
        pass

    assert isinstance(Empty, tvm.tir.IRModule) and len(Empty) == 0
    with pytest.raises(ValueError, match="nothing to compile"):
        tvm.compile(Empty, target="c")


def test_a_module_that_skips_the_checks_skips_them_for_its_functions():
    @I.ir_module(check_well_formed=False)
    class Unchecked:
        @T.prim_func
        def f(a: T.handle):
            n = T.int32()
            A = T.match_buffer(a, (n * 32,), "float32")
            A[0] = T.float32(0)

    assert sorted(Unchecked.functions) == ["f"]
    with pytest.raises(TVMScriptError, match="'n' is used but not defined"):

        @I.ir_module
        class Checked:
            @T.prim_func
            def f(a: T.handle):
                n = T.int32()
                A = T.match_buffer(a, (n * 32,), "float32")
                A[0] = T.float32(0)


def test_the_older_tvm_script_ir_module_spelling():
    @tvm.script.ir_module
    class Older:
        @T.prim_func
        def add_one(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
            for i in range(4):
                B[i] = A[i] + 1

    lib = tvm.compile(Older, target="c")
    b = tvm.runtime.empty((4,), "int32")
    lib["add_one"](tvm.runtime.tensor(np.arange(4, dtype="int32")), b)
    np.testing.assert_array_equal(b.numpy(), np.arange(4) + 1)


def test_two_functions_exported_under_one_name_are_refused_by_name():
    @I.ir_module
    class Clash:
        @T.prim_func
        def first(A: T.Buffer((1,), "float32")):
            T.func_attr({"global_symbol": "same"})
            A[0] = T.float32(1)

        @T.prim_func
        def second(A: T.Buffer((1,), "float32")):
            T.func_attr({"global_symbol": "same"})
            A[0] = T.float32(2)

    with pytest.raises(ValueError, match="'first' and 'second' are both exported as 'same'"):
        tvm.compile(Clash, target="c")
    # a list of functions gets the same checks as a module
    with pytest.raises(ValueError, match="item 0 and item 1 are both exported as 'same'"):
        tvm.compile([Clash["first"], Clash["second"]], target="c")
    with pytest.raises(TypeError, match="item 1 is a str, not a PrimFunc"):
        tvm.compile([Clash["first"], "second"], target="c")


def test_module_attributes_are_kept_and_compile_changes_nothing():
    @I.ir_module
    class WithAttrs:
        I.module_attrs({"system_lib_prefix": "modA_"})

        @T.prim_func
        def inc(x: T.Buffer((12,), "float32")):
            for i in range(12):
                x[i] = x[i] + T.float32(1)

    assert WithAttrs.attrs == {"system_lib_prefix": "modA_"}
    x = np.arange(12, dtype="float32")
    tvm.compile(WithAttrs, target="c")["inc"](x)
    np.testing.assert_array_equal(x, np.arange(12) + 1)
    with pytest.raises(TypeError, match="dict with string keys"):
        I.module_attrs([("a", 1)])
    with pytest.raises(TypeError, match="body of an @I.ir_module class"):
        I.module_attrs({"a": 1})


def test_the_unchecked_flag_under_another_name_or_from_a_variable():
    ir_mod, unchecked = I.ir_module, False

    @ir_mod(check_well_formed=unchecked)
    class Unchecked:
        @T.prim_func
        def f(a: T.handle):
            n = T.int32()
            A = T.match_buffer(a, (n * 32,), "float32")
            A[0] = T.float32(0)

    assert sorted(Unchecked.functions) == ["f"]


def test_module_text_parses_into_the_whole_module():
    """``tvm.script.from_source`` of an ``@I.ir_module`` class gives the module with every
    function (not only the first), under the class's own check_well_formed."""
    text = """
@I.ir_module
class Mod:
    @T.prim_func
    def a(A: T.Buffer((4,), "int32")):
        A[0] = 1

    @T.prim_func
    def b(A: T.Buffer((4,), "int32")):
        A[1] = 2
"""
    mod = tvm.script.from_source(text)
    assert isinstance(mod, tvm.tir.IRModule) and sorted(mod.functions) == ["a", "b"]
    lib = tvm.compile(mod, target="c")
    x = tvm.runtime.tensor(np.zeros(4, "int32"))
    lib["a"](x)
    lib["b"](x)
    np.testing.assert_array_equal(x.numpy(), [1, 2, 0, 0])
    unchecked = text.replace("@I.ir_module\n", "@I.ir_module(check_well_formed=False)\n").replace(
        "A[0] = 1", "n = T.int32()\n        A[0] = n"
    )
    assert sorted(tvm.script.from_source(unchecked).functions) == ["a", "b"]
    with pytest.raises(TVMScriptError, match="'n' is used but not defined"):
        tvm.script.from_source(unchecked.replace("(check_well_formed=False)", ""))


def test_a_module_iterates_its_names_and_refuses_what_is_no_function():
    @I.ir_module
    class Two:
        @T.prim_func
        def first(A: T.Buffer((1,), "float32")):
            A[0] = T.float32(1)

        @T.prim_func
        def second(A: T.Buffer((1,), "float32")):
            A[0] = T.float32(2)

    assert list(Two) == ["first", "second"] and [n for n in Two] == ["first", "second"]
    with pytest.raises(KeyError, match="no function 'third' \\(its functions: 'first', 'second'\\)"):
        Two["third"]
    with pytest.raises(TypeError, match="maps names \\(str\\) to PrimFuncs, got str -> int"):
        Two["g"] = 5
    with pytest.raises(TypeError, match="got int -> PrimFunc"):
        Two[7] = Two["first"]
    Two["copy"] = Two["first"]
    assert list(Two) == ["first", "second", "copy"]
