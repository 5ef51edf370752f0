"""``T.cuda``: CUDA warp intrinsics and tensor-core building blocks in TVMScript.

Each function returns a ``tvm.tir.Call`` whose op is ``"cuda.<name>"``; the CUDA code generator
prints it as the matching ``__*_sync`` builtin. Argument order in the Call is the order of the
Python signature (value first, then lane/offset, width, mask).

.. code-block:: python

    v = T.cuda.shfl_down(v, 16)          # __shfl_down_sync(0xffffffff, v, 16, 32)
    s = T.cuda.warp_sum(v)               # butterfly reduction over the 32 lanes

Tensor cores (sm_80+, emitted as inline PTX; see :mod:`tvm_backend_cuda.kernels` for a whole
GEMM). Memory operands are *buffer elements*: ``frag[4]`` or ``As[s, r, c]`` stands for the
address of that element (the instruction reads or writes from there on), so a kernel keeps its
fragments in ``local`` buffers and indexes them like any array:

.. code-block:: python

    a = T.alloc_buffer((4,), "uint32", scope="local")     # A fragment: 4 x f16x2 per thread
    b = T.alloc_buffer((2,), "uint32", scope="local")     # B fragment: 2 x f16x2 per thread
    acc = T.alloc_buffer((4,), "float32", scope="local")  # C/D fragment: 4 x f32 per thread
    T.cuda.cp_async_16(As[r, c], A[i, j])                 # 16 bytes global -> shared
    T.cuda.cp_async_commit()
    T.cuda.cp_async_wait(0)
    T.cuda.ldmatrix_x4(a[0], As[lane % 16, (lane // 16) * 8])
    T.cuda.ldmatrix_x2_trans(b[0], Bs[lane % 16, 0])
    T.cuda.mma_m16n8k16_f16f32(acc[0], a[0], b[0], acc[0])

Hopper's warpgroup products (sm_90a; :mod:`tvm_backend_cuda.wgmma_gemm` for a whole GEMM) read
both operands from shared memory and run asynchronously, one group at a time:

.. code-block:: python

    T.cuda.cp_async_wait(0)
    T.cuda.fence_proxy_async()               # copies visible to the tensor cores
    T.tvm_storage_sync("shared")
    T.cuda.wgmma_fence(acc[0], 64)           # acc: 64 float32 per thread (n = 128)
    # A 64x16 K-major (LBO 128, SBO 256 bytes), B 16x128 N-major (LBO 2048, SBO 128), n = 128
    T.cuda.wgmma_m64k16_f16f32(acc[0], As[0], 128, 256, Bs[0], 2048, 128, 128, True)
    T.cuda.wgmma_commit()
    T.cuda.wgmma_wait(0, acc[0], 64)         # acc holds D from here on
"""

from __future__ import annotations

from typing import Any

from tvm.tir import dtype as _dt
from tvm.tir.expr import BufferLoad, Call, FloatImm, IntImm, PrimExpr
from tvm.tir.op import register_convergent

from . import mma as _mma

FULL_MASK = 0xFFFFFFFF

register_convergent(
    *(f"cuda.{n}" for n in ("shfl_sync", "shfl_up", "shfl_down", "shfl_xor", "ballot", "activemask", "syncwarp")),
    *(f"cuda.warp_{k}" for k in ("sum", "max", "min")),
)

__all__ = [
    "FULL_MASK",
    "activemask",
    "ballot",
    "lane_id",
    "shfl_down",
    "shfl_sync",
    "shfl_up",
    "shfl_xor",
    "syncwarp",
    "warp_max",
    "warp_min",
    "warp_sum",
    "ldmatrix",
    "ldmatrix_x1",
    "ldmatrix_x2",
    "ldmatrix_x4",
    "ldmatrix_x1_trans",
    "ldmatrix_x2_trans",
    "ldmatrix_x4_trans",
    "mma_m16n8k16_f16f32",
    "mma_m16n8k16_bf16f32",
    "cp_async",
    "cp_async_16",
    "cp_async_commit",
    "cp_async_wait",
    "fence_proxy_async",
    "wgmma_fence",
    "wgmma_m64k16_f16f32",
    "wgmma_commit",
    "wgmma_wait",
    "IntrinsicError",
    "check_intrinsic",
    "MIN_SM",
]


def _expr(x: Any, dtype: str = "int32") -> PrimExpr:
    if isinstance(x, PrimExpr):
        return x
    if isinstance(x, bool):
        return IntImm("bool", int(x))
    if isinstance(x, int):
        return IntImm(dtype, x)
    if isinstance(x, float):
        return FloatImm("float32", x)
    raise TypeError(f"T.cuda: expected an expression or a number, got {type(x).__name__}")


def _mask(mask: Any) -> PrimExpr:
    return _expr(mask, "uint32")


def _shfl(name: str, value: Any, lane: Any, width: Any, mask: Any) -> Call:
    v = _expr(value, "float32")
    return Call(v.dtype, f"cuda.{name}", (v, _expr(lane), _expr(width), _mask(mask)))


def shfl_down(value: Any, offset: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """``value`` of the lane ``offset`` above this one (``__shfl_down_sync``)."""
    return _shfl("shfl_down", value, offset, width, mask)


def shfl_up(value: Any, offset: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """``value`` of the lane ``offset`` below this one (``__shfl_up_sync``)."""
    return _shfl("shfl_up", value, offset, width, mask)


def shfl_xor(value: Any, lane_mask: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """``value`` of lane ``lane_id ^ lane_mask`` (``__shfl_xor_sync``)."""
    return _shfl("shfl_xor", value, lane_mask, width, mask)


def shfl_sync(value: Any, src_lane: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """``value`` of lane ``src_lane`` (``__shfl_sync``)."""
    return _shfl("shfl_sync", value, src_lane, width, mask)


def ballot(predicate: Any, mask: Any = FULL_MASK) -> Call:
    """Bit i set when lane i's ``predicate`` is true (``__ballot_sync``), as uint32."""
    return Call("uint32", "cuda.ballot", (_expr(predicate, "bool"), _mask(mask)))


def activemask() -> Call:
    """Mask of the lanes currently executing (``__activemask``), as uint32."""
    return Call("uint32", "cuda.activemask", ())


def lane_id() -> Call:
    """This thread's lane in its warp (``threadIdx.x % 32`` for 1-D blocks), as int32."""
    return Call("int32", "cuda.lane_id", ())


def syncwarp(mask: Any = FULL_MASK) -> Call:
    """Barrier for the lanes in ``mask`` (``__syncwarp``)."""
    return Call("void", "cuda.syncwarp", (_mask(mask),))


def _warp_reduce(name: str, value: Any, width: Any, mask: Any) -> Call:
    v = _expr(value, "float32")
    return Call(v.dtype, f"cuda.{name}", (v, _expr(width), _mask(mask)))


def warp_sum(value: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """Sum of ``value`` over ``width`` lanes (xor butterfly); every lane gets the result."""
    return _warp_reduce("warp_sum", value, width, mask)


def warp_max(value: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """Maximum of ``value`` over ``width`` lanes; every lane gets the result."""
    return _warp_reduce("warp_max", value, width, mask)


def warp_min(value: Any, width: Any = 32, mask: Any = FULL_MASK) -> Call:
    """Minimum of ``value`` over ``width`` lanes; every lane gets the result."""
    return _warp_reduce("warp_min", value, width, mask)


# =========================================================================== tensor cores
#
# Every memory operand is a BufferLoad standing for the address of that element. The checks
# below run when the TVMScript is parsed (T.cuda.* is called) and again in the code generator
# (for TIR built by hand and after lowering), through :func:`check_intrinsic`.


class IntrinsicError(ValueError):
    """Misuse of a ``T.cuda`` tensor-core intrinsic (wrong operand kind, dtype, scope, size or
    target architecture); the message names the intrinsic."""


#: Minimum SM version (major*10+minor) of each intrinsic (PTX ISA: ldmatrix needs sm_75,
#: mma.m16n8k16 with f16/bf16 inputs and cp.async need sm_80; the wgmma family needs the
#: architecture-specific sm_90a, which the code generator checks by name).
MIN_SM = {
    "cuda.ldmatrix": 75,
    "cuda.mma_m16n8k16_f16f32": 80,
    "cuda.mma_m16n8k16_bf16f32": 80,
    "cuda.cp_async": 80,
    "cuda.cp_async_commit": 80,
    "cuda.cp_async_wait": 80,
    "cuda.fence_proxy_async": 90,
    "cuda.wgmma_fence": 90,
    "cuda.wgmma_m64k16_f16f32": 90,
    "cuda.wgmma_commit": 90,
    "cuda.wgmma_wait": 90,
    "cuda.griddepcontrol_wait": 90,
    "cuda.griddepcontrol_launch_dependents": 90,
}

_B16 = ("float16", "bfloat16", "int16", "uint16")


def _public(op: str, args: tuple = ()) -> str:
    """The user-facing spelling of an intrinsic Call (``T.cuda.ldmatrix_x4_trans`` ...)."""
    name = op.split(".", 1)[1]
    if name == "mma":
        return "T.ptx_legacy.mma"
    if name.startswith("griddepcontrol_"):
        return "T.ptx.griddepcontrol." + name.split("_", 1)[1]
    if name == "ldmatrix" and len(args) == 4 and isinstance(args[2], IntImm) and isinstance(args[3], IntImm):
        return f"T.cuda.ldmatrix_x{args[2].value}" + ("_trans" if args[3].value else "")
    return f"T.cuda.{name}"


def _const_size(buf: Any) -> int | None:
    total = 1
    for d in buf.shape:
        if not isinstance(d, IntImm):
            return None
        total *= int(d.value)
    return total


def _const_flat_index(buf: Any, indices: tuple) -> int | None:
    if not all(isinstance(i, IntImm) for i in indices):
        return None
    vals = [int(i.value) for i in indices]
    if len(vals) == 1 and not buf.strides:
        flat = vals[0]
    elif buf.strides:
        if not all(isinstance(s, IntImm) for s in buf.strides):
            return None
        flat = sum(v * int(s.value) for v, s in zip(vals, buf.strides))
    else:
        if not all(isinstance(s, IntImm) for s in buf.shape):
            return None
        flat = 0
        for v, s in zip(vals, buf.shape):
            flat = flat * int(s.value) + v
    off = buf.elem_offset
    if not isinstance(off, IntImm):
        return None
    return flat + int(off.value)


def _operand(intrin: str, role: str, x: Any, dtypes: tuple, scopes: tuple, count: int | None = None) -> None:
    """Check one memory operand: a BufferLoad of the right dtype/scope with ``count`` elements."""
    if not isinstance(x, BufferLoad):
        raise IntrinsicError(
            f"{intrin}: operand '{role}' must be a buffer element such as frag[0] or smem[r, c] "
            f"(its address is used), got {type(x).__name__} {x!r:.80}"
        )
    buf = x.buffer
    if buf.dtype not in dtypes:
        raise IntrinsicError(
            f"{intrin}: operand '{role}' must be a {' or '.join(dtypes)} buffer, got '{buf.name}' of dtype {buf.dtype}"
        )
    scope = "shared" if buf.scope == "shared.dyn" else buf.scope
    if scope not in scopes:
        warp = " (Apache TVM's 'warp' memory is shared memory here)" if scope == "shared" else ""
        raise IntrinsicError(
            f"{intrin}: operand '{role}' must be in {' or '.join(repr(s) for s in scopes)} "
            f"memory, got '{buf.name}' in scope '{buf.scope}'{warp}"
        )
    if count is not None:
        size = _const_size(buf)
        if size is not None and size < count:
            raise IntrinsicError(
                f"{intrin}: operand '{role}' needs {count} {buf.dtype} elements per thread, "
                f"'{buf.name}' holds only {size}"
            )
        start = _const_flat_index(buf, tuple(x.indices))
        if size is not None and start is not None and start + count > size:
            raise IntrinsicError(
                f"{intrin}: operand '{role}' needs {count} elements from index {start}, "
                f"past the end of '{buf.name}' ({size} elements)"
            )


def check_intrinsic(call: Call, arch_sm: int | None = None) -> None:
    """Validate a tensor-core intrinsic Call (operands, and the architecture when ``arch_sm``
    (e.g. 80 for sm_80) is given); raise :class:`IntrinsicError` naming the intrinsic."""
    op, args = call.op, tuple(call.args)
    intrin = _public(op, args)
    need = MIN_SM.get(op)
    if need is not None and arch_sm is not None and arch_sm < need:
        if op in SM90A_OPS:
            raise IntrinsicError(
                f"{intrin} needs sm_90a; the target is sm_{arch_sm} (pass Target('cuda -arch=sm_90a'))"
            )
        raise IntrinsicError(
            f"{intrin} needs sm_{need} or newer; the target is sm_{arch_sm} "
            f"(pass a newer arch, e.g. Target('cuda -arch=sm_{max(need, 80)}'))"
        )
    if op == "cuda.ldmatrix":
        if len(args) != 4 or not all(isinstance(a, IntImm) for a in args[2:]):
            raise IntrinsicError(f"{intrin}: expected (dst, src, num, trans) with constant num/trans")
        num = int(args[2].value)
        if num not in (1, 2, 4):
            raise IntrinsicError(f"T.cuda.ldmatrix: num must be 1, 2 or 4 matrices, got {num}")
        per_register = 2 if isinstance(args[0], BufferLoad) and args[0].buffer.dtype in _B16 else 1
        # a fragment in registers; Apache TVM's "warp" memory (shared here) takes it too
        _operand(intrin, "dst", args[0], ("uint32", *_B16), ("local", "shared"), num * per_register)
        _operand(intrin, "src", args[1], _B16, ("shared",))
        try:
            _mma.check_register_aligned(f"{intrin}: operand 'dst'", args[0])
        except _mma.MmaError as err:
            raise IntrinsicError(str(err)) from None
    elif op == "cuda.mma":
        try:
            _mma.check(call, arch_sm, lambda role, x, dts, n: _operand(intrin, role, x, dts, ("local",), n))
        except _mma.MmaError as err:
            raise IntrinsicError(str(err)) from None
    elif op in ("cuda.mma_m16n8k16_f16f32", "cuda.mma_m16n8k16_bf16f32"):
        if len(args) != 4:
            raise IntrinsicError(f"{intrin}: expected (d, a, b, c), got {len(args)} operands")
        for role, x, dts, n in (
            ("d", args[0], ("float32",), 4),
            ("a", args[1], ("uint32",), 4),
            ("b", args[2], ("uint32",), 2),
            ("c", args[3], ("float32",), 4),
        ):
            _operand(intrin, role, x, dts, ("local",), n)
    elif op == "cuda.cp_async":
        if len(args) != 3 or not isinstance(args[2], IntImm):
            raise IntrinsicError(f"{intrin}: expected (dst, src, nbytes) with a constant nbytes")
        nbytes = int(args[2].value)
        if nbytes not in (4, 8, 16):
            raise IntrinsicError(f"T.cuda.cp_async: nbytes must be 4, 8 or 16, got {nbytes}")
        for role, x, scope in (("dst", args[0], "shared"), ("src", args[1], "global")):
            if not isinstance(x, BufferLoad):
                _operand(intrin, role, x, (), (scope,))
            bits = _dt.bits(x.buffer.dtype)
            if bits < 8 or nbytes % (bits // 8):
                raise IntrinsicError(
                    f"{intrin}: operand '{role}' ('{x.buffer.name}', {x.buffer.dtype}) "
                    f"cannot be copied in whole elements of {nbytes} bytes"
                )
            _operand(intrin, role, x, (x.buffer.dtype,), (scope,))
    elif op == "cuda.cp_async_wait":
        if len(args) != 1 or not isinstance(args[0], IntImm) or int(args[0].value) < 0:
            raise IntrinsicError(f"{intrin}: the number of pending groups must be a constant >= 0")
    elif op in WGMMA_OPS:
        _check_wgmma(intrin, op, args)


#: The warpgroup intrinsics (wgmma), each checked by :func:`_check_wgmma`.
WGMMA_OPS = ("cuda.wgmma_m64k16_f16f32", "cuda.wgmma_fence", "cuda.wgmma_wait")
#: The warpgroup intrinsics, all of them sm_90a's own.
SM90A_OPS = (*WGMMA_OPS, "cuda.wgmma_commit")
#: The N extents of ``wgmma.m64nNk16`` with float16 inputs (PTX ISA: multiples of 8 up to 256).
WGMMA_N = tuple(range(8, 257, 8))


def _check_wgmma(intrin: str, op: str, args: tuple) -> None:
    """Operands of the wgmma intrinsics: accumulators, tiles, the byte strides and N."""
    if op == "cuda.wgmma_m64k16_f16f32":
        if len(args) != 9 or not all(
            isinstance(a, IntImm) for a in (args[2], args[3], args[5], args[6], args[7], args[8])
        ):
            raise IntrinsicError(
                f"{intrin}: expected (d, a, a_lbo, a_sbo, b, b_lbo, b_sbo, n, b_mn_major) with constant "
                "strides, n and b_mn_major"
            )
        n = int(args[7].value)
        if n not in WGMMA_N:
            raise IntrinsicError(f"{intrin}: n must be a multiple of 8 from 8 to 256, got {n}")
        _operand(intrin, "d", args[0], ("float32",), ("local",), n // 2)
        for role, x in (("a", args[1]), ("b", args[4])):
            _operand(intrin, role, x, ("float16",), ("shared",))
        for what, v in (("a_lbo", args[2]), ("a_sbo", args[3]), ("b_lbo", args[5]), ("b_sbo", args[6])):
            bytes_ = int(v.value)
            if bytes_ <= 0 or bytes_ % 16 or bytes_ >= 1 << 18:
                raise IntrinsicError(
                    f"{intrin}: {what} must be a positive multiple of 16 bytes below 256 KiB, got {bytes_}"
                )
    else:  # wgmma_fence (d, count) and wgmma_wait (n, d, count)
        first = 1 if op == "cuda.wgmma_wait" else 0
        if len(args) != first + 2 or not all(isinstance(a, IntImm) for a in (*args[:first], args[first + 1])):
            shape = "(n, d, count)" if first else "(d, count)"
            raise IntrinsicError(f"{intrin}: expected {shape} with constant counts")
        if first and int(args[0].value) < 0:
            raise IntrinsicError(f"{intrin}: the number of pending groups must be a constant >= 0")
        count = int(args[first + 1].value)
        if not 1 <= count <= max(WGMMA_N) // 2:
            raise IntrinsicError(f"{intrin}: count must be the accumulators per thread, 1 to 128, got {count}")
        _operand(intrin, "d", args[first], ("float32",), ("local",), count)


def _checked(call: Call) -> Call:
    check_intrinsic(call)
    return call


def _const_int(intrin: str, what: str, v: Any) -> IntImm:
    if isinstance(v, IntImm):
        return IntImm("int32", int(v.value))
    if isinstance(v, int) and not isinstance(v, bool):
        return IntImm("int32", v)
    raise IntrinsicError(f"{intrin}: {what} must be a Python int constant, got {v!r:.60}")


def ldmatrix(dst: Any, src: Any, num: int = 4, trans: bool = False) -> Call:
    """Warp-wide load of ``num`` (1, 2, 4) 8x8 matrices of 16-bit elements from shared memory
    (PTX ``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``; sm_75+).

    ``src`` (a float16/bfloat16/[u]int16 ``shared`` buffer element) is *this lane's row address*:
    lanes ``8*j .. 8*j+7`` give the addresses of rows 0..7 of matrix ``j`` (each row is 8
    contiguous elements, 16 bytes, 16-byte aligned); for ``num < 4`` only lanes ``0 .. 8*num-1``
    are read, but every lane must pass an address. ``dst`` (a ``uint32`` ``local`` element)
    receives ``num`` registers: ``dst[j]`` of lane ``l`` holds two 16-bit elements of matrix
    ``j`` (low half first): row ``l // 4``, columns ``2*(l % 4)`` and ``2*(l % 4) + 1``; with
    ``trans`` the matrix is transposed on the way: rows ``2*(l % 4)`` and ``2*(l % 4) + 1`` of
    column ``l // 4``. All 32 lanes must execute it together (no divergence).
    """
    intrin = f"T.cuda.ldmatrix_x{num}" + ("_trans" if trans else "")
    n = _const_int(intrin, "num", num)
    t = IntImm("int32", 1 if (trans.value if isinstance(trans, IntImm) else bool(trans)) else 0)
    return _checked(Call("void", "cuda.ldmatrix", (dst, src, n, t)))


def ldmatrix_x1(dst: Any, src: Any) -> Call:
    """One 8x8 matrix: ``dst[0]`` (see :func:`ldmatrix`); lanes 0-7 give the row addresses."""
    return ldmatrix(dst, src, 1, False)


def ldmatrix_x2(dst: Any, src: Any) -> Call:
    """Two 8x8 matrices into ``dst[0..1]`` (see :func:`ldmatrix`); lanes 0-15 give row addresses.
    For an mma B operand stored n-major (``Bs[n, k]``) this is the B fragment."""
    return ldmatrix(dst, src, 2, False)


def ldmatrix_x4(dst: Any, src: Any) -> Call:
    """Four 8x8 matrices into ``dst[0..3]`` (see :func:`ldmatrix`). For the A operand of
    :func:`mma_m16n8k16_f16f32` (16x16 tile ``As[row, k]``, row-major) lane ``l`` passes
    ``&As[l % 16, (l // 16) * 8]``: matrices 0..3 are (rows 0-7, k 0-7), (rows 8-15, k 0-7),
    (rows 0-7, k 8-15), (rows 8-15, k 8-15) = fragment registers a0..a3."""
    return ldmatrix(dst, src, 4, False)


def ldmatrix_x1_trans(dst: Any, src: Any) -> Call:
    """One transposed 8x8 matrix (see :func:`ldmatrix`)."""
    return ldmatrix(dst, src, 1, True)


def ldmatrix_x2_trans(dst: Any, src: Any) -> Call:
    """Two transposed 8x8 matrices: the B fragment of one m16n8k16 mma from a k-major tile
    ``Bs[k, n]`` (row-major B): lane ``l`` (0..15) passes ``&Bs[l % 16, n0]``; ``dst[0]`` holds
    k rows 0-7, ``dst[1]`` k rows 8-15 (see :func:`ldmatrix`)."""
    return ldmatrix(dst, src, 2, True)


def ldmatrix_x4_trans(dst: Any, src: Any) -> Call:
    """Four transposed 8x8 matrices: the B fragments of two neighbouring n8 tiles from a k-major
    tile ``Bs[k, n]``: lane ``l`` passes ``&Bs[l % 16, n0 + (l // 16) * 8]``; ``dst[0..1]`` is the
    B fragment of columns ``n0..n0+7``, ``dst[2..3]`` that of ``n0+8..n0+15``."""
    return ldmatrix(dst, src, 4, True)


def mma_m16n8k16_f16f32(d: Any, a: Any, b: Any, c: Any = None) -> Call:
    """Warp-wide ``D[16x8] = A[16x16] @ B[16x8] + C[16x8]``; A, B float16, C, D float32
    (PTX ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``; sm_80+).

    Per lane ``l``, with ``g = l // 4`` and ``t = l % 4`` (PTX ISA "Matrix Fragments for
    mma.m16n8k16 with floating point type"):

    * ``a``: 4 ``uint32`` (``local``), each two float16 (low half = lower column):
      ``a[0]`` = A[g, 2t:2t+2], ``a[1]`` = A[g+8, 2t:2t+2], ``a[2]`` = A[g, 2t+8:2t+10],
      ``a[3]`` = A[g+8, 2t+8:2t+10];
    * ``b``: 2 ``uint32``: ``b[0]`` = B[2t:2t+2, g], ``b[1]`` = B[2t+8:2t+10, g] (k pairs);
    * ``c``/``d``: 4 ``float32``: ``c[0]``, ``c[1]`` = C[g, 2t], C[g, 2t+1];
      ``c[2]``, ``c[3]`` = C[g+8, 2t], C[g+8, 2t+1].

    ``c`` defaults to ``d`` (accumulate in place). All 32 lanes must execute it together.
    """
    return _checked(Call("void", "cuda.mma_m16n8k16_f16f32", (d, a, b, d if c is None else c)))


def mma_m16n8k16_bf16f32(d: Any, a: Any, b: Any, c: Any = None) -> Call:
    """As :func:`mma_m16n8k16_f16f32` with bfloat16 A and B (``...f32.bf16.bf16.f32``; sm_80+)."""
    return _checked(Call("void", "cuda.mma_m16n8k16_bf16f32", (d, a, b, d if c is None else c)))


def cp_async(dst: Any, src: Any, nbytes: int = 16) -> Call:
    """Asynchronous copy of ``nbytes`` (4, 8 or 16) from global memory (``src`` element) to
    shared memory (``dst`` element), both aligned to ``nbytes`` (PTX ``cp.async.cg`` for 16
    bytes (L2 only), ``cp.async.ca`` for 4/8; sm_80+). The copy is only guaranteed done after
    :func:`cp_async_commit` and a :func:`cp_async_wait` that covers its group, followed by a
    barrier (``T.tvm_storage_sync("shared")``) before other threads read it."""
    return _checked(Call("void", "cuda.cp_async", (dst, src, _const_int("T.cuda.cp_async", "nbytes", nbytes))))


def cp_async_16(dst: Any, src: Any) -> Call:
    """16-byte :func:`cp_async` (8 float16): ``dst`` shared, ``src`` global, both 16-byte aligned."""
    return cp_async(dst, src, 16)


def cp_async_commit() -> Call:
    """Close the group of this thread's cp.async copies issued since the last commit
    (``cp.async.commit_group``; sm_80+). Committing with no copies makes an empty group."""
    return Call("void", "cuda.cp_async_commit", ())


def fence_proxy_async() -> Call:
    """Order this thread's earlier shared-memory writes (plain stores, and cp.async copies once
    waited for) before later reads by the asynchronous units, such as :func:`wgmma_m64k16_f16f32`
    (``fence.proxy.async.shared::cta``; sm_90+). Each writing thread runs it, then a barrier."""
    return Call("void", "cuda.fence_proxy_async", ())


def wgmma_fence(d: Any, count: int) -> Call:
    """Make the ``count`` accumulators from ``d`` (``float32``, ``local``), and shared memory, as
    this thread wrote them, visible to the next :func:`wgmma_m64k16_f16f32`
    (``wgmma.fence.sync.aligned``; sm_90a). Needed before the first wgmma and after any other
    instruction touched the accumulators."""
    return _checked(Call("void", "cuda.wgmma_fence", (d, _const_int("T.cuda.wgmma_fence", "count", count))))


def wgmma_m64k16_f16f32(
    d: Any, a: Any, a_lbo: int, a_sbo: int, b: Any, b_lbo: int, b_sbo: int, n: int, b_mn_major: bool = True
) -> Call:
    """Warpgroup-wide ``D[64 x n] += A[64 x 16] @ B[16 x n]``, A and B float16 in shared memory,
    D float32 in registers (PTX ``wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16``, sm_90a).
    Asynchronous: it only starts the product; :func:`wgmma_commit` closes a group of them and
    :func:`wgmma_wait` waits for it, before anything reads ``d`` or overwrites the tiles.

    The 128 threads of a warpgroup (4 consecutive warps, the first a multiple of 4) execute it
    together. A and B are laid out in 8x8 *core matrices* of 128 contiguous bytes (no swizzle):

    * ``a`` (K-major): element ``(m, k)`` at ``a + (m % 8) * 8 + k % 8`` plus ``m // 8`` times
      ``a_sbo`` and ``k // 8`` times ``a_lbo`` bytes;
    * ``b`` with ``b_mn_major`` (row-major B, N contiguous): element ``(k, n)`` at
      ``b + (k % 8) * 8 + n % 8`` plus ``n // 8`` times ``b_sbo`` and ``k // 8`` times ``b_lbo``
      bytes; without it (K-major): ``(k, n)`` at ``b + (n % 8) * 8 + k % 8`` plus ``n // 8``
      times ``b_sbo`` and ``k // 8`` times ``b_lbo`` bytes;
    * ``d``: ``n // 2`` float32 per thread: warp ``w`` of the group holds rows ``16w .. 16w+15``;
      with ``g = lane // 4``, ``t = lane % 4``: ``d[4j + i]`` is D[16w + g + 8 (i // 2),
      8j + 2t + i % 2].

    ``a`` and ``b`` must be 16-byte aligned; strides are bytes (multiples of 16).
    """
    intrin = "T.cuda.wgmma_m64k16_f16f32"
    consts = [_const_int(intrin, what, v) for what, v in (("a_lbo", a_lbo), ("a_sbo", a_sbo))]
    consts += [_const_int(intrin, what, v) for what, v in (("b_lbo", b_lbo), ("b_sbo", b_sbo), ("n", n))]
    major = IntImm("int32", 1 if (b_mn_major.value if isinstance(b_mn_major, IntImm) else bool(b_mn_major)) else 0)
    args = (d, a, consts[0], consts[1], b, consts[2], consts[3], consts[4], major)
    return _checked(Call("void", "cuda.wgmma_m64k16_f16f32", args))


def wgmma_commit() -> Call:
    """Close the group of this warpgroup's wgmma products issued since the last commit
    (``wgmma.commit_group.sync.aligned``; sm_90a)."""
    return Call("void", "cuda.wgmma_commit", ())


def wgmma_wait(n: int, d: Any, count: int) -> Call:
    """Wait until at most ``n`` (a constant) committed wgmma groups are pending
    (``wgmma.wait_group.sync.aligned n``; sm_90a); the ``count`` accumulators from ``d`` hold
    the finished groups' results from then on."""
    return _checked(
        Call(
            "void",
            "cuda.wgmma_wait",
            (_const_int("T.cuda.wgmma_wait", "n", n), d, _const_int("T.cuda.wgmma_wait", "count", count)),
        )
    )


def cp_async_wait(n: int = 0) -> Call:
    """Wait until at most ``n`` (a constant) of this thread's committed cp.async groups are still
    pending (``cp.async.wait_group n``; sm_80+); ``n = 0`` waits for all."""
    return _checked(Call("void", "cuda.cp_async_wait", (_const_int("T.cuda.cp_async_wait", "n", n),)))
