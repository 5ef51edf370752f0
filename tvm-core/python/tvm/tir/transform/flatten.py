"""flatten_buffers: multi-dimensional buffer accesses -> 1-D accesses.

Every buffer (parameters and allocations) is replaced by a 1-D buffer with the same ``data`` Var,
dtype and scope. Index ``(i0, ..., ik)`` becomes ``elem_offset + sum(i_d * stride_d)`` where the
strides are the buffer's explicit strides or the row-major strides of its shape. The flattened
shape is the number of elements (for strided buffers: the span the strides reach).
``buffer_map`` keeps the original multi-dimensional buffers (for argument checking).
"""

from __future__ import annotations

from tvm.tir.analysis import size_upper_bound
from tvm.tir.expr import Buffer, BufferLoad, IntImm, PrimExpr
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator
from tvm.tir.op import binary
from tvm.tir.stmt import BufferStore


def _is_const(x: PrimExpr, v: int) -> bool:
    return isinstance(x, IntImm) and x.value == v


def _mul(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if _is_const(a, 1):
        return b
    if _is_const(b, 1):
        return a
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.dtype == b.dtype:
        return IntImm(a.dtype, a.value * b.value)
    return binary("mul", a, b)


def _add(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    if _is_const(a, 0):
        return b
    if _is_const(b, 0):
        return a
    if isinstance(a, IntImm) and isinstance(b, IntImm) and a.dtype == b.dtype:
        return IntImm(a.dtype, a.value + b.value)
    return binary("add", a, b)


def buffer_strides(buf: Buffer) -> tuple:
    """Explicit strides, or row-major strides computed from the shape."""
    if buf.strides:
        return tuple(buf.strides)
    out = []
    acc: PrimExpr = IntImm("int32", 1)
    for s in reversed(buf.shape):
        out.append(acc)
        acc = _mul(acc, s)
    return tuple(reversed(out))


def flattened_buffer(buf: Buffer) -> Buffer:
    """The 1-D view of ``buf`` (same data Var, dtype, scope). A local buffer of symbolic size
    takes the size's constant upper bound where it has one (``T.min(n, 64)``: 64), so that it
    fits in a kernel's registers or stack like a constant one."""
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
    return Buffer(buf.name, (size,), buf.dtype, buf.data, (), IntImm("int32", 0), buf.scope, buf.align, buf.span)


def flat_index(buf: Buffer, indices: tuple) -> PrimExpr:
    """The 1-D element index of ``buf[indices]``."""
    idx: PrimExpr = buf.elem_offset if buf.elem_offset is not None else IntImm("int32", 0)
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
