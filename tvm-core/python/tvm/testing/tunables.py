"""The kernel zoo's tunable kernels (:class:`tvm.tune.Tunable`): matmul, row reduction and row
softmax for device targets (the zoo's GPU-style kernels with their block or tile size as the knob)
and for the CPU (register-tiled matmul, multi-accumulator sum, vectorized softmax).

Without a tuning record each kernel's default comes from the target: on the CPU the vector width
of its ISA (:func:`tvm.tune.vector_lanes`), on a device the threads per block, warp size and
shared memory of the device or the target's declared limits (:func:`tvm.tune.device_limits`).
Configurations a target's devices cannot run (too many threads or too much shared memory) are not
tried. ``key`` of each includes the shapes; ``name`` is the exported function's name.
"""

from __future__ import annotations

from typing import Any

from tvm.script import tir as T
from tvm.tir.function import PrimFunc
from tvm.tune import Tunable, device_limits, vector_lanes
from tvm.tune.fingerprint import vector_registers

from . import kernels

#: Threads per block a device kernel's default uses at most: 8 warps of 32, enough to hide
#: latency while leaving room for several blocks per multiprocessor.
DEFAULT_BLOCK_THREADS = 256

BLOCK_CHOICES = [32, 64, 128, 256, 512, 1024]


def _bits(dtype: str) -> int:
    return int(dtype[-2:]) if dtype[-2:].isdigit() else 32


def _fits(threads: int, shared_bytes: int, target: Any) -> bool:
    limits = device_limits(target)
    return threads <= limits["max_threads"] and shared_bytes <= limits["shared_memory"]


def matmul_cpu(
    m: int = 1024,
    n: int = 1024,
    k: int = 1024,
    mr: int = 4,
    nr: int = 16,
    dtype: str = "float32",
    *,
    name: str = "matmul",
) -> PrimFunc:
    """``C = A @ B`` for the CPU: B is first packed into panels of ``nr`` columns (contiguous in
    ``k``), then each ``mr x nr`` tile of C accumulates in registers (``nr`` vectorized, ``mr``
    unrolled) over the whole of ``k``, rows of tiles in parallel. ``mr`` and ``nr`` must divide
    ``m`` and ``n``; :func:`tunable_matmul_cpu` chooses them per machine."""
    assert m % mr == 0 and n % nr == 0, "mr and nr must divide m and n"

    @T.prim_func
    def matmul(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (m, k), dtype)
        B = T.match_buffer(b, (k, n), dtype)
        C = T.match_buffer(c, (m, n), dtype)
        Bp = T.alloc_buffer((n // nr, k, nr), dtype)
        for jo in T.parallel(n // nr):
            for kk in range(k):
                for j in T.vectorized(nr):
                    Bp[jo, kk, j] = B[kk, jo * nr + j]
        for io in T.parallel(m // mr):
            for jo in range(n // nr):
                acc = T.alloc_buffer((mr, nr), dtype, scope="local")
                for ii in T.unroll(mr):
                    for j in T.vectorized(nr):
                        acc[ii, j] = T.Cast(dtype, 0)
                for kk in range(k):
                    for ii in T.unroll(mr):
                        for j in T.vectorized(nr):
                            acc[ii, j] = acc[ii, j] + A[io * mr + ii, kk] * Bp[jo, kk, j]
                for ii in T.unroll(mr):
                    for j in T.vectorized(nr):
                        C[io * mr + ii, jo * nr + j] = acc[ii, j]

    return kernels._named(matmul, name)


def tunable_matmul_cpu(
    m: int = 1024, n: int = 1024, k: int = 1024, dtype: str = "float32", *, name: str = "matmul"
) -> Tunable:
    """:func:`matmul_cpu` over its register tile (``mr`` rows, ``nr`` columns). Default: ``nr`` =
    two vector registers of the target (AVX2 16, AVX-512 32, NEON 8 float32) and ``mr`` = a
    quarter of its vector registers (AVX2 4, AVX-512 and NEON 8): half the registers hold
    accumulators, the rest the loaded and broadcast operands (measured best of the tiles on
    AVX2 and AVX-512; the tile is printed as an array of vectors, see
    :mod:`tvm.codegen.register_tiles`)."""

    def default(target) -> dict:
        lanes = vector_lanes(target, _bits(dtype))
        mr = next(r for r in (vector_registers(target) // 4, 4, 2, 1) if m % r == 0)
        return {"mr": mr, "nr": next((c for c in (2 * lanes, lanes) if n % c == 0), 8)}

    return Tunable(
        lambda mr, nr: matmul_cpu(m, n, k, mr, nr, dtype, name=name),
        {"mr": [1, 2, 4, 8], "nr": [4, 8, 16, 32, 64]},
        key=f"{name}:matmul_cpu:{m}x{n}x{k}:{dtype}",
        default=default,
        constraint=lambda c: m % c["mr"] == 0 and n % c["nr"] == 0,
    )


def sum_cpu(n: int, lanes: int = 32, parts: int = 1, dtype: str = "float32", *, name: str = "vector_sum") -> PrimFunc:
    """``S[0] = sum(A)`` for the CPU: ``parts`` contiguous parts summed in parallel, each into
    ``lanes`` independent vectorized accumulators, combined at the end. ``parts * lanes`` must
    divide ``n``."""
    assert n % (parts * lanes) == 0, "parts * lanes must divide n"
    steps = n // (parts * lanes)

    @T.prim_func
    def vector_sum(a: T.handle, s: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        S = T.match_buffer(s, (1,), dtype)
        partial = T.alloc_buffer((parts, lanes), dtype)
        for p in T.parallel(parts):
            acc = T.alloc_buffer((lanes,), dtype, scope="local")
            for j in T.vectorized(lanes):
                acc[j] = T.Cast(dtype, 0)
            for i in range(steps):
                for j in T.vectorized(lanes):
                    acc[j] = acc[j] + A[(p * steps + i) * lanes + j]
            for j in T.vectorized(lanes):
                partial[p, j] = acc[j]
        S[0] = T.Cast(dtype, 0)
        for p in range(parts):
            for j in range(lanes):
                S[0] = S[0] + partial[p, j]

    return kernels._named(vector_sum, name)


def tunable_sum_cpu(n: int, dtype: str = "float32", *, name: str = "vector_sum") -> Tunable:
    """:func:`sum_cpu` over its accumulators (``lanes``) and parallel parts. Default: four vector
    registers of accumulators (enough independent additions to cover the add latency), one part
    (a sum is memory-bound; NumPy's is single-threaded too)."""

    def default(target) -> dict:
        return {"lanes": 4 * vector_lanes(target, _bits(dtype)), "parts": 1}

    return Tunable(
        lambda lanes, parts: sum_cpu(n, lanes, parts, dtype, name=name),
        {"lanes": [8, 16, 32, 64, 128], "parts": [1, 2, 4, 8]},
        key=f"{name}:sum_cpu:{n}:{dtype}",
        default=default,
        constraint=lambda c: n % (c["lanes"] * c["parts"]) == 0,
    )


def softmax_cpu(rows: int, cols: int, lanes: int = 8, *, name: str = "row_softmax") -> PrimFunc:
    """Numerically stable float32 softmax of each row for the CPU: rows in parallel; the row's
    maximum and the sum of exponentials in ``lanes`` vectorized accumulators; one multiplication
    by the reciprocal of the sum. ``lanes`` must divide ``cols``."""
    assert cols % lanes == 0, "lanes must divide cols"
    steps = cols // lanes

    @T.prim_func
    def row_softmax(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (rows, cols), "float32")
        B = T.match_buffer(b, (rows, cols), "float32")
        for r in T.parallel(rows):
            acc = T.alloc_buffer((lanes,), "float32", scope="local")
            stat = T.alloc_buffer((2,), "float32", scope="local")  # the row's max, 1 / sum
            for j in T.vectorized(lanes):
                acc[j] = T.float32("-inf")
            for i in range(steps):
                for j in T.vectorized(lanes):
                    acc[j] = T.max(acc[j], A[r, i * lanes + j])
            stat[0] = T.float32("-inf")
            for j in range(lanes):
                stat[0] = T.max(stat[0], acc[j])
            for j in T.vectorized(lanes):
                acc[j] = T.float32(0)
            for i in range(steps):
                for j in T.vectorized(lanes):
                    B[r, i * lanes + j] = T.exp(A[r, i * lanes + j] - stat[0])
                    acc[j] = acc[j] + B[r, i * lanes + j]
            stat[1] = T.float32(0)
            for j in range(lanes):
                stat[1] = stat[1] + acc[j]
            stat[1] = T.float32(1) / stat[1]
            for i in range(steps):
                for j in T.vectorized(lanes):
                    B[r, i * lanes + j] = B[r, i * lanes + j] * stat[1]

    return kernels._named(row_softmax, name)


def tunable_softmax_cpu(rows: int, cols: int, *, name: str = "row_softmax") -> Tunable:
    """:func:`softmax_cpu` over its accumulator lanes. Default: one vector register of float32."""
    return Tunable(
        lambda lanes: softmax_cpu(rows, cols, lanes, name=name),
        {"lanes": [4, 8, 16, 32, 64]},
        key=f"{name}:softmax_cpu:{rows}x{cols}",
        default=lambda target: {"lanes": vector_lanes(target, 32)},
        constraint=lambda c: cols % c["lanes"] == 0,
    )


def default_tile(limits: dict[str, int], dtype_bytes: int, sizes: tuple[int, ...]) -> int:
    """The largest square tile whose threads (``tile**2``) fit the device's threads per block
    (at most :data:`DEFAULT_BLOCK_THREADS`), whose two staged tiles fit its shared memory, which
    fills whole warps where it can, and which divides every size."""
    threads = min(DEFAULT_BLOCK_THREADS, limits["max_threads"])
    for tile in (32, 16, 8, 4):
        if (
            tile * tile <= threads
            and 2 * tile * tile * dtype_bytes <= limits["shared_memory"]
            and (tile * tile >= limits["warp_size"] or tile == 4)
            and all(s % tile == 0 for s in sizes)
        ):
            return tile
    return 4


def tunable_vector_add(dtype: str = "float32", *, name: str = "vector_add") -> Tunable:
    """:func:`tvm.testing.kernels.vector_add` over its threads per block and the elements each
    thread adds. Default: four elements per thread (fewer threads to schedule, each with
    independent loads) in blocks of four warps, at least 64 and at most 256 threads."""

    def default(target: Any) -> dict:
        limits = device_limits(target)
        return {"block": min(256, limits["max_threads"], max(64, 4 * limits["warp_size"])), "lanes": 4}

    return Tunable(
        lambda block, lanes: kernels.vector_add(dtype, block, lanes=lanes, name=name),
        {"block": [64, 128, 256], "lanes": [1, 2, 4, 8]},
        key=f"{name}:vector_add:{dtype}",
        default=default,
        fits=lambda c, target: _fits(c["block"], 0, target),
    )


def default_work(limits: dict[str, int], tile: int, sizes: tuple[int, int]) -> int:
    """Outputs per thread along each side of :func:`tvm.testing.kernels.matmul_tiled`'s block: 2
    (four accumulators per thread: fewer shared-memory reads per multiply-add) on devices with
    warps of 32 or more, where the sizes allow it, else 1. CPU-backed drivers differ (a 2x2 block
    is 1.3x faster on lavapipe, 2x slower on PoCL), so they keep one output until tuned."""
    if limits["warp_size"] < 32:
        return 1
    return 2 if all(s % (2 * tile) == 0 for s in sizes) else 1


def tunable_matmul_tiled(m: int, n: int, k: int, dtype: str = "float32", *, name: str = "matmul_tiled") -> Tunable:
    """:func:`tvm.testing.kernels.matmul_tiled` over its tile (``tile x tile`` threads per block)
    and the outputs per thread (``work x work``). Default: :func:`default_tile` and
    :func:`default_work` for the target's device."""
    nbytes = _bits(dtype) // 8

    def default(target: Any) -> dict:
        limits = device_limits(target)
        tile = default_tile(limits, nbytes, (m, n, k))
        return {"tile": tile, "work": default_work(limits, tile, (m, n))}

    return Tunable(
        lambda tile, work: kernels.matmul_tiled(m, n, k, tile, dtype, work=work, name=name),
        {"tile": [4, 8, 16, 32], "work": [1, 2, 4]},
        key=f"{name}:matmul_tiled:{m}x{n}x{k}:{dtype}",
        default=default,
        constraint=lambda c: (
            m % (c["tile"] * c["work"]) == 0 and n % (c["tile"] * c["work"]) == 0 and k % c["tile"] == 0
        ),
        fits=lambda c, target: _fits(c["tile"] ** 2, 2 * c["tile"] ** 2 * c["work"] * nbytes, target),
    )


def default_block(limits: dict[str, int], cols: int) -> int:
    """Threads per block of a one-block-per-row reduction: four warps (Triton's default for a
    row reduction), at least 32 and at most :data:`DEFAULT_BLOCK_THREADS` and the device's
    limit, rounded down to a power of two, and no more than the row has elements. Devices whose
    "warp" is narrow (CPU-backed OpenCL and Vulkan, where more threads per block only add
    scheduling) so get small blocks, GPUs 128 (warp 32) or 256 (wavefront 64) threads."""
    threads = min(DEFAULT_BLOCK_THREADS, limits["max_threads"], max(32, 4 * limits["warp_size"]))
    block = 32
    while block * 2 <= threads and block < cols:
        block *= 2
    return min(block, threads)


def _tunable_rows(factory, key: str, cols: int, dtype_bytes: int) -> Tunable:
    return Tunable(
        lambda block: factory(block),
        {"block": BLOCK_CHOICES},
        key=key,
        default=lambda target: {"block": default_block(device_limits(target), cols)},
        fits=lambda c, target: _fits(c["block"], c["block"] * dtype_bytes, target),
    )


def tunable_row_sum(rows: int, cols: int, dtype: str = "float32", *, name: str = "row_sum") -> Tunable:
    """:func:`tvm.testing.kernels.row_sum` over its threads per block. Default:
    :func:`default_block` for the target's device."""
    return _tunable_rows(
        lambda block: kernels.row_sum(rows, cols, dtype, block, name=name),
        f"{name}:row_sum:{rows}x{cols}:{dtype}",
        cols,
        _bits(dtype) // 8,
    )


def tunable_row_softmax(rows: int, cols: int, *, name: str = "row_softmax") -> Tunable:
    """:func:`tvm.testing.kernels.row_softmax` (float32) over its threads per block. Default:
    :func:`default_block` for the target's device."""
    return _tunable_rows(
        lambda block: kernels.row_softmax(rows, cols, block, name=name), f"{name}:row_softmax:{rows}x{cols}", cols, 4
    )


__all__ = [
    "BLOCK_CHOICES",
    "DEFAULT_BLOCK_THREADS",
    "default_block",
    "default_tile",
    "default_work",
    "matmul_cpu",
    "softmax_cpu",
    "sum_cpu",
    "tunable_matmul_cpu",
    "tunable_matmul_tiled",
    "tunable_row_softmax",
    "tunable_row_sum",
    "tunable_softmax_cpu",
    "tunable_sum_cpu",
    "tunable_vector_add",
]
