"""Standard GPU-style TVMScript kernels that every device backend's tests and benchmarks share.

Each factory returns a fresh ``PrimFunc`` for the given sizes, dtype and block size, written with
thread bindings (``blockIdx.x`` / ``threadIdx.x``), shared memory and barriers, so one kernel text
exercises every backend's code generator. ``reference_*`` functions give the NumPy result.

Buffers are ``T.handle`` parameters matched with ``T.match_buffer``. A size given as ``None`` is
symbolic: an ``int32`` variable bound from the argument's shape at call time, so one compiled
kernel serves every size. ``name`` sets the exported name (``global_symbol``; kernels are named
``<name>_kernel0`` ...), for tests and benchmarks whose assertions use their own names.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from tvm.script import tir as T
from tvm.tir.function import PrimFunc


def _named(func: PrimFunc, name: str) -> PrimFunc:
    """``func`` exported as ``name``."""
    if name == func.name:
        return func
    return dataclasses.replace(
        func, buffer_map=dict(func.buffer_map), name=name, attrs={**func.attrs, "global_symbol": name}
    )


def _size(value: Optional[int]):
    """In a kernel body, ``m = _size(rows)``: the fixed size, or for ``None`` a symbolic int32
    variable (``T.int32()``) bound from the argument's shape at call time."""
    return T.int32() if value is None else value


def vector_add(dtype: str = "float32", block: int = 64, *, lanes: int = 1, name: str = "vector_add") -> PrimFunc:
    """``C[i] = A[i] + B[i]`` over a symbolic length ``n``: ``block`` threads per block, each
    thread adding ``lanes`` elements one grid apart (``i``, ``i + grid threads``, ...: neighbouring
    threads touch neighbouring elements at every step)."""
    per_block = lanes * block

    @T.prim_func
    def vector_add(a: T.handle, b: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        C = T.match_buffer(c, (n,), dtype)
        for bx in T.thread_binding((n + per_block - 1) // per_block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                for lane in T.unroll(lanes):
                    # the guard spells the index out: the Hexagon code generator turns `if tx + x < n`
                    # into the loop bound of the thread loop
                    if bx * block + tx + lane * ((n + per_block - 1) // per_block * block) < n:
                        i = bx * block + tx + lane * ((n + per_block - 1) // per_block * block)
                        C[i] = A[i] + B[i]

    return _named(vector_add, name)


def gather(block: int = 64, *, name: str = "gather") -> PrimFunc:
    """``B[i] = A[idx[i]]``: indices read from memory, compared with ``A``'s extent when the
    kernel runs (:func:`tvm.tir.transform.check_indices_at_run_time`)."""

    @T.prim_func
    def gather(a: T.handle, x: T.handle, b: T.handle):
        n, m = T.int32(), T.int32()
        A = T.match_buffer(a, (n,), "float32")
        idx = T.match_buffer(x, (m,), "int32")
        B = T.match_buffer(b, (m,), "float32")
        for bx in T.thread_binding((m + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                if bx * block + tx < m:
                    B[bx * block + tx] = A[idx[bx * block + tx]]

    return _named(gather, name)


def first_at_least(width: int = 32, *, name: str = "first_at_least") -> PrimFunc:
    """``B[r]`` = the first column of row ``r`` of ``A`` holding at least 0.5, else -1: a serial
    loop that continues past small values and breaks, unconditionally, at the first other one."""

    @T.prim_func
    def first_at_least(a: T.handle, b: T.handle):
        rows = T.int32()
        A = T.match_buffer(a, (rows, width), "float32")
        B = T.match_buffer(b, (rows,), "int32")
        for r in T.thread_binding(rows, thread="blockIdx.x"):
            B[r] = -1
            for k in range(width):
                if A[r, k] < T.float32(0.5):
                    continue
                B[r] = k
                break

    return _named(first_at_least, name)


def power(block: int = 64, *, name: str = "power") -> PrimFunc:
    """``C[i] = pow(A[i], B[i])`` in float32, with C's results for negative and zero bases."""

    @T.prim_func
    def power(a: T.handle, b: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for bx in T.thread_binding((n + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                if bx * block + tx < n:
                    C[bx * block + tx] = T.pow(A[bx * block + tx], B[bx * block + tx])

    return _named(power, name)


#: Float32 math functions for :func:`unary_math`, with their NumPy references.
MATH_FUNCTIONS = {
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(np.float32(10), x),
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}


def unary_math(op: str, block: int = 64, *, name: str = "unary_math") -> PrimFunc:
    """``C[i] = op(A[i])`` in float32 for a math function ``op`` of TVMScript (``"exp"``, ...)."""
    function = getattr(T, op)

    @T.prim_func
    def unary_math(a: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for bx in T.thread_binding((n + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                if bx * block + tx < n:
                    C[bx * block + tx] = function(A[bx * block + tx])

    return _named(unary_math, name)


def checked_sqrt(block: int = 64, *, name: str = "checked_sqrt") -> PrimFunc:
    """``B[i] = sqrt(A[i])`` behind ``assert A[i] >= 0`` in the kernel: a kernel cannot raise, so
    the failure is recorded and the host raises the assert's ValueError after the launch."""

    @T.prim_func
    def checked_sqrt(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for bx in T.thread_binding((n + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                if bx * block + tx < n:
                    assert A[bx * block + tx] >= T.float32(0), (
                        "ValueError",
                        ["checked_sqrt: A holds a negative value"],
                    )
                    B[bx * block + tx] = T.sqrt(A[bx * block + tx])

    return _named(checked_sqrt, name)


def gather_then_exchange(block: int = 64, *, name: str = "gather_exchange") -> PrimFunc:
    """``v = 2 * A[idx[t]]`` bound by a let, then exchanged through shared memory across a
    barrier: ``B[t] = v[block - 1 - t] + v[t]``. A thread whose index fails its run-time check
    must still reach the barrier."""

    @T.prim_func
    def gather_exchange(a: T.handle, x: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        idx = T.match_buffer(x, (block,), "int32")
        B = T.match_buffer(b, (block,), "float32")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                S = T.alloc_buffer((block,), "float32", scope="shared")
                v = A[idx[tx]] * T.float32(2)
                S[tx] = v
                T.tvm_storage_sync("shared")
                B[tx] = S[block - 1 - tx] + v

    return _named(gather_exchange, name)


def two_stage(block: int = 64, *, name: str = "two_stage") -> PrimFunc:
    """``D[i] = (A[(i + 1) % n] + 1) * 2`` over a symbolic ``n`` in two kernels: the first writes
    ``C = A + 1`` into a buffer the function allocates (``T.alloc_buffer`` outside the kernels:
    device memory the host allocates), the second reads a neighbour's element of it."""

    @T.prim_func
    def two_stage(a: T.handle, d: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        D = T.match_buffer(d, (n,), "float32")
        C = T.alloc_buffer((n,), "float32")
        for bx in T.thread_binding((n + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                if bx * block + tx < n:
                    C[bx * block + tx] = A[bx * block + tx] + T.float32(1)
        for bx in T.thread_binding((n + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                if bx * block + tx < n:
                    D[bx * block + tx] = C[(bx * block + tx + 1) % n] * T.float32(2)

    return _named(two_stage, name)


def bool_select(block: int = 64, *, name: str = "bool_select") -> PrimFunc:
    """Bool buffers in and out, over a symbolic ``n``: ``P[i] = A[i] > 0`` and
    ``C[i] = -A[i] if M[i] and not P[i] else A[i]``, the test kept in a thread's local bool array
    (``M`` and ``P`` hold one byte per element, as NumPy stores bool)."""

    @T.prim_func
    def bool_select(a: T.handle, m: T.handle, p: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        M = T.match_buffer(m, (n,), "bool")
        P = T.match_buffer(p, (n,), "bool")
        C = T.match_buffer(c, (n,), "float32")
        for bx in T.thread_binding((n + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                flip = T.alloc_buffer((1,), "bool", scope="local")
                if bx * block + tx < n:
                    P[bx * block + tx] = A[bx * block + tx] > T.float32(0)
                    flip[0] = M[bx * block + tx] and not P[bx * block + tx]
                    C[bx * block + tx] = T.Select(flip[0], -A[bx * block + tx], A[bx * block + tx])

    return _named(bool_select, name)


def float16_chain(n: int = 4096, block: int = 64, *, name: str = "float16_chain") -> PrimFunc:
    """``C = A * A + A / 3 - B * 0.7`` in float16 (``n`` a multiple of ``block``): several
    operations, each of whose results float16 arithmetic rounds to float16."""

    @T.prim_func
    def float16_chain(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (n,), "float16")
        B = T.match_buffer(b, (n,), "float16")
        C = T.match_buffer(c, (n,), "float16")
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                i = bx * block + tx
                C[i] = A[i] * A[i] + A[i] / T.float16(3) - B[i] * T.float16(0.7)

    return _named(float16_chain, name)


def half_bits_round_trip(dtype: str = "float16", n: int = 256, block: int = 64, *, name: str = "half_bits") -> PrimFunc:
    """``B = reinterpret(A, uint16)`` and ``C = reinterpret(B + 0, dtype)`` for a 16-bit float
    ``dtype``: the bits as stored, read back, whatever the values (NaN payloads, subnormals)."""

    @T.prim_func
    def half_bits(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), "uint16")
        C = T.match_buffer(c, (n,), dtype)
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                i = bx * block + tx
                B[i] = T.reinterpret(A[i], dtype="uint16")
                C[i] = T.reinterpret(B[i] + T.uint16(0), dtype=dtype)

    return _named(half_bits, name)


def count_leading_zeros(dtype: str = "int32", n: int = 256, block: int = 64, *, name: str = "clz") -> PrimFunc:
    """``B[i] = T.clz(A[i])`` (int32 counts) for a 32- or 64-bit integer ``dtype``."""

    @T.prim_func
    def clz(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), "int32")
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                B[bx * block + tx] = T.clz(A[bx * block + tx])

    return _named(clz, name)


def population_count(dtype: str = "int32", n: int = 256, block: int = 64, *, name: str = "popcount") -> PrimFunc:
    """``B[i] = T.popcount(A[i])`` (in ``dtype``) for an 8-, 16-, 32- or 64-bit integer ``dtype``."""

    @T.prim_func
    def popcount(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                B[bx * block + tx] = T.popcount(A[bx * block + tx])

    return _named(popcount, name)


def float_specials(*, name: str = "float_specials") -> PrimFunc:
    """Float32 arithmetic on the constants drivers like to fold, over 8 values:
    ``A / 0.0``, ``0.0 / A``, ``A * 0.0``, ``0.0 - A``, ``-0.0 * A``, ``A // nan``,
    ``(A + z) / z`` with one zero object used twice, ``A * w`` with a zero bound to a variable
    and ``A + 0.0`` (+0.0 for -0.0); :func:`float_specials_reference` gives NumPy's answers."""
    nan, z = T.float32(float("nan")), T.float32(0.0)

    @T.prim_func
    def float_specials(a: T.handle, o: T.handle):
        A = T.match_buffer(a, (8,), "float32")
        O = T.match_buffer(o, (9, 8), "float32")
        for i in T.thread_binding(8, thread="threadIdx.x"):
            O[0, i] = A[i] / T.float32(0.0)
            O[1, i] = T.float32(0.0) / A[i]
            O[2, i] = A[i] * T.float32(0.0)
            O[3, i] = T.float32(0.0) - A[i]
            O[4, i] = T.float32(-0.0) * A[i]
            O[5, i] = A[i] // nan
            O[6, i] = (A[i] + z) / z
            w: T.float32 = T.float32(0.0)
            O[7, i] = A[i] * w
            O[8, i] = A[i] + T.float32(0.0)

    return _named(float_specials, name)


def narrow_unsigned_indices(*, name: str = "narrow_unsigned_indices") -> PrimFunc:
    """``O[k + t] = 1`` for 64 threads with ``k = uint16(K[0])`` and ``O[uint8(K[1])] = 2``: with
    K = [40000, 200] the indices are past int16's and int8's range (an index read as signed
    would write before O)."""

    @T.prim_func
    def narrow_unsigned_indices(k: T.handle, o: T.handle):
        K = T.match_buffer(k, (2,), "int32")
        O = T.match_buffer(o, (40064,), "float32")
        for t in T.thread_binding(64, thread="threadIdx.x"):
            O[T.Cast("uint16", K[0]) + T.Cast("uint16", t)] = T.float32(1)
            if t == 0:
                O[T.Cast("uint8", K[1])] = T.float32(2)

    return _named(narrow_unsigned_indices, name)


def narrow_loop_variables(*, name: str = "narrow_loop_variables") -> PrimFunc:
    """``A[b] += k`` counted by an int16 loop in each of ``n`` blocks, ``n`` an int16 size: loop
    and launch variables of a narrow integer dtype."""

    @T.prim_func
    def narrow_loop_variables(a: T.handle, k: T.int16):
        n = T.int16()
        A = T.match_buffer(a, (n,), "float32")
        for b in T.thread_binding(n, thread="blockIdx.x"):
            for i in range(k):
                A[b] = A[b] + T.float32(1)

    return _named(narrow_loop_variables, name)


def narrow_loop_to_the_top(*, name: str = "narrow_loop_to_the_top") -> PrimFunc:
    """``A[i - m] = i`` for an int8 ``i`` from ``m`` to ``m + 20`` in one thread: with m = 108 the
    loop ends at int8's top (127), and its end, 128, is past int8."""

    @T.prim_func
    def narrow_loop_to_the_top(A: T.Buffer((20,), "int32"), m: T.int8):
        for t in T.thread_binding(1, thread="threadIdx.x"):
            for i in range(m, m + T.int8(20)):
                A[T.Cast("int32", i) - T.Cast("int32", m) + t] = T.Cast("int32", i)

    return _named(narrow_loop_to_the_top, name)


def float_specials_reference(a: np.ndarray) -> np.ndarray:
    """What :func:`float_specials` computes, by NumPy."""
    zero, nan = np.float32(0.0), np.float32("nan")
    with np.errstate(all="ignore"):
        rows = [
            a / zero,
            zero / a,
            a * zero,
            zero - a,
            np.float32(-0.0) * a,
        ]
        return np.stack([*rows, np.floor_divide(a, nan), (a + zero) / zero, a * zero, a + zero])


def warp_shuffles(dtype: str = "float32", warp: int = 32, *, name: str = "warp_shuffles") -> PrimFunc:
    """Apache TVM's warp shuffles over two warps of ``warp`` lanes, every lane taking part (full
    mask): ``B[0]`` lane 3 of each segment of 16, ``B[1]`` up by 2 in segments of 8, ``B[2]`` down
    by 1 in segments of 16, ``B[3]`` xor 5 over the warp, ``B[4]`` xor 17 in segments of 16 (a
    partner in a later segment keeps its own, in an earlier one gives its value), ``B[5]`` xor 1
    in one arm of a ``T.Select`` (every lane evaluates both), ``B[6]`` down by ``warp + 1``
    (offsets are taken modulo the warp); :func:`warp_shuffles_reference` gives the answer."""
    full = T.uint32(0xFFFFFFFF)

    @T.prim_func
    def warp_shuffles(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (2 * warp,), dtype)
        B = T.match_buffer(b, (7, 2 * warp), dtype)
        for tx in T.thread_binding(2 * warp, thread="threadIdx.x"):
            B[0, tx] = T.tvm_warp_shuffle(full, A[tx], 3, 16, warp)
            B[1, tx] = T.tvm_warp_shuffle_up(full, A[tx], 2, 8, warp)
            B[2, tx] = T.tvm_warp_shuffle_down(full, A[tx], 1, 16, warp)
            B[3, tx] = T.tvm_warp_shuffle_xor(full, A[tx], 5, warp, warp)
            B[4, tx] = T.tvm_warp_shuffle_xor(full, A[tx], 17, 16, warp)
            B[5, tx] = T.Select(tx % 2 == 0, T.tvm_warp_shuffle_xor(full, A[tx], 1, warp, warp), A[tx])
            B[6, tx] = T.tvm_warp_shuffle_down(full, A[tx], warp + 1, warp, warp)

    return _named(warp_shuffles, name)


def warp_shuffles_reference(a: np.ndarray, warp: int = 32) -> np.ndarray:
    """What :func:`warp_shuffles` computes, lane by lane as CUDA defines its shuffles."""
    lane = np.arange(a.size)
    in_warp, warp_base = lane % warp, lane - lane % warp

    def segment(width):
        return warp_base + in_warp - in_warp % width, in_warp % width

    base16, at16 = segment(16)
    _, at8 = segment(8)
    xor5, xor17 = lane ^ 5, lane ^ 17
    sources = [
        base16 + 3,
        np.where(at8 >= 2, lane - 2, lane),
        np.where(at16 + 1 < 16, lane + 1, lane),
        np.where(xor5 < warp_base + warp, xor5, lane),
        np.where(xor17 < base16 + 16, xor17, lane),
        np.where(lane % 2 == 0, lane ^ 1, lane),
        np.where(in_warp + 1 < warp, lane + 1, lane),
    ]
    return np.stack([a[s] for s in sources])


def min_max(dtype: str = "float32", n: int = 256, block: int = 64, *, name: str = "min_max") -> PrimFunc:
    """``C = T.min(A, B)``, ``D = T.max(A, B)`` in ``dtype``: TIR picks ``A`` where ``A < B``
    (``A > B``) and ``B`` otherwise, so a NaN ``B`` is the result and a NaN ``A`` is not."""

    @T.prim_func
    def min_max(a: T.handle, b: T.handle, c: T.handle, d: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        C = T.match_buffer(c, (n,), dtype)
        D = T.match_buffer(d, (n,), dtype)
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                C[bx * block + tx] = T.min(A[bx * block + tx], B[bx * block + tx])
                D[bx * block + tx] = T.max(A[bx * block + tx], B[bx * block + tx])

    return _named(min_max, name)


def float_remainder(dtype: str = "float32", n: int = 256, block: int = 64, *, name: str = "fmod") -> PrimFunc:
    """``C = T.fmod(A, B)`` in ``dtype`` (the remainder of truncated division, C's fmod)."""

    @T.prim_func
    def fmod(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        C = T.match_buffer(c, (n,), dtype)
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                C[bx * block + tx] = T.fmod(A[bx * block + tx], B[bx * block + tx])

    return _named(fmod, name)


def float_floor_remainder(n: int = 256, block: int = 64, *, name: str = "floormod") -> PrimFunc:
    """``C = A % B`` in float32: Python's remainder, with the divisor's sign (a zero too)."""

    @T.prim_func
    def floormod(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                C[bx * block + tx] = A[bx * block + tx] % B[bx * block + tx]

    return _named(floormod, name)


#: What the rows of :func:`integer_wrapping`'s output hold.
INTEGER_WRAPPING_ROWS = (
    "a + b", "a - b", "a * b", "a << s", "~a", "a + 1 > a", "(a + b) // 2", "abs(a) // 2", "a * b >> 2", "a * 5 // 4",
)  # fmt: skip


def integer_wrapping(dtype: str = "int32", n: int = 256, block: int = 64, *, name: str = "wrapping") -> PrimFunc:
    """Integer arithmetic that leaves ``dtype``'s range, which TIR (and NumPy) wrap to its width:
    ``O[0..9, i]`` = ``A + B``, ``A - B``, ``A * B``, ``A << S``, ``~A``, ``1 if A + 1 > A else 0``,
    ``(A + B) // 2``, ``abs(A) // 2`` (the absolute value of the most negative value is itself),
    ``A * B >> 2`` and ``A * 5 // 4`` (a wrapped product shifted: compilers turn the pair into a
    widening multiply-high), all in ``dtype`` (``S`` holds shift amounts below its width); see
    :data:`INTEGER_WRAPPING_ROWS`."""

    @T.prim_func
    def wrapping(a: T.handle, b: T.handle, s: T.handle, out: T.handle):
        A = T.match_buffer(a, (n,), dtype)
        B = T.match_buffer(b, (n,), dtype)
        S = T.match_buffer(s, (n,), dtype)
        O = T.match_buffer(out, (10, n), dtype)
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                i = bx * block + tx
                O[0, i] = A[i] + B[i]
                O[1, i] = A[i] - B[i]
                O[2, i] = A[i] * B[i]
                O[3, i] = A[i] << S[i]
                O[4, i] = ~A[i]
                O[5, i] = T.Select(A[i] + T.cast(1, dtype) > A[i], T.cast(1, dtype), T.cast(0, dtype))
                O[6, i] = (A[i] + B[i]) // T.cast(2, dtype)
                O[7, i] = T.abs(A[i]) // T.cast(2, dtype)
                O[8, i] = (A[i] * B[i]) >> T.cast(2, dtype)
                O[9, i] = A[i] * T.cast(5, dtype) // T.cast(4, dtype)

    return _named(wrapping, name)


def integer_wrapping_reference(a: np.ndarray, b: np.ndarray, s: np.ndarray) -> np.ndarray:
    """What :func:`integer_wrapping` computes, by NumPy (which wraps integers to their width)."""
    with np.errstate(over="ignore"):
        one = a.dtype.type(1)
        two = a.dtype.type(2)
        rows = [a + b, a - b, a * b, a << s, ~a, ((a + one) > a).astype(a.dtype), (a + b) // two, np.abs(a) // two]
        rows += [(a * b) >> a.dtype.type(2), a * a.dtype.type(5) // a.dtype.type(4)]
    return np.stack(rows).astype(a.dtype)


def halves_as_floats(block: int = 32, *, name: str = "halves_as_floats") -> PrimFunc:
    """Each block rounds its ``block`` floats of ``A`` to float16 in shared memory and reads that
    memory back as float32 through a view (``T.decl_buffer(..., data=S.data)``): ``B[t]`` = the
    float32 whose bits are halves ``2 * (t % (block // 2))`` and the next (little-endian)."""

    @T.prim_func
    def halves_as_floats(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (4 * block,), "float32")
        B = T.match_buffer(b, (4 * block,), "float32")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                halves = T.alloc_buffer((block,), "float16", scope="shared")
                floats = T.decl_buffer((block // 2,), "float32", data=halves.data, scope="shared")
                halves[tx] = T.Cast("float16", A[bx * block + tx])
                T.tvm_storage_sync("shared")
                B[bx * block + tx] = floats[tx % (block // 2)]

    return _named(halves_as_floats, name)


def portable_math(n: int = 256, block: int = 64, *, name: str = "portable_math") -> PrimFunc:
    """``O[0..5] = T.hypot(A, B)``, ``T.copysign(A, B)``, ``T.ldexp(B, E)``, ``T.asinh(A)``,
    ``T.acosh(C)``, ``T.atanh(B)`` (float32): the composite math functions."""

    @T.prim_func
    def portable_math(a: T.handle, b: T.handle, c: T.handle, e: T.handle, o: T.handle):
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        E = T.match_buffer(e, (n,), "int32")
        O = T.match_buffer(o, (6, n), "float32")
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                i = bx * block + tx
                O[0, i] = T.hypot(A[i], B[i])
                O[1, i] = T.copysign(A[i], B[i])
                O[2, i] = T.ldexp(B[i], E[i])
                O[3, i] = T.asinh(A[i])
                O[4, i] = T.acosh(C[i])
                O[5, i] = T.atanh(B[i])

    return _named(portable_math, name)


def requantize(n: int = 256, block: int = 64, multiplier: int = 1963325822, *, name: str = "requantize") -> PrimFunc:
    """``B[i] = T.q_multiply_shift(A[i], multiplier, 31, s)`` with the shift ``s = tx % 9 - 4``
    (right and left shifts, and none), computed in int64."""

    @T.prim_func
    def requantize(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (n,), "int32")
        B = T.match_buffer(b, (n,), "int32")
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                B[bx * block + tx] = T.q_multiply_shift(A[bx * block + tx], multiplier, 31, tx % 9 - 4)

    return _named(requantize, name)


def bounded_scratch(block: int = 64, most: int = 64, *, name: str = "scratch") -> PrimFunc:
    """``B[t] = 2 * sum(A[t * most : t * most + min(n, most)])`` through a local array of
    ``T.min(n, most)`` elements (a symbolic size with a constant upper bound)."""

    @T.prim_func
    def scratch(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (block * most,), "float32")
        B = T.match_buffer(b, (block,), "float32")
        for tx in T.thread_binding(block, thread="threadIdx.x"):
            R = T.alloc_buffer((T.min(n, most),), "float32", scope="local")
            for i in range(T.min(n, most)):
                R[i] = A[tx * most + i] * T.float32(2)
            B[tx] = T.float32(0)
            for i in range(T.min(n, most)):
                B[tx] = B[tx] + R[i]

    return _named(scratch, name)


def reverse_in_dynamic_shared(
    block: int = 64, sized_at_launch: bool = True, dtype: str = "float32", *, name: str = "reverse"
) -> PrimFunc:
    """``B`` = each ``block``-element slice of ``A`` (of ``dtype``) reversed, through a buffer of
    scope ``shared.dyn`` of ``block + n`` elements (``n`` a scalar argument: a size known at
    launch; thread 0 zeroes the ``n`` after the slice, so the whole size is used), or of
    ``block`` elements (``n`` unused)."""

    @T.prim_func
    def reverse(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (4 * block,), dtype)
        B = T.match_buffer(b, (4 * block,), dtype)
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                S = T.alloc_buffer((block + n,) if sized_at_launch else (block,), dtype, scope="shared.dyn")
                S[tx] = A[bx * block + tx]
                if sized_at_launch and tx == 0:
                    for i in range(n):
                        S[block + i] = T.Cast(dtype, 0)
                T.tvm_storage_sync("shared")
                B[bx * block + tx] = S[block - 1 - tx]

    return _named(reverse, name)


def window_sums(block: int = 64, size: int = 8192, *, name: str = "window_sums") -> PrimFunc:
    """``B[t]`` = the sum of ``A[t : t + n + 1]`` for the ``block`` threads of one block, from a
    launch-sized shared copy of ``A[0 : block + n]`` (scope ``shared.dyn``) beside a constant-size
    shared buffer of partial sums (``n`` a scalar argument, ``block + n <= size``)."""

    @T.prim_func
    def window_sums(a: T.handle, b: T.handle, n: T.int32):
        A = T.match_buffer(a, (size,), "float32")
        B = T.match_buffer(b, (block,), "float32")
        for tx in T.thread_binding(block, thread="threadIdx.x"):
            S = T.alloc_buffer((block + n,), "float32", scope="shared.dyn")
            P = T.alloc_buffer((block,), "float32", scope="shared")
            for i in range(T.ceildiv(block + n, block)):
                if i * block + tx < block + n:
                    S[i * block + tx] = A[i * block + tx]
            T.tvm_storage_sync("shared")
            P[tx] = T.float32(0)
            for k in range(n + 1):
                P[tx] = P[tx] + S[tx + k]
            B[tx] = P[tx]

    return _named(window_sums, name)


def bounded_collatz(n: int = 256, block: int = 64, limit: int = 100, *, name: str = "collatz") -> PrimFunc:
    """``B[i]`` = the Collatz steps from ``A[i]`` to 1, or ``limit`` when it takes longer: a
    ``while`` loop with a ``break`` and a ``continue`` in every thread, and a ``for`` loop that
    ``break`` leaves (``C[i]`` = the first bit set in ``A[i]``, or -1)."""

    @T.prim_func
    def collatz(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (n,), "int32")
        B = T.match_buffer(b, (n,), "int32")
        C = T.match_buffer(c, (n,), "int32")
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                x = T.alloc_buffer((1,), "int32", scope="local")
                x[0] = A[bx * block + tx]
                B[bx * block + tx] = 0
                while x[0] > 1:
                    if B[bx * block + tx] >= limit:
                        break
                    B[bx * block + tx] = B[bx * block + tx] + 1
                    if x[0] % 2 == 0:
                        x[0] = x[0] // 2
                        continue
                    x[0] = 3 * x[0] + 1
                C[bx * block + tx] = -1
                for k in range(31):
                    if (A[bx * block + tx] >> k) % 2 == 1:
                        C[bx * block + tx] = k
                        break

    return _named(collatz, name)


def per_thread_array(threads: int, elements: int, *, name: str = "per_thread_array") -> PrimFunc:
    """Each of ``threads`` threads fills a local array of ``elements`` float32 (``R[i] = i + t``)
    and writes one of them: ``A[t] = R[t * 7919 % elements]``."""

    @T.prim_func
    def per_thread_array(a: T.handle):
        A = T.match_buffer(a, (threads,), "float32")
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(threads, thread="threadIdx.x"):
                R = T.alloc_buffer((elements,), "float32", scope="local")
                for i in range(elements):
                    R[i] = T.Cast("float32", i + tx)
                A[tx] = R[tx * 7919 % elements]

    return _named(per_thread_array, name)


def row_sum(
    rows: Optional[int] = None,
    cols: Optional[int] = None,
    dtype: str = "float32",
    block: int = 64,
    *,
    name: str = "row_sum",
) -> PrimFunc:
    """``B[r] = sum(A[r, :])``: one block per row, strided partial sums then a tree reduction in
    shared memory with barriers. ``block`` must be a power of two."""
    assert block & (block - 1) == 0, "block must be a power of two"
    steps = block.bit_length() - 1

    @T.prim_func
    def row_sum(a: T.handle, b: T.handle):
        m = _size(rows)
        n = _size(cols)
        A = T.match_buffer(a, (m, n), dtype)
        B = T.match_buffer(b, (m,), dtype)
        for bx in T.thread_binding(m, thread="blockIdx.x"):
            red = T.alloc_buffer((block,), dtype, scope="shared")
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                acc = T.alloc_buffer((1,), dtype, scope="local")
                acc[0] = T.Cast(dtype, 0)
                for k in range((n + block - 1) // block):
                    if k * block + tx < n:
                        acc[0] = acc[0] + A[bx, k * block + tx]
                red[tx] = acc[0]
                T.tvm_storage_sync("shared")
                for s in range(steps):
                    if tx < T.shift_right(block // 2, s):
                        red[tx] = red[tx] + red[tx + T.shift_right(block // 2, s)]
                    T.tvm_storage_sync("shared")
                if tx == 0:
                    B[bx] = red[0]

    return _named(row_sum, name)


def serial_row_sum(dtype: str = "int32", block: int = 64, *, name: str = "serial_row_sum") -> PrimFunc:
    """``B[r] = sum(A[r, :])`` with one thread per row running a serial loop over its ``n``
    columns (both sizes symbolic): one thread's loop iterations grow with ``n``, which drivers
    that end long-running threads must refuse rather than cut short."""

    @T.prim_func
    def serial_row_sum(a: T.handle, b: T.handle):
        m = T.int32()
        n = T.int32()
        A = T.match_buffer(a, (m, n), dtype)
        B = T.match_buffer(b, (m,), dtype)
        for bx in T.thread_binding((m + block - 1) // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                if bx * block + tx < m:
                    acc = T.alloc_buffer((1,), dtype, scope="local")
                    acc[0] = T.Cast(dtype, 0)
                    for k in range(n):
                        acc[0] = acc[0] + A[bx * block + tx, k]
                    B[bx * block + tx] = acc[0]

    return _named(serial_row_sum, name)


def vector_lanes(n: int = 1024, lanes: int = 4, block: int = 64, *, name: str = "vector_lanes") -> PrimFunc:
    """``C = A * A + 1`` over ``n`` float32 elements, each thread a vector of ``lanes`` (``T.ramp``
    loads and stores, a ``T.broadcast``); ``n`` a multiple of ``lanes * block``."""
    assert n % (lanes * block) == 0, "n must be a multiple of lanes * block"

    @T.prim_func
    def vector_lanes(a: T.handle, c: T.handle):
        A = T.match_buffer(a, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for bx in T.thread_binding(n // (lanes * block), thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                at = T.ramp((bx * block + tx) * lanes, 1, lanes)
                C[at] = A[at] * A[at] + T.broadcast(T.float32(1), lanes)

    return _named(vector_lanes, name)


def deep_expression(depth: int = 300, block: int = 64, *, name: str = "deep_expression") -> PrimFunc:
    """``C[i]`` from one expression ``depth`` operations deep over ``A[i]`` and ``B[i]`` (float32,
    a symbolic length): ``max(x, B[i] - 1)`` and ``x * 0.5 + B[i]`` in turn, as an unrolled
    stencil generated in Python nests (:func:`reference_deep_expression`)."""
    from tvm.tir import const, max as tir_max
    from tvm.tir.functor import StmtExprMutator
    from tvm.tir.stmt import BufferStore

    base = vector_add("float32", block, name=name)  # C[i] = A[i] + B[i], deepened below

    class Deepen(StmtExprMutator):
        def visit_BufferStore(self, s: BufferStore) -> BufferStore:
            x, b = s.value.a, s.value.b
            for k in range(depth):
                x = x * const(0.5, "float32") + b if k % 2 else tir_max(x, b - const(1.0, "float32"))
            return BufferStore(s.buffer, x, s.indices, s.span)

    return base.with_body(Deepen().visit_stmt(base.body))


def reference_deep_expression(a: np.ndarray, b: np.ndarray, depth: int = 300) -> np.ndarray:
    """NumPy's result of :func:`deep_expression`."""
    x = a.copy()
    for k in range(depth):
        x = x * np.float32(0.5) + b if k % 2 else np.maximum(x, b - np.float32(1.0))
    return x


def row_max_blocks(rows: int, cols: int, block: int = 64, *, name: str = "row_max_blocks") -> PrimFunc:
    """``B[r] = max(A[r, :])`` (float32) written as Apache TVM schedules a reduction: a block whose
    reduction axis is bound to ``threadIdx.x`` (a cross-thread reduction, which the parser lowers
    to a shared-memory tree) inside a serial loop over chunks of ``block`` columns, with
    ``T.where`` for the ragged last chunk."""

    @T.prim_func
    def row_max_blocks(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows,), "float32")):
        for r in T.thread_binding(rows, thread="blockIdx.x"):
            for ko in range((cols + block - 1) // block):
                for ki in T.thread_binding(block, thread="threadIdx.x"):
                    with T.sblock("B"):
                        vr = T.axis.spatial(rows, r)
                        vk = T.axis.reduce(cols, ko * block + ki)
                        T.where(ko * block + ki < cols)
                        T.reads(A[vr, vk])
                        T.writes(B[vr])
                        with T.init():
                            B[vr] = T.float32("-inf")
                        B[vr] = T.max(B[vr], A[vr, vk])

    return _named(row_max_blocks, name)


def partly_scheduled_softmax(
    rows: int = 4, cols: int = 50, threads: int = 64, *, name: str = "partly_scheduled_softmax"
) -> PrimFunc:
    """Row softmax as a schedule that bound some of its blocks leaves it: per row, a launch whose
    cross-thread reduction writes the row's maximum into a root-level shared buffer and a launch
    that reads it; the sums in an unscheduled block (a one-thread kernel); the normalization
    launched per row again. ``row_max`` and ``row_sum`` outlive their launches."""
    assert threads >= cols

    @T.prim_func
    def partly_scheduled_softmax(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows, cols), "float32")):
        row_max = T.alloc_buffer((rows,), "float32", scope="shared")
        row_sum = T.alloc_buffer((rows,), "float32", scope="shared")
        E = T.alloc_buffer((rows, cols), "float32")
        for i in range(rows):
            for tx in T.thread_binding(threads, thread="threadIdx.x"):
                with T.sblock("max"):
                    T.where(tx < cols)
                    vi = T.axis.spatial(rows, i)
                    vk = T.axis.reduce(cols, tx)
                    with T.init():
                        row_max[vi] = T.float32("-inf")
                    row_max[vi] = T.max(row_max[vi], A[vi, vk])
            for tx in T.thread_binding(threads, thread="threadIdx.x"):
                with T.sblock("exp"):
                    T.where(tx < cols)
                    vi = T.axis.spatial(rows, i)
                    vj = T.axis.spatial(cols, tx)
                    E[vi, vj] = T.exp(A[vi, vj] - row_max[vi])
        for i, k in T.grid(rows, cols):
            with T.sblock("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    row_sum[vi] = T.float32(0)
                row_sum[vi] = row_sum[vi] + E[vi, vk]
        for i in range(rows):
            for tx in T.thread_binding(threads, thread="threadIdx.x"):
                with T.sblock("normalize"):
                    T.where(tx < cols)
                    vi = T.axis.spatial(rows, i)
                    vj = T.axis.spatial(cols, tx)
                    B[vi, vj] = E[vi, vj] / row_sum[vi]

    return _named(partly_scheduled_softmax, name)


def row_softmax(
    rows: Optional[int] = None, cols: Optional[int] = None, block: int = 64, *, name: str = "row_softmax"
) -> PrimFunc:
    """Numerically stable softmax of each row of a float32 matrix: shared-memory max and sum
    reductions, one block per row."""
    assert block & (block - 1) == 0, "block must be a power of two"
    steps = block.bit_length() - 1

    @T.prim_func
    def row_softmax(a: T.handle, b: T.handle):
        m = _size(rows)
        n = _size(cols)
        A = T.match_buffer(a, (m, n), "float32")
        B = T.match_buffer(b, (m, n), "float32")
        for bx in T.thread_binding(m, thread="blockIdx.x"):
            red = T.alloc_buffer((block,), "float32", scope="shared")
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                acc = T.alloc_buffer((1,), "float32", scope="local")
                acc[0] = T.float32("-inf")
                for k in range((n + block - 1) // block):
                    if k * block + tx < n:
                        acc[0] = T.max(acc[0], A[bx, k * block + tx])
                red[tx] = acc[0]
                T.tvm_storage_sync("shared")
                for s in range(steps):
                    if tx < T.shift_right(block // 2, s):
                        red[tx] = T.max(red[tx], red[tx + T.shift_right(block // 2, s)])
                    T.tvm_storage_sync("shared")
                row_max = T.alloc_buffer((1,), "float32", scope="local")
                row_max[0] = red[0]
                T.tvm_storage_sync("shared")
                acc[0] = T.float32(0)
                for k in range((n + block - 1) // block):
                    if k * block + tx < n:
                        acc[0] = acc[0] + T.exp(A[bx, k * block + tx] - row_max[0])
                red[tx] = acc[0]
                T.tvm_storage_sync("shared")
                for s in range(steps):
                    if tx < T.shift_right(block // 2, s):
                        red[tx] = red[tx] + red[tx + T.shift_right(block // 2, s)]
                    T.tvm_storage_sync("shared")
                for k in range((n + block - 1) // block):
                    if k * block + tx < n:
                        B[bx, k * block + tx] = T.exp(A[bx, k * block + tx] - row_max[0]) / red[0]

    return _named(row_softmax, name)


def matmul_tiled(
    m: Optional[int] = None,
    n: Optional[int] = None,
    k: Optional[int] = None,
    tile: int = 8,
    dtype: str = "float32",
    *,
    work: int = 1,
    name: str = "matmul_tiled",
) -> PrimFunc:
    """``C = A @ B`` with ``tile x tile`` thread blocks staging tiles of A and B in shared memory,
    each thread accumulating ``work x work`` outputs in registers (``tile`` apart, so neighbouring
    threads touch neighbouring elements): a block computes a ``tile * work`` square of ``C``. M and
    N must be multiples of ``tile * work``, K of ``tile`` (checked here for fixed sizes; symbolic
    ones are the caller's promise)."""
    side = tile * work
    assert all(s is None or s % side == 0 for s in (m, n)), "M and N must be multiples of tile * work"
    assert k is None or k % tile == 0, "K must be a multiple of tile"

    @T.prim_func
    def matmul_tiled(a: T.handle, b: T.handle, c: T.handle):
        M = _size(m)
        N = _size(n)
        K = _size(k)
        A = T.match_buffer(a, (M, K), dtype)
        B = T.match_buffer(b, (K, N), dtype)
        C = T.match_buffer(c, (M, N), dtype)
        for by in T.thread_binding(M // side, thread="blockIdx.y"):
            for bx in T.thread_binding(N // side, thread="blockIdx.x"):
                As = T.alloc_buffer((side, tile), dtype, scope="shared")
                Bs = T.alloc_buffer((tile, side), dtype, scope="shared")
                for ty in T.thread_binding(tile, thread="threadIdx.y"):
                    for tx in T.thread_binding(tile, thread="threadIdx.x"):
                        acc = T.alloc_buffer((work * work,), dtype, scope="local")
                        for r in T.unroll(work * work):
                            acc[r] = T.Cast(dtype, 0)
                        for ko in range(K // tile):
                            for i in T.unroll(work):
                                As[i * tile + ty, tx] = A[by * side + i * tile + ty, ko * tile + tx]
                                Bs[ty, i * tile + tx] = B[ko * tile + ty, bx * side + i * tile + tx]
                            T.tvm_storage_sync("shared")
                            for ki in range(tile):
                                for i, j in T.grid(work, work):
                                    acc[i * work + j] = (
                                        acc[i * work + j] + As[i * tile + ty, ki] * Bs[ki, j * tile + tx]
                                    )
                            T.tvm_storage_sync("shared")
                        for i, j in T.grid(work, work):
                            C[by * side + i * tile + ty, bx * side + j * tile + tx] = acc[i * work + j]

    return _named(matmul_tiled, name)


def reference_softmax(a: np.ndarray) -> np.ndarray:
    """NumPy row softmax."""
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def tensor_core_gemm(dtype: str = "float16", *, name: str = "tensor_core_gemm") -> PrimFunc:
    """``C = A @ Bt.T`` (32 x 32, float32) by tensor-core fragments, written as Apache TVM's
    tensorized schedules write it: blocks whose ``T.match_buffer`` views are one 16 x 16 tile,
    ``T.tvm_fill_fragment``, ``T.tvm_load_matrix_sync`` (A row-major, Bt column-major: its rows
    are B's columns), ``T.tvm_mma_sync`` over two k tiles and ``T.tvm_store_matrix_sync``, with
    pointers from ``T.tvm_access_ptr``. Each of the 2 x 2 blocks is one warp and one C tile."""
    f32 = "float32"

    @T.prim_func
    def tensor_core_gemm(A: T.Buffer((32, 32), dtype), Bt: T.Buffer((32, 32), dtype), C: T.Buffer((32, 32), f32)):
        for by in T.thread_binding(2, thread="blockIdx.y"):
            for bx in T.thread_binding(2, thread="blockIdx.x"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    As = T.alloc_buffer((32, 32), dtype, scope="shared")
                    Bs = T.alloc_buffer((32, 32), dtype, scope="shared")
                    Af = T.alloc_buffer((32, 32), dtype, scope="wmma.matrix_a")
                    Bf = T.alloc_buffer((32, 32), dtype, scope="wmma.matrix_b")
                    Cf = T.alloc_buffer((32, 32), f32, scope="wmma.accumulator")
                    for i in range(16):
                        As[by * 16 + i, tx] = A[by * 16 + i, tx]
                        Bs[bx * 16 + i, tx] = Bt[bx * 16 + i, tx]
                    T.tvm_storage_sync("shared")
                    with T.block("init"):
                        acc = T.match_buffer(
                            Cf[by * 16 : by * 16 + 16, bx * 16 : bx * 16 + 16], (16, 16), f32, strides=(32, 1),
                            scope="wmma.accumulator",
                        )  # fmt: skip
                        acc_index = acc.elem_offset // 512 * 2 + acc.elem_offset % 32 // 16
                        T.tvm_fill_fragment(acc.data, 16, 16, 16, acc_index, T.float32(0))
                    for k in range(2):
                        with T.block("load_a"):
                            src = T.match_buffer(
                                As[by * 16 : by * 16 + 16, k * 16 : k * 16 + 16], (16, 16), dtype, strides=(32, 1),
                                scope="shared",
                            )  # fmt: skip
                            dst = T.match_buffer(
                                Af[by * 16 : by * 16 + 16, k * 16 : k * 16 + 16], (16, 16), dtype, strides=(32, 1),
                                scope="wmma.matrix_a",
                            )  # fmt: skip
                            T.tvm_load_matrix_sync(
                                dst.data, 16, 16, 16, dst.elem_offset // 512 * 2 + dst.elem_offset % 32 // 16,
                                T.tvm_access_ptr(T.type_annotation(dtype), src.data, src.elem_offset, 256, 1),
                                src.strides[0], "row_major",
                            )  # fmt: skip
                        with T.block("load_b"):
                            src = T.match_buffer(
                                Bs[bx * 16 : bx * 16 + 16, k * 16 : k * 16 + 16], (16, 16), dtype, strides=(32, 1),
                                scope="shared",
                            )  # fmt: skip
                            dst = T.match_buffer(
                                Bf[k * 16 : k * 16 + 16, bx * 16 : bx * 16 + 16], (16, 16), dtype, strides=(32, 1),
                                scope="wmma.matrix_b",
                            )  # fmt: skip
                            T.tvm_load_matrix_sync(
                                dst.data, 16, 16, 16, dst.elem_offset // 512 * 2 + dst.elem_offset % 32 // 16,
                                T.tvm_access_ptr(T.type_annotation(dtype), src.data, src.elem_offset, 256, 1),
                                src.strides[0], "col_major",
                            )  # fmt: skip
                        with T.block("mma"):
                            a = T.match_buffer(
                                Af[by * 16 : by * 16 + 16, k * 16 : k * 16 + 16], (16, 16), dtype, strides=(32, 1),
                                scope="wmma.matrix_a",
                            )  # fmt: skip
                            b = T.match_buffer(
                                Bf[k * 16 : k * 16 + 16, bx * 16 : bx * 16 + 16], (16, 16), dtype, strides=(32, 1),
                                scope="wmma.matrix_b",
                            )  # fmt: skip
                            c = T.match_buffer(
                                Cf[by * 16 : by * 16 + 16, bx * 16 : bx * 16 + 16], (16, 16), f32, strides=(32, 1),
                                scope="wmma.accumulator",
                            )  # fmt: skip
                            T.tvm_mma_sync(
                                c.data, c.elem_offset // 512 * 2 + c.elem_offset % 32 // 16,
                                a.data, a.elem_offset // 512 * 2 + a.elem_offset % 32 // 16,
                                b.data, b.elem_offset // 512 * 2 + b.elem_offset % 32 // 16,
                                c.data, c.elem_offset // 512 * 2 + c.elem_offset % 32 // 16,
                            )  # fmt: skip
                    with T.block("store"):
                        acc = T.match_buffer(
                            Cf[by * 16 : by * 16 + 16, bx * 16 : bx * 16 + 16], (16, 16), f32, strides=(32, 1),
                            scope="wmma.accumulator",
                        )  # fmt: skip
                        out = T.match_buffer(
                            C[by * 16 : by * 16 + 16, bx * 16 : bx * 16 + 16], (16, 16), f32, strides=(32, 1)
                        )  # fmt: skip
                        T.tvm_store_matrix_sync(
                            acc.data, 16, 16, 16, acc.elem_offset // 512 * 2 + acc.elem_offset % 32 // 16,
                            T.tvm_access_ptr(T.type_annotation(f32), out.data, out.elem_offset, 256, 2),
                            out.strides[0], "row_major",
                        )  # fmt: skip

    return _named(tensor_core_gemm, name)


def tensor_core_tile(
    m: int = 16, n: int = 16, k: int = 16, acc: str = "float32", *, dtype: str = "float16", name: str = "tile_gemm"
) -> PrimFunc:
    """One warp: ``C`` (m x n, ``acc``) = ``A`` (m x k, ``dtype``) @ ``Bt.T`` + 0.5 (0 for an
    integer ``acc``), with ``Bt`` (n x k) loaded column-major as B, through one fragment of each
    role (tile shape m, n, k)."""

    @T.prim_func
    def tile_gemm(A: T.Buffer((m, k), dtype), Bt: T.Buffer((n, k), dtype), C: T.Buffer((m, n), acc)):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            Af = T.alloc_buffer((m, k), dtype, scope="wmma.matrix_a")
            Bf = T.alloc_buffer((k, n), dtype, scope="wmma.matrix_b")
            Cf = T.alloc_buffer((m, n), acc, scope="wmma.accumulator")
            T.tvm_fill_fragment(Cf.data, m, n, k, 0, T.Cast(acc, 0.5))
            T.tvm_load_matrix_sync(Af.data, m, n, k, 0, A.access_ptr("r"), k, "row_major")
            T.tvm_load_matrix_sync(Bf.data, m, n, k, 0, Bt.access_ptr("r"), k, "col_major")
            T.tvm_mma_sync(Cf.data, 0, Af.data, 0, Bf.data, 0, Cf.data, 0)
            T.tvm_store_matrix_sync(Cf.data, m, n, k, 0, C.access_ptr("w"), n, "row_major")

    return _named(tile_gemm, name)


def transpose_through_shared(rows: int = 128, *, name: str = "transpose") -> PrimFunc:
    """``B = A.T`` for ``A`` of ``rows`` x 128 float32, one block of 128 threads staging all of
    ``A`` in one shared buffer (``rows * 512`` bytes: 64 KiB for 128 rows, past cuda's 48 KiB of
    static shared memory)."""

    @T.prim_func
    def transpose(A: T.Buffer((rows, 128), "float32"), B: T.Buffer((128, rows), "float32")):
        for bx in T.thread_binding(1, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                S = T.alloc_buffer((rows, 128), "float32", scope="shared")
                for i in range(rows):
                    S[i, tx] = A[i, tx]
                T.tvm_storage_sync("shared")
                for i in range(rows):
                    B[tx, i] = S[i, tx]

    return _named(transpose, name)


def float8_arithmetic(
    dtype: str = "float8_e4m3fn", n: int = 4096, block: int = 64, *, name: str = "float8"
) -> PrimFunc:
    """``B = A`` rounded to ``dtype`` (a float8 format), ``C`` = B's values as float32, ``D = B * B +
    0.5`` computed in ``dtype`` (each operation rounded, as ml_dtypes computes it)."""

    @T.prim_func
    def float8(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), dtype), C: T.Buffer((n,), "float32"),
               D: T.Buffer((n,), dtype)):  # fmt: skip
        for bx in T.thread_binding(n // block, thread="blockIdx.x"):
            for tx in T.thread_binding(block, thread="threadIdx.x"):
                i = bx * block + tx
                B[i] = T.Cast(dtype, A[i])
                C[i] = T.Cast("float32", B[i])
                D[i] = B[i] * B[i] + T.Cast(dtype, 0.5)

    return _named(float8, name)
