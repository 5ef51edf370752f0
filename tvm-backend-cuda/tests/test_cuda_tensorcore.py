"""Tensor cores through ``T.cuda`` (ldmatrix, mma.sync.m16n8k16, cp.async) and the float16 GEMM
of ``tvm_backend_cuda.kernels``.

Without a GPU: the lowered kernels run in a NumPy emulator of the warp instructions
(``cuda_tc_emulator``: PTX ISA fragment layouts, cp.async groups, barriers, bank groups) and must
equal A @ B; NVRTC compiles them for sm_80/sm_90 (cubin + PTX with the instructions, no local
memory); misuse raises errors naming the intrinsic. With a GPU (marked ``gpu``): the same
kernels against NumPy and torch.matmul.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm.codegen.c_family import CodegenError
from tvm.script import tir as T
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.functor import StmtExprMutator

import cuda_tc_emulator as emu
from tvm_backend_cuda import codegen, nvrtc, script
from tvm_backend_cuda.kernels import TensorCoreGemm, matmul_f16_tensorcore

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)")


# ---------------------------------------------------------------------------- kernels
@T.prim_func
def mma_tile(a: T.handle, b: T.handle, c: T.handle):
    """One warp: C[16, 8] (float32) = A[16, 16] @ B[16, 8] (float16) with one mma."""
    A = T.match_buffer(a, (16, 16), "float16")
    B = T.match_buffer(b, (16, 8), "float16")
    C = T.match_buffer(c, (16, 8), "float32")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        As = T.alloc_buffer((16, 16), "float16", scope="shared")
        Bs = T.alloc_buffer((16, 8), "float16", scope="shared")
        af = T.alloc_buffer((4,), "uint32", scope="local")
        bf = T.alloc_buffer((2,), "uint32", scope="local")
        acc = T.alloc_buffer((4,), "float32", scope="local")
        for i in T.serial(8):
            As[(tx * 8 + i) // 16, (tx * 8 + i) % 16] = A[(tx * 8 + i) // 16, (tx * 8 + i) % 16]
        for i in T.serial(4):
            Bs[(tx * 4 + i) // 8, (tx * 4 + i) % 8] = B[(tx * 4 + i) // 8, (tx * 4 + i) % 8]
        T.tvm_storage_sync("shared")
        for i in T.unroll(4):
            acc[i] = T.float32(0)
        T.cuda.ldmatrix_x4(af[0], As[tx % 16, tx // 16 * 8])
        T.cuda.ldmatrix_x2_trans(bf[0], Bs[tx % 16, 0])
        T.cuda.mma_m16n8k16_f16f32(acc[0], af[0], bf[0])
        for i in T.unroll(4):
            C[tx // 4 + i // 2 * 8, tx % 4 * 2 + i % 2] = acc[i]


@T.prim_func
def ldmatrix_only(a: T.handle, c: T.handle):
    """ldmatrix alone (sm_75+): C[lane, j] = register j of each lane."""
    A = T.match_buffer(a, (16, 16), "float16")
    C = T.match_buffer(c, (32, 4), "uint32")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        As = T.alloc_buffer((16, 16), "float16", scope="shared")
        r = T.alloc_buffer((4,), "uint32", scope="local")
        for i in T.serial(8):
            As[(tx * 8 + i) // 16, (tx * 8 + i) % 16] = A[(tx * 8 + i) // 16, (tx * 8 + i) % 16]
        T.tvm_storage_sync("shared")
        T.cuda.ldmatrix_x4(r[0], As[tx % 16, tx // 16 * 8])
        for j in T.serial(4):
            C[tx, j] = r[j]


CONFIGS = {
    "default_128x128x32_2x4warps_3stages_xor": (128, 128, 96, {}),
    "padded_2stages": (128, 128, 64, dict(stages=2, swizzle=False)),
    "64x64x32_2x2warps_grouped_raster": (256, 256, 64, dict(block_m=64, block_n=64, warps_m=2, warps_n=2, group_m=2)),
    "128x128x32_4x2warps": (128, 256, 64, dict(warps_m=4, warps_n=2, stages=2)),
    "128x128x32_4warps_64x64_warp_tiles": (128, 128, 96, dict(warps_m=2, warps_n=2)),
    "64x64x64_2x2warps": (256, 64, 128, dict(block_m=64, block_n=64, block_k=64, warps_m=2, warps_n=2)),
    # more than 48 KiB of stages: "shared.dyn", launched with the opt-in size
    "128x128x32_2x4warps_4stages_64KiB": (128, 128, 192, dict(stages=4)),
    "128x128x64_2x2warps_4stages_128KiB": (128, 128, 320, dict(block_k=64, warps_m=2, warps_n=2, stages=4)),
}


def lowered(f, arch: str = "sm_80"):
    return tvm.tir.transform.lower(f, tvm.target.Target(f"cuda -arch={arch}")).kernels


def rand_f16(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype("float16")


# ---------------------------------------------------------------------------- PTX models
def test_fragment_layouts_cover_each_element_once() -> None:
    for coords, n, shape in (
        (emu.a_fragment_coords, 8, (16, 16)),
        (emu.b_fragment_coords, 4, (16, 8)),
        (emu.c_fragment_coords, 4, (16, 8)),
    ):
        hits = np.zeros(shape, int)
        for i in range(n):
            r, c = coords(i)
            np.add.at(hits, (r, c), 1)
        assert (hits == 1).all()


def test_ldmatrix_model_gives_mma_fragments() -> None:
    """ldmatrix.x4 of a row-major 16x16 tile with lane l -> &A[l % 16, (l // 16) * 8] is the A
    fragment; ldmatrix.x2.trans of a k-major B (16x8) with l -> &B[l % 16, 0] the B fragment."""
    rng = np.random.default_rng(0)
    A, B = rand_f16(rng, (16, 16)), rand_f16(rng, (16, 8))
    rows = np.stack(
        [
            np.stack([A[lane % 16, lane // 16 * 8 : lane // 16 * 8 + 8] for lane in range(8 * j, 8 * j + 8)])
            for j in range(4)
        ]
    )
    a = emu.ldmatrix_model(rows, trans=False)
    brows = np.stack([np.stack([B[lane % 16, 0:8] for lane in range(8 * j, 8 * j + 8)]) for j in range(2)])
    b = emu.ldmatrix_model(brows, trans=True)
    for i in range(8):
        r, c = emu.a_fragment_coords(i)
        np.testing.assert_array_equal(emu.unpack_f16x2(a[:, i // 2])[i % 2], A[r, c])
    for i in range(4):
        r, c = emu.b_fragment_coords(i)
        np.testing.assert_array_equal(emu.unpack_f16x2(b[:, i // 2])[i % 2], B[r, c])
    d = emu.mma_model(a, b, np.zeros((32, 4), np.float32))
    want = A.astype(np.float64) @ B.astype(np.float64)
    for i in range(4):
        r, c = emu.c_fragment_coords(i)
        np.testing.assert_allclose(d[:, i], want[r, c], rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------- emulation of the kernels
def test_mma_tile_kernel_emulated() -> None:
    rng = np.random.default_rng(1)
    A, B = rand_f16(rng, (16, 16)), rand_f16(rng, (16, 8))
    C = np.full((16, 8), np.nan, np.float32)
    e = emu.emulate(lowered(mma_tile)[0], {"A": A, "B": B, "C": C})
    assert e.stats["mma"] == 1 and e.stats["ldmatrix"] == 2
    np.testing.assert_allclose(C, A.astype(np.float32) @ B.astype(np.float32), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_gemm_kernel_emulated_equals_numpy(name: str) -> None:
    M, N, K, kw = CONFIGS[name]
    cfg = TensorCoreGemm(M, N, K, **kw)
    (kernel,) = lowered(matmul_f16_tensorcore(M, N, K, **kw))
    dyn = ["dyn_shmem"] if cfg.shared_scope == "shared.dyn" else []
    assert kernel.attrs["launch_params"] == ["blockIdx.x", "blockIdx.y", "threadIdx.x", *dyn]
    rng = np.random.default_rng(2)
    A, B = rand_f16(rng, (M, K)), rand_f16(rng, (K, N))
    C = np.full((M, N), np.nan, np.float16)
    e = emu.emulate(kernel, {"A": A, "B": B, "C": C})
    want = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16)
    # float32 accumulation in another order: at most one float16 ulp away from the exact product
    ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float32)
    assert np.all(np.abs(C.astype(np.float32) - want.astype(np.float32)) <= ulp), name
    assert (e.stores["C"] == 1).all(), "every C element is stored exactly once"
    blocks = (M // cfg.block_m) * (N // cfg.block_n)
    assert e.stats["mma"] == blocks * (cfg.threads // 32) * cfg.mma_m * cfg.mma_n * (K // 16)
    assert e.stats["bank_conflicts"] == 0, "padded rows keep every ldmatrix phase conflict-free"


class _Mutate(StmtExprMutator):
    def __init__(self, fn):
        super().__init__()
        self.fn, self.count = fn, 0

    def visit_Evaluate(self, s: S.Evaluate):
        out = self.fn(self, s)
        return s if out is _Mutate.KEEP else out

    KEEP = object()


def _mutated(kernel, fn):
    m = _Mutate(fn)
    return kernel.with_body(m.visit_stmt(kernel.body))


def _is(s: S.Evaluate, op: str) -> bool:
    return isinstance(s.value, E.Call) and s.value.op == op


@pytest.mark.parametrize(
    "bug", ["no_barrier", "barrier_after_issue", "wait_too_little", "b_not_transposed", "a_transposed", "wrong_stage"]
)
@pytest.mark.parametrize("stages", [2, 3])
def test_emulator_catches_schedule_bugs(bug: str, stages: int) -> None:
    """The emulation is sharp: each of these one-line bugs makes it fail."""
    (kernel,) = lowered(matmul_f16_tensorcore(128, 128, 192, stages=stages))

    class Mut(StmtExprMutator):
        in_k_loop = False

        def visit_For(self, s: S.For):
            if s.loop_var.name != "ko":
                return super().visit_For(s)
            self.in_k_loop = True
            try:
                return super().visit_For(s)
            finally:
                self.in_k_loop = False

        def visit_SeqStmt(self, s: S.SeqStmt):
            out = super().visit_SeqStmt(s)
            if bug != "barrier_after_issue" or not self.in_k_loop:
                return out
            seq = []  # the barrier moves from before the copies of tile ko+S-1 to after them
            for x in out.seq if isinstance(out, S.SeqStmt) else [out]:
                seq.append(x)
                if isinstance(x, S.Evaluate) and _is(x, "cuda.cp_async_commit"):
                    seq.append(S.Evaluate(E.Call("void", "tvm_storage_sync", (E.StringImm("shared"),))))
            return S.SeqStmt(tuple(seq))

        def visit_Evaluate(self, s: S.Evaluate):
            if bug in ("no_barrier", "barrier_after_issue") and _is(s, "tvm_storage_sync"):
                return None
            if bug == "wait_too_little" and _is(s, "cuda.cp_async_wait"):  # one more group left pending
                return S.Evaluate(E.Call("void", "cuda.cp_async_wait", (E.IntImm("int32", s.value.args[0].value + 1),)))
            if bug in ("b_not_transposed", "a_transposed") and _is(s, "cuda.ldmatrix"):
                args = s.value.args
                if bool(args[3].value) == (bug == "b_not_transposed"):
                    flip = E.IntImm("int32", 1 - int(args[3].value))
                    return S.Evaluate(E.Call("void", "cuda.ldmatrix", (*args[:3], flip)))
            return s

        def visit_LetStmt(self, s: S.LetStmt):
            if bug == "wrong_stage" and s.var.name == "cur":  # read the stage being filled
                return S.LetStmt(s.var, E.FloorMod(s.value.a + 1, s.value.b), self.visit_stmt(s.body))
            return super().visit_LetStmt(s)

    bad = kernel.with_body(Mut().visit_stmt(kernel.body))
    rng = np.random.default_rng(3)
    A, B = rand_f16(rng, (128, 192)), rand_f16(rng, (192, 128))
    C = np.full((128, 128), np.nan, np.float16)
    want = A.astype(np.float32) @ B.astype(np.float32)
    try:
        emu.emulate(bad, {"A": A, "B": B, "C": C})
    except emu.EmulationError as err:
        assert re.search("race|barrier|waited|uninitialised", str(err)), err
        return
    assert not np.allclose(C.astype(np.float32), want, atol=0.1), f"bug {bug} went unnoticed"


# ---------------------------------------------------------------------------- NVRTC
def _ptx_and_cubin(funcs, arch: str):
    mod = codegen.build(funcs, tvm.target.Target(f"cuda -arch={arch}"))
    fmt, _, payload, _ = tvm_ffi.get_global_func("runtime.DeviceModuleDeserialize")(
        tvm.runtime.Module(mod).save_to_bytes()
    )
    return mod, fmt, bytes(payload)


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_gemm_compiles_to_cubin_with_tensor_core_ptx(arch: str) -> None:
    from test_cuda_codegen_nvrtc import cubin_sm

    kernels = lowered(matmul_f16_tensorcore(4096, 4096, 4096), arch)
    mod, fmt, image = _ptx_and_cubin(kernels, arch)
    assert fmt == "cubin" and cubin_sm(image) == int(arch[3:])
    ptx, src = mod.inspect_source("ptx"), mod.inspect_source("cuda")
    assert f".target {arch}" in ptx and ".entry matmul_f16_tc_kernel0(" in ptx
    assert ptx.count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == 32  # 2 k16 steps x 4 x 4
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx
    assert "cp.async.cg.shared.global" in ptx and "cp.async.commit_group" in ptx
    assert "cp.async.wait_group 1" in ptx  # 3 stages: one tile may stay in flight
    # fragments and accumulators live in registers: no local memory at all
    assert ".local" not in ptx
    assert "__launch_bounds__(256)" in src and src.count("__syncthreads();") == 1
    assert ".shared .align 32 .b8" in ptx


@needs_nvrtc
@pytest.mark.parametrize("kw", [{}, dict(block_n=256, stages=2)], ids=["default", "128x256"])
def test_gemm_registers_without_spills(kw) -> None:
    """ptxas' own report: no spills, and the default tiling fits 2 blocks of 256 threads per SM
    (<= 128 registers per thread, 48 KiB static shared memory each)."""
    src = codegen.generate_source(lowered(matmul_f16_tensorcore(4096, 4096, 4096, **kw), "sm_90"), "sm_90")
    log = nvrtc.compile_cuda(src, "sm_90", options=["--ptxas-options=-v"], use_cache=False).log
    assert "0 bytes spill stores, 0 bytes spill loads" in log, log
    regs = int(re.search(r"Used (\d+) registers", log).group(1))
    assert regs <= (128 if not kw else 255), log
    assert "49152 bytes smem" in log, log


@needs_nvrtc
def test_other_intrinsics_compile() -> None:
    mod, fmt, _ = _ptx_and_cubin(lowered(mma_tile), "sm_80")
    ptx = mod.inspect_source("ptx")
    assert "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16" in ptx and "mma.sync.aligned.m16n8k16" in ptx
    mod, fmt, image = _ptx_and_cubin(lowered(ldmatrix_only, "sm_75"), "sm_75")
    assert fmt == "cubin" and "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in mod.inspect_source("ptx")


@needs_nvrtc
def test_tvm_compile_of_the_gemm() -> None:
    mod = tvm.compile(matmul_f16_tensorcore(256, 256, 256), target="cuda -arch=sm_90")
    dev_mod = mod.imports[0]
    assert dev_mod.kind == "cuda" and "mma.sync.aligned.m16n8k16" in dev_mod.inspect_source("ptx")


@needs_nvrtc
@pytest.mark.parametrize(
    "cfg",
    [
        dict(stages=3, block_m=64, block_n=128, warps_m=2, warps_n=2),
        dict(block_m=64, block_k=64, block_n=64, warps_n=2),
    ],
    ids=["3stages", "bk64"],
)
def test_other_tilings_compile(cfg) -> None:
    mod, fmt, _ = _ptx_and_cubin(lowered(matmul_f16_tensorcore(512, 512, 512, **cfg), "sm_90"), "sm_90")
    assert fmt == "cubin" and ".local" not in mod.inspect_source("ptx")


# ---------------------------------------------------------------------------- misuse
def test_pre_sm80_targets_are_rejected_naming_the_intrinsic() -> None:
    with pytest.raises(CodegenError, match=r"T\.cuda\.mma_m16n8k16_f16f32 needs sm_80 or newer; the target is sm_75"):
        codegen.generate_source(lowered(mma_tile), "sm_75")
    with pytest.raises(CodegenError, match=r"T\.cuda\.cp_async needs sm_80 or newer; the target is sm_70"):
        codegen.build(lowered(matmul_f16_tensorcore(128, 128, 32)), tvm.target.Target("cuda -arch=sm_70"))
    with pytest.raises(CodegenError, match=r"T\.cuda\.ldmatrix_x4 needs sm_75 or newer; the target is sm_70"):
        codegen.generate_source(lowered(ldmatrix_only), "sm_70")
    with pytest.raises(Exception, match=r"T\.cuda\.cp_async needs sm_80"):
        tvm.compile(matmul_f16_tensorcore(128, 128, 32), target="cuda -arch=sm_75")


def test_wrong_fragment_dtype_is_a_parse_error() -> None:
    with pytest.raises(
        ValueError,
        match=r"T\.cuda\.mma_m16n8k16_f16f32: operand 'd' must be a float32 buffer, "
        r"got 'acc' of dtype float16",
    ):

        @T.prim_func
        def bad(a: T.handle):
            A = T.match_buffer(a, (16,), "float16")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                af = T.alloc_buffer((4,), "uint32", scope="local")
                bf = T.alloc_buffer((2,), "uint32", scope="local")
                acc = T.alloc_buffer((4,), "float16", scope="local")
                T.cuda.mma_m16n8k16_f16f32(acc[0], af[0], bf[0])
                A[tx % 16] = acc[0]


def test_fragment_too_small_is_a_parse_error() -> None:
    with pytest.raises(
        ValueError,
        match=r"T\.cuda\.ldmatrix_x4: operand 'dst' needs 4 uint32 elements per "
        r"thread, 'af' holds only 2",
    ):

        @T.prim_func
        def bad(a: T.handle):
            A = T.match_buffer(a, (16, 16), "float16")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                As = T.alloc_buffer((16, 16), "float16", scope="shared")
                af = T.alloc_buffer((2,), "uint32", scope="local")
                T.cuda.ldmatrix_x4(af[0], As[tx % 16, 0])
                A[0, 0] = As[0, 0]


def test_other_misuse_messages() -> None:
    lane = E.Var("lane")
    frag = tvm.tir.Buffer("frag", (8,), "uint32", scope="local")
    smem = tvm.tir.Buffer("smem", (16, 16), "float16", scope="shared")
    glob = tvm.tir.Buffer("g", (256,), "float16")
    f32 = tvm.tir.Buffer("acc", (4,), "float32", scope="local")
    cases = [
        (lambda: script.ldmatrix_x4(lane, smem[0, 0]), r"T\.cuda\.ldmatrix_x4: operand 'dst' must be a buffer element"),
        (lambda: script.ldmatrix_x4(frag[6], smem[0, 0]), r"needs 4 elements from index 6, past the end of 'frag'"),
        (
            lambda: script.ldmatrix_x2(frag[0], glob[0]),
            r"T\.cuda\.ldmatrix_x2: operand 'src' must be in 'shared' memory",
        ),
        (lambda: script.ldmatrix(frag[0], smem[0, 0], num=3), r"num must be 1, 2 or 4"),
        (lambda: script.mma_m16n8k16_f16f32(f32[0], frag[0], f32[0]), r"operand 'b' must be a uint32 buffer"),
        (
            lambda: script.cp_async_16(glob[0], smem[0, 0]),
            r"T\.cuda\.cp_async: operand 'dst' must be in 'shared' memory",
        ),
        (lambda: script.cp_async(smem[0, 0], glob[0], 12), r"nbytes must be 4, 8 or 16"),
        (lambda: script.cp_async_wait(lane), r"T\.cuda\.cp_async_wait: n must be a Python int constant"),
    ]
    for make, pattern in cases:
        with pytest.raises(script.IntrinsicError, match=pattern):
            make()


def test_hand_built_tir_is_checked_by_the_code_generator() -> None:
    """TIR built without T.cuda (so without its checks) is checked again when printed."""
    f = lowered(mma_tile)[0]

    def fn(m, s):
        if _is(s, "cuda.mma_m16n8k16_f16f32"):
            d, a, b, c = s.value.args
            return S.Evaluate(E.Call("void", s.value.op, (d, a, d, c)))  # float32 where B (uint32) goes
        return _Mutate.KEEP

    with pytest.raises(CodegenError, match=r"T\.cuda\.mma_m16n8k16_f16f32: operand 'b' must be a uint32 buffer"):
        codegen.generate_source([_mutated(f, fn)], "sm_90")


def test_grouped_raster_is_a_bijection() -> None:
    for cfg in (
        TensorCoreGemm(4096, 4096, 4096),
        TensorCoreGemm(512, 1024, 64, group_m=3),
        TensorCoreGemm(1024, 512, 64, block_m=64, group_m=4),
    ):
        gx, gy = cfg.grid
        tiles = {(cfg.block_row(by, bx), cfg.block_col(by, bx)) for by in range(gy) for bx in range(gx)}
        assert tiles == {(r, c) for r in range(gy) for c in range(gx)}


def test_xor_swizzle_keeps_ldmatrix_phases_conflict_free() -> None:
    for bk, bn in ((16, 64), (32, 128), (64, 256)):
        cfg = TensorCoreGemm(256, bn, 256, block_k=bk, block_n=bn)
        for rows, col_of, width in ((range(0, 128, 8), cfg.a_col, bk), (range(0, bk, 8), cfg.b_col, bn)):
            for r0 in rows:
                for c in range(0, width, 8):
                    cols = [col_of(r, c) for r in range(r0, r0 + 8)]
                    assert all(0 <= x < width and x % 8 == 0 for x in cols)
                    units = {((r0 + i) * width + x) * 2 // 16 % 8 for i, x in enumerate(cols)}
                    assert len(units) == 8, (bk, bn, r0, c)


def test_gemm_factory_validates_shapes() -> None:
    with pytest.raises(ValueError, match=r"M must be a multiple of block_m=128"):
        matmul_f16_tensorcore(100, 128, 128)
    with pytest.raises(ValueError, match=r"262144 bytes of shared memory \(> 227 KiB"):
        matmul_f16_tensorcore(512, 512, 512, block_m=256, block_n=256, block_k=64, warps_m=4, warps_n=2, stages=4)


# ---------------------------------------------------------------------------- on a GPU
@pytest.mark.gpu
def test_gpu_mma_tile() -> None:
    dev = tvm.cuda(0)
    mod = tvm.compile(mma_tile, target=tvm.target.detect_target_from_device(dev))
    rng = np.random.default_rng(4)
    A, B = rand_f16(rng, (16, 16)), rand_f16(rng, (16, 8))
    c = tvm.runtime.empty((16, 8), "float32", dev)
    mod["mma_tile"](tvm.runtime.tensor(A, dev), tvm.runtime.tensor(B, dev), c)
    np.testing.assert_allclose(c.numpy(), A.astype(np.float32) @ B.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_gpu_gemm_small_configs(name: str) -> None:
    M, N, K, kw = CONFIGS[name]
    dev = tvm.cuda(0)
    mod = tvm.compile(matmul_f16_tensorcore(M, N, K, **kw), target=tvm.target.detect_target_from_device(dev))
    rng = np.random.default_rng(5)
    A, B = rand_f16(rng, (M, K)), rand_f16(rng, (K, N))
    c = tvm.runtime.empty((M, N), "float16", dev)
    mod["matmul_f16_tc"](tvm.runtime.tensor(A, dev), tvm.runtime.tensor(B, dev), c)
    np.testing.assert_allclose(
        c.numpy().astype(np.float32), A.astype(np.float32) @ B.astype(np.float32), rtol=2e-2, atol=5e-2
    )


@pytest.mark.gpu
@pytest.mark.parametrize("size", [256, 4096])
def test_gpu_gemm_vs_reference(size: int) -> None:
    dev = tvm.cuda(0)
    M = N = K = size
    mod = tvm.compile(matmul_f16_tensorcore(M, N, K), target=tvm.target.detect_target_from_device(dev))
    rng = np.random.default_rng(6)
    A, B = rand_f16(rng, (M, K)), rand_f16(rng, (K, N))
    a, b = tvm.runtime.tensor(A, dev), tvm.runtime.tensor(B, dev)
    c = tvm.runtime.empty((M, N), "float16", dev)
    mod["matmul_f16_tc"](a, b, c)
    dev.sync()
    got = c.numpy().astype(np.float32)
    rows = np.arange(M) if size <= 256 else np.random.default_rng(7).choice(M, 64, replace=False)
    want = A[rows].astype(np.float32) @ B.astype(np.float32)
    np.testing.assert_allclose(got[rows], want, rtol=2e-2, atol=0.25 if size > 256 else 5e-2)
    try:
        import torch
    except ImportError:
        return
    if torch.cuda.is_available():
        ref = torch.matmul(torch.from_dlpack(a), torch.from_dlpack(b)).float().cpu().numpy()
        np.testing.assert_allclose(got, ref, rtol=2e-2, atol=0.25 if size > 256 else 5e-2)


def test_shared_dyn_buffers_are_aligned_views_of_one_launch_sized_region() -> None:
    """Every "shared.dyn" buffer (constant size too) is a view into the kernel's one extern
    array, each starting on a 16-byte boundary, and the launch asks for the sum: 100 floats
    take 400 bytes, the following half view starts at 400, 4 halves round up to 16."""

    @T.prim_func
    def k(a: T.handle):
        A = T.match_buffer(a, (256,), "float32")
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            sm = T.alloc_buffer((100,), "float32", scope="shared.dyn")
            hm = T.alloc_buffer((4,), "float16", scope="shared.dyn")
            if tx < 100:
                sm[tx] = A[tx]
            if tx < 4:
                hm[tx] = T.Cast("float16", A[tx])
            T.tvm_storage_sync("shared")
            if tx < 100:
                A[tx] = sm[99 - tx] + T.Cast("float32", hm[tx % 4])

    (kern,) = lowered(k)
    assert list(kern.attrs["launch_params"]) == ["threadIdx.x", "dyn_shmem"]
    src = codegen.generate_source([kern], "sm_80")
    assert "extern __shared__ __align__(32) unsigned char tvm_dyn_shmem[];" in src
    assert "(float*)(tvm_dyn_shmem + 0)" in src and "*)(tvm_dyn_shmem + 416)" in src
    if nvrtc.available():
        nvrtc.compile_cuda(src, "sm_80")


def test_more_than_48kib_of_shared_memory_is_dynamic_up_to_the_opt_in_limit() -> None:
    """A tensor-core tiling with 96 KiB of stages compiles for sm_90 through "shared.dyn" (the
    launch opts in); past the target's opt-in limit the compile is refused with the numbers."""
    f = matmul_f16_tensorcore(256, 256, 256, block_k=64, stages=3)
    cfg = TensorCoreGemm(256, 256, 256, block_k=64, stages=3)
    assert cfg.shared_bytes == 96 * 1024 and cfg.shared_scope == "shared.dyn"
    (kern,) = lowered(f, "sm_90")
    assert kern.attrs["launch_params"][-1] == "dyn_shmem"
    src = codegen.generate_source([kern], "sm_90")
    assert "*)(tvm_dyn_shmem + 49152)" in src and "__shared__" not in src.split("tvm_dyn_shmem[]")[1]
    capped = tvm.target.Target("cuda -arch=sm_90 -max_dynamic_shared_memory_per_block=65536")
    with pytest.raises(tvm.tir.transform.TIRVerifyError, match=r"98304 bytes of shared memory \(static and dynamic\)"):
        tvm.tir.transform.lower(f, capped)


# ----------------------------------------------------------------------------- T.ptx_legacy


def _ptx_mma_statement(shape: str, layouts: tuple, types: tuple, sizes: tuple, saturate: bool = False):
    """A kernel with one T.ptx_legacy.mma on fragments of ``sizes`` elements (types A, B, C)."""
    (ta, tb, tc), (na, nb, nc) = types, sizes
    sa, sb, sc = ("float32" if t == "tf32" else t for t in types)
    la, lb = layouts

    @T.prim_func
    def one_mma():
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 32)
        fa = T.decl_buffer([na], sa, scope="local")
        fb = T.decl_buffer([nb], sb, scope="local")
        acc = T.decl_buffer([nc], sc, scope="local")
        T.evaluate(T.ptx_legacy.mma(shape, la, lb, ta, tb, tc, fa.data, 0, fb.data, 0, acc.data, 0, saturate))

    return one_mma


@pytest.mark.parametrize(
    "shape, layouts, types, sizes, saturate, said",
    [
        ("m8n8k4", ("row", "row"), ("float16",) * 3, (4, 4, 8), False, "only row-major A and column-major B"),
        ("m8n8k4", ("row", "col"), ("float16",) * 3, (4, 4, 8), False, "Volta's quad-pair layout"),
        ("m16n8k16", ("row", "col"), ("float16", "bfloat16", "float32"), (8, 4, 4), False, "one type"),
        ("m16n8k16", ("row", "col"), ("bfloat16", "bfloat16", "float16"), (8, 4, 4), False, "C must be float32"),
        ("m16n8k16", ("row", "col"), ("float16", "float16", "float32"), (8, 4, 4), True, "integer mma only"),
        ("m16n8k16", ("row", "col"), ("float16", "float16", "float32"), (4, 4, 4), False, "needs 8 float16"),
        (
            "m16n8k16",
            ("row", "col"),
            ("float8_e4m3fn",) * 2 + ("float32",),
            (16, 8, 4),
            False,
            "type 'float8_e4m3fn' is not",
        ),
    ],
)
def test_ptx_legacy_mma_misuse_is_named(shape, layouts, types, sizes, saturate, said):
    with pytest.raises(Exception, match=re.escape(said)):
        _ptx_mma_statement(shape, layouts, types, sizes, saturate)


def test_ptx_legacy_needs_constant_selectors_and_a_new_enough_arch():
    with pytest.raises(Exception, match="num must be a constant"):

        @T.prim_func
        def runtime_num(num: T.int32):
            tx = T.env_thread("threadIdx.x")
            T.launch_thread(tx, 32)
            S = T.alloc_buffer((16, 16), "float16", scope="shared")
            f = T.alloc_buffer((8,), "float16", scope="local")
            T.evaluate(T.ptx_legacy.ldmatrix(False, num, ".b16", f.data, 0, S.data, 16 * (tx % 16)))

    kernel = _ptx_mma_statement("m16n8k16", ("row", "col"), ("float16", "float16", "float32"), (8, 4, 4))
    with pytest.raises(Exception, match="needs sm_80 or newer; the target is sm_75"):
        codegen.generate_source(tvm.tir.transform.lower(kernel, tvm.target.Target("cuda")).kernels, "sm_75")


def test_ptx_namespace_names_what_it_implements():
    with pytest.raises(
        Exception, match=r"T.ptx.mma.sp.sync is not implemented by the cuda backend; implemented: add.rn"
    ):

        @T.prim_func
        def sparse():
            T.ptx.mma.sp.sync()

    with pytest.raises(Exception, match="destination must be a float32 buffer element"):

        @T.prim_func
        def wrong_type(A: T.Buffer((4,), "int32")):
            T.ptx.add.rn.f32(A[0], A[1], A[2])

    import cuda_script_kernels as sk

    kernels = tvm.tir.transform.lower(sk.ptx_scalar_f32, tvm.target.Target("cuda")).kernels
    with pytest.raises(Exception, match="T.ptx.griddepcontrol.wait needs sm_90 or newer; the target is sm_80"):
        codegen.generate_source(kernels, "sm_80")


def test_ptx_legacy_spellings_and_register_alignment():
    """The newer spelling's leading dtype and PTX's dotted type names are accepted; a fragment of
    16-bit elements that does not start a 32-bit register is refused by name."""

    @T.prim_func
    def leading_dtype():
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 32)
        fa = T.decl_buffer([8], "float16", scope="local")
        fb = T.decl_buffer([4], "float16", scope="local")
        acc = T.decl_buffer([4], "float32", scope="local")
        T.evaluate(
            T.ptx_legacy.mma(
                "float32", "m16n8k16", "row", "col", ".f16", ".f16", ".f32", fa.data, 0, fb.data, 0, acc.data, 0, False
            )
        )

    source = codegen.generate_source(tvm.tir.transform.lower(leading_dtype, tvm.target.Target("cuda")).kernels)
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in source
    with pytest.raises(Exception, match="element 1 does not start a 32-bit register"):

        @T.prim_func
        def misaligned():
            tx = T.env_thread("threadIdx.x")
            T.launch_thread(tx, 32)
            fa = T.decl_buffer([9], "float16", scope="local")
            fb = T.decl_buffer([4], "float16", scope="local")
            acc = T.decl_buffer([4], "float32", scope="local")
            T.evaluate(
                T.ptx_legacy.mma(
                    "m16n8k16", "row", "col", "float16", "float16", "float32", fa.data, 1, fb.data, 0, acc.data, 0
                )
            )


@needs_nvrtc
def test_ptx_add_and_mul_rn_are_never_fused():
    """add.rn / mul.rn round each operation: a product then a sum stays two instructions."""

    @T.prim_func
    def two_roundings(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"), D: T.Buffer((32,), "float32")):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 32)
        t = T.alloc_buffer((1,), "float32", scope="local")
        T.ptx.mul.rn.f32(t[0], A[tx], B[tx])
        T.ptx.add.rn.f32(D[tx], t[0], A[tx])

    ptx = tvm.compile(two_roundings, target="cuda -arch=sm_80").imports[0].inspect_source("ptx")
    assert "fma" not in ptx and "mul.rn.f32" in ptx and "add.rn.f32" in ptx, ptx


def _two_k_tiles(dtype: str, acc: str):
    """C = A @ Bt.T through fragments over two k tiles: the second tile starts 16 elements in."""

    @T.prim_func
    def two_k_tiles(A: T.Buffer((16, 32), dtype), Bt: T.Buffer((16, 32), dtype), C: T.Buffer((16, 16), acc)):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            Af = T.alloc_buffer((16, 32), dtype, scope="wmma.matrix_a")
            Bf = T.alloc_buffer((32, 16), dtype, scope="wmma.matrix_b")
            Cf = T.alloc_buffer((16, 16), acc, scope="wmma.accumulator")
            T.tvm_fill_fragment(Cf.data, 16, 16, 16, 0, T.Cast(acc, 0))
            for k in range(2):
                T.tvm_load_matrix_sync(Af.data, 16, 16, 16, k, T.address_of(A[0, k * 16]), 32, "row_major")
                T.tvm_load_matrix_sync(Bf.data, 16, 16, 16, k, T.address_of(Bt[0, k * 16]), 32, "col_major")
                T.tvm_mma_sync(Cf.data, 0, Af.data, k, Bf.data, k, Cf.data, 0)
            T.tvm_store_matrix_sync(Cf.data, 16, 16, 16, 0, C.access_ptr("w"), 16, "row_major")

    return two_k_tiles


@pytest.mark.parametrize("dtype, acc, native", [("float16", "float32", True), ("int8", "int32", False)])
def test_wmma_tiles_must_start_32_bytes_apart(dtype, acc, native):
    """A float16 k tile 16 elements in starts 32 bytes in: PTX wmma; an int8 one 16 bytes in,
    which wmma addresses may not: each thread computes whole tiles instead."""
    kernels_ = tvm.tir.transform.lower(_two_k_tiles(dtype, acc), tvm.target.Target("cuda")).kernels
    assert ("wmma.mma.sync" in codegen.generate_source(kernels_, "sm_80")) == native
