"""The emitted SPIR-V itself: valid for every kernel shape, with the capabilities each dtype
needs, and clear errors for what Vulkan cannot do (no device needed)."""

from __future__ import annotations

import pytest
import tvm
from tvm.codegen.c_family import CodegenError
from tvm.script import tir as T
from tvm.testing import kernels
from tvm.tir.transform import lower
from tvm.tir.transform.verify import TIRVerifyError
from tvm_backend_vulkan import codegen, validate


def _assembly(func, **attrs) -> str:
    tvm.backend.load("vulkan")
    target = tvm.target.Target({"kind": "vulkan", **attrs})
    return codegen.generate(lower(func, target).kernels)[1]


@pytest.mark.parametrize(
    "make",
    [kernels.vector_add, kernels.row_sum, kernels.row_softmax, kernels.matmul_tiled],
    ids=["vector_add", "row_sum", "row_softmax", "matmul_tiled"],
)
def test_every_zoo_kernel_passes_the_validator(make):
    asm = _assembly(make())
    assert "OpEntryPoint GLCompute" in asm
    assert "OpDecorate %gl_WorkGroupSize BuiltIn WorkgroupSize" in asm


def test_interface_storage_buffers_push_constants_and_workgroup_memory():
    asm = _assembly(kernels.row_sum())
    for text in (
        "OpDecorate %A Binding 0",
        "OpDecorate %B Binding 1",
        "OpDecorate %A DescriptorSet 0",
        "PushConstant",
        "Workgroup",
        "OpControlBarrier %uint_2 %uint_2 %uint_264",
        "OpLoopMerge",
        "OpSelectionMerge",
        "SpecId 0",
    ):
        assert text in asm, text


@pytest.mark.parametrize(
    "dtype, capabilities",
    [
        ("float16", ["Float16", "StorageBuffer16BitAccess"]),
        ("int8", ["Int8", "StorageBuffer8BitAccess"]),
        ("int16", ["Int16", "StorageBuffer16BitAccess"]),
        ("int64", ["Int64"]),
        ("float64", ["Float64"]),
    ],
)
def test_each_dtype_declares_its_capabilities(dtype, capabilities):
    asm = _assembly(kernels.vector_add(dtype))
    for cap in capabilities:
        assert f"OpCapability {cap}\n" in asm, cap
    assert "OpCapability Int64\n" not in _assembly(kernels.vector_add("float32"))


def test_module_bytes_and_function_table():
    tvm.backend.load("vulkan")
    mod = tvm.compile(kernels.row_sum(), target="vulkan")
    (dev_mod,) = mod.imports
    assert dev_mod.kind == "vulkan"
    assert "OpEntryPoint GLCompute %row_sum_kernel0" in dev_mod.inspect_source()


def test_narrow_scalars_travel_as_32_bit_push_constants():
    @T.prim_func
    def scale(a: T.handle, s: T.int8, h: T.float16):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for bx in T.thread_binding((n + 63) // 64, thread="blockIdx.x"):
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                if bx * 64 + tx < n:
                    A[bx * 64 + tx] = A[bx * 64 + tx] * T.Cast("float32", s) + T.Cast("float32", h)

    tvm.backend.load("vulkan")
    kernels_ = lower(scale, tvm.target.Target("vulkan")).kernels
    ((name, arg_types, _),) = [row[:3] for row in codegen.function_table(kernels_)]
    assert arg_types[1:3] == ["int32", "float32"]
    asm = codegen.generate(kernels_)[1]
    assert "OpSConvert %char" in asm and "OpFConvert %half" in asm


def test_scalars_past_128_bytes_are_a_uniform_buffer_after_the_storage_buffers():
    from test_vulkan_uniform_args import twenty_int64  # 20 int64 scalars after buffers A and B

    asm = _assembly(twenty_int64)  # 160 bytes of scalars: a uniform buffer at binding 2
    for text in (
        "OpDecorate %B Binding 1",
        "OpDecorate %twenty_int64_kernel0_args DescriptorSet 0",
        "OpDecorate %twenty_int64_kernel0_args Binding 2",
        " 16 Offset 128",  # member 16 of the block
        "%twenty_int64_kernel0_args = OpVariable %_ptr_Uniform_",
        "OpAccessChain %_ptr_Uniform_long %twenty_int64_kernel0_args %int_16",
    ):
        assert text in asm, text
    assert "PushConstant" not in asm


def test_float64_transcendentals_are_refused_with_the_fix():
    @T.prim_func
    def exp64(a: T.handle):
        A = T.match_buffer(a, (64,), "float64")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            A[tx] = T.exp(A[tx])

    with pytest.raises(CodegenError, match="'exp' on float64 .* compute it in float32"):
        _assembly(exp64)


def test_shared_memory_past_the_device_limit_is_a_compile_error():
    with pytest.raises(TIRVerifyError, match="shared memory"):
        _assembly(kernels.row_sum(block=128, dtype="float64"), max_shared_memory_per_block=512)


def test_a_validation_failure_names_the_instruction_and_the_tvmscript_line():
    from tvm_backend_vulkan.emitter import KernelEmitter, ModuleState
    from tvm_backend_vulkan.spirv import Op

    tvm.backend.load("vulkan")
    (kernel,) = lower(kernels.vector_add(), tvm.target.Target("vulkan")).kernels
    state = ModuleState()
    emitter = KernelEmitter(state)
    original = emitter.ins

    def broken(opcode, type_id, *operands):  # an IAdd whose result type is bool: invalid SPIR-V
        if opcode == Op.IAdd:
            return original(opcode, state.module.bool(), *operands)
        return original(opcode, type_id, *operands)

    emitter.ins = broken
    emitter.emit_kernel(kernel)
    with pytest.raises(validate.SpirvValidationError) as err:
        validate.validate(state.module.to_bytes(), state.spans, "vector_add_kernel0")
    text = str(err.value)
    assert "OpIAdd" in text and "from TVMScript: line" in text


def test_while_break_and_continue_are_structured_loops():
    """A while loop gets a header holding only its merge, a block of its own for the condition,
    and a continue block; break and continue branch to the loop's merge and continue blocks (the
    conformance check test_while_break_and_continue runs them)."""
    asm = _assembly(kernels.bounded_collatz())
    assert asm.count("OpLoopMerge") == 2, asm  # the while loop and the for loop over bits


def test_a_view_of_memory_as_another_dtype_is_refused_by_name():
    """SPIR-V has no pointer casts: a float32 view of float16 shared memory cannot be emitted."""

    @T.prim_func
    def punned(a: T.handle):
        A = T.match_buffer(a, (32,), "float32")
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            S = T.alloc_buffer((32,), "float16", scope="shared")
            F = T.decl_buffer((16,), "float32", data=S.data, scope="shared")
            S[tx] = T.Cast("float16", A[tx])
            T.tvm_storage_sync("shared")
            A[tx] = F[tx % 16]

    with pytest.raises(CodegenError, match="buffer 'F' reads memory that holds float16 as float32: SPIR-V has no"):
        tvm.compile(punned, target="vulkan")


def test_each_kernel_carries_its_loop_iteration_bound():
    """An OpString per kernel bounds one thread's loop iterations from its scalar arguments, for
    the runtime to refuse launches a driver would cut short (lavapipe: 65,535)."""
    asm = _assembly(kernels.serial_row_sum())
    assert '= OpString "tvm.loop_bound:serial_row_sum_kernel0:1+$3"' in asm  # n passes + the leaving one
    assert "tvm.loop_bound" not in _assembly(kernels.vector_add())  # no loops


def test_two_shared_buffers_sized_at_launch_are_refused_by_name():
    @T.prim_func
    def two(a: T.handle, n: T.int32):
        A = T.match_buffer(a, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            S = T.alloc_buffer((64 + n,), "float32", scope="shared.dyn")
            R = T.alloc_buffer((64 + n,), "float32", scope="shared.dyn")
            for k in range(n + 1):  # both use all of their launch sizes
                S[tx + k] = A[tx]
                R[tx + k] = A[tx]
            T.tvm_storage_sync("shared")
            A[tx] = S[63 - tx] + R[tx]

    with pytest.raises(Exception, match="allocation 'R' has a size known only at run time .* sizes one shared buffer"):
        tvm.compile(two, target="vulkan")


def test_float_kernels_keep_infinities_nans_and_zero_signs():
    """Every entry point asks to keep IEEE specials in each float width it uses
    (SignedZeroInfNanPreserve); the runtime drops the modes a device cannot honour, and the
    capability and extension with the last. Float arithmetic with a zero constant reads a zero
    computed at run time (lavapipe folded x * 0.0 to 0 and x / 0.0 to an undefined value)."""

    @T.prim_func
    def specials(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (8,), "float32")
        B = T.match_buffer(b, (8,), "float64")
        C = T.match_buffer(c, (8,), "float32")
        for i in T.thread_binding(8, thread="threadIdx.x"):
            C[i] = A[i] / T.float32(0.0) + T.Cast("float32", B[i] * T.float64(-0.0))

    binary, asm = codegen.generate(lower(specials, tvm.target.Target("vulkan")).kernels)
    for text in ("OpCapability SignedZeroInfNanPreserve", 'OpExtension "SPV_KHR_float_controls"'):
        assert text in asm
    for bits in (32, 64):
        assert f"OpExecutionMode %specials_kernel0 SignedZeroInfNanPreserve {bits}\n" in asm
    assert "OpFDiv %float %" in asm and "%float_0\n" not in asm.split("OpFDiv")[1].split("\n")[0]
    assert "OpFNegate %double" in asm  # -0.0 from the run-time zero
    strip = tvm.get_global_func("vulkan.SpirvForFloatControls")
    only32 = validate.disassemble(bytes(strip(binary, 2)))
    assert "SignedZeroInfNanPreserve 32" in only32 and "SignedZeroInfNanPreserve 64" not in only32
    none = validate.disassemble(bytes(strip(binary, 0)))
    assert "SignedZeroInfNanPreserve" not in none and "float_controls" not in none
    validate.validate(bytes(strip(binary, 0)), {}, "specials_kernel0")


def test_dropping_the_modes_keeps_the_extension_other_float_controls_need(tmp_path):
    """A module that also asks for DenormPreserve keeps SPV_KHR_float_controls when the
    SignedZeroInfNanPreserve modes are dropped (without it the module is invalid)."""
    import subprocess

    tvm.backend.load("vulkan")
    source = tmp_path / "controls.spvasm"
    source.write_text(
        "OpCapability Shader\nOpCapability DenormPreserve\nOpCapability SignedZeroInfNanPreserve\n"
        'OpExtension "SPV_KHR_float_controls"\nOpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main "main"\n'
        "OpExecutionMode %main LocalSize 1 1 1\nOpExecutionMode %main DenormPreserve 32\n"
        "OpExecutionMode %main SignedZeroInfNanPreserve 32\n%void = OpTypeVoid\n%float = OpTypeFloat 32\n"
        "%fn = OpTypeFunction %void\n%main = OpFunction %void None %fn\n%label = OpLabel\nOpReturn\nOpFunctionEnd\n"
    )
    binary = tmp_path / "controls.spv"
    subprocess.run([validate.tool("spirv-as"), "--target-env", "vulkan1.1", str(source), "-o", str(binary)], check=True)
    stripped = bytes(tvm.get_global_func("vulkan.SpirvForFloatControls")(binary.read_bytes(), 0))
    validate.validate(stripped, {}, "main")
    text = validate.disassemble(stripped)
    assert "SignedZeroInfNanPreserve" not in text and "DenormPreserve 32" in text and "float_controls" in text
