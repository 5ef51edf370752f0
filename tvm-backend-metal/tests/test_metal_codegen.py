"""MSL generation: every conformance kernel passes the syntax check against the stand-in Metal
standard library, the argument interface (buffers by index, scalars in one constant struct), the
SIMD-group intrinsics, and what Metal cannot do refused by name."""

from __future__ import annotations

import pytest
import tvm
from msl_check import check
from tvm.codegen.c_family import CodegenError
from tvm.script import tir as T
from tvm.testing import kernels
from tvm_backend_metal import codegen

CONFORMANCE = {
    **{
        f"vector_add_{d}": (lambda d=d: kernels.vector_add(d))
        for d in ("float32", "float16", "bfloat16", "int32", "int8", "uint8", "int64")
    },
    "row_sum": kernels.row_sum,
    "row_softmax": kernels.row_softmax,
    "matmul_tiled": kernels.matmul_tiled,
}


@pytest.mark.parametrize("name", sorted(CONFORMANCE))
def test_every_conformance_kernel_passes_the_msl_syntax_check(name, clangxx, tmp_path):
    source = tvm.compile(CONFORMANCE[name](), target="metal").imports[0].inspect_source()
    assert check(source, tmp_path, clangxx) == ""


def test_the_check_catches_a_broken_kernel(clangxx, tmp_path):
    source = tvm.compile(kernels.row_sum(), target="metal").imports[0].inspect_source()
    assert "threadgroup_barrier" in check(
        source.replace("threadgroup_barrier", "threadgroup_barier"), tmp_path, clangxx
    )


def test_buffers_by_index_and_scalars_in_one_constant_struct():
    source = tvm.compile(kernels.row_softmax(), target="metal").imports[0].inspect_source()
    assert "struct row_softmax_kernel0_args {\n  int m;\n  int n;\n};" in source
    assert "device float* A [[buffer(0)]], device float* B [[buffer(1)]]" in source
    assert "constant row_softmax_kernel0_args& args [[buffer(2)]]" in source
    assert "threadgroup float red[64];" in source and "threadgroup_barrier(mem_flags::mem_threadgroup);" in source
    assert "args.n" in source


@T.prim_func
def simd_reduce(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (32,), "float32")
    B = T.match_buffer(b, (32,), "float32")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        B[tx] = T.metal.simd_sum(A[tx]) + T.metal.simd_shuffle_down(A[tx], 1) + T.metal.simd_max(A[tx])


def test_simd_group_intrinsics(clangxx, tmp_path):
    source = tvm.compile(simd_reduce, target="metal").imports[0].inspect_source()
    assert "simd_sum(A[tx])" in source and "simd_shuffle_down(A[tx], ((uint)1U))" in source
    assert check(source, tmp_path, clangxx) == ""


@T.prim_func
def simd_in_arms(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (32,), "float32")
    B = T.match_buffer(b, (32,), "float32")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        odd = T.And(tx % 2 == 1, T.metal.simd_shuffle_xor(A[tx], 1) > T.float32(0))
        B[tx] = T.Select(odd, T.metal.simd_shuffle_xor(A[tx], 1), A[tx])


def test_simd_operations_in_select_arms_and_after_and_run_on_every_lane(clangxx, tmp_path):
    """A simdgroup operation in an arm of T.Select or on the right of T.And goes through a
    function's arguments (C's ?: and && would skip it on some lanes)."""
    source = tvm.compile(simd_in_arms, target="metal").imports[0].inspect_source()
    assert "tvm_and(((tx & 1) == 1), (simd_shuffle_xor" in source and "tvm_select_float(odd, simd_shuffle_xor" in source
    assert check(source, tmp_path, clangxx) == ""


def test_apache_warp_shuffles_are_simd_shuffles_of_the_lane_cuda_reads(clangxx, tmp_path):
    """``T.tvm_warp_shuffle*`` (Apache TVM's cross-thread reductions lower to them) read the
    lane CUDA's __shfl*_sync reads in segments of ``width``, through ``simd_shuffle`` and the
    thread's lane in its SIMD group."""
    source = tvm.compile(kernels.warp_shuffles("float32", 32), target="metal").imports[0].inspect_source()
    assert "uint tvm_simd_lane [[thread_index_in_simdgroup]]" in source
    for kind in ("", "_up", "_down", "_xor"):
        assert f"static inline T tvm_shfl{kind}(T v" in source
    assert check(source, tmp_path, clangxx) == ""
    plain = tvm.compile(kernels.row_sum(), target="metal").imports[0].inspect_source()
    assert "thread_index_in_simdgroup" not in plain


def test_warp_shuffles_metal_cannot_do_are_refused_by_name():
    with pytest.raises(CodegenError, match=r"Metal warps have 32"):
        tvm.compile(kernels.warp_shuffles("float32", 64), target="metal")
    with pytest.raises(CodegenError, match=r"simd_shuffle moves values of at most 32 bits"):
        tvm.compile(kernels.warp_shuffles("int64", 32), target="metal")


@T.prim_func
def doubles(a: T.handle):
    A = T.match_buffer(a, (32,), "float64")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        A[tx] = A[tx] * T.float64(2)


def test_double_precision_is_refused_by_name():
    with pytest.raises(Exception, match="float64"):
        tvm.compile(doubles, target="metal")


@T.prim_func
def reversed_through_shared(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    S = T.alloc_buffer((n,), "float32", scope="shared.dyn")
    for tx in T.thread_binding(1, thread="threadIdx.x"):
        for i in range(n):
            S[i] = A[i]
        for i in range(n):
            A[i] = S[n - 1 - i]


def test_shared_memory_sized_at_launch_is_refused_with_its_shape():
    """Metal has no dynamic shared memory; the message printed the shape as IR ((Var(n: int32),))."""
    with pytest.raises(Exception, match=r"shared buffer 'S' has a size known only at launch \(n,\), which needs"):
        tvm.compile(reversed_through_shared, target="metal")


def test_more_than_31_buffer_bindings_are_refused():
    params = ", ".join(f"a{i}: T.handle" for i in range(32))
    body = "\n".join(f"    A{i} = T.match_buffer(a{i}, (8,), 'float32')" for i in range(32))
    text = (
        "from tvm.script import tir as T\n\n@T.prim_func\n"
        f"def many({params}):\n{body}\n"
        "    for tx in T.thread_binding(8, thread='threadIdx.x'):\n"
        f"        A0[tx] = {' + '.join(f'A{i}[tx]' for i in range(1, 32))}\n"
    )
    with pytest.raises(CodegenError, match=r"needs 32 buffer bindings \(32 buffers\); Metal allows 31"):
        tvm.compile(tvm.script.parse(text), target="metal")


def test_same_kernels_same_source():
    assert codegen.generate_source([kernels.matmul_tiled()]) == codegen.generate_source([kernels.matmul_tiled()])
