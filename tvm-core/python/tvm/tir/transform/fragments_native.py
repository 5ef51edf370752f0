"""Tensor-core fragments kept for a code generator that has the instructions.

A target whose capability ``warp_fragments`` lists ``(input dtype, accumulator dtype)`` pairs
(cuda: float16 inputs with float32 or float16 accumulators, 8-bit integers with int32 ones)
gets, from :func:`native_fragments`, each fragment buffer as an array of tiles (shape
``(tiles,)``, scope and dtype kept: the code generator gives every tile its registers) and each
operation as one of

* ``tir.fragment_fill(F[t], value, m, n, k)``
* ``tir.fragment_load(F[t], M[i], stride, layout, m, n, k)`` and ``tir.fragment_store`` (same
  arguments): ``M[i]`` is the memory tile's first element, ``stride`` its row stride in elements
  (the row length of a buffer of two or more dimensions, as compaction left it)
* ``tir.fragment_mma(D[t], A[t], B[t], C[t], a_layout, b_layout, m, n, k)``: the layouts the
  A and B fragments were loaded in

where ``t`` counts the tiles of the fragment buffer row-major. A kernel that does not fit (a dtype
pair not listed, an mma whose A and B differ in dtype, a fragment buffer whose dimensions before
the last two are not all 1, a tile not provably on the tile grid, memory of another dtype than
its fragment or whose rows are not a constant multiple of 16 bytes apart, a fragment used with
two tile shapes, or an A or B fragment loaded in both layouts) gets None: its fragments are
computed per thread instead (:mod:`.fragments`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from tvm.tir import dtype as _dt
from tvm.tir import op as _op
from tvm.tir.analysis import linear_form
from tvm.tir.expr import FRAGMENT_SCOPES, Buffer, BufferLoad, Call, IntImm, PrimExpr, StringImm
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, post_order_visit
from tvm.tir.stmt import Allocate, Evaluate

from .fragments import (
    FILL,
    LOAD,
    MMA,
    NATIVE_FILL,
    NATIVE_LOAD,
    NATIVE_MMA,
    NATIVE_STORE,
    fragment_tiles,
    is_fragment_op,
    tile_extent,
    tile_shape,
)
from .flatten import buffer_strides
from .simplify import simplify_expr


class _NotNative(Exception):
    """The kernel's fragments cannot be kept (the module docstring says when)."""


def _uses(func: PrimFunc) -> tuple[dict, dict]:
    """Per fragment memory: the tile shapes its operations use, and the layouts A/B are loaded in."""
    shapes: dict = {}
    layouts: dict = {}

    def visit(n: Any) -> None:
        if isinstance(n, Evaluate) and is_fragment_op(n.value):
            e = n.value
            for first, _, _ in fragment_tiles(e):
                shapes.setdefault(first.buffer.data, set()).add(tile_shape(e))
            if e.op == LOAD and e.args[0].buffer.scope != "wmma.accumulator":
                layouts.setdefault(e.args[0].buffer.data, set()).add(e.args[8].value)

    post_order_visit(func.body, visit)
    return shapes, layouts


def _check_buffer(buf: Buffer, shapes: set, pairs: tuple) -> None:
    role = FRAGMENT_SCOPES[buf.scope]
    allowed = {p[1] if role == "accumulator" else p[0] for p in pairs}
    dims = [d.value if isinstance(d, IntImm) else None for d in buf.shape]
    if buf.dtype not in allowed:
        raise _NotNative(f"{buf.name} is {buf.dtype}")
    if len(shapes) != 1 or len(dims) < 2 or None in dims or any(d != 1 for d in dims[:-2]):
        raise _NotNative(f"{buf.name}: tile shapes {sorted(shapes)}, shape {buf.shape}")
    rows, cols = tile_extent(role, next(iter(shapes)))
    if dims[-2] % rows or dims[-1] % cols:
        raise _NotNative(f"{buf.name} of shape {tuple(dims)} is not made of {rows} x {cols} tiles")


def _divided(e: PrimExpr, k: int) -> PrimExpr:
    """``e // k`` for an ``e`` provably a multiple of ``k`` (else _NotNative)."""
    exprs: dict = {}
    terms, const = linear_form(e, exprs)
    if const % k or any(c % k for c in terms.values()):
        raise _NotNative(f"a tile starts at {e!r}, not provably a multiple of {k}")
    out: PrimExpr = IntImm(e.dtype, const // k)
    for key, c in terms.items():
        out = _op.binary("add", out, _op.binary("mul", exprs[key], c // k))
    return out


def _flat_offset(load: BufferLoad) -> PrimExpr:
    """The element offset of ``load`` from its buffer's memory start."""
    offset = _op.convert(load.buffer.elem_offset)
    for index, stride in zip(load.indices, buffer_strides(load.buffer)):
        offset = _op.binary("add", offset, _op.binary("mul", index, stride))
    return simplify_expr(offset)


class _Keep(StmtExprMutator):
    def __init__(self, layouts: dict, pairs: tuple) -> None:
        self.layouts = layouts
        self.pairs = {tuple(p) for p in pairs}
        self.tiles: dict[int, Buffer] = {}

    def _tiles_of(self, buf: Buffer, shape: tuple) -> Buffer:
        if id(buf) not in self.tiles:
            rows, cols = tile_extent(FRAGMENT_SCOPES[buf.scope], shape)
            count = buf.shape[-2].value // rows * (buf.shape[-1].value // cols)
            self.tiles[id(buf)] = dataclasses.replace(buf, shape=(IntImm("int32", count),))
        return self.tiles[id(buf)]

    def _tile(self, first: BufferLoad, shape: tuple) -> BufferLoad:
        buf = first.buffer
        rows, cols = tile_extent(FRAGMENT_SCOPES[buf.scope], shape)
        r, c = (self.visit_expr(i) for i in first.indices[-2:])  # leading dimensions have extent 1
        per_row = buf.shape[-1].value // cols
        index = _op.binary("add", _op.binary("mul", _divided(r, rows), per_row), _divided(c, cols))
        return BufferLoad(self._tiles_of(buf, shape), (index,))

    def visit_Allocate(self, s: Allocate) -> Any:
        body = self._body(self.visit_stmt(s.body))
        buf = self.tiles.get(id(s.buffer), s.buffer)
        if s.buffer.scope in FRAGMENT_SCOPES and buf is s.buffer:
            raise _NotNative(f"fragment {s.buffer.name} is not used")
        return Allocate(buf, body, s.span)

    def visit_Evaluate(self, s: Evaluate) -> Any:
        e = s.value
        if not is_fragment_op(e):
            return super().visit_Evaluate(s)
        shape = tile_shape(e)
        mnk = tuple(IntImm("int32", x) for x in shape)
        tiles = [self._tile(first, shape) for first, _, _ in fragment_tiles(e)]
        if e.op == FILL:
            return Evaluate(Call("handle", NATIVE_FILL, (tiles[0], self.visit_expr(e.args[5]), *mnk)), s.span)
        if e.op == MMA:
            d, a, b, c = (t.buffer.dtype for t in tiles)
            if (a, d) not in self.pairs or (a, c) not in self.pairs or a != b:
                raise _NotNative(f"an mma of {a} and {b} with {c} into {d}")
            a_layout, b_layout = (next(iter(self.layouts.get(e.args[i].buffer.data, {"row_major"}))) for i in (2, 4))
            args = (*tiles, StringImm(a_layout), StringImm(b_layout), *mnk)
            return Evaluate(Call("handle", NATIVE_MMA, args), s.span)
        mem = self.visit_expr(e.args[5])
        stride = self.visit_expr(e.args[7]) if mem.buffer.ndim == 1 else buffer_strides(mem.buffer)[-2]
        if mem.buffer.dtype != e.args[0].buffer.dtype:
            raise _NotNative(f"{mem.buffer.name} is {mem.buffer.dtype}, its fragment {e.args[0].buffer.dtype}")
        row_bytes = stride.value * _dt.nbytes(mem.buffer.dtype) if isinstance(stride, IntImm) else None
        if row_bytes is None or row_bytes % 16:  # the instructions need rows 16-byte aligned
            raise _NotNative(f"rows of {mem.buffer.name} {stride!r} elements apart, not a multiple of 16 bytes")
        _divided(_flat_offset(mem), max(1, 32 // _dt.nbytes(mem.buffer.dtype)))  # and tiles 32-byte aligned
        op = NATIVE_LOAD if e.op == LOAD else NATIVE_STORE
        return Evaluate(Call("handle", op, (tiles[0], mem, stride, e.args[8], *mnk)), s.span)


def native_fragments(func: PrimFunc, pairs: tuple) -> Optional[PrimFunc]:
    """``func`` with its fragments kept for the code generator (module docstring), or None when
    they do not fit ``pairs`` and the rules above."""
    shapes, layouts = _uses(func)
    buffers: list[Buffer] = []

    def visit(n: Any) -> None:
        if isinstance(n, Allocate) and n.buffer.scope in FRAGMENT_SCOPES:
            buffers.append(n.buffer)

    post_order_visit(func.body, visit)
    try:
        if any(len(v) != 1 for v in layouts.values()):
            raise _NotNative("a fragment is loaded in both layouts")
        for buf in buffers:
            _check_buffer(buf, shapes.get(buf.data, set()), pairs)
        body = _Keep(layouts, pairs).visit_stmt(func.body)
    except _NotNative:
        return None
    return dataclasses.replace(func, body=body)
