"""flatten_buffers: multi-dimensional buffer accesses -> 1-D accesses.

Every buffer (parameters and allocations) is replaced by a 1-D buffer with the same ``data`` Var,
dtype and scope. Index ``(i0, ..., ik)`` becomes ``elem_offset + sum(i_d * stride_d)`` where the
strides are the buffer's explicit strides or the row-major strides of its shape. The flattened
shape is the number of elements (for strided buffers: the span the strides reach).
``buffer_map`` keeps the original multi-dimensional buffers (for argument checking).

A buffer whose constant shape (or constant strides) reaches an element past ``int32`` (a
``T.Buffer((65536, 65540), "uint8")``: 2**32 + 262144 elements) has its flat index computed in
``int64``: each index is cast to ``int64`` before it is multiplied by its stride, so that
``r * 65540 + j`` does not wrap in 32 bits (see :func:`needs_int64_indices`). A target without
``int64`` refuses such a buffer before flattening
(:func:`~tvm.tir.transform.runtime_bounds.check_indices_at_run_time`). Symbolic shapes keep their
dtype: the host checks at launch that their element count (or the element their strides reach)
fits their indices; a shape with a 64-bit size (``(n: int64, 50000)``) has 64-bit strides, so its
flat index is computed in ``int64`` whatever the dtype of the indices.
"""

from __future__ import annotations

import math
from typing import Optional

from tvm.tir import dtype as _dt
from tvm.tir.analysis import size_upper_bound
from tvm.tir.expr import Buffer, BufferLoad, Cast, IntImm, PrimExpr
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator
from tvm.tir.op import binary
from tvm.tir.stmt import BufferStore

from .simplify import simplify_expr


_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _is_const(x: PrimExpr, v: int) -> bool:
    return isinstance(x, IntImm) and x.value == v


def _folded(dtype: str, value: int) -> IntImm:
    """The constant ``value`` in ``dtype``, or in ``int64`` when ``dtype`` cannot hold it (a
    product of ``int32`` sizes past 2**31 - 1 must not wrap)."""
    if _dt.fits(value, dtype) or _dt.bits(dtype) >= 64:
        return IntImm(dtype, value)
    return IntImm("int64", value)


def _mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if _is_const(a, 1):
        return b
    if _is_const(b, 1):
        return a
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.dtype == b.dtype:
        return _folded(a.dtype, a.value * b.value)
    return binary("mul", a, b)


def _add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if _is_const(a, 0):
        return b
    if _is_const(b, 0):
        return a
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.dtype == b.dtype:
        return _folded(a.dtype, a.value + b.value)
    return binary("add", a, b)


def _constant_strides(buf: Buffer) -> Optional[tuple]:
    """``buf``'s strides as Python ints (explicit, or row-major of its shape); None when its
    shape or strides are not all constant."""
    if not all(isinstance(d, IntImm) for d in buf.shape):
        return None
    strides = buffer_strides(buf)  # row-major ones folded to constants (int64 past int32)
    return tuple(s.value for s in strides) if all(isinstance(s, IntImm) for s in strides) else None


def constant_extent(buf: Buffer) -> Optional[tuple]:
    """``(lowest, highest)`` element index that ``buf``'s constant shape and strides reach
    (its constant ``elem_offset`` included; a symbolic one counts as 0, as the host binds it),
    ``(0, -1)`` for a buffer without elements; None when its shape or strides are symbolic."""
    strides = _constant_strides(buf)
    if strides is None:
        return None
    dims = [d.value for d in buf.shape]
    if any(d <= 0 for d in dims):
        return 0, -1
    off = buf.elem_offset.value if isinstance(buf.elem_offset, IntImm) else 0
    terms = [(d - 1) * s for d, s in zip(dims, strides)]
    return off + sum(t for t in terms if t < 0), off + sum(t for t in terms if t > 0)


def element_count(buf: Buffer) -> Optional[int]:
    """The number of elements of ``buf``'s constant shape (None when it is symbolic)."""
    dims = [d.value if isinstance(d, IntImm) else None for d in buf.shape]
    return None if None in dims else math.prod(dims)


def flat_bytes(buf: Buffer) -> Optional[int]:
    """The bytes flat buffer ``buf`` reaches from its memory's start (its constant extent, the
    offset of a view included); None for another buffer or a symbolic extent."""
    extent = buf.shape[0] if len(buf.shape) == 1 and not buf.strides else None
    return extent.value * _dt.nbytes(buf.dtype) if isinstance(extent, IntImm) else None


def needs_int64_indices(buf: Buffer) -> bool:
    """Whether ``buf``'s constant shape (or strides) reaches an element that ``int32`` cannot
    index while its sizes are narrower than 64 bits: its flat index is then computed in
    ``int64`` (a symbolic shape keeps its dtype, checked at launch)."""
    if buf.ndim < 2 and not buf.strides:
        return False  # a 1-D index is the element index itself, in the dtype the program gave it
    extent = constant_extent(buf)
    if extent is None or (_INT32_MIN <= extent[0] and extent[1] <= _INT32_MAX):
        return False
    sizes = (*buf.shape, *(buf.strides or ()))
    return any(_dt.bits(d.dtype) < 64 for d in sizes)


def _wide(e: PrimExpr) -> PrimExpr:
    """``e`` (an index, possibly a vector) cast to 64-bit integers."""
    if _dt.bits(e.dtype) >= 64:
        return e
    return Cast(_dt.with_lanes("int64", _dt.lanes(e.dtype)), e)


def buffer_strides(buf: Buffer) -> tuple:
    """Explicit strides, or row-major strides computed from the shape (in ``int64`` when a size
    is: ``(n: int64, 50000)`` has more rows than an ``int32`` index times 50000 reaches)."""
    wide = buf.ndim > 1 and any(_dt.bits(d.dtype) == 64 for d in buf.shape)
    if buf.strides:
        strides = tuple(buf.strides)
    else:
        out = []
        acc: PrimExpr = IntImm("int32", 1)
        for s in reversed(buf.shape):
            out.append(acc)
            acc = _mul(acc, s)
        strides = tuple(reversed(out))
    if not wide:
        return strides
    return tuple(IntImm("int64", s.value) if isinstance(s, IntImm) else _wide(s) for s in strides)


def flattened_buffer(buf: Buffer) -> Buffer:
    """The 1-D view of ``buf`` (same data Var, dtype, scope). A local buffer of symbolic size
    takes the size's constant upper bound where it has one (``T.min(n, 64)``: 64), so that it
    fits in a kernel's registers or stack like a constant one."""
    if needs_int64_indices(buf):
        lowest, highest = constant_extent(buf)
        size64 = IntImm("int64", max(highest + 1, 0))
        return Buffer(buf.name, (size64,), buf.dtype, buf.data, (), IntImm("int32", 0), buf.scope, buf.align, buf.span)
    size: PrimExpr = IntImm("int32", 1)
    if buf.strides:
        for s, st in zip(buf.shape, buf.strides):
            size = _add(
                size, _mul(binary("sub", s, 1) if not isinstance(s, IntImm) else IntImm(s.dtype, s.value - 1), st)
            )
    else:
        for s in buf.shape:
            size = _mul(size, s)
    bound = size_upper_bound(size) if buf.scope == "local" and not isinstance(size, IntImm) else None
    if bound is not None and 0 <= bound < 2**31:
        size = IntImm("int32", bound)
    if buf.elem_offset is not None and not _is_const(buf.elem_offset, 0):
        size = simplify_expr(_add(buf.elem_offset, size))  # the offset is in every index (flat_index)
    return Buffer(buf.name, (size,), buf.dtype, buf.data, (), IntImm("int32", 0), buf.scope, buf.align, buf.span)


def flat_index(buf: Buffer, indices: tuple) -> PrimExpr:
    """The 1-D element index of ``buf[indices]`` (in ``int64`` for a buffer whose constant shape
    needs it: :func:`needs_int64_indices`)."""
    idx: PrimExpr = buf.elem_offset if buf.elem_offset is not None else IntImm("int32", 0)
    if needs_int64_indices(buf):
        idx = _wide(idx) if not isinstance(idx, IntImm) else IntImm("int64", idx.value)
        for i, st in zip(indices, _constant_strides(buf)):
            idx = _add(idx, _mul(_wide(i), IntImm("int64", st)))
        return idx
    for i, st in zip(indices, buffer_strides(buf)):
        idx = _add(idx, _mul(i, st))
    return idx


def unravel_index(flat: PrimExpr, shape: tuple) -> tuple:
    """The indices of element ``flat`` (counted row-major) of a compact buffer of ``shape``: the
    inverse of :func:`flat_index` there."""
    parts: list = []
    for extent in reversed(tuple(shape)[1:]):
        parts.insert(0, binary("floormod", flat, extent))
        flat = binary("floordiv", flat, extent)
    return (flat, *parts)


def _is_flat(buf: Buffer) -> bool:
    return buf.ndim == 1 and not buf.strides and _is_const(buf.elem_offset, 0)


def _bounded(buf: Buffer) -> bool:
    """Whether flattening gives ``buf`` (a local buffer of symbolic size) a constant size."""
    return buf.scope == "local" and not all(isinstance(d, IntImm) for d in buf.shape)


class _Flatten(StmtExprMutator):
    def __init__(self):
        self.map: dict[Buffer, Buffer] = {}

    def mutate_buffer(self, b: Buffer) -> Buffer:
        nb = self.map.get(b)
        if nb is None:
            nb = self.map[b] = b if _is_flat(b) and not _bounded(b) else flattened_buffer(b)
        return nb

    def _flat(self, buf: Buffer, indices: tuple) -> tuple:
        if _is_flat(buf):
            return indices
        return (flat_index(buf, indices),)

    def visit_BufferLoad(self, e):
        idx = self._exprs(e.indices)
        nb = self.mutate_buffer(e.buffer)
        if nb is e.buffer and idx is e.indices:
            return e
        return BufferLoad(nb, self._flat(e.buffer, idx), e.dtype, e.span)

    def visit_BufferStore(self, s):
        idx = self._exprs(s.indices)
        val = self.visit_expr(s.value)
        nb = self.mutate_buffer(s.buffer)
        if nb is s.buffer and idx is s.indices and val is s.value:
            return s
        return BufferStore(nb, val, self._flat(s.buffer, idx), s.span)


def flatten_buffers(func: PrimFunc) -> PrimFunc:
    """Rewrite all buffer accesses and allocations of ``func`` to 1-D (see module docstring)."""
    m = _Flatten()
    body = m.visit_stmt(func.body)
    return func.with_body(body if body is not None else func.body)
