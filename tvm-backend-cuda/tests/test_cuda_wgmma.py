"""Hopper's warpgroup products (``T.cuda.wgmma_*``, sm_90a) and the float16 GEMM built on them
(``tvm_backend_cuda.wgmma_gemm``).

Without a GPU: the lowered kernel runs in the NumPy emulator (``cuda_tc_emulator``: the
no-swizzle core-matrix layouts, the accumulator fragments, async groups, proxy fences) and must
equal A @ B; one-line schedule bugs must make it fail; NVRTC compiles it for sm_90a with no
serialized wgmma and no spills; misuse is named. With a Hopper GPU (marked ``gpu``): the kernel
against NumPy.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import tvm
from tvm.codegen.c_family import CodegenError
from tvm.script import tir as T
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.functor import StmtExprMutator

import cuda_tc_emulator as emu
from tvm_backend_cuda import codegen, nvrtc
from tvm_backend_cuda.wgmma_gemm import WgmmaGemm, matmul_f16_wgmma

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="NVRTC not installed (pip install nvidia-cuda-nvrtc)")


@T.prim_func
def wgmma_tile(a: T.handle, b: T.handle, c: T.handle):
    """D[64 x 128] = A[64 x 16] @ B[16 x 128] by one wgmma: the tiles are placed in the core-matrix
    layouts by plain stores (A: LBO 128, SBO 256 bytes; B N-major: LBO 2048, SBO 128)."""
    T.func_attr({"global_symbol": "wgmma_tile", "tir.noalias": True})
    A = T.match_buffer(a, (64, 16), "float16")
    B = T.match_buffer(b, (16, 128), "float16")
    C = T.match_buffer(c, (64, 128), "float32")
    for tx in T.thread_binding(128, thread="threadIdx.x"):
        As = T.alloc_buffer((1024,), "float16", scope="shared")
        Bs = T.alloc_buffer((2048,), "float16", scope="shared")
        acc = T.alloc_buffer((64,), "float32", scope="local")
        for e in T.serial(8):
            m = tx // 2
            k = tx % 2 * 8 + e
            As[m % 8 * 8 + k % 8 + m // 8 * 128 + k // 8 * 64] = A[m, k]
        for e in T.serial(16):
            kb = tx // 8
            n = tx % 8 * 16 + e
            Bs[kb % 8 * 8 + n % 8 + n // 8 * 64 + kb // 8 * 1024] = B[kb, n]
        for i in T.unroll(64):
            acc[i] = T.float32(0)
        T.cuda.fence_proxy_async()
        T.tvm_storage_sync("shared")
        T.cuda.wgmma_fence(acc[0], 64)
        T.cuda.wgmma_m64k16_f16f32(acc[0], As[0], 128, 256, Bs[0], 2048, 128, 128, True)
        T.cuda.wgmma_commit()
        T.cuda.wgmma_wait(0, acc[0], 64)
        for j in T.unroll(16):
            for i in T.unroll(4):
                C[tx // 32 * 16 + tx % 32 // 4 + i // 2 * 8, j * 8 + tx % 4 * 2 + i % 2] = acc[j * 4 + i]


#: name -> (M, N, K, tiling): ring wrap-around (K tiles > stages), both accumulator widths
CONFIGS = {
    "128x128x64_4stages": (256, 256, 384, dict(block_n=128, stages=4)),
    "128x256x64_3stages": (128, 256, 320, dict(block_n=256, stages=3)),
    "128x64x32_5stages": (256, 128, 224, dict(block_n=64, block_k=32, stages=5)),
}


def lowered(f):
    return tvm.tir.transform.lower(f, tvm.target.Target("cuda -arch=sm_90a")).kernels


def rand_f16(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape).astype("float16")


def _emulate(kernel, M: int, N: int, K: int, seed: int):
    rng = np.random.default_rng(seed)
    A, B = rand_f16(rng, (M, K)), rand_f16(rng, (K, N))
    C = np.full((M, N), np.nan, np.float16)
    e = emu.emulate(kernel, {"A": A, "B": B, "C": C})
    return e, A, B, C


def test_one_wgmma_tile_emulated() -> None:
    rng = np.random.default_rng(0)
    A, B = rand_f16(rng, (64, 16)), rand_f16(rng, (16, 128))
    C = np.full((64, 128), np.nan, np.float32)
    e = emu.emulate(lowered(wgmma_tile)[0], {"A": A, "B": B, "C": C})
    assert e.stats["wgmma"] == 1
    np.testing.assert_allclose(C, A.astype(np.float32) @ B.astype(np.float32), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_wgmma_gemm_emulated_equals_numpy(name: str) -> None:
    M, N, K, kw = CONFIGS[name]
    cfg = WgmmaGemm(M, N, K, **kw)
    (kernel,) = lowered(matmul_f16_wgmma(M, N, K, **kw))
    e, A, B, C = _emulate(kernel, M, N, K, 1)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    # one float16 ulp, plus float32 rounding of the 16-deep partial sums where they cancel
    bound = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    bound += 2.0**-20 * (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64))
    assert np.all(np.abs(C.astype(np.float64) - exact) <= bound), name
    assert (e.stores["C"] == 1).all(), "every C element is stored exactly once"
    blocks = (M // cfg.block_m) * (N // cfg.block_n)
    assert e.stats["wgmma"] == blocks * 2 * cfg.k_tiles * (cfg.block_k // 16)


def test_copies_fill_the_core_matrices_in_order() -> None:
    """Copy q of a tile lands at element 8q: the tile's (row, column) of each copy, placed by the
    core-matrix layouts the wgmma descriptors describe, is exactly that element."""
    cfg = WgmmaGemm(256, 256, 256, block_n=128, block_k=64)
    for q in range(cfg.a_tile // 8):
        m, k = cfg.a_copy_row(q), cfg.a_copy_col(q)
        assert (m % 8) * 8 + (k // 8) * cfg.a_lbo // 2 + (m // 8) * cfg.a_sbo // 2 == 8 * q
    for q in range(cfg.b_tile // 8):
        k, n = cfg.b_copy_row(q), cfg.b_copy_col(q)
        assert (k % 8) * 8 + (n // 8) * cfg.b_sbo // 2 + (k // 8) * cfg.b_lbo // 2 == 8 * q


class _Bug(StmtExprMutator):
    """Removes or changes one statement of the k loop (or the epilogue's wait)."""

    def __init__(self, bug: str):
        super().__init__()
        self.bug = bug

    def visit_Evaluate(self, s: S.Evaluate):
        call = s.value if isinstance(s.value, E.Call) else None
        op = call.op if call is not None else ""
        removed = {
            "no_proxy_fence": "cuda.fence_proxy_async",
            "no_barrier": "tvm_storage_sync",
            "no_wgmma_fence": "cuda.wgmma_fence",
        }
        if removed.get(self.bug) == op:
            return None
        if op == "cuda.wgmma_wait" and (int(call.args[0].value) == 1) == (self.bug == "no_wait_in_loop"):
            if self.bug in ("no_wait_in_loop", "no_final_wait"):
                return None
        if self.bug == "b_k_major" and op == "cuda.wgmma_m64k16_f16f32":
            return S.Evaluate(E.Call("void", op, (*call.args[:8], E.IntImm("int32", 0))))
        if self.bug == "wait_too_little" and op == "cuda.cp_async_wait":
            return S.Evaluate(E.Call("void", op, (E.IntImm("int32", int(call.args[0].value) + 1),)))
        return s


@pytest.mark.parametrize(
    "bug",
    [
        "no_proxy_fence",
        "no_barrier",
        "no_wgmma_fence",
        "no_wait_in_loop",
        "no_final_wait",
        "b_k_major",
        "wait_too_little",
    ],
)
def test_emulator_catches_wgmma_schedule_bugs(bug: str) -> None:
    """Each one-line bug makes the emulation fail (an ordering error, or a wrong product)."""
    (kernel,) = lowered(matmul_f16_wgmma(128, 128, 320, block_n=128, stages=4))
    bad = kernel.with_body(_Bug(bug).visit_stmt(kernel.body))
    try:
        _, A, B, C = _emulate(bad, 128, 128, 320, 2)
    except emu.EmulationError as err:
        assert re.search("race|barrier|waited|pending|fence|uninitialised", str(err)), err
        return
    want = A.astype(np.float32) @ B.astype(np.float32)
    assert not np.allclose(C.astype(np.float32), want, atol=0.1), f"bug {bug} went unnoticed"


@needs_nvrtc
@pytest.mark.parametrize("kw", [dict(block_n=256, stages=4), dict(block_n=128, stages=4)])
def test_wgmma_gemm_compiles_for_sm90a_without_serialization(kw) -> None:
    """NVRTC's cubin for sm_90a has the asynchronous products; ptxas neither serializes them (its
    C7514 warning) nor spills."""
    src = codegen.generate_source(lowered(matmul_f16_wgmma(4096, 4096, 4096, **kw)), "sm_90a")
    res = nvrtc.compile_cuda(src, "sm_90a", options=["-Xptxas", "-v"], use_cache=False)
    assert res.fmt == "cubin" and res.arch == "sm_90a"
    n = kw["block_n"]
    assert f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.f16.f16" in res.ptx
    for instr in ("wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "fence.proxy.async.shared::cta"):
        assert instr in res.ptx, instr
    assert "wgmma.wait_group.sync.aligned 1" in res.ptx
    assert "serialized" not in res.log, res.log
    assert re.search(r"0 bytes spill stores, 0 bytes spill loads", res.log), res.log
    jit = nvrtc.compile_cuda(src, "compute_90a", use_cache=False)  # PTX for the driver keeps the "a"
    assert jit.fmt == "ptx" and jit.arch == "compute_90a" and ".target sm_90a" in jit.ptx


def test_wgmma_needs_sm90a() -> None:
    (kernel,) = lowered(matmul_f16_wgmma(128, 128, 64, block_n=128, stages=3))
    with pytest.raises(
        CodegenError, match=r"T.cuda.wgmma_\w+ needs the architecture-specific target sm_90a; the target is sm_90"
    ):
        codegen.generate_source([kernel], "sm_90")
    with pytest.raises(CodegenError, match="T.cuda.fence_proxy_async needs sm_90 or newer; the target is sm_80"):
        codegen.generate_source([kernel], "sm_80")

    @T.prim_func
    def fence_only(a: T.handle):
        A = T.match_buffer(a, (128,), "float32")
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            acc = T.alloc_buffer((4,), "float32", scope="local")
            acc[0] = A[tx]
            T.cuda.wgmma_fence(acc[0], 4)
            A[tx] = acc[0]

    with pytest.raises(
        CodegenError,
        match=r"T.cuda.wgmma_fence needs sm_90a; the target is sm_80 \(pass Target\('cuda -arch=sm_90a'\)\)",
    ):
        codegen.generate_source(lowered(fence_only), "sm_80")


def test_wgmma_misuse_is_named() -> None:
    def product(d_dtype="float32", n=64, lbo=128, scope="shared"):
        @T.prim_func
        def k(a: T.handle):
            A = T.match_buffer(a, (64,), "float32")
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                S_ = T.alloc_buffer((4096,), "float16", scope=scope)
                d = T.alloc_buffer((32,), d_dtype, scope="local")
                T.cuda.wgmma_m64k16_f16f32(d[0], S_[0], lbo, 1024, S_[2048], 1024, 128, n, True)
                A[0] = T.float32(0)

        return k

    with pytest.raises(ValueError, match="n must be a multiple of 8 from 8 to 256, got 12"):
        product(n=12)
    with pytest.raises(ValueError, match="operand 'd' must be a float32 buffer"):
        product(d_dtype="float16")
    with pytest.raises(ValueError, match="a_lbo must be a positive multiple of 16 bytes"):
        product(lbo=24)
    with pytest.raises(ValueError, match="operand 'a' must be in 'shared' memory"):
        product(scope="local")
    with pytest.raises(ValueError, match="needs 64 float32 elements per thread"):
        product(n=128)
    with pytest.raises(ValueError, match="count must be the accumulators per thread, 1 to 128, got 0"):

        @T.prim_func
        def zero_count(a: T.handle):
            A = T.match_buffer(a, (128,), "float32")
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                acc = T.alloc_buffer((4,), "float32", scope="local")
                T.cuda.wgmma_wait(0, acc[0], 0)
                A[tx] = acc[0]

    with pytest.raises(ValueError, match="block_k must be a positive Python int"):
        matmul_f16_wgmma(128, 128, 64, block_k=0)
    with pytest.raises(ValueError, match="stages must be >= 3"):
        matmul_f16_wgmma(128, 128, 64, block_n=128, stages=2)
    with pytest.raises(ValueError, match="M must be a multiple of block_m=128"):
        matmul_f16_wgmma(64, 128, 64, block_n=128)


def _hopper() -> object:
    dev = tvm.cuda(0)
    if dev.compute_version != "9.0":
        pytest.skip(f"wgmma needs an sm_90 GPU (Hopper); this one is compute capability {dev.compute_version}")
    return dev


@pytest.mark.gpu
def test_gpu_one_wgmma_tile() -> None:
    """One product: checks the instruction's layouts (descriptors, transpose, D fragment) alone."""
    dev = _hopper()
    mod = tvm.compile(wgmma_tile, target="cuda -arch=sm_90a")
    rng = np.random.default_rng(4)
    A, B = rand_f16(rng, (64, 16)), rand_f16(rng, (16, 128))
    c = tvm.runtime.tensor(np.full((64, 128), np.nan, np.float32), dev)
    mod["wgmma_tile"](tvm.runtime.tensor(A, dev), tvm.runtime.tensor(B, dev), c)
    np.testing.assert_allclose(c.numpy(), A.astype(np.float32) @ B.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_gpu_wgmma_gemm(name: str) -> None:
    dev = _hopper()
    M, N, K, kw = CONFIGS[name]
    mod = tvm.compile(matmul_f16_wgmma(M, N, K, **kw), target="cuda -arch=sm_90a")
    rng = np.random.default_rng(5)
    A, B = rand_f16(rng, (M, K)), rand_f16(rng, (K, N))
    c = tvm.runtime.tensor(np.full((M, N), np.nan, np.float16), dev)
    mod["matmul_f16_wgmma"](tvm.runtime.tensor(A, dev), tvm.runtime.tensor(B, dev), c)
    np.testing.assert_allclose(
        c.numpy().astype(np.float32), A.astype(np.float32) @ B.astype(np.float32), rtol=2e-2, atol=5e-2
    )
