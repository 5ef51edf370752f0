"""Hand-scheduled CUDA kernels written in TVMScript with the ``T.cuda`` tensor-core intrinsics.

:func:`matmul_f16_tensorcore` builds ``C[M, N] = A[M, K] @ B[K, N]`` (float16 in, float32
accumulate, float16 out; all row-major) for sm_80+:

* a grid of ``(N / block_n, M / block_m)`` blocks of ``32 * warps_m * warps_n`` threads; each
  warp owns a ``warp_m x warp_n`` sub-tile of the block tile (``warp_m = block_m / warps_m``);
* blocks are rastered in groups of ``group_m`` tile rows (L2 reuse of A rows / B columns);
* global -> shared staging with 16-byte ``cp.async`` into a ring of ``stages`` shared buffers
  (3 by default; 2 is double buffering): iteration ``k`` waits for tile ``k``
  (``cp.async.wait_group(stages - 2)``), passes one barrier (tile ``k`` visible to all; every
  warp done with stage ``k - 1``), issues the copies of tile ``k + stages - 1`` into stage
  ``(k - 1) % stages`` and computes on tile ``k`` while they fly: one barrier per k tile;
* shared tiles are XOR-swizzled in 16-byte chunks (``swizzle=True``) or their rows padded by 8
  halves (``swizzle=False``, uses more shared memory), so the 8 row addresses of every
  ``ldmatrix`` phase fall in distinct bank groups (conflict-free) and stay 16-byte aligned;
* per 16-deep k step each warp loads its A fragments with ``ldmatrix.x4`` (one per 16-row
  tile) and its B fragments with ``ldmatrix.x4.trans`` (one per pair of 8-column tiles) and
  issues ``(warp_m / 16) * (warp_n / 8)`` ``mma.sync.m16n8k16`` into float32 accumulators;
* the epilogue converts the accumulators to float16 (``cvt.rn``) and stores them.

The index arithmetic lives in :class:`TensorCoreGemm`'s methods, which the TVMScript body calls
(TVMScript evaluates calls of Python helpers), so the NumPy emulation in the tests
(``tests/test_cuda_tensorcore.py``) runs *the same* lane -> address / fragment -> element
mappings with Python ints that the kernel computes with TIR expressions.

It cannot be run on a machine without a GPU; what is verified where is listed in the README.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import MAX_SHARED_MEMORY, STATIC_SHARED_MEMORY

__all__ = ["BlockTiling", "TensorCoreGemm", "matmul_f16_tensorcore"]

#: Padding (in float16 elements) added to every shared-memory row.
PAD = 8


class BlockTiling:
    """What the GEMM tilings share (:class:`TensorCoreGemm`, :class:`.wgmma_gemm.WgmmaGemm`): a
    grid of ``block_m x block_n`` tiles of C rastered in groups of tile rows, ``K`` walked in
    ``block_k`` steps through a ring of shared stages. Subclasses are dataclasses with the fields
    ``M, N, K, block_m, block_n, block_k, stages, group_m`` and the properties ``threads`` and
    ``shared_bytes``."""

    @property
    def group(self) -> int:
        """Block rows per raster group (``group_m`` when it divides the grid's rows, else 1)."""
        gy = self.M // self.block_m
        return self.group_m if self.group_m >= 1 and gy % self.group_m == 0 else 1

    @property
    def k_tiles(self) -> int:
        return self.K // self.block_k

    @property
    def shared_scope(self) -> str:
        """``"shared"`` up to 48 KiB (static arrays); beyond, ``"shared.dyn"``: the launch opts in
        to the device's larger limit (sm_80: 163 KiB, sm_90: 227 KiB)."""
        return "shared" if self.shared_bytes <= STATIC_SHARED_MEMORY else "shared.dyn"

    @property
    def grid(self) -> tuple[int, int]:
        """(blockIdx.x extent, blockIdx.y extent)."""
        return (self.N // self.block_n, self.M // self.block_m)

    @property
    def launch(self) -> list[int]:
        """Launch extents in the lowered kernel's ``launch_params`` order
        (blockIdx.x, blockIdx.y, threadIdx.x)."""
        return [self.grid[0], self.grid[1], self.threads]

    def check_blocks(self, need: Any) -> None:
        """The checks every tiling makes (``need(condition, why)`` raises): sizes, whole tiles,
        whole copies per thread, the shared-memory limit."""
        for v, what in ((self.M, "M"), (self.N, "N"), (self.K, "K")):
            need(isinstance(v, int) and v > 0, f"{what} must be a positive Python int")
        for v, what in ((self.block_m, "block_m"), (self.block_n, "block_n"), (self.block_k, "block_k")):
            need(isinstance(v, int) and v > 0, f"{what} must be a positive Python int")
        need(self.threads <= 1024, "at most 32 warps per block")
        need(self.M % self.block_m == 0, f"M must be a multiple of block_m={self.block_m}")
        need(self.N % self.block_n == 0, f"N must be a multiple of block_n={self.block_n}")
        need(self.K % self.block_k == 0, f"K must be a multiple of block_k={self.block_k}")
        need(self.block_k % 16 == 0, "block_k must be a multiple of 16")
        need(self.block_m * self.block_k // 8 % self.threads == 0, "A tile copies must divide evenly among threads")
        need(self.block_k * self.block_n // 8 % self.threads == 0, "B tile copies must divide evenly among threads")
        need(
            self.shared_bytes <= MAX_SHARED_MEMORY,
            f"tiles need {self.shared_bytes} bytes of shared memory (> 227 KiB, the most any GPU offers a block)",
        )

    # Index mappings work on Python ints (the emulation) and on TIR expressions (the kernel);
    # TVMScript has no tuple assignment, so every coordinate has its own method.
    def block_row(self, by: Any, bx: Any) -> Any:
        """Tile row of block (by, bx): blocks are rastered in groups of ``group`` tile rows, so
        concurrently running blocks share A rows and B columns in L2."""
        tiles_n = self.N // self.block_n
        pid = by * tiles_n + bx
        return pid // (self.group * tiles_n) * self.group + pid % self.group

    def block_col(self, by: Any, bx: Any) -> Any:
        """Tile column of block (by, bx) (see :meth:`block_row`)."""
        tiles_n = self.N // self.block_n
        return (by * tiles_n + bx) % (self.group * tiles_n) // self.group


@dataclass(frozen=True)
class TensorCoreGemm(BlockTiling):
    """Tiling of :func:`matmul_f16_tensorcore` and its index mappings (ints or TIR expressions)."""

    M: int
    N: int
    K: int
    block_m: int = 128
    block_n: int = 128
    block_k: int = 32
    warps_m: int = 2
    warps_n: int = 4
    stages: int = 3
    swizzle: bool = True
    group_m: int = 8

    # ------------------------------------------------------------------ derived sizes
    @property
    def warp_m(self) -> int:
        return self.block_m // self.warps_m

    @property
    def warp_n(self) -> int:
        return self.block_n // self.warps_n

    @property
    def mma_m(self) -> int:
        """m16 tiles per warp."""
        return self.warp_m // 16

    @property
    def mma_n(self) -> int:
        """n8 tiles per warp."""
        return self.warp_n // 8

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def a_row(self) -> int:
        """Shared row length of the A tile (elements; padded when not swizzled)."""
        return self.block_k + (0 if self.swizzle else PAD)

    @property
    def b_row(self) -> int:
        """Shared row length of the B tile (elements; padded when not swizzled)."""
        return self.block_n + (0 if self.swizzle else PAD)

    @property
    def a_chunks(self) -> int:
        """16-byte cp.async copies per thread for one A tile."""
        return self.block_m * self.block_k // 8 // self.threads

    @property
    def b_chunks(self) -> int:
        return self.block_k * self.block_n // 8 // self.threads

    @property
    def shared_bytes(self) -> int:
        return 2 * self.stages * (self.block_m * self.a_row + self.block_k * self.b_row)

    def validate(self) -> None:
        def need(cond: bool, why: str) -> None:
            if not cond:
                raise ValueError(f"matmul_f16_tensorcore({self.M}, {self.N}, {self.K}): {why}")

        for v, what in ((self.warps_m, "warps_m"), (self.warps_n, "warps_n")):
            need(isinstance(v, int) and v > 0, f"{what} must be a positive Python int")
        self.check_blocks(need)
        need(self.block_m % self.warps_m == 0 and self.warp_m % 16 == 0, "warp tile rows must be a multiple of 16")
        need(self.block_n % self.warps_n == 0 and self.warp_n % 16 == 0, "warp tile columns must be a multiple of 16")
        need(self.stages >= 2, "stages must be >= 2")

    @staticmethod
    def _xor_col(row: Any, col: Any, row_chunks: int) -> Any:
        """Physical column of logical (row, col) (col a multiple of 8) in a row of
        ``row_chunks`` 16-byte chunks: the chunk index is XORed with a function of the row so
        that 8 consecutive rows at the same logical chunk land in 8 different bank groups (the
        8 row addresses of one ldmatrix phase) and every chunk stays 16-byte aligned."""
        rows_per_line = max(1, 8 // row_chunks)
        return (col // 8 ^ row // rows_per_line % min(row_chunks, 8)) * 8

    def a_col(self, row: Any, col: Any) -> Any:
        """Physical column of A tile element (row, col), col a multiple of 8."""
        return self._xor_col(row, col, self.block_k // 8) if self.swizzle else col

    def b_col(self, row: Any, col: Any) -> Any:
        """Physical column of B tile element (k row, col), col a multiple of 8."""
        return self._xor_col(row, col, self.block_n // 8) if self.swizzle else col

    def warp_row(self, tx: Any) -> Any:
        """Warp row (0 .. warps_m-1) of thread ``tx``."""
        return tx // 32 // self.warps_n

    def warp_col(self, tx: Any) -> Any:
        """Warp column (0 .. warps_n-1) of thread ``tx``."""
        return tx // 32 % self.warps_n

    def a_copy_row(self, tx: Any, c: Any) -> Any:
        """Row in the block's A tile of thread ``tx``'s ``c``-th 16-byte copy."""
        return (tx + c * self.threads) // (self.block_k // 8)

    def a_copy_col(self, tx: Any, c: Any) -> Any:
        """Column (k, a multiple of 8) in the A tile of thread ``tx``'s ``c``-th copy."""
        return (tx + c * self.threads) % (self.block_k // 8) * 8

    def b_copy_row(self, tx: Any, c: Any) -> Any:
        """Row (k) in the block's B tile of thread ``tx``'s ``c``-th 16-byte copy."""
        return (tx + c * self.threads) // (self.block_n // 8)

    def b_copy_col(self, tx: Any, c: Any) -> Any:
        """Column (a multiple of 8) in the B tile of thread ``tx``'s ``c``-th copy."""
        return (tx + c * self.threads) % (self.block_n // 8) * 8

    def a_ld_row(self, wm: Any, lane: Any, mi: Any) -> Any:
        """Row of the A tile whose address ``lane`` passes to ``ldmatrix.x4`` for m16 tile ``mi``
        (matrices 0..3 = rows +0/+8 x k +0/+8, i.e. fragment registers a0..a3)."""
        return wm * self.warp_m + mi * 16 + lane % 16

    def a_ld_col(self, lane: Any, kk: Any) -> Any:
        """k column of that address for k step ``kk`` (16 deep)."""
        return kk * 16 + lane // 16 * 8

    def b_ld_row(self, lane: Any, kk: Any) -> Any:
        """k row of the B tile whose address ``lane`` passes to ``ldmatrix.x4.trans``."""
        return kk * 16 + lane % 16

    def b_ld_col(self, wn: Any, lane: Any, nj: Any) -> Any:
        """Column of that address: n8 tiles ``2*nj`` (lanes 0-15) and ``2*nj+1`` (lanes 16-31)."""
        return wn * self.warp_n + nj * 16 + lane // 16 * 8

    def acc_index(self, mi: Any, ni: Any) -> Any:
        """First of the 4 accumulator registers of the (mi, ni) mma tile."""
        return (mi * self.mma_n + ni) * 4

    def c_row(self, wm: Any, lane: Any, mi: Any, i: Any) -> Any:
        """Row in the block's C tile of accumulator register ``i`` (0..3) of m16 tile ``mi``."""
        return wm * self.warp_m + mi * 16 + i // 2 * 8 + lane // 4

    def c_col(self, wn: Any, lane: Any, ni: Any, i: Any) -> Any:
        """Column in the block's C tile of accumulator register ``i`` of n8 tile ``ni``."""
        return wn * self.warp_n + ni * 8 + lane % 4 * 2 + i % 2


def matmul_f16_tensorcore(
    M: int,
    N: int,
    K: int,
    *,
    block_m: int = 128,
    block_n: int = 128,
    block_k: int = 32,
    warps_m: int = 2,
    warps_n: int = 4,
    stages: int = 3,
    swizzle: bool = True,
    group_m: int = 8,
    name: str = "matmul_f16_tc",
) -> Any:
    """A ``PrimFunc`` computing ``C = A @ B`` (``A: (M, K)``, ``B: (K, N)``, ``C: (M, N)``, all
    float16 row-major, float32 accumulation) with tensor cores (sm_80+).

    A, B and C must start at 16-byte aligned addresses (every allocation does; a sliced view
    may not). M, N, K must be multiples of the block tile (default 128 x 128 x 32; 8 warps as 2 x 4, each
    64 x 32; 2 shared stages, 37 KiB). Compile with ``tvm.compile(f, target="cuda -arch=sm_90")``
    or lower it and call :func:`tvm_backend_cuda.codegen.build`;
    ``TensorCoreGemm(M, N, K, ...)`` with the same arguments describes the tiling (launch extents
    of the lowered kernel in ``.launch``).
    """
    from tvm.script import tir as T

    cfg = TensorCoreGemm(M, N, K, block_m, block_n, block_k, warps_m, warps_n, stages, swizzle, group_m)
    cfg.validate()
    BM, BN, BK, S = cfg.block_m, cfg.block_n, cfg.block_k, cfg.stages
    MT, NT, KS = cfg.mma_m, cfg.mma_n, BK // 16
    THREADS, KT = cfg.threads, cfg.k_tiles
    A_CH, B_CH = cfg.a_chunks, cfg.b_chunks

    @T.prim_func
    def matmul(a: T.handle, b: T.handle, c: T.handle):
        T.func_attr({"global_symbol": name, "tir.noalias": True})
        A = T.match_buffer(a, (M, K), "float16")
        B = T.match_buffer(b, (K, N), "float16")
        C = T.match_buffer(c, (M, N), "float16")
        for by in T.thread_binding(M // BM, thread="blockIdx.y"):
            for bx in T.thread_binding(N // BN, thread="blockIdx.x"):
                for tx in T.thread_binding(THREADS, thread="threadIdx.x"):
                    As = T.alloc_buffer((S, BM, cfg.a_row), "float16", scope=cfg.shared_scope)
                    Bs = T.alloc_buffer((S, BK, cfg.b_row), "float16", scope=cfg.shared_scope)
                    acc = T.alloc_buffer((MT * NT * 4,), "float32", scope="local")
                    af = T.alloc_buffer((MT * 4,), "uint32", scope="local")
                    bf = T.alloc_buffer((NT * 2,), "uint32", scope="local")
                    bm = cfg.block_row(by, bx)  # this block's tile (grouped raster order)
                    bn = cfg.block_col(by, bx)
                    wm = cfg.warp_row(tx)
                    wn = cfg.warp_col(tx)
                    lane = tx % 32
                    for i in T.unroll(MT * NT * 4):
                        acc[i] = T.float32(0)
                    # prologue: tiles 0 .. S-2 in flight, one commit group each
                    for s in T.unroll(S - 1):
                        if s < KT:
                            for c in T.unroll(A_CH):
                                ra = cfg.a_copy_row(tx, c)
                                ca = cfg.a_copy_col(tx, c)
                                T.cuda.cp_async_16(As[s, ra, cfg.a_col(ra, ca)], A[bm * BM + ra, s * BK + ca])
                            for c in T.unroll(B_CH):
                                rb = cfg.b_copy_row(tx, c)
                                cb = cfg.b_copy_col(tx, c)
                                T.cuda.cp_async_16(Bs[s, rb, cfg.b_col(rb, cb)], B[s * BK + rb, bn * BN + cb])
                        T.cuda.cp_async_commit()
                    for ko in T.serial(KT):
                        # groups committed so far: tiles 0 .. ko+S-2; allowing S-2 pending = tile ko landed
                        T.cuda.cp_async_wait(S - 2)
                        # every thread's copies of tile ko are visible, and every warp is done
                        # reading stage (ko-1) % S, which the copies below overwrite
                        T.tvm_storage_sync("shared")
                        kn = ko + (S - 1)
                        if kn < KT:
                            for c in T.unroll(A_CH):
                                ra2 = cfg.a_copy_row(tx, c)
                                ca2 = cfg.a_copy_col(tx, c)
                                T.cuda.cp_async_16(
                                    As[kn % S, ra2, cfg.a_col(ra2, ca2)], A[bm * BM + ra2, kn * BK + ca2]
                                )
                            for c in T.unroll(B_CH):
                                rb2 = cfg.b_copy_row(tx, c)
                                cb2 = cfg.b_copy_col(tx, c)
                                T.cuda.cp_async_16(
                                    Bs[kn % S, rb2, cfg.b_col(rb2, cb2)], B[kn * BK + rb2, bn * BN + cb2]
                                )
                        T.cuda.cp_async_commit()  # possibly empty: keeps the group count uniform
                        cur = ko % S
                        for kk in T.unroll(KS):
                            for mi in T.unroll(MT):
                                ar = cfg.a_ld_row(wm, lane, mi)
                                ak = cfg.a_ld_col(lane, kk)
                                T.cuda.ldmatrix_x4(af[mi * 4], As[cur, ar, cfg.a_col(ar, ak)])
                            for nj in T.unroll(NT // 2):
                                bk = cfg.b_ld_row(lane, kk)
                                bc = cfg.b_ld_col(wn, lane, nj)
                                T.cuda.ldmatrix_x4_trans(bf[nj * 4], Bs[cur, bk, cfg.b_col(bk, bc)])
                            for mi in T.unroll(MT):
                                for ni in T.unroll(NT):
                                    T.cuda.mma_m16n8k16_f16f32(
                                        acc[cfg.acc_index(mi, ni)], af[mi * 4], bf[ni * 2], acc[cfg.acc_index(mi, ni)]
                                    )
                    for mi in T.unroll(MT):
                        for ni in T.unroll(NT):
                            for i in T.unroll(4):
                                C[bm * BM + cfg.c_row(wm, lane, mi, i), bn * BN + cfg.c_col(wn, lane, ni, i)] = acc[
                                    cfg.acc_index(mi, ni) + i
                                ]

    return matmul
