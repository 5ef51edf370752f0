"""HIP generation and AMDGPU code objects, checked with llvm-readelf: the machine, the kernel
symbols and descriptors, shared memory, wavefront size and launch bounds per architecture."""

from __future__ import annotations

import re

import pytest
import tvm
from rocm_helpers import code_objects, kernel_metadata, readelf
from tvm.codegen.c_family import CodegenError
from tvm.contrib.cc import CompileError
from tvm.script import tir as T
from tvm.testing import kernels
from tvm_backend_rocm import clang, codegen

WAVEFRONT = {"gfx90a": 64, "gfx942": 64, "gfx1100": 32}
MACH_NAME = {"gfx90a": "gfx90a", "gfx942": "gfx942", "gfx1100": "gfx1100"}


CONFORMANCE = {
    **{
        f"vector_add_{d}": (lambda d=d: kernels.vector_add(d))
        for d in ("float32", "float16", "bfloat16", "int32", "int8", "uint8", "int64", "float64")
    },
    "row_sum": kernels.row_sum,
    "row_softmax": kernels.row_softmax,
    "matmul_tiled": kernels.matmul_tiled,
}


@pytest.mark.parametrize("case", sorted(CONFORMANCE))
def test_one_code_object_per_architecture_as_llvm_readelf_sees_it(case, readelf_path, tmp_path):
    """Every conformance kernel: the machine and architecture, the kernel and its descriptor,
    shared memory, wavefront size and launch bounds, for gfx90a, gfx942 and gfx1100."""
    kernel = "vector_add" if case.startswith("vector_add") else case
    mod = tvm.compile(CONFORMANCE[case](), target="rocm")
    source = mod.imports[0].inspect_source("hip")
    shared = sum(4 * int(n) for n in re.findall(r"__shared__ [^;]*float \w+\[(\d+)\];", source))
    bound = int(re.search(r"amdgpu_flat_work_group_size\(1, (\d+)\)", source).group(1))
    objects = code_objects(mod)
    assert list(objects) == list(clang.DEFAULT_ARCHS)
    for arch, obj in objects.items():
        header = readelf(readelf_path, obj, tmp_path, "-h", "-s")
        assert "EM_AMDGPU" in header and MACH_NAME[arch] in header, header
        name = f"{kernel}_kernel0"
        assert re.search(rf"FUNC\s+GLOBAL\s+\w+\s+\d+ {name}$", header, re.M), header
        assert re.search(rf"OBJECT\s+GLOBAL\s+\w+\s+\d+ {name}\.kd$", header, re.M), header
        meta = kernel_metadata(readelf(readelf_path, obj, tmp_path, "--notes"))[name]
        assert meta["group_segment_fixed_size"] == shared
        assert meta["wavefront_size"] == WAVEFRONT[arch]
        assert meta["max_flat_workgroup_size"] == bound


def test_the_target_chooses_the_architectures():
    mod = tvm.compile(kernels.vector_add(), target="rocm -arch=gfx942")
    assert list(code_objects(mod)) == ["gfx942"]
    with pytest.raises(ValueError, match="'sm_90' is not an AMDGPU architecture"):
        tvm.compile(kernels.vector_add(), target="rocm -arch=sm_90")


@T.prim_func
def math_kernel(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    B = T.match_buffer(b, (64,), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        B[tx] = T.exp(A[tx]) + T.sqrt(T.fabs(A[tx])) + T.floor(A[tx]) + T.log(T.fabs(A[tx]) + T.float32(1))


@T.prim_func
def tanh_kernel(a: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = T.tanh(A[tx])


def test_math_lowers_inline_or_is_refused_by_name():
    source = tvm.compile(math_kernel, target="rocm").imports[0].inspect_source()
    assert "__builtin_expf" in source and "__builtin_sqrtf" in source and "__builtin_logf" in source
    with pytest.raises(CodegenError, match=r"T\.tanh in float32 needs ROCm's device library \(ocml\)"):
        tvm.compile(tanh_kernel, target="rocm")

    @T.prim_func
    def floormod64(a: T.handle):
        A = T.match_buffer(a, (64,), "float64")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            A[tx] = T.floormod(A[tx], T.float64(0.7))

    with pytest.raises(CodegenError, match=r"T\.fmod \(or a float T\.floormod or %, computed with it\) in float64"):
        codegen.generate_source([floormod64])


def test_an_unusable_compiler_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("TVM_ROCM_CLANG", "/nonexistent/clang")
    with pytest.raises(CompileError, match=r"cannot run the ROCm compiler '/nonexistent/clang'.*clang-19 lld-19"):
        tvm.compile(kernels.vector_add(name="no_clang"), target="rocm")


def test_without_clang_code_generation_still_works(monkeypatch):
    monkeypatch.setattr(clang, "find_clang", lambda: None)
    with pytest.warns(RuntimeWarning, match="clang-19 lld-19"):
        mod = tvm.compile(kernels.vector_add(name="source_only"), target="rocm")
    assert "source_only_kernel0" in mod.imports[0].inspect_source("hip")
    assert code_objects(mod) == {}


def test_the_payload_format_refuses_damage():
    payload = clang.pack({"gfx90a": b"\x7fELF1", "gfx1100": b"\x7fELF2"})
    assert clang.unpack(payload) == {"gfx90a": b"\x7fELF1", "gfx1100": b"\x7fELF2"}
    with pytest.raises(ValueError, match="truncated"):
        clang.unpack(payload[:-3])
    with pytest.raises(ValueError, match="TVMHSACO"):
        clang.unpack(b"garbage" * 4)


def test_same_source_same_bytes():
    a = codegen.generate_source([kernels.row_softmax()])
    assert a == codegen.generate_source([kernels.row_softmax()])
    one = tvm.compile(kernels.row_softmax(), target="rocm").imports[0].save_to_bytes()
    two = tvm.compile(kernels.row_softmax(), target="rocm").imports[0].save_to_bytes()
    assert one == two


WAVE = """
from tvm.script import tir as T

@T.prim_func
def wave(a: T.handle):
    A = T.match_buffer(a, (64,), "float32")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = T.rocm.warp_sum(A[tx]) + T.rocm.shfl_xor(A[tx], 1) + T.Cast("float32", T.rocm.wavefront_size())
"""


def test_wavefront_intrinsics_become_ds_bpermute_for_every_architecture(readelf_path, tmp_path):
    import shutil
    import subprocess

    mod = tvm.compile(tvm.script.parse(WAVE), target="rocm")
    source = mod.imports[0].inspect_source("hip")
    assert "tvm_rocm_warp_sum_float(A[tx], __AMDGCN_WAVEFRONT_SIZE)" in source
    objdump = shutil.which("llvm-objdump-19") or readelf_path.replace("readelf", "objdump")
    for arch, obj in code_objects(mod).items():
        path = tmp_path / f"{arch}.hsaco"
        path.write_bytes(obj)
        text = subprocess.run([objdump, "-d", str(path)], capture_output=True, text=True, check=True).stdout
        assert "ds_bpermute_b32" in text, (arch, text[:2000])


def test_apache_warp_shuffles_for_64_lanes_build_only_for_64_lane_wavefronts():
    """A kernel's 64-lane shuffles would wrap around a 32-lane wavefront: the code object of
    such an architecture does not build (a 32-lane kernel builds for both: on 64-lane
    wavefronts its warps are the two halves); offsets are taken modulo the warp."""
    if clang.find_clang() is None:
        pytest.skip("clang-19 (apt-get install clang-19 lld-19) builds the code objects")
    wide = kernels.warp_shuffles(warp=64, name="wide")
    tvm.compile(wide, target="rocm -arch=gfx90a")
    for target in ("rocm -arch=gfx1100", "rocm"):
        with pytest.raises(
            CompileError, match="T.tvm_warp_shuffle is written for 64 lanes, more than this architecture.s wavefront"
        ):
            tvm.compile(wide, target=target)
    source = tvm.compile(kernels.warp_shuffles(), target="rocm").imports[0].inspect_source("hip")
    assert "tvm_rocm_shfl_down(A[tx], ((33) & 31), 32)" in source


def test_a_warp_barrier_is_the_wavefronts_and_widths_are_checked():
    """T.tvm_storage_sync("warp") orders one wavefront's memory (a block barrier there paired
    with other wavefronts' block barriers); a T.rocm width that is no power of two is refused, and
    one of 64 lanes does not build for 32-lane wavefronts."""

    @T.prim_func
    def warp_sync(a: T.handle):
        A = T.match_buffer(a, (64,), "float32")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            if tx >= 32:
                T.tvm_storage_sync("warp")
            A[tx] = A[tx] + T.float32(1)

    source = codegen.generate_source([warp_sync])
    assert "tvm_syncwarp();" in source and "__builtin_amdgcn_wave_barrier();" in source

    def shuffled(width):
        @T.prim_func
        def shfl(a: T.handle):
            A = T.match_buffer(a, (64,), "float32")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                A[tx] = T.rocm.shfl_down(A[tx], 1, width)

        return shfl

    with pytest.raises(
        CodegenError, match="T.rocm.shfl_down: width 12 must be a power of two from 1 to the warp size 64"
    ):
        tvm.compile(shuffled(12), target="rocm -arch=gfx90a")
    if clang.find_clang() is not None:
        tvm.compile(shuffled(64), target="rocm -arch=gfx90a")
        with pytest.raises(CompileError, match="T.rocm.shfl_down is written for 64 lanes, more than this architecture"):
            tvm.compile(shuffled(64), target="rocm -arch=gfx1100")
