"""The generated WGSL: its interface, WebGPU's portable limits and the types WGSL lacks, all
checked at compile time (no adapter needed)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import tvm
from tvm.codegen.c_family import CodegenError
from tvm.script import tir as T
from tvm.testing import kernels
from tvm.tir.transform.verify import TIRVerifyError


def wgsl(func) -> str:
    return tvm.compile(func, target="webgpu").imports[0].inspect_source()


def test_interface_of_a_kernel():
    src = wgsl(kernels.vector_add())
    assert src.startswith("//! kernel vector_add_kernel0\n")
    assert "@group(0) @binding(0) var<storage, read> A: array<f32>;" in src  # only read
    assert "@group(0) @binding(2) var<storage, read_write> C: array<f32>;" in src
    assert "@group(0) @binding(3) var<uniform> tvm_args: tvm_args_t;" in src
    assert "@compute @workgroup_size(64, 1, 1)" in src and "override" not in src  # constant extents
    assert "enable f16;" not in src
    # the symbolic grid may be folded by the runtime: the shader unfolds it and guards the rest
    assert "if (tvm_block >= u32((((tvm_args.n + 63i)) >> 6u))) { return; }" in src


def test_shared_memory_barriers_and_float16():
    src = wgsl(kernels.row_sum(dtype="float16"))
    assert re.match(r"//! kernel row_sum_kernel0\n//! loop_bound [^\n]+\nenable f16;\n", src), src[:120]
    assert "var<workgroup> red: array<f16, 64>;" in src
    assert "workgroupBarrier();" in src
    # each statement's first line names its TVMScript line, so WGSL compiler errors lead back
    assert re.search(r"red\[tx\] = acc;  // tvmscript line \d+", src), src
    assert "var acc: f16;" in src  # a one-element local buffer is a scalar variable


def test_constant_grids_use_the_workgroup_id():
    src = wgsl(kernels.matmul_tiled(32, 16, 48))
    assert "tvm_block" not in src
    assert "let by: i32 = i32(tvm_wid.y);" in src and "let bx: i32 = i32(tvm_wid.x);" in src


def test_int64_is_refused_naming_the_variable_and_line():
    """int64 computed from memory and used as a value (not as an index) cannot be narrowed."""

    @T.prim_func
    def wide(a: T.handle):
        A = T.match_buffer(a, (64,), "int32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            big = T.int64(A[tx]) * T.int64(3)
            A[tx] = T.int32(big // T.int64(7))

    with pytest.raises(TIRVerifyError) as info:
        tvm.compile(wide, target="webgpu")
    msg = str(info.value)
    assert "computes in int64 with a value read from memory (big // T.int64(7))" in msg and "wide_kernel0" in msg, msg
    assert "A[tx] = T.int32(big // T.int64(7))" in msg and "has no int64" in msg, msg


def test_int64_indices_are_computed_in_32_bits():
    """Apache TVM's schedules write shapes, grids and loops in int64; on WebGPU they become i32."""

    @T.prim_func
    def scale(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for bx in T.thread_binding((n + T.int64(63)) // T.int64(64), thread="blockIdx.x"):
            for tx in T.thread_binding(T.int64(64), thread="threadIdx.x"):
                if bx * T.int64(64) + tx < n:
                    B[bx * T.int64(64) + tx] = A[bx * T.int64(64) + tx] * T.float32(tx)

    mod = tvm.compile(scale, target="webgpu")
    src = mod.imports[0].inspect_source()
    assert "n: i32" in src and "i64" not in src


@pytest.mark.parametrize(
    "value",
    [
        "T.int64(A[tx]) * T.int64(3)",  # read from memory, used as a value
        "T.int64(T.float32(tx) * T.float32(2.5))",  # from a float
        "T.int64(T.uint32(tx))",  # from an unsigned value
        "T.int64(tx) + T.int64(2**40)",  # a constant beyond int32
        "T.int64(tx) * T.int64(50000) * T.int64(50000)",  # arithmetic stored as a value
    ],
)
def test_int64_that_narrowing_would_change_is_refused(value):
    source = f"""
@T.prim_func
def wide(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (64,), "int32")
    B = T.match_buffer(b, (64,), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        B[tx] = T.float32({value})
"""
    with pytest.raises(TIRVerifyError, match="int64.*; target 'webgpu' has no int64"):
        tvm.compile(tvm.script.parse(source), target="webgpu")


@pytest.mark.parametrize("dtype", ["int64", "uint64", "float64"])
def test_buffers_of_types_webgpu_cannot_store_are_refused(dtype):
    with pytest.raises(TIRVerifyError, match=rf"buffer 'A'.*{dtype}|{dtype}.*buffer 'A'") as info:
        tvm.compile(kernels.vector_add(dtype), target="webgpu")
    assert "vector_add" in str(info.value)


def test_byte_and_short_buffers_are_packed_into_words():
    """bool, 8- and 16-bit integer buffers are arrays of u32 words (atomic where written: a word
    holds other threads' elements); their values are computed in i32/u32."""

    @T.prim_func
    def narrow(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (64,), "bool")
        B = T.match_buffer(b, (64,), "int16")
        C = T.match_buffer(c, (64,), "uint8")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            C[tx] = T.Cast("uint8", B[tx] + T.Cast("int16", A[tx]))

    src = wgsl(narrow)
    assert "var<storage, read> A: array<u32>;" in src and "var<storage, read> B: array<u32>;" in src
    assert "var<storage, read_write> C: array<atomic<u32>>;" in src
    assert "tvm_unpack_i16(B[u32(tx) >> 1u], ((u32(tx) & 1u) * 16u))" in src  # sign-extended
    assert "((A[u32(tx) >> 2u] >> ((u32(tx) & 3u) * 8u)) & 0xffu)" in src  # zero-extended
    assert "atomicAnd(&C[tvm_at >> 2u], ~(0xffu << ((tvm_at & 3u) * 8u)));" in src
    assert "atomicOr(&C[tvm_at >> 2u], tvm_bits);" in src
    assert not re.search(r"\b[iu](8|16)\b", src)


def test_a_reinterpret_between_int16_and_float16_is_refused_by_name():
    @T.prim_func
    def bits(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (64,), "float16")
        B = T.match_buffer(b, (64,), "int16")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[tx] = T.reinterpret("int16", A[tx])

    with pytest.raises(CodegenError, match="reinterpret from float16 to int16: WGSL bitcasts 32-bit values only"):
        tvm.compile(bits, target="webgpu")


def test_nine_storage_buffers_exceed_the_portable_limit():
    @T.prim_func
    def nine(a: T.handle, b: T.handle, c: T.handle, d: T.handle, e: T.handle, f: T.handle, g: T.handle,
             h: T.handle, i: T.handle):  # fmt: skip
        A = T.match_buffer(a, (4,), "float32")
        B = T.match_buffer(b, (4,), "float32")
        C = T.match_buffer(c, (4,), "float32")
        D = T.match_buffer(d, (4,), "float32")
        E = T.match_buffer(e, (4,), "float32")
        F = T.match_buffer(f, (4,), "float32")
        G = T.match_buffer(g, (4,), "float32")
        H = T.match_buffer(h, (4,), "float32")
        I = T.match_buffer(i, (4,), "float32")  # noqa: E741
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            I[tx] = A[tx] + B[tx] + C[tx] + D[tx] + E[tx] + F[tx] + G[tx] + H[tx]

    with pytest.raises(TIRVerifyError, match="9 storage buffers.*maxStorageBuffersPerShaderStage is 8"):
        tvm.compile(nine, target="webgpu")


def test_workgroup_limits_are_named():
    with pytest.raises(TIRVerifyError, match="512 threads per block.*at most 256"):
        tvm.compile(kernels.vector_add(block=512), target="webgpu")

    @T.prim_func
    def deep(a: T.handle):
        A = T.match_buffer(a, (128,), "float32")
        for tz in T.thread_binding(128, thread="threadIdx.z"):
            A[tz] = T.float32(1)

    with pytest.raises(TIRVerifyError, match="threadIdx.z = 128 exceeds WebGPU's maxComputeWorkgroupSizeZ"):
        tvm.compile(deep, target="webgpu")

    @T.prim_func
    def big_shared(a: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            S = T.alloc_buffer((8192,), "float32", scope="shared")
            for i in range(128):  # every element used: the buffer keeps its size
                S[i * 64 + tx] = T.float32(1)
            A[tx] = S[tx]

    with pytest.raises(TIRVerifyError, match="32768 bytes of .*shared memory.*16384"):
        tvm.compile(big_shared, target="webgpu")


def test_infinities_and_nan_are_built_from_bits():
    @T.prim_func
    def special(a: T.handle):
        A = T.match_buffer(a, (4,), "float32")
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            A[0] = T.float32("inf")
            A[1] = T.float32("-inf")
            A[2] = T.float32("nan")
            A[3] = T.float32(tx)

    src = wgsl(special)
    assert "var<private> tvm_inf_bits: u32 = 0x7f800000u;" in src
    assert "bitcast<f32>(tvm_inf_bits)" in src and "inf" not in src.replace("tvm_inf_bits", "")


def test_fallback_bytes_equal_without_a_runtime(monkeypatch):
    built = tvm.compile(kernels.row_softmax(), target="webgpu").imports[0]
    monkeypatch.setenv("TVM_COMPILE_FORCE_FALLBACK", "1")
    fallback = tvm.compile(kernels.row_softmax(), target="webgpu").imports[0]
    assert fallback.kind == "webgpu" and fallback.save_to_bytes() == built.save_to_bytes()
    assert np.frombuffer(built.save_to_bytes(), "uint8").size > 0


def test_each_shader_starts_with_its_loop_iteration_bound():
    """``//! loop_bound`` bounds one thread's loop iterations from the scalar arguments, for the
    runtime to refuse launches a driver would cut short (llvmpipe: 65,535)."""
    tvm.backend.load("webgpu")
    mod = tvm.compile(kernels.serial_row_sum(), target="webgpu")
    src = mod.imports[0].inspect_source()
    assert src.startswith("//! kernel serial_row_sum_kernel0\n//! loop_bound 1+$3\n"), src[:120]


def test_shaders_of_threads_holding_arrays_say_how_many_scalars():
    """``//! local_scalars`` counts the array scalars one thread holds (a lone scalar is a register),
    for the runtime to refuse builds llvmpipe would take minutes over."""

    @T.prim_func
    def two_arrays(a: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            R = T.alloc_buffer((4, 8), "float32", scope="local")
            S = T.alloc_buffer((3,), "int32", scope="local")
            acc = T.alloc_buffer((1,), "float32", scope="local")
            for i, j in T.grid(4, 8):
                R[i, j] = T.Cast("float32", i * j)
            for k in range(3):
                S[k] = k
            acc[0] = R[tx % 4, tx % 8] + T.Cast("float32", S[tx % 3])
            A[tx] = acc[0]

    src = wgsl(two_arrays)
    assert re.match(r"//! kernel two_arrays_kernel0\n(//! loop_bound [^\n]+\n)?//! local_scalars 35\n", src), src[:160]
    assert "local_scalars" not in wgsl(kernels.vector_add())


@T.prim_func
def literal_operations(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    B = T.match_buffer(b, (64,), "float16")
    C = T.match_buffer(c, (64,), "uint32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = A[tx] + T.exp(T.float32(100)) - T.float32(1e30) * T.float32(1e30)
        B[tx] = B[tx] + T.float16(60000) * T.float16(2)
        C[tx] = C[tx] + (T.uint32(3222122509) << T.uint32(26))


def test_operations_on_literals_overflow_at_run_time_as_in_numpy(dev):
    """WGSL evaluates an operation on literals when the shader is created and rejects it when it
    overflows; TIR computes inf, or wraps, at run time as NumPy does. Such operations take one
    operand from a private variable (integer ones the simplifier folds, wrapped)."""
    src = wgsl(literal_operations)
    assert "exp(bitcast<f32>(bitcast<u32>(100.0f) | tvm_one_u32))" in src and "(60000.0h * f16(tvm_one_f32))" in src
    assert "3222122509u <<" not in src  # folded: 3222122509 << 26 wraps to 0x34000000
    mod = tvm.compile(literal_operations, target="webgpu")
    x, y, z = np.ones(64, "float32"), np.ones(64, "float16"), np.arange(64, dtype="uint32")
    args = [tvm.runtime.tensor(v, dev) for v in (x, y, z)]
    mod["literal_operations"](*args)
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_array_equal(
            args[0].numpy(), x + np.exp(np.float32(100)) - np.float32(1e30) * np.float32(1e30)
        )
        np.testing.assert_array_equal(args[1].numpy(), y + np.float16(60000) * np.float16(2))
    np.testing.assert_array_equal(args[2].numpy(), z + np.uint32((3222122509 << 26) & 0xFFFFFFFF))


@T.prim_func
def constant_conversions_and_lets(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    B = T.match_buffer(b, (64,), "float16")
    x = T.float32()
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = A[tx] + T.let(x, T.float32(1e30), x * T.float32(1e30))
        B[tx] = B[tx] + T.exp(T.Cast("float16", T.float32(20))) + T.Cast("float16", T.int32(1000)) * T.float16(1000)


def test_constants_made_of_conversions_and_lets_also_wait_for_run_time(dev):
    """A constant that is a conversion, or a Let-bound value substituted where it is used, is
    still a WGSL const-expression: the operation on it takes its operand at run time too."""
    mod = tvm.compile(constant_conversions_and_lets, target="webgpu")
    args = [tvm.runtime.tensor(np.ones(64, d), dev) for d in ("float32", "float16")]
    mod["constant_conversions_and_lets"](*args)
    np.testing.assert_array_equal(args[0].numpy(), np.full(64, np.inf, "float32"))
    np.testing.assert_array_equal(args[1].numpy(), np.full(64, np.inf, "float16"))


@T.prim_func
def float16_inside_expressions(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (64,), "int32")
    B = T.match_buffer(b, (64,), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = A[tx] + T.int32(T.float16(2049.0) - T.float16(48.0))
        B[tx] = T.Cast("float32", T.Cast("float16", T.int32(-977956736)) - T.float16(44.0))


def test_float16_only_inside_expressions_and_a_constant_conversion_that_overflows(dev):
    """A kernel whose buffers hold no float16 still enables f16 when an expression computes in
    it, and the conversion of a constant past float16's range happens at run time (a WGSL
    const-expression would be rejected): -977956736 is -inf in float16, as in NumPy."""
    src = wgsl(float16_inside_expressions)
    assert src.startswith("enable f16;") or "\nenable f16;" in src, src[:200]
    mod = tvm.compile(float16_inside_expressions, target="webgpu")
    args = [tvm.runtime.tensor(np.zeros(64, d), dev) for d in ("int32", "float32")]
    mod["float16_inside_expressions"](*args)
    np.testing.assert_array_equal(args[0].numpy(), np.full(64, 2000, "int32"))  # float16(2049) is 2048
    np.testing.assert_array_equal(args[1].numpy(), np.full(64, -np.inf, "float32"))


@T.prim_func
def math_of_16_bit_constants(a: T.handle):
    A = T.match_buffer(a, (64, 4), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx, 0] = T.Cast("float32", T.log(T.float16(-1.0)))
        A[tx, 1] = T.Cast("float32", T.log2(T.float16(-15.0)))
        A[tx, 2] = T.Cast("float32", T.sqrt(T.bfloat16(-1.0)))
        A[tx, 3] = T.Cast("float32", T.log(T.bfloat16(0.0)))


def test_math_of_16_bit_constants_is_computed_at_run_time(dev):
    """A math call on a float16 or bfloat16 constant reached the shader compiler as a WGSL
    const-expression (the run-time operand went around the call, not into it): wgpu rejected
    log(-1.0h) at the first launch, where the other targets compute NaN."""
    mod = tvm.compile(math_of_16_bit_constants, target="webgpu")
    out = tvm.runtime.empty((64, 4), "float32", dev)
    mod["math_of_16_bit_constants"](out)
    got = out.numpy()
    assert np.isnan(got[:, :3]).all() and (got[:, 3] == -np.inf).all()


def test_the_index_check_record_counted_past_the_storage_buffer_limit_is_named():
    """Eight buffers and an index read from memory: the ninth storage buffer is the record of
    the run-time index checks, and the error says so and how to avoid it."""

    @T.prim_func
    def eight(a: T.handle, i: T.handle, c: T.handle, d: T.handle, e: T.handle, f: T.handle, g: T.handle, h: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        idx = T.match_buffer(i, (64,), "int32")
        C = T.match_buffer(c, (64,), "float32")
        D = T.match_buffer(d, (64,), "float32")
        E = T.match_buffer(e, (64,), "float32")
        F = T.match_buffer(f, (64,), "float32")
        G = T.match_buffer(g, (64,), "float32")
        H = T.match_buffer(h, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            C[tx] = A[idx[tx]]
            D[tx] = C[tx] + E[tx] + F[tx] + G[tx] + H[tx]

    with pytest.raises(
        TIRVerifyError, match=r"binds 9 storage buffers \(one is eight_index_errors, where its run-time"
    ):
        wgsl(eight)


def test_call_extern_is_refused_by_name():
    """A WGSL shader has no external functions: the call is refused when compiling (the shader
    compiler's own error came at the first launch)."""

    @T.prim_func
    def extern_call(A: T.Buffer((8,), "float32")):
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            A[tx] = T.call_extern("float32", "fabs", A[tx])

    with pytest.raises(CodegenError, match="T.call_extern of 'fabs': a WGSL shader calls no external function"):
        tvm.compile(extern_call, target="webgpu")


@T.prim_func
def bf16_tile(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (64,), "bfloat16")
    B = T.match_buffer(b, (64,), "bfloat16")
    C = T.match_buffer(c, (64,), "uint16")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        S = T.alloc_buffer((64,), "bfloat16", scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            S[tx] = A[tx] * T.bfloat16(3)
            T.tvm_storage_sync("shared")
            B[tx] = S[63 - tx]
            C[tx] = T.reinterpret("uint16", S[tx])


def test_a_bfloat16_array_in_workgroup_memory_holds_float32():
    """WGSL has no 16-bit arrays: a bfloat16 array in workgroup (or private) memory, the user's or
    the compiler's reduction scratch, holds its bfloat16 values as float32 (it was refused)."""
    src = wgsl(bf16_tile)
    assert "var<workgroup> S: array<f32, 64>;" in src, src


def test_subgroup_operations_enable_subgroups():
    @T.prim_func
    def lanes(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        B = T.match_buffer(b, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[tx] = (
                T.webgpu.subgroup_add(A[tx])
                + T.webgpu.subgroup_shuffle_xor(A[tx], 1)
                + T.Cast("float32", T.webgpu.subgroup_invocation_id())
            )

    src = wgsl(lanes)
    assert src.startswith("//! kernel lanes_kernel0\nenable subgroups;\n"), src[:80]
    assert "@builtin(subgroup_size) tvm_sg_size: u32, @builtin(subgroup_invocation_id) tvm_sg_id: u32) {" in src
    assert "subgroupAdd(A[tx])" in src and "subgroupShuffleXor(A[tx], u32(1i))" in src and "i32(tvm_sg_id)" in src
    assert "subgroup" not in wgsl(kernels.vector_add())  # only kernels that use them enable them

    @T.prim_func
    def after_and(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        B = T.match_buffer(b, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[tx] = T.Select(T.Or(tx < 8, T.webgpu.subgroup_add(A[tx]) > T.float32(1)), T.float32(1), T.float32(2))

    assert "((tx < 8i) | (subgroupAdd(A[tx]) > " in wgsl(after_and)  # not ||: every lane adds


def test_subgroup_operations_take_32_bit_values():
    from tvm.script.diagnostics import TVMScriptError

    with pytest.raises(
        TVMScriptError, match="subgroup operations take int32, uint32, float32 or float16 values, got int8"
    ):

        @T.prim_func
        def wide(a: T.handle):
            A = T.match_buffer(a, (64,), "int8")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                A[tx] = T.webgpu.subgroup_add(A[tx])


@pytest.mark.parametrize(
    "body, message",
    [
        ("B[0] = T.Select(n * m > T.int64(0), T.float32(1), T.float32(0))", r"compares int64 arithmetic \(n \* m\)"),
        ('x = n * m\n    y = x + T.int64(1)\n    B[0] = T.Cast("float32", y)', r"stores 'y', computed in int64"),
        ('B[0] = T.Cast("float32", T.truncmod(n * m, T.int64(8)))', r"stores int64 arithmetic"),
        ("for k in range(n * m // T.int64(3)):\n        B[0] = B[0] + T.float32(1)", r"compares int64 arithmetic"),
        (
            "for i in range(T.int64(65536)):\n        B[0] = C[i * T.int64(40503) % T.int64(1000)]",
            r"indexes with int64",
        ),
        ("B[0] = C[n * m // T.int64(7) % T.int64(1000)]", r"indexes with int64 arithmetic \(n \* m // T.int64\(7\)\)"),
    ],
)
def test_products_of_sizes_that_could_need_64_bits_are_refused(body, message):
    """n * m of two int64 sizes wraps in int32 (50,001 * 50,001): compared, kept in a let that
    another uses, truncated toward zero (its sign is the wrapped one's), bounding a loop, or
    divided inside an index (where only ring arithmetic keeps its low bits), it is refused."""
    source = f"""
@T.prim_func
def f(B: T.Buffer((1,), "float32"), C: T.Buffer((1000,), "float32"), n: T.int64, m: T.int64):
    {body}
"""
    with pytest.raises(TIRVerifyError, match=message):
        tvm.compile(tvm.script.parse(source), target="webgpu")


@T.prim_func
def signs_and_powers_of_16_bit(a: T.handle, b: T.handle, c: T.handle, d: T.handle):
    A = T.match_buffer(a, (8,), "float16")
    B = T.match_buffer(b, (8,), "float16")
    C = T.match_buffer(c, (8,), "float16")
    D = T.match_buffer(d, (8,), "float16")
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        C[tx] = T.copysign(A[tx], B[tx])
        D[tx] = T.pow(A[tx], B[tx])


def test_copysign_and_pow_of_float16(dev):
    """Both took the sign bit by reinterpreting a float16 as int16, which WGSL cannot: the
    compile was refused with a message about a reinterpret the kernel never wrote."""
    mod = tvm.compile(signs_and_powers_of_16_bit, target="webgpu")
    a = np.array([0.0, 2.0, -3.0, 0.5, 4.0, -2.0, 1.5, 0.0], "float16")
    b = np.array([-1.0, -0.0, 2.0, 3.0, 0.5, 3.0, -2.0, 2.0], "float16")
    args = [tvm.runtime.tensor(x, dev) for x in (a, b)] + [tvm.runtime.empty((8,), "float16", dev) for _ in range(2)]
    mod["signs_and_powers_of_16_bit"](*args)
    np.testing.assert_array_equal(args[2].numpy(), np.copysign(a, b))
    np.testing.assert_array_equal(np.signbit(args[2].numpy()), np.signbit(np.copysign(a, b)))
    np.testing.assert_allclose(args[3].numpy().astype("float32"), np.power(a.astype("float32"), b), rtol=2e-3)


@T.prim_func
def _compare_with_nan(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32"), O: T.Buffer((4, 2), "int32")):
    for i in T.thread_binding(4, thread="threadIdx.x"):
        O[i, 0] = T.Select(X[i] != Y[i], 1, 0)
        O[i, 1] = T.Select(X[i] != X[i], 1, 0)


def test_not_equal_is_true_for_a_nan(dev):
    """The driver compiled WGSL's float ``!=`` as an ordered comparison: ``nan != 1`` and the NaN
    test ``x != x`` were false. It is printed as ``!(a == b)``."""
    assert "(!(X[i] == X[i]))" in wgsl(_compare_with_nan)
    x = np.array([np.nan, 1.0, np.nan, 2.0], "float32")
    y = np.array([1.0, np.nan, np.nan, 2.0], "float32")
    out = tvm.runtime.empty((4, 2), "int32", dev)
    tvm.compile(_compare_with_nan, target="webgpu")(tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), out)
    np.testing.assert_array_equal(out.numpy(), np.stack([x != y, x != x], axis=1).astype("int32"))


@T.prim_func
def bits_of_an_argument(A: T.Buffer((4,), "float32"), D: T.Buffer((1,), "float32")):
    V = T.decl_buffer((4,), "int32", data=A.data)
    for t in T.thread_binding(1, thread="threadIdx.x"):
        D[0] = T.Cast("float32", V[0])


def test_a_view_of_an_arguments_words_as_another_dtype_is_refused():
    """The view read the argument's elements converted (1.5 where its bits were asked for): WGSL
    declares each binding as an array of its own dtype and has no pointer casts."""
    with pytest.raises(CodegenError, match=r"buffer 'V' views the memory of 'A' \(float32\) as int32: WGSL has no"):
        tvm.compile(bits_of_an_argument, target="webgpu")


@pytest.mark.parametrize("name", ["filter", "target", "shared", "type"])
def test_a_variable_named_as_a_wgsl_reserved_word_is_renamed(name):
    """WGSL reserves words such as filter and target: a convolution's `filter` failed validation."""
    source = f"""
@T.prim_func
def f({name}: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        {name}[tx] = {name}[tx] * T.float32(2)
"""
    func = tvm.script.parse(source, extra_vars={"T": T})
    text = tvm.compile(func, target="webgpu").imports[0].inspect_source()
    assert re.search(rf"\b{name}\b", text.replace(f"{name}_", "")) is None
