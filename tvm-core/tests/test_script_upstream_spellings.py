"""More of Apache TVM's TVMScript spellings: ``T.sblock_alloc_buffer``, ``T.axis.S``/``T.axis.R``,
``x: T.let[dtype] = ...``, ``T.bind``, ``T.meta_var``, ``T.assume``, ``T.cast``, ``dtype=`` on
intrinsics, ``n, m = T.int32(), T.int32()`` and ``(kind, [parts])`` assert messages. Each kernel
compiles and runs, compared with NumPy."""

import re
import sys

import numpy as np
import pytest
import tvm
import tvm.contrib.cc
from tvm.script import tir as T


@T.prim_func
def reduce_with_block_buffer(a: T.handle, b: T.handle):
    n, m = T.int32(), T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    scale = T.meta_var(2)
    for i in range(n):
        with T.sblock("row"):
            vi = T.axis.S(n, i)
            acc = T.sblock_alloc_buffer((1,), "float32", scope="local")
            T.sblock_attr({"note": "ignored"})
            acc[0] = T.float32(0)
            for k in range(m):
                with T.sblock("acc"):
                    vk = T.axis.R(m, k)
                    T.assume(vk < m)
                    term: T.let[T.float32] = T.cast(A[vi, vk], "float32") * T.float32(scale)
                    acc[0] = acc[0] + term
            total = T.bind(acc[0])
            B[vi] = T.exp(total * T.float32(0.01), dtype="float32")


def test_upstream_spellings_compile_and_run():
    a = np.random.rand(5, 7).astype("float32")
    b = tvm.runtime.empty((5,), "float32")
    tvm.compile(reduce_with_block_buffer, target="c")["reduce_with_block_buffer"](tvm.runtime.tensor(a), b)
    np.testing.assert_allclose(b.numpy(), np.exp(a.sum(axis=1) * 2 * 0.01), rtol=1e-5)


@T.prim_func
def checked(a: T.handle, x: T.int32):
    A = T.match_buffer(a, (1,), "int32")
    assert x > 0, ("ValueError", ["x must be ", "positive"])
    A[0] = x


def test_kind_and_parts_assert_message():
    mod = tvm.compile(checked, target="c")
    a = tvm.runtime.tensor(np.zeros(1, "int32"))
    mod["checked"](a, 5)
    assert a.numpy()[0] == 5
    with pytest.raises(ValueError, match="x must be positive"):
        mod["checked"](a, -1)


@T.prim_func
def extern_calls(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (8,), "float32")
    B = T.match_buffer(b, (8,), "float32")
    for i in range(8):
        T.attr(A.data, "pragma_unroll_explicit", 0)
        with T.attr(B.data, "async_scope", 1):
            B[i] = T.call_extern("float32", "sqrtf", A[i]) + T.call_extern("fabsf", A[i], dtype="float32")


def test_call_extern_and_ignored_attrs():
    a = np.arange(8, dtype="float32")
    b = tvm.runtime.empty((8,), "float32")
    tvm.compile(extern_calls, target="c")["extern_calls"](tvm.runtime.tensor(a), b)
    np.testing.assert_allclose(b.numpy(), np.sqrt(a) + a, rtol=1e-6)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="binding at load uses GNU ld's -z now (Linux)")
def test_call_extern_of_a_function_nothing_defines_names_it():
    """Compiling succeeds (the function may come from a library loaded later, or where the module
    is exported to) with a warning; a use of the module names the function and the fix."""

    @T.prim_func
    def calls_missing(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.call_extern("float32", "no_such_function_here", A[i])

    with pytest.warns(UserWarning, match="call 'no_such_function_here', which no library loaded"):
        mod = tvm.compile(calls_missing, target="c")
    assert not mod.is_loaded and "not loaded yet" in repr(mod)
    a = tvm.runtime.tensor(np.zeros(4, "float32"))
    for _ in range(2):  # tried again at each use, the same answer while nothing defines it
        with pytest.raises(RuntimeError, match="calls the function 'no_such_function_here'.*RTLD_GLOBAL"):
            mod["calls_missing"](a)

    @T.prim_func
    def calls_missing_void():
        T.call_pure_extern("no_such_void_function_here", dtype="void")

    with pytest.warns(UserWarning, match="no_such_void_function_here"):
        mod = tvm.compile(calls_missing_void, target="c")
    with pytest.raises(RuntimeError, match="'no_such_void_function_here'"):
        mod["calls_missing_void"]()


def _scaling_library(tmp_path, name: str, factor: float):
    """A shared library defining ``float name(float x)`` returning ``factor * x``."""
    import subprocess

    from tvm.contrib import cc

    src = tmp_path / f"{name}.c"
    src.write_text(f"float {name}(float x) {{ return {factor}f * x; }}\n")
    lib = tmp_path / f"lib{name}.so"
    subprocess.run([*cc.compiler(), "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    return lib


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="binding at load uses GNU ld's -z now (Linux)")
def test_call_extern_defined_after_compiling_and_where_exported(tmp_path):
    """The library defining the function is loaded after tvm.compile: the module loads at its next
    use and computes with it; exported, it runs in a process that loads that library first and
    says what is missing in one that does not."""
    import ctypes
    import subprocess

    @T.prim_func
    def scaled_later(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.call_extern("float32", "tvm_test_scale_by_five", A[i]) + T.float32(1)

    with pytest.warns(UserWarning, match="tvm_test_scale_by_five"):
        mod = tvm.compile(scaled_later, target="c")
    out = tmp_path / "scaled_later.so"
    mod.export_library(str(out))  # before the function exists anywhere
    lib = _scaling_library(tmp_path, "tvm_test_scale_by_five", 5.0)
    a = tvm.runtime.tensor(np.arange(4, dtype="float32"))
    with pytest.raises(RuntimeError, match="tvm_test_scale_by_five"):
        mod["scaled_later"](a)
    for _ in range(2):  # the second load is from a private copy: the message names the user's file
        with pytest.raises(RuntimeError, match=f"^{re.escape(str(out))} calls the function 'tvm_test_scale_by_five'"):
            tvm.runtime.load_module(str(out))["scaled_later"](a)
    ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    mod["scaled_later"](a)
    assert mod.is_loaded
    np.testing.assert_array_equal(a.numpy(), 5 * np.arange(4, dtype="float32") + 1)

    run = (
        "import ctypes, sys, numpy as np, tvm\n"
        "if len(sys.argv) > 2: ctypes.CDLL(sys.argv[2], mode=ctypes.RTLD_GLOBAL)\n"
        "try:\n    m = tvm.runtime.load_module(sys.argv[1])\n"
        "except RuntimeError as e:\n    print(e); sys.exit(0)\n"
        "a = tvm.runtime.tensor(np.arange(4, dtype='float32'))\n"
        "m['scaled_later'](a)\nprint(a.numpy().tolist())\n"
    )
    with_lib = subprocess.run([sys.executable, "-c", run, str(out), str(lib)], capture_output=True, text=True)
    assert with_lib.stdout.strip() == "[1.0, 6.0, 11.0, 16.0]", with_lib.stdout + with_lib.stderr
    without = subprocess.run([sys.executable, "-c", run, str(out)], capture_output=True, text=True)
    assert "calls the function 'tvm_test_scale_by_five', which no library loaded" in without.stdout, (
        without.stdout + without.stderr
    )


@T.prim_func
def vthreads(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (2, 64), "float32")
    B = T.match_buffer(b, (2, 64), "int32")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for vx in T.thread_binding(2, thread="vthread.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                i = T.Add(T.Mul(vx, 32), tx)
                B[bx, i] = T.Div(T.reinterpret("int32", A[bx, i]), 1 << 23)


def test_virtual_threads_node_constructors_and_reinterpret():
    """vthread loops run in order (they never synchronize); T.Add/T.Mul/T.Div build nodes;
    T.reinterpret reads the float's bits (its exponent field here)."""
    dev = tvm.device("example")
    a = np.random.rand(2, 64).astype("float32") + 1
    b = tvm.runtime.empty((2, 64), "int32", dev)
    tvm.compile(vthreads, target="example")["vthreads"](tvm.runtime.tensor(a, dev), b)
    np.testing.assert_array_equal(b.numpy(), a.view("int32") // (1 << 23))


def test_reinterpret_with_the_dtype_as_a_keyword():
    """``T.reinterpret(x, dtype="int32")``, the spelling Apache TVM's printer writes."""

    @T.prim_func
    def bits(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
        for i in range(8):
            B[i] = T.reinterpret(A[i], dtype="int32")

    a = np.random.rand(8).astype("float32")
    b = tvm.runtime.empty((8,), "int32")
    tvm.compile(bits, target="c")["bits"](tvm.runtime.tensor(a), b)
    np.testing.assert_array_equal(b.numpy(), a.view("int32"))


def test_address_of_isnullptr_undef_profile_hooks_and_integer_conditions():
    @T.prim_func
    def misc(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
        T.evaluate(T.start_profile_intrinsic(3))  # no profiler attached: nothing
        for i in range(8):
            if i:  # an integer condition means i != 0
                B[i] = A[i] + T.Cast("int32", T.isnullptr(T.address_of(A[i])))
            else:
                B[i] = T.Cast("int32", T.isnullptr(T.address_of(A))) - 1
                A[0] = T.undef(dtype="int32")  # stores nothing
        T.evaluate(T.end_profile_intrinsic(3))

    a = np.arange(8, dtype="int32") + 5
    ta, b = tvm.runtime.tensor(a), tvm.runtime.empty((8,), "int32")
    tvm.compile(misc, "c")["misc"](ta, b)
    np.testing.assert_array_equal(b.numpy(), np.r_[-1, a[1:]])
    np.testing.assert_array_equal(ta.numpy(), a)  # the undef store was dropped


@T.prim_func
def block_buffer_with_expression_offset(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    R = T.sblock_alloc_buffer([128], elem_offset=T.int64(0), align=64, offset_factor=1)
    for i in range(128):
        with T.sblock("r"):
            vi = T.axis.S(128, i)
            R[vi] = A[vi] * T.float32(3)
    for i in range(128):
        with T.sblock("b"):
            vi = T.axis.S(128, i)
            B[vi] = R[127 - vi]


def test_block_buffer_whose_elem_offset_is_an_expression():
    a = np.arange(128, dtype="float32")
    b = np.zeros(128, "float32")
    tvm.compile(block_buffer_with_expression_offset, target="c")["block_buffer_with_expression_offset"](a, b)
    np.testing.assert_array_equal(b, a[::-1] * 3)


@T.prim_func
def clear_with_access_ptr(A: T.Buffer((4, 8), "float32")):
    T.evaluate(A.access_ptr("r"))  # an address alone does nothing
    T.evaluate(T.call_extern("handle", "memset", A.access_ptr("w", offset=12), 0, 4 * 4))


def test_buffer_access_ptr_is_the_address_of_an_element():
    a = np.ones((4, 8), "float32")
    tvm.compile(clear_with_access_ptr, target="c")["clear_with_access_ptr"](a)
    want = np.ones(32, "float32")
    want[12:16] = 0
    np.testing.assert_array_equal(a.reshape(-1), want)
    with pytest.raises(Exception, match="access mask must be made of 'r' and 'w'"):

        @T.prim_func
        def bad(A: T.Buffer((4,), "float32")):
            T.evaluate(A.access_ptr("x"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="binding at load uses GNU ld's -z now (Linux)")
def test_call_extern_of_a_function_the_process_loaded(tmp_path):
    """A function of the caller's own library, loaded with RTLD_GLOBAL before compiling: declared
    from the call's types (C would assume it returns int), bound when the library loads; an
    exported library loaded where that function is missing says which function and the fix."""
    import ctypes
    import subprocess

    lib = _scaling_library(tmp_path, "tvm_test_scale_by_three", 3.0)

    @T.prim_func
    def scaled(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.call_extern("float32", "tvm_test_scale_by_three", A[i])

    ctypes.CDLL(str(lib), mode=ctypes.RTLD_GLOBAL)
    mod = tvm.compile(scaled, target="c")
    a = tvm.runtime.tensor(np.arange(4, dtype="float32"))
    mod["scaled"](a)
    np.testing.assert_array_equal(a.numpy(), 3 * np.arange(4, dtype="float32"))
    out = tmp_path / "scaled.so"
    mod.export_library(str(out))
    probe = f"import tvm\ntry:\n    tvm.runtime.load_module({str(out)!r})\nexcept RuntimeError as e:\n    print(e)\n"
    said = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "calls the function 'tvm_test_scale_by_three', which no library loaded" in said, said
    assert "RTLD_GLOBAL" in said


def test_count_leading_zeros_in_both_spellings():
    @T.prim_func
    def leading(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int64"), C: T.Buffer((8,), "int32")):
        for i in range(8):
            C[i] = T.clz(A[i]) * 100 + T.call_intrin("int32", "tir.clz", B[i])

    a = np.array([0, 1, -1, 2, 255, 1 << 20, 2**31 - 1, -(2**31)], "int32")
    b = np.array([0, 1, -1, 2**40, 7, 2**62, 2**63 - 1, -(2**63)], "int64")
    c = np.zeros(8, "int32")
    tvm.compile(leading, target="c")["leading"](a, b, c)
    want = [
        (32 - (int(x) & (2**32 - 1)).bit_length()) * 100 + 64 - (int(y) & (2**64 - 1)).bit_length()
        for x, y in zip(a, b)
    ]
    np.testing.assert_array_equal(c, want)
    with pytest.raises(TypeError, match="clz expects a 32- or 64-bit integer, got float32"):
        T.clz(tvm.tir.const(1.0, "float32"))


def _fixed_point(x: int, y: int, q: int, left: int, right: int) -> int:
    """The exact requantization: round half up of x * 2**left * y / 2**(q + right), as int32."""
    total = q + right
    value = ((x << left) * y + (1 << (total - 1))) >> total
    return (value + 2**31) % 2**32 - 2**31


def test_fixed_point_requantization_in_both_forms():
    """T.q_multiply_shift (shift s: left when positive) and T.q_multiply_shift_per_axis (shifts
    apart, the left one optional), as quantized kernels spell them, in int64 on every target."""

    @T.prim_func
    def requantize(
        X: T.Buffer((64,), "int32"),
        S: T.Buffer((64,), "int32"),
        L: T.Buffer((64,), "int32"),
        R: T.Buffer((64,), "int32"),
        out: T.Buffer((4, 64), "int32"),
    ):
        for i in range(64):
            out[0, i] = T.q_multiply_shift(X[i], 1963325822, 31, S[i], dtype="int32")
            out[1, i] = T.q_multiply_shift_per_axis(X[i], 1408572815, L[i], R[i], 31, False, True, dtype="int32")
            out[2, i] = T.q_multiply_shift_per_axis(X[i], 1408572815, L[i], R[i], 31, T.bool(True), True)
            out[3, i] = T.call_intrin("int32", "tir.q_multiply_shift", X[i], 1 << 30, 31, -2)

    rng = np.random.default_rng(3)
    x = np.concatenate([rng.integers(-(2**20), 2**20, 60), [0, -1, 2**31 - 1, -(2**31)]]).astype("int32")
    s, left, right = (rng.integers(lo, hi, 64).astype("int32") for lo, hi in ((-8, 8), (0, 4), (0, 8)))
    left[60:] = 0  # the int32 extremes shifted left times y would leave int64
    out = np.zeros((4, 64), "int32")
    tvm.compile(requantize, target="c")["requantize"](x, s, left, right, out)
    want = [
        [_fixed_point(int(a), 1963325822, 31, max(int(b), 0), max(-int(b), 0)) for a, b in zip(x, s)],
        [_fixed_point(int(a), 1408572815, 31, 0, int(r)) for a, r in zip(x, right)],
        [_fixed_point(int(a), 1408572815, 31, int(l), int(r)) for a, l, r in zip(x, left, right)],
        [_fixed_point(int(a), 1 << 30, 31, 0, 2) for a in x],
    ]
    np.testing.assert_array_equal(out, want)
    with pytest.raises(TypeError, match="q_multiply_shift multiplies int32 Q-numbers, got float32"):
        T.q_multiply_shift(tvm.tir.const(1.0, "float32"), 3, 31, 0)


def test_population_count_in_both_spellings():
    @T.prim_func
    def count(A: T.Buffer((8,), "int8"), B: T.Buffer((8,), "uint64"), C: T.Buffer((8,), "int32")):
        for i in range(8):
            C[i] = T.Cast("int32", T.popcount(A[i])) * 100 + T.call_intrin("int32", "tir.popcount", B[i])

    a = np.array([0, 1, -1, 3, 127, -128, 85, -86], "int8")
    b = np.array([0, 1, 2**64 - 1, 2**40 + 7, 255, 2**63, 2**63 - 1, 6], "uint64")
    c = np.zeros(8, "int32")
    tvm.compile(count, target="c")["count"](a, b, c)
    want = [bin(int(x) & 0xFF).count("1") * 100 + bin(int(y)).count("1") for x, y in zip(a, b)]
    np.testing.assert_array_equal(c, want)
    with pytest.raises(TypeError, match="popcount expects an 8-, 16-, 32- or 64-bit integer, got float32"):
        T.popcount(tvm.tir.const(1.0, "float32"))


@pytest.mark.parametrize("dtype, rtol", [("float32", 2e-6), ("float64", 1e-13), ("float16", 2e-3)])
def test_composite_math_functions(dtype, rtol):
    """T.asinh, T.acosh, T.atanh, T.hypot, T.copysign and T.ldexp against NumPy, from tiny to huge
    magnitudes (where the textbook formulas cancel or overflow), signed zeros included."""
    n = 512

    @T.prim_func
    def math(a: T.handle, b: T.handle, c: T.handle, e: T.handle, o: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        C = T.match_buffer(c, (n,), dtype)
        E = T.match_buffer(e, (n,), "int32")
        O = T.match_buffer(o, (6, n), dtype)
        for i in range(n):
            O[0, i] = T.asinh(A[i])
            O[1, i] = T.acosh(C[i])
            O[2, i] = T.atanh(B[i])
            O[3, i] = T.hypot(A[i], B[i])
            O[4, i] = T.copysign(A[i], B[i])
            O[5, i] = T.ldexp(B[i], E[i])

    rng = np.random.default_rng(5)
    a = (rng.standard_normal(n) * np.logspace(-6, 4 if dtype == "float16" else 20, n)).astype(dtype)
    b = rng.uniform(-0.999, 0.999, n).astype(dtype)
    b[:4] = [0.0, -0.0, 0.5, -0.5]
    c = (np.abs(a) + 1).astype(dtype)
    e = rng.integers(-20, 20, n).astype("int32")
    out = np.zeros((6, n), dtype)
    tvm.compile(math, target="c")["math"](a, b, c, e, out)
    wide = [v.astype("float64") for v in (a, b, c)]
    want = [np.arcsinh(wide[0]), np.arccosh(wide[2]), np.arctanh(wide[1]), np.hypot(wide[0], wide[1]),
            np.copysign(a, b), np.ldexp(wide[1], e)]  # fmt: skip
    for k, name in enumerate(["asinh", "acosh", "atanh", "hypot", "copysign", "ldexp"]):
        with np.errstate(over="ignore"):  # float16 ldexp results past 65504 are inf on both sides
            expected = np.asarray(want[k]).astype(dtype)
        np.testing.assert_allclose(out[k], expected, rtol=rtol, atol=0, err_msg=name)
    assert np.signbit(out[4][1]) and not np.signbit(out[4][0])  # the sign of -0.0 is copied


def test_fused_multiply_add_rounds_once():
    """T.fma near cancellation (c = -a * b to three digits), where a separately rounded product
    would lose most bits, against the exactly rounded result."""
    from fractions import Fraction

    @T.prim_func
    def fused(
        A: T.Buffer((64,), "float64"),
        B: T.Buffer((64,), "float64"),
        C: T.Buffer((64,), "float64"),
        O: T.Buffer((64,), "float64"),
    ):
        for i in range(64):
            O[i] = T.fma(A[i], B[i], C[i])

    rng = np.random.default_rng(6)
    a, b = rng.uniform(-2, 2, 64), rng.uniform(-2, 2, 64)
    c = -(a * b) * (1 + rng.uniform(-1e-3, 1e-3, 64))
    out = np.zeros(64)
    tvm.compile(fused, target="c")["fused"](a, b, c, out)
    want = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    np.testing.assert_array_equal(out, want)
    with pytest.raises(TypeError, match="fma expects float arguments, got int32"):
        T.fma(tvm.tir.const(1, "int32"), 2, 3)


def test_only_functions_the_kernel_calls_are_left_to_the_loader():
    """A missing symbol the code does not call with T.call_extern (a data symbol here) is a
    defect of the code: a compile error, not a library that fails to load later."""
    from tvm.contrib import cc

    code = "extern int tvm_test_missing_data; int reads_it(void) { return tvm_test_missing_data; }"
    with pytest.raises(cc.CompileError, match="undefined symbol 'tvm_test_missing_data'"):
        cc.compile_shared(code, late_bound=("some_other_function",))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="binding at load uses GNU ld's -z now (Linux)")
def test_a_module_waiting_for_its_library_loads_once_across_threads(tmp_path):
    import ctypes
    from concurrent.futures import ThreadPoolExecutor

    @T.prim_func
    def scaled_by_seven(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.call_extern("float32", "tvm_test_scale_by_seven", A[i])

    with pytest.warns(UserWarning, match="tvm_test_scale_by_seven"):
        mod = tvm.compile(scaled_by_seven, target="c")
    assert not hasattr(mod, "scaled_by_seven")  # not loadable yet: an attribute error, not a crash
    ctypes.CDLL(str(_scaling_library(tmp_path, "tvm_test_scale_by_seven", 7.0)), mode=ctypes.RTLD_GLOBAL)

    def run(_):
        a = tvm.runtime.tensor(np.ones(4, "float32"))
        mod["scaled_by_seven"](a)
        return a.numpy().tolist()

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(run, range(16))) == [[7.0] * 4] * 16


def test_portable_llvm_intrinsics_are_their_operations():
    """T.call_llvm_intrin / T.call_llvm_pure_intrin of an LLVM intrinsic that is a portable
    operation (with or without its type suffix) computes it on any target; others are refused by
    name."""

    @T.prim_func
    def llvm_ops(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), I: T.Buffer((8,), "int32")):
        for i in range(8):
            T.evaluate(T.call_llvm_intrin("", "llvm.assume", A[i] == A[i]))
            B[i] = T.call_llvm_pure_intrin("float32", "llvm.sqrt.f32", T.fabs(A[i])) + T.call_llvm_pure_intrin(
                "float32", "llvm.fmuladd", A[i], A[i], T.float32(1)
            )
            I[i] = T.call_llvm_pure_intrin("int32", "llvm.ctlz", I[i], T.bool(False)) * 100 + T.call_llvm_pure_intrin(
                "int32", "llvm.ctpop.i32", I[i]
            )

    a = np.random.default_rng(3).uniform(-2, 2, 8).astype("float32")
    ints = np.array([0, 1, 2, 3, 255, -1, 1 << 20, 7], "int32")
    b, i = np.zeros(8, "float32"), ints.copy()
    tvm.compile(llvm_ops, target="c")["llvm_ops"](a, b, i)
    np.testing.assert_allclose(b, np.sqrt(np.abs(a)) + a * a + 1, rtol=1e-5)
    bits = [v & 0xFFFFFFFF for v in ints.tolist()]
    np.testing.assert_array_equal(i, [(32 - v.bit_length()) * 100 + bin(v).count("1") for v in bits])
    with pytest.raises(ValueError, match="'llvm.x86.avx512.vpdpbusd.512' is not a portable operation here"):
        T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", 1, 2, 3)
    with pytest.raises(ValueError, match="name the intrinsic"):
        T.call_llvm_pure_intrin("float32", T.uint32(5), 1.0)
    with pytest.raises(TypeError, match="llvm.sqrt takes 1 argument"):
        T.call_llvm_pure_intrin("float32", "llvm.sqrt", 1.0, 2.0)


def test_calls_built_from_an_operator_object():
    """`T.Call(tvm.ir.Op.get(name), args, ret_ty=dtype)` (Apache TVM's newer spelling) builds the
    call the named builder would: an extern call runs, a packed call without a name is refused."""
    import ctypes

    libm = ctypes.CDLL("libm.so.6", mode=ctypes.RTLD_GLOBAL)
    assert libm

    @T.prim_func
    def hyp(A: T.Buffer((3,), "float64"), B: T.Buffer((3,), "float64")):
        for i in range(3):
            B[i] = T.Call(tvm.ir.Op.get("tirx.call_extern"), ["hypot", A[i], T.float64(4)], ret_ty="float64")

    a, b = np.array([3.0, 0.0, 1.0]), np.zeros(3)
    tvm.compile(hyp, target="c")["hyp"](a, b)
    np.testing.assert_array_equal(b, np.hypot(a, 4.0))
    with pytest.raises(tvm.script.TVMScriptError, match="needs the function's name"):
        tvm.script.parse(
            """
@T.prim_func
def f(A: T.Buffer((1,), "float32")):
    T.Call(tvm.ir.Op.get("tirx.tvm_call_packed"), [A.data], ret_ty="int32")
"""
        )
    assert tvm.ir.Op.get("tir.call_extern").short_name == "call_extern"


def test_node_spellings_of_logical_operators_and_module_show(capsys):
    @T.prim_func
    def f(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "bool")):
        for i in range(4):
            B[i] = T.Not(T.Or(A[i] == 1, T.And(A[i] > 1, A[i] < 3)))

    b = np.zeros(4, "bool")
    tvm.compile(f, target="c")(np.arange(4, dtype="int32"), b)
    np.testing.assert_array_equal(b, [True, False, False, True])
    tvm.IRModule.from_expr(f).show()
    assert "@I.ir_module" in capsys.readouterr().out


def _scaled_factory(bias, dtype: str, name: str):
    @T.prim_func
    def f(A: T.Buffer((4,), dtype), B: T.Buffer((4,), dtype)):
        for i in range(4):
            with T.block(f"{name}_{dtype!s:.5}"):
                vi = T.axis.spatial(4, i)
                if bias is not None and dtype in ("float32", "float16"):
                    B[vi] = A[vi] + T.Cast(dtype, bias)
                else:
                    B[vi] = A[vi]

    return f


def test_kernel_factories_compare_and_format_python_values():
    """``if bias is not None``, ``dtype in (...)`` and f-strings in block names (Apache TVM's
    factories) were refused; ``in`` of a run-time value says to write ==."""
    for bias, want in ((None, [0, 1, 2, 3]), (2.0, [2, 3, 4, 5])):
        b = np.zeros(4, "float32")
        tvm.compile(_scaled_factory(bias, "float32", "blk"), target="c")(np.arange(4, dtype="float32"), b)
        np.testing.assert_array_equal(b, want)
    with pytest.raises(tvm.script.TVMScriptError, match="a run-time one: write i == 0 or i == 1\n"):

        @T.prim_func
        def g(A: T.Buffer((4,), "int32")):
            for i in range(4):
                if i in (0, 1):
                    A[i] = 1

    with pytest.raises(tvm.script.TVMScriptError, match="a run-time one: write i \\+ 1 != 2 and i \\+ 1 != 3\n"):

        @T.prim_func
        def h(A: T.Buffer((4,), "int32")):
            for i in range(4):
                if i + 1 not in [2, 3]:
                    A[i] = 1


@T.prim_func
def binds_declared_variables(A: T.Buffer((4,), "int32"), B: T.Buffer((1,), "float32")):
    i = T.int32()
    T.bind(2, var=i)
    A[i] = 7
    j = T.int64()
    k = T.bind(T.int32(3), var=j)  # the value converted to the variable's dtype; k names j
    A[k] = A[j - 1] + 1
    x = T.bind(A[2], "float32")
    B[0] = x * T.float32(0.5)
    y = T.bind(1, T.int64)
    A[y] = 9


def test_bind_of_a_declared_variable_and_with_a_type_annotation():
    """``T.bind(value, var=v)`` (Apache TVM's newer spelling of a let of a declared variable) and
    ``T.bind(value, dtype)``; a variable bound twice, a non-variable and a float for an integer
    variable are refused by name."""
    a, b = np.zeros(4, "int32"), np.zeros(1, "float32")
    tvm.compile(binds_declared_variables, target="llvm")(a, b)
    assert a.tolist() == [0, 9, 7, 8] and b[0] == 3.5
    refused = {
        "i = T.int32()\n    T.bind(2, var=i)\n    T.bind(17, var=i)": "variable 'i' is defined twice",
        "T.bind(1, var=5)": "v must be a scalar variable declared as v = T.int32",
        "i = T.int32()\n    T.bind(1.5, var=i)": "cannot use float constant 1.5 as int32",
        "i = T.int32()\n    T.bind(T.float32(1), var=i)": "a float32 value cannot bind int32 variable 'i'",
    }
    for body, message in refused.items():
        with pytest.raises(tvm.script.TVMScriptError, match=message):
            tvm.script.from_source(f"@T.prim_func\ndef g(A: T.Buffer((4,), 'int32')):\n    {body}\n")


@T.prim_func
def short_dtype_names(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "uint32")):
    for i in T.serial(8, unroll=True):
        v: T.f32 = A[i] * T.f32(2)
        A[i] = v
        B[i] = T.u32(i) * T.u32(3)


def test_short_dtype_names_and_the_unroll_hint():
    a = np.arange(8, dtype="float32")
    ta, tb = tvm.runtime.tensor(a), tvm.runtime.tensor(np.zeros(8, "uint32"))
    tvm.compile(short_dtype_names, "c")(ta, tb)
    np.testing.assert_array_equal(ta.numpy(), a * 2)
    np.testing.assert_array_equal(tb.numpy(), np.arange(8) * 3)
    assert (T.f16, T.bf16, T.i8, T.u64) == (T.float16, T.bfloat16, T.int8, T.uint64)
    with pytest.raises(TypeError, match=r"T.serial\(unroll=...\) takes True, False or a count, got 'yes'"):
        T.serial(4, unroll="yes")
