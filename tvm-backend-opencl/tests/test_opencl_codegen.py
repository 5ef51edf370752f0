"""The generated OpenCL C itself (no device needed)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm.script import tir as T
from tvm_backend_opencl import codegen

import opencl_kernels as K
from tvm.tir.transform import lower


def _source(func, **attrs) -> str:
    target = tvm.target.Target({"kind": "opencl", **attrs})
    return codegen.generate_source(lower(func, target).kernels, target)


def test_work_item_builtins_local_memory_and_barriers():
    src = _source(K.matmul)
    assert "__kernel void matmul_kernel0(" in src
    for text in (
        "get_group_id(0)",
        "get_group_id(1)",
        "get_local_id(0)",
        "get_local_id(1)",
        "__local float",
        "barrier(CLK_LOCAL_MEM_FENCE);",
        "__global float* restrict A",
    ):
        assert text in src, text
    # __local arrays are declared at kernel function scope (first lines of the body)
    body = src.split("matmul_kernel0(", 1)[1].splitlines()
    assert body[1].strip().startswith("__local float") and body[2].strip().startswith("__local float")
    assert "cl_khr_fp64" not in src and "cl_khr_fp16" not in src


def test_fp64_pragma_only_when_used():
    assert codegen.FP64_PRAGMA in _source(K.elementwise("float64"))
    assert codegen.FP64_PRAGMA not in _source(K.elementwise("float32"))


def test_fp64_refused_for_target_without_fp64():
    """The target's capabilities (supports_float64=False, as detected on a device without
    cl_khr_fp64) refuse a float64 kernel when it is lowered, naming the buffer."""
    from tvm.tir.transform.verify import TIRVerifyError

    with pytest.raises(TIRVerifyError, match="uses buffer 'A' of float64; target 'opencl' has no float64"):
        _source(K.elementwise("float64"), supports_float64=False, model="tiny_gpu")
    assert "double" in _source(K.elementwise("float64"), supports_float64=True)


def test_half_through_vload_vstore_without_fp16():
    src = _source(K.half_cast)
    assert "vstore_half(" in src and "vload_half(" in src
    assert "cl_khr_fp16" not in src
    assert "__global half* restrict B" in src
    # no arithmetic on half values: __local half tiles hold rounded floats
    assert "__local float tile" in src


def test_native_half_with_fp16_target():
    src = _source(K.elementwise("float16"), supports_float16=True)
    assert codegen.FP16_PRAGMA in src and "vload_half" not in src
    assert "__global half* restrict A" in src


def test_bool_and_bfloat16_storage():
    src = _source(K.compare_select)
    assert "__global uchar* restrict M" in src and "bool" not in src.split("{", 1)[0]
    bf = _source(K.elementwise("bfloat16"))
    assert "__global ushort* restrict A" in bf and "tvm_bf2f" in bf and "tvm_f2bf" in bf


def test_math_builtins_are_overloaded_names():
    src32 = _source(K.unary_math("float32"))
    src64 = _source(K.unary_math("float64"))
    for name in ("exp(", "sqrt(", "tanh(", "floor(", "fabs("):
        assert name in src32 and name in src64
    assert "expf(" not in src32 and "sqrtf(" not in src32


def test_dynamic_local_memory_parameter():
    src = _source(K.dyn_reverse)
    assert "__local uchar* tvm_dyn_shmem)" in src
    assert "__local int* tile = (__local int*)(tvm_dyn_shmem + 0);" in src


def test_function_table_and_scalar_types():
    kernels = lower(K.axpy, tvm.target.Target("opencl")).kernels
    (entry,) = codegen.function_table(kernels)
    name, args, tags = entry
    # each extent is its maximum, a symbolic one as an expression of the arguments ($5 = n)
    assert name == "axpy_kernel0" and tags == ["blockIdx.x:($5+31)/32", "threadIdx.x:32"]
    # buffers carry their dtype and minimum size ($5 = the symbolic length, argument 5)
    assert args == ["handle:float32:$5"] * 3 + ["float32", "int64", "int32"], args
    src = codegen.generate_source(kernels)
    assert "float alpha" in src and "long shift" in src


def test_target_kind_and_alias():
    t = tvm.target.Target("cl")
    assert t.kind.name == "opencl" and t.device_type == 4
    assert set(t.keys) == {"gpu", "opencl"}


def test_unsupported_vector_width_is_a_clear_error():
    from tvm.codegen.c_family import CodegenError

    with pytest.raises(CodegenError, match="5-lane"):
        codegen.OpenCLPrinter().type_name("float32x5")
    assert codegen.OpenCLPrinter().type_name("float32x4") == "float4"


def test_only_private_arrays_stored_at_loaded_indices_in_kernels_with_barriers_are_volatile():
    """The PoCL work-around (codegen.arrays_stored_at_loaded_indices) costs nothing elsewhere."""
    from tvm.script import tir as T

    def kernel(barrier: bool, loaded: bool):
        @T.prim_func
        def f(a: T.handle, o: T.handle):
            A = T.match_buffer(a, (64,), "int32")
            O = T.match_buffer(o, (64,), "int32")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                L = T.alloc_buffer((4,), "int32", scope="local")
                R = T.alloc_buffer((4,), "int32", scope="local")
                for j in range(4):
                    L[j] = A[tx]
                    R[j] = A[tx]
                if loaded:
                    L[A[tx] & 3] = 1
                if barrier:
                    T.tvm_storage_sync("shared")
                O[tx] = L[1] + R[2]

        return f

    assert "volatile int L[4];" in _source(kernel(True, True))
    assert "volatile int R" not in _source(kernel(True, True))
    assert "volatile" not in _source(kernel(False, True)) and "volatile" not in _source(kernel(True, False))


@T.prim_func
def _multiply_then_subtract(
    A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), F: T.Buffer((64,), "float32")
):
    for i in T.thread_binding(64, thread="threadIdx.x"):
        F[i] = A[i] * T.float32(3.0) - B[i]


def test_a_product_and_a_difference_are_rounded_apart(dev):
    """OpenCL C contracts ``a * b - c`` into one fused operation unless told not to: PoCL's
    results differed from NumPy's (and every other backend's) in the last bits."""
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(64) * 1000).astype("float32")
    b = (a * np.float32(3) + (rng.standard_normal(64) * 1e-3).astype("float32")).astype("float32")
    mod = tvm.compile(_multiply_then_subtract, target="opencl")
    assert "#pragma OPENCL FP_CONTRACT OFF" in mod.imports[0].inspect_source()
    out = tvm.runtime.empty((64,), "float32", dev)
    mod(tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), out)
    np.testing.assert_array_equal(out.numpy(), a * np.float32(3) - b)


@pytest.mark.parametrize("name", ["get_local_id", "get_group_id", "barrier", "read_only", "image2d_t", "pipe"])
def test_a_variable_named_as_an_opencl_function_is_renamed(name):
    """A scalar named get_local_id hid OpenCL's function: the program failed to build."""
    source = f"""
@T.prim_func
def f(A: T.Buffer((64,), "float32"), {name}: T.float32):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = A[tx] + {name}
"""
    func = tvm.script.parse(source, extra_vars={"T": T})
    text = codegen.generate_source(tvm.tir.transform.lower(func, tvm.target.Target("opencl")).kernels)
    assert f"float {name}_" in text
