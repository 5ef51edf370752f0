"""tvm.compile for the CPU: compile, run, compare with NumPy (IR built with tvm.tir nodes)."""

from __future__ import annotations

import numpy as np
import pytest

import tvm
from tvm import tir
from tvm.tir import (
    Allocate,
    Buffer,
    BufferStore,
    Call,
    Cast,
    For,
    ForKind,
    IntImm,
    PrimFunc,
    Var,
    seq,
)
from tvm.tir import expr as E
from tvm.tir.dtype import SCALAR_DTYPES
from tvm.runtime import numpy_dtype
from tvm.script import tir as T
from tvm.testing.kernels import reference_softmax


pytestmark = pytest.mark.usefixtures("private_cache")


# --------------------------------------------------------------------------- tiny IR builders


def func(name: str, bufs: list[Buffer], body, scalars: tuple[Var, ...] = ()) -> PrimFunc:
    """A PrimFunc taking ``bufs`` (as handles) then ``scalars``."""
    params = [b.data for b in bufs]  # the handle parameter is the buffer's data Var
    return PrimFunc(params + list(scalars), body, dict(zip(params, bufs)), {"global_symbol": name}, name)


def loop(var: Var, extent, body, kind: ForKind = ForKind.SERIAL) -> For:
    ext = extent if isinstance(extent, E.PrimExpr) else IntImm(var.dtype, extent)
    return For(var, IntImm(var.dtype, 0), ext, kind, body)


def elementwise(name: str, dtype: str, op, n=None, out_dtype: str | None = None) -> PrimFunc:
    n = n if n is not None else Var("n", "int32")
    A, B = Buffer("A", (n,), dtype), Buffer("B", (n,), dtype)
    C = Buffer("C", (n,), out_dtype or dtype)
    i = Var("i", "int32")
    return func(name, [A, B, C], loop(i, n, BufferStore(C, op(A[i], B[i]), (i,))))


def rand(shape, dtype: str, rng=np.random.default_rng(0), lo=-8, hi=8) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("uint"):
        return rng.integers(0, max(hi, 1) * 8, shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(lo * 8, hi * 8, shape).astype(dtype)
    return rng.uniform(lo, hi, shape).astype(numpy_dtype(dtype))


# --------------------------------------------------------------------------- elementwise


@pytest.mark.parametrize("dtype", SCALAR_DTYPES)
def test_elementwise_every_dtype(dtype):
    if dtype == "bool":
        op = lambda a, b: E.Or(E.And(a, E.Not(b)), E.And(E.Not(a), b))  # noqa: E731  (xor)
        ref = np.logical_xor
    else:
        op = lambda a, b: a + b  # noqa: E731
        ref = lambda a, b: (a + b).astype(a.dtype)  # noqa: E731
    mod = tvm.compile(elementwise("ew", dtype, op), "c")
    for n in (1, 7, 100):
        a, b = rand(n, dtype), rand(n, dtype)
        c = tvm.runtime.empty((n,), dtype)
        mod["ew"](tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
        np.testing.assert_array_equal(c.numpy(), ref(a, b))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_expression_and_math(dtype):
    def op(a, b):
        t = Call(dtype, "exp", (a * tir.const(0.25, dtype),))
        return Call(dtype, "sqrt", (Call(dtype, "fabs", (b,)),)) + t * a - b / tir.const(3.0, dtype)

    mod = tvm.compile(elementwise("f", dtype, op), "c")
    a, b = rand(64, dtype, lo=-2, hi=2), rand(64, dtype, lo=-2, hi=2)
    c = tvm.runtime.empty((64,), dtype)  # NumPy bfloat16 has no DLPack: go through tensors
    mod.f(tvm.runtime.tensor(a), tvm.runtime.tensor(b), c)
    c = c.numpy()
    af, bf = a.astype("float64"), b.astype("float64")
    ref = np.sqrt(np.abs(bf)) + np.exp(af * 0.25) * af - bf / 3.0
    tol = {"float16": 2e-2, "bfloat16": 6e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(c.astype("float64"), ref, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "src,dst",
    [
        ("int32", "float16"),
        ("float32", "bfloat16"),
        ("bfloat16", "int32"),
        ("float16", "float64"),
        ("float32", "int8"),
        ("int64", "float32"),
        ("float32", "bool"),
    ],
)
def test_casts(src, dst):
    f = elementwise("cast", src, lambda a, b: Cast(dst, a), out_dtype=dst)
    mod = tvm.compile(f, "c")
    a = rand(50, src, lo=-4, hi=4)
    c = tvm.runtime.empty((50,), dst)
    ta = tvm.runtime.tensor(a)
    mod.cast(ta, ta, c)
    np.testing.assert_array_equal(c.numpy(), a.astype(numpy_dtype(dst)))


@pytest.mark.parametrize(
    "intr,ref",
    [
        ("exp", np.exp),
        ("log", np.log),
        ("tanh", np.tanh),
        ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
        ("floor", np.floor),
        ("ceil", np.ceil),
        ("round", np.round),
        ("rsqrt", lambda x: 1 / np.sqrt(x)),
        ("erf", None),
        ("log2", np.log2),
        ("trunc", np.trunc),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_intrinsics(intr, ref, dtype):
    if ref is None:
        import math

        ref = np.vectorize(math.erf)
    mod = tvm.compile(elementwise("m", dtype, lambda a, b: Call(dtype, intr, (a,))), "c")
    a = rand(40, dtype, lo=0.1, hi=5)
    a[:4] = [0.5, 1.5, 2.5, 3.5]  # round half to even
    c = np.zeros_like(a)
    mod.m(a, a, c)
    np.testing.assert_allclose(c, ref(a), rtol=1e-5 if dtype == "float32" else 1e-12)


# --------------------------------------------------------------------------- floor div / mod


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "float32", "float64"])
def test_floordiv_floormod_match_python(dtype):
    a = np.array([-7, -6, -5, -1, 0, 1, 5, 6, 7, -13, 13, -8], dtype=dtype)
    b = np.array([2, -2, 3, -3, 4, -4, 3, -5, 2, 4, -4, 8], dtype=dtype)
    for op, ref in ((E.FloorDiv, np.floor_divide), (E.FloorMod, np.mod)):
        mod = tvm.compile(elementwise("fd", dtype, lambda x, y: op(x, y)), "c")
        c = np.zeros_like(a)
        mod.fd(a, b, c)
        np.testing.assert_array_equal(c, ref(a, b), err_msg=f"{op.__name__} {dtype}")
        # constant divisors: a power of two (shift/mask path) and a general one
        for k in (4, 3):
            mod = tvm.compile(elementwise("fk", dtype, lambda x, y: op(x, tir.const(k, dtype))), "c")
            mod.fk(a, b, c)
            np.testing.assert_array_equal(c, ref(a, np.array(k, dtype)), err_msg=f"{op.__name__} {k}")


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint16"])
def test_integer_division_by_zero_and_min_over_minus_one_do_not_trap(dtype):
    """x86 traps on x / 0 and INT_MIN / -1; the generated code gives NumPy's answers instead."""
    info = np.iinfo(dtype)
    a = np.array([7, -7 if info.min < 0 else 7, info.min, info.max, 0], dtype=dtype)
    b = np.array([0, 0, -1 if info.min < 0 else 0, 0, 0], dtype=dtype)
    with np.errstate(all="ignore"):
        for op, ref in ((E.FloorDiv, np.floor_divide), (E.FloorMod, np.mod)):
            mod = tvm.compile(elementwise("fz", dtype, lambda x, y: op(x, y)), "c")
            c = np.zeros_like(a)
            mod.fz(a, b, c)
            np.testing.assert_array_equal(c, ref(a, b), err_msg=op.__name__)
    for op in (E.Div, E.Mod):
        mod = tvm.compile(elementwise("tz", dtype, lambda x, y: op(x, y)), "c")
        c = np.ones_like(a)
        mod.tz(a, b, c)
        assert c[0] == 0 and c[1] == 0


# --------------------------------------------------------------------------- reduction, softmax, matmul
# (TVMScript from here on; the IR builders above generate the dtype/operator matrix)


def sum_reduction(n: int, lanes: int = 16):
    """S[0] = sum(A) with a vector of ``lanes`` partial sums in a local buffer."""

    @T.prim_func
    def vsum(A: T.Buffer((n,), "float32"), S: T.Buffer((1,), "float32")):
        acc = T.alloc_buffer((lanes,), "float32", scope="local")
        for j in T.vectorized(lanes):
            acc[j] = T.float32(0)
        for i in range(n // lanes):
            for j in T.vectorized(lanes):
                acc[j] = acc[j] + A[i * lanes + j]
        for k in range(n % lanes):
            acc[0] = acc[0] + A[n // lanes * lanes + k]
        S[0] = T.float32(0)
        for r in range(lanes):
            S[0] = S[0] + acc[r]

    return vsum


def test_sum_reduction():
    for n in (1000, 4099):
        mod = tvm.compile(sum_reduction(n), "c")
        a = rand(n, "float32")
        out = np.zeros(1, "float32")
        mod["vsum"](a, out)
        np.testing.assert_allclose(out[0], a.astype("float64").sum(), rtol=1e-5, atol=1e-3)


@T.prim_func
def softmax(a: T.handle, b: T.handle):
    m = T.int32()
    n = T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m, n), "float32")
    for i in T.parallel(m):
        mx = T.alloc_buffer((1,), "float32", scope="local")
        sm = T.alloc_buffer((1,), "float32", scope="local")
        mx[0] = T.min_value("float32")
        for j in range(n):
            mx[0] = T.max(mx[0], A[i, j])
        sm[0] = T.float32(0)
        for j in range(n):
            B[i, j] = T.exp(A[i, j] - mx[0])
            sm[0] = sm[0] + B[i, j]
        for j in range(n):
            B[i, j] = B[i, j] / sm[0]


def test_row_softmax():
    mod = tvm.compile(softmax, "c")
    assert "#pragma omp parallel for" in mod.inspect_source()
    for shape in ((4, 10), (33, 257)):
        a = rand(shape, "float32")
        b = np.zeros_like(a)
        mod.softmax(a, b)
        np.testing.assert_allclose(b, reference_softmax(a), rtol=1e-5, atol=1e-7)


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    # 16x16 output tiles accumulated in a local buffer; parallel over tile rows, vectorized columns
    for io in T.parallel(4):
        for jo in range(4):
            acc = T.alloc_buffer((16, 16), "float32", scope="local")
            for ii in range(16):
                for ji in T.vectorized(16):
                    acc[ii, ji] = T.float32(0)
            for k in range(64):
                for ii in T.unroll(16):
                    for ji in T.vectorized(16):
                        acc[ii, ji] = acc[ii, ji] + A[io * 16 + ii, k] * B[k, jo * 16 + ji]
            for ii in range(16):
                for ji in T.vectorized(16):
                    C[io * 16 + ii, jo * 16 + ji] = acc[ii, ji]


def test_tiled_matmul_local_buffer():
    mod = tvm.compile(matmul, "c")
    a, b = rand((64, 64), "float32"), rand((64, 64), "float32")
    c = np.zeros((64, 64), "float32")
    mod.matmul(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-3)
    src = mod.inspect_source()
    # 256 accumulators are 64 vectors of 16 bytes (plain "c"): more than a register tile holds
    assert "#pragma omp parallel for" in src and "#pragma omp simd" in src and "#pragma GCC unroll 16" in src


# --------------------------------------------------------------------------- symbolic shapes


@T.prim_func
def transpose(a: T.handle, b: T.handle):
    m = T.int32()
    n = T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (n, m), "float32")
    for i, j in T.grid(m, n):
        B[j, i] = A[i, j]


def test_symbolic_shapes_several_sizes():
    mod = tvm.compile(transpose, "c")
    for shape in ((1, 1), (3, 5), (17, 2), (64, 33)):
        a = rand(shape, "float32")
        b = np.zeros(shape[::-1], "float32")
        mod.transpose(a, b)
        np.testing.assert_array_equal(b, a.T)
    with pytest.raises(ValueError, match=r"transpose: argument 'B' expects shape \(n, m\)"):
        mod.transpose(rand((3, 5), "float32"), np.zeros((3, 5), "float32"))


def test_scalar_params():
    n = Var("n", "int32")
    alpha = Var("alpha", "float32")
    A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")
    i = Var("i", "int32")
    f = func("scale", [A, B], loop(i, n, BufferStore(B, A[i] * alpha, (i,))), scalars=(alpha,))
    mod = tvm.compile(f, "c")
    a = rand(9, "float32")
    b = np.zeros_like(a)
    mod.scale(a, b, 2.5)
    np.testing.assert_allclose(b, a * 2.5)
    mod.scale(a, b, 3)  # ints are accepted for float scalars
    np.testing.assert_allclose(b, a * 3)
    with pytest.raises(TypeError, match=r"scale: argument 'alpha' \(#2\) expects a float \(float32\), got str"):
        mod.scale(a, b, "x")


def test_irmodule_with_two_functions_and_dlpack_inputs():
    mod = tvm.compile(
        tir.IRModule(
            {
                "add": elementwise("add", "float32", lambda a, b: a + b),
                "mul": elementwise("mul", "float32", lambda a, b: a * b),
            }
        ),
        "llvm",
    )
    a, b = rand(8, "float32"), rand(8, "float32")
    c = tvm.runtime.empty((8,), "float32")
    mod["add"](a, b, c)
    np.testing.assert_allclose(c.numpy(), a + b)
    mod.mul(tvm.runtime.from_dlpack(a), b, c)
    np.testing.assert_allclose(c.numpy(), a * b)


# --------------------------------------------------------------------------- strides, asserts, heap


def test_symbolic_strides_accept_views():
    m, n, s0 = Var("m", "int32"), Var("n", "int32"), Var("s0", "int32")
    A = Buffer("A", (m, n), "float32", strides=(s0, IntImm("int32", 1)))
    B = Buffer("B", (m, n), "float32")
    i, j = Var("i", "int32"), Var("j", "int32")
    mod = tvm.compile(func("copy2d", [A, B], loop(i, m, loop(j, n, BufferStore(B, A[i, j], (i, j))))), "c")
    big = rand((6, 10), "float32")
    view = big[1:5, 2:7]  # row stride 10, not contiguous
    out = np.zeros((4, 5), "float32")
    mod.copy2d(view, out)
    np.testing.assert_array_equal(out, view)
    out2 = np.zeros((6, 10), "float32")
    mod.copy2d(big, out2)  # contiguous input: the stride is bound from the shape
    np.testing.assert_array_equal(out2, big)


def test_host_assert_and_heap_allocation():
    from tvm.tir import AssertStmt

    n = Var("n", "int32")
    A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")
    tmp = Buffer("tmp", (n,), "float32", scope="global")  # symbolic size: heap
    i, j = Var("i", "int32"), Var("j", "int32")
    body = AssertStmt(
        E.GT(n, IntImm("int32", 2)),
        "need more than 2 elements",
        Allocate(
            tmp,
            seq(
                loop(i, n, BufferStore(tmp, A[i] * tir.const(2.0, "float32"), (i,))),
                loop(j, n, BufferStore(B, tmp[n - 1 - j], (j,))),
            ),
        ),
    )
    mod = tvm.compile(func("rev2", [A, B], body), "c")
    a = rand(50, "float32")
    b = np.zeros_like(a)
    mod.rev2(a, b)
    np.testing.assert_array_equal(b, (a * 2)[::-1])
    with pytest.raises(RuntimeError, match="need more than 2 elements"):
        mod.rev2(np.zeros(2, "float32"), np.zeros(2, "float32"))


@T.prim_func
def scalars(A: T.Buffer((3,), "float64"), flag: T.bool, k: T.int64, x: T.float64, h: T.float16):
    A[0] = T.if_then_else(flag, x, -x)
    A[1] = T.Cast("float64", k * T.int64(2))
    A[2] = T.Cast("float64", h)


def test_scalar_parameter_kinds():
    mod = tvm.compile(scalars, "c")
    a = np.zeros(3)
    mod.scalars(a, True, 2**40, 1.25, 0.5)
    np.testing.assert_array_equal(a, [1.25, 2.0**41, 0.5])
    mod.scalars(a, False, -3, 2, 3)
    np.testing.assert_array_equal(a, [-2.0, -6.0, 3.0])
    with pytest.raises(TypeError, match=r"argument 'flag' \(#1\) expects a bool, got float"):
        mod.scalars(a, 1.5, 1, 1.0, 1.0)


def test_parallel_loops_run_in_a_child_forked_after_they_ran():
    """A child made by fork() (multiprocessing's default on Linux) after the parent ran parallel
    loops runs them too, on one thread: GCC's OpenMP runtime would wait forever for the parent's
    worker threads, which the child does not have."""
    from tvm.testing.process import run_python

    code = """
        import multiprocessing as mp, os, sys
        import numpy as np, tvm
        from tvm.tir import Buffer, BufferStore, For, ForKind, IntImm, PrimFunc, Var
        n = Var("n", "int32")
        A, B = Buffer("A", (n,), "float32"), Buffer("B", (n,), "float32")
        i = Var("i", "int32")
        body = For(i, IntImm("int32", 0), n, ForKind.PARALLEL, BufferStore(B, A[i] + 1.0, (i,)))
        mod = tvm.compile(PrimFunc([A.data, B.data], body, {A.data: A, B.data: B}, {"global_symbol": "f"}), "c")
        def run():
            a = np.arange(100000, dtype="float32"); b = np.zeros_like(a)
            mod["f"](a, b)
            return bool((b == a + 1).all())
        def child():
            os._exit(0 if run() else 3)
        assert run()
        p = mp.get_context("fork").Process(target=child)
        p.start(); p.join(60)
        if p.is_alive():
            p.kill(); print("child hung"); sys.exit(1)
        print("child exit", p.exitcode)
    """
    res = run_python(code, timeout=120)
    assert res.returncode == 0 and "child exit 0" in res.stdout, res.stdout + res.stderr


def test_module_methods_of_tvm_ffi_and_timing_statistics():
    """``mod.implements_function(...)`` and the other tvm-ffi module methods were looked up as
    kernels ("Module has no function 'implements_function'")."""

    @T.prim_func
    def inc(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    mod = tvm.compile(inc, target="c")
    assert mod.implements_function("inc") and not mod.implements_function("nothing")
    assert mod.is_runnable() and isinstance(mod.entry_name, str)
    timing = mod.time_evaluator("inc", tvm.cpu(), number=2, repeat=3)(np.zeros(4, "float32"))
    assert timing.min <= timing.median <= timing.max and timing.std >= 0


def test_a_function_named_like_a_module_method_is_the_function():
    @T.prim_func
    def write_to_file(A: T.Buffer((2,), "float32")):
        for i in range(2):
            A[i] = T.float32(7)

    mod = tvm.compile(write_to_file, target="c")
    a = np.zeros(2, "float32")
    mod.write_to_file(a)
    np.testing.assert_array_equal(a, [7, 7])
