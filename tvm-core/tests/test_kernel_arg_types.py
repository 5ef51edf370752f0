"""kernel_arg_types: what a device kernel's function-map entry says about its buffers, which the
backend runtimes check tensors against (tvm::runtime::CheckBufferArgument)."""

from __future__ import annotations

import tvm
from tvm.codegen.device_module import arg_expression, kernel_arg_types
from tvm.tir import Buffer, Cast, Evaluate, IntImm, PrimFunc, Var
from tvm.tir import op as T


def _kernel(buffers: dict, scalars: list) -> PrimFunc:
    params = [*buffers, *scalars]
    return PrimFunc(params, Evaluate(IntImm("int32", 0)), buffers, {"global_symbol": "k"}, name="k")


def test_products_of_constants_and_scalar_params() -> None:
    n, m = Var("n", "int32"), Var("m", "int32")
    a, b, c = Var("a", "handle"), Var("b", "handle"), Var("c", "handle")
    f = _kernel(
        {
            a: Buffer("A", (n, 4), "float16", data=a),
            b: Buffer("B", (n * m,), "int8", data=b),
            c: Buffer("C", (128,), "bool", data=c),
        },
        [n, m],
    )
    assert kernel_arg_types(f) == ["handle:float16:$3*4", "handle:int8:$3*$4", "handle:bool:128", "int32", "int32"]


def test_sizes_of_sums_quotients_and_bounds() -> None:
    n, m = Var("n", "int32"), Var("m", "int32")
    a, b, c = (Var(x, "handle") for x in "abc")
    f = _kernel(
        {
            a: Buffer("A", (n + 1,), "float32", data=a),
            b: Buffer("B", (T.floordiv(n + 255, 256), m - 2), "float32", data=b),
            c: Buffer("C", (T.max(n, m) % 7, 3), "float32", data=c),
        },
        [n, m],
    )
    assert kernel_arg_types(f)[:3] == [
        "handle:float32:$3+1",
        "handle:float32:($3+255)/256*($4-2)",  # left to right: (($3+255)/256)*($4-2)
        "handle:float32:max($3,$4)%7*3",
    ]


def test_quotients_after_the_first_dimension_keep_their_grouping() -> None:
    n = Var("n", "int32")
    a, b = Var("a", "handle"), Var("b", "handle")
    f = _kernel(
        {
            a: Buffer("A", (2, T.floordiv(n, 64)), "float32", data=a),
            b: Buffer("B", (64, T.floormod(n, 64)), "int8", data=b),
        },
        [n],
    )
    assert kernel_arg_types(f)[:2] == ["handle:float32:2*($2/64)", "handle:int8:64*($2%64)"]


def test_arg_expression_keeps_the_grouping() -> None:
    n, m, k = Var("n", "int32"), Var("m", "int32"), Var("k", "int32")
    params = {n: 0, m: 1, k: 2}
    assert arg_expression(n - (m - k), params) == "$0-($1-$2)"
    assert arg_expression((n - m) - k, params) == "$0-$1-$2"
    assert arg_expression(n * T.floordiv(m, k), params) == "$0*($1/$2)"
    assert arg_expression(n + IntImm("int32", -3), params) == "$0+(0-3)"
    assert arg_expression(Cast("int64", n) * 4, params) == "$0*4"  # widening: the same value
    assert arg_expression(Cast("int8", n), params) is None  # narrowing wraps
    assert arg_expression(Var("x", "float32"), {Var("x", "float32"): 0}) is None


def test_sizes_the_runtime_cannot_judge_give_the_dtype_only() -> None:
    n, free = Var("n", "int32"), Var("free", "int32")
    a, b, c, d = (Var(x, "handle") for x in "abcd")
    f = _kernel(
        {
            a: Buffer("A", (T.truncdiv(n, 3),), "float32", data=a),  # C division: not floor division
            b: Buffer("B", (free,), "float32", data=b),  # not a kernel parameter
            c: Buffer("C", (8,), "float32", data=c, strides=(IntImm("int32", 2),)),  # strided
            d: Buffer("D", (8,), "float32", data=d, elem_offset=IntImm("int32", 4)),
        },
        [n],
    )
    assert kernel_arg_types(f) == ["handle:float32"] * 4 + ["int32"]


def test_bare_pointers_and_mapped_scalars() -> None:
    p, x = Var("p", "handle"), Var("x", "float16")
    f = _kernel({}, [p, x])
    assert kernel_arg_types(f) == ["handle", "float16"]
    assert kernel_arg_types(f, lambda d: "float32" if d == "float16" else d) == ["handle", "float32"]


def test_kernels_whose_bounds_differ_only_in_names_are_structurally_equal() -> None:
    """A lowered kernel keeps its symbolic launch bounds as expressions of its parameters: two
    kernels that differ only in the names of those parameters compare equal, and print and
    parse back to an equal kernel."""
    from tvm.tir.analysis import structural_equal
    from tvm.tir.transform import lower

    def kernel(name: str):
        n = Var(name, "int32")
        a = Var("a", "handle")
        A = Buffer("A", (n,), "float32", data=a)
        tx = Var("tx", "int32")
        body = tvm.tir.For(
            tx,
            IntImm("int32", 0),
            n,
            tvm.tir.ForKind.THREAD_BINDING,
            tvm.tir.BufferStore(A, tvm.tir.FloatImm("float32", 1.0), (tx,)),
            "threadIdx.x",
        )
        f = PrimFunc([a, n], body, {a: A}, {"global_symbol": "k"}, name="k")
        (k,) = lower(f, tvm.target.Target("example")).kernels
        return k

    first, second = kernel("n"), kernel("m")
    assert [b.name for b in first.attrs["launch_bounds"]] == ["n"]  # the parameter itself
    assert structural_equal(first, second)
    assert structural_equal(first, tvm.script.from_source(first.script()))
