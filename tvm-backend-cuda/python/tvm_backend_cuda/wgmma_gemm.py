"""A float16 GEMM on Hopper's warpgroup tensor-core instruction (``wgmma``, sm_90a), in TVMScript.

:func:`matmul_f16_wgmma` builds ``C[M, N] = A[M, K] @ B[K, N]`` (float16 in, float32 accumulate,
float16 out; all row-major) for ``cuda -arch=sm_90a``:

* a grid of ``(N / block_n, M / 128)`` blocks of two warpgroups (256 threads); warpgroup ``w``
  owns rows ``64 w .. 64 w + 63`` of the block tile and all ``block_n`` columns, in
  ``block_n / 2`` float32 accumulators per thread;
* blocks are rastered in groups of ``group_m`` tile rows, as :func:`.kernels.matmul_f16_tensorcore`;
* every thread stages 16-byte ``cp.async`` copies into a ring of ``stages`` shared tiles laid out
  as 8x8 core matrices (no swizzle): copy ``q`` of a tile lands at element ``8 q``, so each warp
  writes 512 contiguous bytes and reads 64 contiguous bytes from each of 8 rows;
* iteration ``k`` waits for tile ``k`` (``cp.async.wait_group(stages - 3)``), fences it for the
  asynchronous proxy, waits until at most one wgmma group is pending (the one of tile ``k - 1``:
  stage ``(k - 2) % stages`` is free), passes one barrier, issues the copies of tile
  ``k + stages - 2`` into that stage, then ``block_k / 16`` ``wgmma.m64nNk16`` products on tile
  ``k`` as one group, which runs while the next iteration waits for its tile;
* A is read K-major, B MN-major (the instruction's transpose-B mode), straight from shared memory
  through descriptors: no fragments pass through registers.

The index arithmetic lives in :class:`WgmmaGemm`'s methods (Python ints in the tests' emulator,
TIR expressions in the kernel), like :class:`.kernels.TensorCoreGemm`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .kernels import BlockTiling

__all__ = ["WgmmaGemm", "matmul_f16_wgmma"]

#: Bytes of one 8x8 float16 core matrix.
CORE_BYTES = 128


@dataclass(frozen=True)
class WgmmaGemm(BlockTiling):
    """Tiling of :func:`matmul_f16_wgmma` and its index mappings (ints or TIR expressions)."""

    M: int
    N: int
    K: int
    block_n: int = 256
    block_k: int = 64
    stages: int = 4
    group_m: int = 8

    block_m = 128  # two warpgroups of 64 rows
    threads = 256

    @property
    def accumulators(self) -> int:
        """float32 accumulators per thread (64 x block_n per warpgroup of 128 threads)."""
        return self.block_n // 2

    @property
    def a_tile(self) -> int:
        """Elements of one A tile (block_m x block_k)."""
        return self.block_m * self.block_k

    @property
    def b_tile(self) -> int:
        """Elements of one B tile (block_k x block_n)."""
        return self.block_k * self.block_n

    @property
    def shared_bytes(self) -> int:
        return 2 * self.stages * (self.a_tile + self.b_tile)

    # strides of the core-matrix layouts, in bytes (the wgmma descriptors' LBO and SBO)
    @property
    def a_lbo(self) -> int:
        """A (K-major): from one core matrix to the next along K."""
        return CORE_BYTES

    @property
    def a_sbo(self) -> int:
        """A: from one core matrix to the next along M (a row of block_k / 8 of them)."""
        return self.block_k // 8 * CORE_BYTES

    @property
    def b_lbo(self) -> int:
        """B (MN-major): from one core matrix to the next along K (a row of block_n / 8)."""
        return self.block_n // 8 * CORE_BYTES

    @property
    def b_sbo(self) -> int:
        """B: from one core matrix to the next along N."""
        return CORE_BYTES

    def validate(self) -> None:
        def need(cond: bool, why: str) -> None:
            if not cond:
                raise ValueError(f"matmul_f16_wgmma({self.M}, {self.N}, {self.K}): {why}")

        self.check_blocks(need)
        need(self.block_n % 8 == 0 and self.block_n <= 256, "block_n must be a multiple of 8 up to 256")
        need(self.stages >= 3, "stages must be >= 3 (one tile computing, one read by the pending group)")

    # ------------------------------------------------------------------ index mappings
    def a_copy_row(self, q: Any) -> Any:
        """Row (m) of the A tile that 16-byte copy ``q`` reads: 8 consecutive copies fill one core
        matrix (rows m0..m0+7), the next ones the core matrices along K, then the next 8 rows."""
        return q // (self.block_k // 8 * 8) * 8 + q % 8

    def a_copy_col(self, q: Any) -> Any:
        """Column (k, a multiple of 8) of the A tile that copy ``q`` reads."""
        return q // 8 % (self.block_k // 8) * 8

    def b_copy_row(self, q: Any) -> Any:
        """Row (k) of the B tile that copy ``q`` reads (8 consecutive copies: one core matrix)."""
        return q // (self.block_n // 8 * 8) * 8 + q % 8

    def b_copy_col(self, q: Any) -> Any:
        """Column (n, a multiple of 8) of the B tile that copy ``q`` reads."""
        return q // 8 % (self.block_n // 8) * 8

    def a_operand(self, group: Any, kk: Any) -> Any:
        """Element of the A tile where warpgroup ``group``'s 64 x 16 operand of k step ``kk``
        starts: core-matrix row ``8 group``, core-matrix column ``2 kk``."""
        return group * 8 * (self.a_sbo // 2) + 2 * kk * (self.a_lbo // 2)

    def b_operand(self, kk: Any) -> Any:
        """Element of the B tile where the 16 x block_n operand of k step ``kk`` starts."""
        return 2 * kk * (self.b_lbo // 2)

    def c_row(self, tx: Any, i: Any) -> Any:
        """Row in the block's C tile of accumulator ``4 j + i`` of thread ``tx``."""
        return tx // 128 * 64 + tx // 32 % 4 * 16 + tx % 32 // 4 + i // 2 * 8

    def c_col(self, tx: Any, j: Any, i: Any) -> Any:
        """Column in the block's C tile of accumulator ``4 j + i`` of thread ``tx``."""
        return j * 8 + tx % 4 * 2 + i % 2


def matmul_f16_wgmma(
    M: int,
    N: int,
    K: int,
    *,
    block_n: int = 256,
    block_k: int = 64,
    stages: int = 4,
    group_m: int = 8,
    name: str = "matmul_f16_wgmma",
) -> Any:
    """A ``PrimFunc`` computing ``C = A @ B`` (``A: (M, K)``, ``B: (K, N)``, ``C: (M, N)``, all
    float16 row-major, float32 accumulation) with Hopper's ``wgmma`` (compile for
    ``cuda -arch=sm_90a``). M must be a multiple of 128, N of ``block_n``, K of ``block_k``;
    A, B and C must start at 16-byte aligned addresses. ``WgmmaGemm(M, N, K, ...)`` with the same
    arguments describes the tiling (launch extents in ``.launch``).
    """
    from tvm.script import tir as T

    cfg = WgmmaGemm(M, N, K, block_n, block_k, stages, group_m)
    cfg.validate()
    BM, BN, BK, S = cfg.block_m, cfg.block_n, cfg.block_k, cfg.stages
    THREADS, KT, ACC = cfg.threads, cfg.k_tiles, cfg.accumulators
    A_CH, B_CH = cfg.a_tile // 8 // THREADS, cfg.b_tile // 8 // THREADS

    @T.prim_func
    def matmul(a: T.handle, b: T.handle, c: T.handle):
        T.func_attr({"global_symbol": name, "tir.noalias": True})
        A = T.match_buffer(a, (M, K), "float16")
        B = T.match_buffer(b, (K, N), "float16")
        C = T.match_buffer(c, (M, N), "float16")
        for by in T.thread_binding(M // BM, thread="blockIdx.y"):
            for bx in T.thread_binding(N // BN, thread="blockIdx.x"):
                for tx in T.thread_binding(THREADS, thread="threadIdx.x"):
                    As = T.alloc_buffer((S, cfg.a_tile), "float16", scope=cfg.shared_scope)
                    Bs = T.alloc_buffer((S, cfg.b_tile), "float16", scope=cfg.shared_scope)
                    acc = T.alloc_buffer((ACC,), "float32", scope="local")
                    bm = cfg.block_row(by, bx)
                    bn = cfg.block_col(by, bx)
                    wg = tx // 128
                    for i in T.unroll(ACC):
                        acc[i] = T.float32(0)
                    # prologue: tiles 0 .. S-3 in flight, one commit group each
                    for s in T.unroll(S - 2):
                        if s < KT:
                            for c in T.unroll(A_CH):
                                q = tx + c * THREADS
                                T.cuda.cp_async_16(
                                    As[s, q * 8], A[bm * BM + cfg.a_copy_row(q), s * BK + cfg.a_copy_col(q)]
                                )
                            for c in T.unroll(B_CH):
                                q = tx + c * THREADS
                                T.cuda.cp_async_16(
                                    Bs[s, q * 8], B[s * BK + cfg.b_copy_row(q), bn * BN + cfg.b_copy_col(q)]
                                )
                        T.cuda.cp_async_commit()
                    for ko in T.serial(KT):
                        T.cuda.cp_async_wait(S - 3)  # this thread's copies of tile ko landed
                        T.cuda.fence_proxy_async()  # ... and are visible to the tensor cores
                        T.cuda.wgmma_wait(1, acc[0], ACC)  # tile ko-2's products done: its stage is free
                        T.tvm_storage_sync("shared")
                        kn = ko + (S - 2)
                        if kn < KT:
                            for c in T.unroll(A_CH):
                                q2 = tx + c * THREADS
                                T.cuda.cp_async_16(
                                    As[kn % S, q2 * 8],
                                    A[bm * BM + cfg.a_copy_row(q2), kn * BK + cfg.a_copy_col(q2)],
                                )
                            for c in T.unroll(B_CH):
                                q2 = tx + c * THREADS
                                T.cuda.cp_async_16(
                                    Bs[kn % S, q2 * 8],
                                    B[kn * BK + cfg.b_copy_row(q2), bn * BN + cfg.b_copy_col(q2)],
                                )
                        T.cuda.cp_async_commit()  # possibly empty: keeps the group count uniform
                        T.cuda.wgmma_fence(acc[0], ACC)
                        for kk in T.unroll(BK // 16):
                            T.cuda.wgmma_m64k16_f16f32(
                                acc[0],
                                As[ko % S, cfg.a_operand(wg, kk)],
                                cfg.a_lbo,
                                cfg.a_sbo,
                                Bs[ko % S, cfg.b_operand(kk)],
                                cfg.b_lbo,
                                cfg.b_sbo,
                                BN,
                                True,
                            )
                        T.cuda.wgmma_commit()
                    T.cuda.wgmma_wait(0, acc[0], ACC)
                    for j in T.unroll(BN // 8):
                        for i in T.unroll(4):
                            C[bm * BM + cfg.c_row(tx, i), bn * BN + cfg.c_col(tx, j, i)] = acc[j * 4 + i]

    return matmul
