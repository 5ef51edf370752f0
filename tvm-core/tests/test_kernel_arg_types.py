"""kernel_arg_types: what a device kernel's function-map entry says about its buffers, which the
backend runtimes check tensors against (tvm::runtime::CheckBufferArgument)."""

from __future__ import annotations

from tvm.codegen.device_module import kernel_arg_types
from tvm.tir import Buffer, Evaluate, IntImm, PrimFunc, Var


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


def test_sizes_that_are_not_products_give_the_dtype_only() -> None:
    n, free = Var("n", "int32"), Var("free", "int32")
    a, b, c, d = (Var(x, "handle") for x in "abcd")
    f = _kernel(
        {
            a: Buffer("A", (n + 1,), "float32", data=a),  # not a product
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
