"""The shared C-family printer: tables and override points, checked on the printed text."""

from __future__ import annotations

import re

import pytest

from tvm.codegen.c_family import CFamilyPrinter, CodegenError
from tvm.codegen.c_host import CPrinter, generate_host
from tvm.tir import (
    Allocate,
    Buffer,
    BufferStore,
    Call,
    Cast,
    Evaluate,
    For,
    ForKind,
    IntImm,
    PrimFunc,
    StringImm,
    Var,
    const,
    seq,
)
from tvm.tir import expr as E


class ToyGPU(CFamilyPrinter):
    """A CUDA-like dialect described only by its table."""

    TYPE_NAMES = {**CFamilyPrinter.TYPE_NAMES, "float16": "half"}
    HALF_NATIVE = True
    RESTRICT = "__restrict__"
    EXTERN_C = 'extern "C" '
    KERNEL_QUALIFIER = "__global__ void"
    SHARED_QUALIFIER = "__shared__ "
    HELPER_QUALIFIER = "__device__ inline"
    THREAD_INDEX = {"blockIdx.x": "blockIdx.x", "threadIdx.x": "threadIdx.x"}
    BARRIER = "__syncthreads();"
    UNROLL_PRAGMA = "#pragma unroll"
    INTRINSICS = {**CFamilyPrinter.INTRINSICS, "exp": ("__expf", "exp")}


def kernel() -> PrimFunc:
    A, B = Buffer("A", (256,), "float32"), Buffer("B", (256,), "float32")
    sh = Buffer("sh", (64,), "float32", scope="shared")
    bx, tx, k = Var("bx"), Var("tx"), Var("k")
    i = bx * 64 + tx
    body = For(
        bx,
        IntImm("int32", 0),
        IntImm("int32", 4),
        ForKind.THREAD_BINDING,
        For(
            tx,
            IntImm("int32", 0),
            IntImm("int32", 64),
            ForKind.THREAD_BINDING,
            Allocate(
                sh,
                seq(
                    BufferStore(sh, Call("float32", "exp", (A[i],)), (tx,)),
                    Evaluate(Call("void", "tvm_storage_sync", (StringImm("shared"),))),
                    For(
                        k,
                        IntImm("int32", 0),
                        IntImm("int32", 4),
                        ForKind.UNROLLED,
                        BufferStore(B, B[i] + sh[(tx + k) % 64], (i,)),
                    ),
                ),
            ),
            thread_tag="threadIdx.x",
        ),
        thread_tag="blockIdx.x",
    )
    return PrimFunc([A.data, B.data], body, {A.data: A, B.data: B}, {"global_symbol": "k"})


def test_table_driven_gpu_dialect():
    text = ToyGPU().print_module([kernel()])
    assert 'extern "C" __global__ void k(float* __restrict__ A, float* __restrict__ B)' in text
    assert "int32_t bx = (int32_t)(blockIdx.x);" in text
    assert "int32_t tx = (int32_t)(threadIdx.x);" in text
    assert "__shared__ float sh[64];" in text
    assert "__syncthreads();" in text
    assert "#pragma unroll" in text
    assert "__expf(A[" in text
    assert "& 63" in text  # floormod by a power of two is a mask


def test_cpu_table():
    text = CPrinter().print_module([PrimFunc([], seq(), {}, {"global_symbol": "f"})])
    assert "void f()" in text
    with pytest.raises(CodegenError, match="thread tag"):
        CFamilyPrinter().thread_index("threadIdx.x")


def test_float_variants_and_literals():
    p = CFamilyPrinter()
    x32, x64 = Var("x", "float32"), Var("y", "float64")
    assert p.expr(Call("float32", "exp", (x32,))) == "expf(x)"
    assert p.expr(Call("float64", "exp", (x64,))) == "exp(y)"
    assert p.expr(Call("float32", "fabs", (x32,))) == "fabsf(x)"
    assert p.expr(const(1.5, "float32")) == "1.5f"
    assert p.expr(const(1.5, "float64")) == "1.5"
    assert p.expr(const(float("inf"), "float32")) == "INFINITY"
    assert p.expr(const(-(2**31), "int32")) == "(-2147483647 - 1)"
    assert p.expr(const(3, "int64")) == "3LL"


def test_emulated_half_and_bfloat16():
    p = CFamilyPrinter()
    A = Buffer("A", (4,), "float16")
    Bf = Buffer("Bf", (4,), "bfloat16")
    assert p.expr(A[IntImm("int32", 1)]) == "tvm_h2f(A[1])"
    assert p.expr(Bf[IntImm("int32", 1)]) == "tvm_bf2f(Bf[1])"
    p.stmt(BufferStore(A, A[IntImm("int32", 0)] * const(2.0, "float16"), (IntImm("int32", 0),)))
    # each operation rounded to float16 (the store's conversion is that rounding here)
    assert p.take().strip() == "A[0] = tvm_f2h((((float)(tvm_h2f(A[0]))) * 2.0f));"
    assert p.expr(Cast("float16", Var("x", "float32"))) == "tvm_h2f(tvm_f2h((float)(x)))"
    assert "uint16_t tvm_f2bf(float f)" in p.prelude()
    assert p.type_name("float16") == "uint16_t" and p.compute_type("float16") == "float"


def test_floor_division_helpers():
    p = CFamilyPrinter()
    a, b = Var("a", "int32"), Var("b", "int32")
    assert p.expr(E.FloorDiv(a, b)) == "tvm_floordiv_i32(a, b)"
    assert p.expr(E.FloorMod(a, const(8))) == "(a & 7)"
    assert p.expr(E.FloorDiv(a, const(8))) == "(a >> 3)"
    assert p.expr(E.Div(a, const(7))) == "(a / 7)"  # truncating, like C
    assert p.expr(E.Div(a, b)) == "tvm_div_i32(a, b)"  # a divisor that may be 0 or -1 is guarded
    assert "tvm_floordiv_i32" in p.prelude() and "if (b == 0) return 0;" in p.prelude()
    u = Var("u", "uint32")
    assert p.expr(E.FloorDiv(u, Var("v", "uint32"))) == "tvm_div_u32(u, v)"
    assert p.expr(E.FloorMod(u, const(10, "uint32"))) == "(u % ((uint32_t)10U))"


def test_vector_type_hook():
    p = CFamilyPrinter()
    assert p.type_name("float32x4") == "floatx4_t"
    assert "vector_size(16)" in p.prelude()


def test_multi_dim_access_is_flattened():
    p = CFamilyPrinter()
    n = Var("n")
    A = Buffer("A", (4, n), "float32")
    i, j = Var("i"), Var("j")
    assert p.expr(A[i, j]) == "A[(i) * n + j]"
    S = Buffer("S", (4, 4), "float32", strides=(Var("s0"), IntImm("int32", 1)))
    assert p.expr(S[i, j]) == "S[i * s0 + j * 1]"


def test_let_and_select_and_names():
    p = CFamilyPrinter()
    x, y = Var("x"), Var("int")  # a C keyword as a name
    assert p.expr(E.Let(x, const(3), x + x)) == "((3) + (3))"
    assert p.expr(E.Select(E.LT(y, const(0)), y, const(0))) == "((int_ < 0) ? int_ : 0)"
    twin = Var("x")
    assert p.name_of(twin) != p.name_of(x)


def test_integer_values_wrap_and_index_arithmetic_stays_plain():
    p = CFamilyPrinter()
    x, i, j = Var("x"), Var("i"), Var("j")  # x: a value (a parameter), i and j: loop variables
    assert p.expr(x + const(1)) == "((int32_t)((uint32_t)(x) + (uint32_t)(1)))"
    p.count(i, bounds=(const(0), const(16)))
    p.count(j, bounds=(const(0), x))  # a symbolic extent: its arithmetic may leave int32
    assert p.expr(i * const(4) + const(1)) == "((i * 4) + 1)"
    assert p.expr(j * const(4)) == "((int32_t)((uint32_t)(j) * (uint32_t)(4)))"
    assert p.index_expr(j * const(4)) == "(j * 4)"
    A = Buffer("A", (16,), "uint8")
    assert p.expr(A[x + const(1)] * A[i]) == "((uint8_t)((uint32_t)(A[(x + 1)]) * (uint32_t)(A[i])))"


def test_unknown_intrinsic_is_a_codegen_error():
    with pytest.raises(CodegenError, match="T.frobnicate has no CFamily form, so this target cannot compile it"):
        CFamilyPrinter().expr(Call("float32", "frobnicate", ()))


def test_another_backends_operation_names_its_namespace_and_target():
    with pytest.raises(
        CodegenError, match=r"T.webgpu.subgroup_add is an operation of the webgpu backend .*target 'webgpu'"
    ):
        CFamilyPrinter().expr(Call("float32", "webgpu.subgroup_add", (E.FloatImm("float32", 1.0),)))


def test_host_source_has_ffi_entry_and_openmp():
    A = Buffer("A", (8,), "float32")
    i = Var("i")
    f = PrimFunc(
        [A.data],
        For(i, IntImm("int32", 0), IntImm("int32", 8), ForKind.PARALLEL, BufferStore(A, const(1.0), (i,))),
        {A.data: A},
        {"global_symbol": "fill"},
    )
    src = generate_host([f])
    assert src.has_parallel and not src.has_launch
    assert "int __tvm_ffi_fill(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result)" in src.code
    assert "#pragma omp parallel for" in src.code
    assert "#include <tvm/ffi/c_api.h>" in src.code


def test_unroll_with_symbolic_extent_and_bad_function_name():
    A = Buffer("A", (8,), "float32")
    i, n = Var("i"), Var("n")
    loop = For(i, IntImm("int32", 0), n, ForKind.UNROLLED, BufferStore(A, const(0.0), (i,)))
    p = CPrinter()
    p.stmt(loop)
    assert "#pragma GCC unroll" not in p.take()  # GCC needs a count: no pragma for a symbolic extent
    t = ToyGPU()
    t.stmt(loop)
    assert "#pragma unroll" in t.take()
    f = PrimFunc([A.data], loop, {A.data: A}, {"global_symbol": "bad-name"})
    with pytest.raises(CodegenError, match="not a valid C identifier"):
        generate_host([f])


def test_variables_never_shadow_math_functions_or_helpers():
    p = CFamilyPrinter()
    assert p.name_of(Var("expf")) == "expf_"
    assert p.name_of(Var("tvm_h2f")) == "v_tvm_h2f"  # the generated code's own prefix
    assert p.name_of(Var("sinf")) == "sinf_"


def test_a_device_function_name_that_is_no_identifier_is_refused_before_its_kernels_compile():
    import tvm
    from tvm.testing import kernels
    from tvm.tir.transform import TIRVerifyError

    for name in ("my-func.v2", "a b"):
        with pytest.raises(TIRVerifyError, match=rf"function name '{re.escape(name)}' is not a valid C identifier"):
            tvm.compile(kernels.vector_add(name=name), target="example")


def test_a_load_under_address_of_with_a_deep_index_stays_a_load():
    """Binding subexpressions 32 operations high to variables bound the whole load of
    ``T.address_of(A[<deep index>])``, whose printer needs the load."""
    import numpy as np

    import tvm
    from tvm.script import tir as T
    from tvm.tir import const
    from tvm.tir.functor import StmtExprMutator

    @T.prim_func
    def probe(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
        for i in range(8):
            B[i] = A[i] + T.Cast("int32", T.isnullptr(T.address_of(A[i])))

    class DeepIndexUnderAddressOf(StmtExprMutator):
        def visit_Call(self, e):
            if not e.op.endswith("address_of"):
                return super().visit_Call(e)
            (load,) = e.args
            index = load.indices[0]
            for _ in range(31):
                index = E.Max(index, const(0, "int32"))
            return E.Call(e.dtype, e.op, (E.BufferLoad(load.buffer, (index,)),), e.span)

    f = probe.with_body(DeepIndexUnderAddressOf().visit_stmt(probe.body))
    a, b = np.arange(8, dtype="int32"), np.zeros(8, "int32")
    tvm.compile(f, target="c")(a, b)
    np.testing.assert_array_equal(b, a)


def test_strings_in_c_keep_every_character():
    """A carriage return broke the generated line and a NUL ended the literal early."""
    from tvm.codegen.c_family import c_string_literal

    assert c_string_literal('a"b\\c\nd\re\x00f') == '"a\\"b\\\\c\\nd\\015e\\000f"'


def test_conditions_print_without_doubled_parentheses():
    """`if ((k == 0))` drew clang's -Wparentheses-equality (PoCL printed "1 warning generated.")."""
    import tvm
    from tvm.codegen.c_family import _without_outer_parentheses
    from tvm.script import tir as T

    assert _without_outer_parentheses("(k == 0)") == "k == 0"
    assert _without_outer_parentheses("(a) && (b)") == "(a) && (b)"
    assert _without_outer_parentheses('(f(")") == 1)') == '(f(")") == 1)'
    assert _without_outer_parentheses("k") == "k"

    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        for k in range(4):
            if k == 0:
                A[k] = 1

    src = tvm.compile(f, "c").inspect_source()
    assert "if ((k == 0))" not in src and "if (k == 0) {" in src


@pytest.mark.parametrize(
    "name",
    [
        "t_B",
        "NULL",
        "int32_t",
        "tvm_err_align",
        "tvm_impl_main",
        "kTVMFFINone",
        "DLTensor",
        "linux",
        "INT32_MAX",
        "M_PI",
    ],
)
def test_a_parameter_named_as_the_generated_code_names_things_is_renamed(name):
    """A scalar parameter spelled as a name the host code defines (its tensors ``t_<buffer>``, its
    runtime helpers, tvm-ffi's and the C library's names) broke the build, or every call."""
    import numpy as np

    import tvm
    from tvm.script import tir as T

    source = f"""
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), {name}: T.float32):
    for i in range(8):
        B[i] = A[i] + {name}
"""
    func = tvm.script.parse(source, extra_vars={"T": T})
    a, b = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    tvm.compile(func, target="c")(a, b, 10.0)
    np.testing.assert_array_equal(b, a + 10)


def test_a_loop_of_an_8_bit_variable_ends_when_its_values_pass_the_dtype():
    """``for i in range(m, m + 20)`` of an int8 m = 120 compared an int8 counter with the int
    m + 20 = 140 in C: it wrapped at 127 and never ended. The counter is 32-bit now; the values
    past int8 index out of bounds, which the run-time check reports."""
    import numpy as np

    import tvm
    from tvm.script import tir as T

    @T.prim_func
    def from_m(O: T.Buffer((256,), "int32"), m: T.int8):
        for i in range(m, m + T.int8(20)):
            O[T.Cast("int32", i) + 128] = 1

    lib = tvm.compile(from_m, "c")
    out = np.zeros(256, "int32")
    lib(out, -20)
    np.testing.assert_array_equal(np.nonzero(out)[0] - 128, np.arange(-20, 0))
    with pytest.raises(IndexError, match=r"buffer 'O' has extent 256, got index 256"):
        lib(np.zeros(256, "int32"), 120)


def test_cuda_built_in_variables_are_no_variable_names():
    """A parameter named blockIdx hid blockIdx.x: the kernel did not compile."""
    from tvm.codegen.gpu_c import GPUCPrinter

    p = GPUCPrinter()
    assert [p.name_of(Var(n)) for n in ("blockIdx", "threadIdx", "blockDim", "gridDim", "warpSize")] == [
        "blockIdx_",
        "threadIdx_",
        "blockDim_",
        "gridDim_",
        "warpSize_",
    ]
