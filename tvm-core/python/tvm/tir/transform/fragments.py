"""Tensor-core fragments (``wmma.*`` buffers and the operations of :mod:`tvm.script.fragments`)
lowered to loops every target runs.

A fragment belongs to a warp, and its elements are reached only through the four operations;
every thread of the warp runs each operation with the same operands. So each thread may keep the
whole tile and compute all of it (element accesses outside a ``threadIdx.x`` loop, as in Apache
TVM's schedules before tensorization, are the same in every lane, so they may too):
:func:`lower_fragments` gives every fragment buffer scope ``"local"`` and spells each operation
as loops over its tile (fill, copy from or to memory in either layout, multiply-accumulate in the
accumulator's dtype). The result equals the warp's on every target; it is as fast as scalar code.
A target whose capability ``warp_fragments`` lists the kernel's (input, accumulator) dtype pair
keeps them for its code generator instead (tensor-core instructions: :mod:`.fragments_native`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from tvm.tir import op as _op
from tvm.tir.expr import FRAGMENT_SCOPES, Buffer, BufferLoad, Call, PrimExpr, Var
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer, StmtExprVisitor
from tvm.tir.stmt import BufferStore, Evaluate, For, ForKind, Stmt, seq

from .verify import TIRVerifyError, with_span

FILL, LOAD, STORE, MMA = (
    "tir.tvm_fill_fragment",
    "tir.tvm_load_matrix_sync",
    "tir.tvm_store_matrix_sync",
    "tir.tvm_mma_sync",
)
FRAGMENT_OPS = (FILL, LOAD, STORE, MMA)
#: The operations as a code generator that has the instructions gets them (:mod:`.fragments_native`)
NATIVE_FILL, NATIVE_LOAD, NATIVE_STORE, NATIVE_MMA = (
    "tir.fragment_fill",
    "tir.fragment_load",
    "tir.fragment_store",
    "tir.fragment_mma",
)


def is_fragment_op(e: Any) -> bool:
    """Whether ``e`` is one of the four fragment operations."""
    return isinstance(e, Call) and e.op in FRAGMENT_OPS


def tile_shape(e: Call) -> tuple:
    """The tile shape ``(m, n, k)`` of a fragment operation."""
    return tuple(int(x.value) for x in (e.args[-3:] if e.op == MMA else e.args[2:5]))


def tile_extent(role: str, shape: tuple) -> tuple:
    """Rows and columns of a ``role`` tile (``"matrix_a"``, ``"matrix_b"``, ``"accumulator"``) of
    an ``(m, n, k)`` operation."""
    m, n, k = shape
    return {"matrix_a": (m, k), "matrix_b": (k, n), "accumulator": (m, n)}[role]


def tile_accesses(e: Call) -> list[tuple[BufferLoad, BufferLoad, bool]]:
    """(first element, last element, written) of each tile a fragment operation touches:
    fragments first, then the memory tile of a load or store."""
    written = {FILL: (True,), LOAD: (True, False), STORE: (False, True), MMA: (True, False, False, False)}[e.op]
    tiles = [e.args[2 * i : 2 * i + 2] for i in range(4 if e.op == MMA else 1)]
    if e.op in (LOAD, STORE):
        tiles.append(e.args[5:7])
    return [(first, last, w) for (first, last), w in zip(tiles, written)]


def fragment_tiles(e: Call) -> list[tuple[BufferLoad, BufferLoad, bool]]:
    """The entries of :func:`tile_accesses` that are fragments (not the memory tile)."""
    return tile_accesses(e)[: 4 if e.op == MMA else 1]


def memory_accesses(e: Call) -> list[tuple[BufferLoad, bool]]:
    """(first element, written) of the memory tile a fragment operation reads or writes, in
    either form (``tir.tvm_*`` before :func:`lower_fragments`, ``tir.fragment_*`` kept for a
    code generator); empty for fill and mma."""
    if e.op in (LOAD, STORE):
        return [(e.args[5], e.op == STORE)]
    if e.op in (NATIVE_LOAD, NATIVE_STORE):
        return [(e.args[1], e.op == NATIVE_STORE)]
    return []


def only_writes(e: Call, data: Var) -> bool:
    """Whether fragment operation ``e`` writes the memory ``data`` and does not read it."""
    uses = [w for first, _, w in tile_accesses(e) if first.buffer.data is data]
    return bool(uses) and all(uses)


def reads_and_writes(e: Call, data: Var) -> bool:
    """Whether fragment operation ``e`` both reads and writes ``data`` (an accumulating mma)."""
    uses = {w for first, _, w in tile_accesses(e) if first.buffer.data is data}
    return uses == {True, False}


class _ElementAccess(StmtExprVisitor):
    """Fragments read or written element by element (outside the four operations): each lane
    of a warp holds its own copy then, which is the warp's fragment only when no access is
    inside a ``threadIdx.x`` loop (where lanes would touch different elements); ``found`` is the
    first such access."""

    def __init__(self) -> None:
        self.found: Any = None
        self.span: Any = None
        self.by_element: set = set()  # data Vars of fragments accessed element by element
        self.lanes = 0  # threadIdx.x loops around the statement visited

    def visit_For(self, s: For) -> None:
        lane = s.kind is ForKind.THREAD_BINDING and s.thread_tag == "threadIdx.x"
        self.lanes += lane
        try:
            super().visit_For(s)
        finally:
            self.lanes -= lane

    def visit_Evaluate(self, s: Evaluate) -> None:
        if is_fragment_op(s.value):
            _check_operands(s.value, s.span)
            return  # its operands are tile corners, not element accesses
        super().visit_Evaluate(s)

    def _element(self, buf: Buffer, span: Any) -> None:
        if buf.scope in FRAGMENT_SCOPES:
            self.by_element.add(buf.data)
            if self.lanes and self.found is None:
                self.found, self.span = buf, span

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self._element(e.buffer, None)
        super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self._element(s.buffer, s.span)
        super().visit_BufferStore(s)

    def visit_Call(self, e: Call) -> None:
        if is_fragment_op(e):
            raise TIRVerifyError(f"{e.op.removeprefix('tir.')} is a statement; it cannot be part of an expression")
        super().visit_Call(e)


def _check_operands(e: Call, span: Any) -> None:
    """Every fragment operand of ``e`` is a buffer of a fragment scope."""
    for first, _, _ in fragment_tiles(e):
        if first.buffer.scope not in FRAGMENT_SCOPES:
            raise TIRVerifyError(
                with_span(
                    f"T.{e.op.removeprefix('tir.')}: '{first.buffer.name}' has scope {first.buffer.scope!r}; its "
                    f"fragment operands must be buffers of scope {', '.join(repr(s) for s in FRAGMENT_SCOPES)} "
                    f"(a tensor intrinsic's description is not a kernel)",
                    span,
                )
            )


def _grid(extents: tuple, body: Any) -> Stmt:
    """Serial loops over ``extents`` around ``body(vars)``."""
    loop_vars = [Var(f"frag_{name}", "int32") for name in ("ij" if len(extents) == 2 else "k")]
    stmt = body(*loop_vars)
    for v, n in reversed(list(zip(loop_vars, extents))):
        stmt = For(v, _op.convert(0), _op.convert(n), ForKind.SERIAL, stmt)
    return stmt


def _at(first: BufferLoad, stride: PrimExpr, row: PrimExpr, col: PrimExpr) -> tuple:
    """Indices of element (row, col) of the tile starting at ``first`` (a 1-d buffer: ``stride``
    apart; otherwise rows of the buffer's last two dimensions)."""
    idx = list(first.indices)
    if len(idx) == 1:
        return (_op.binary("add", idx[0], _op.binary("add", _op.binary("mul", row, stride), col)),)
    idx[-2] = _op.binary("add", idx[-2], row)
    idx[-1] = _op.binary("add", idx[-1], col)
    return tuple(idx)


class _Lower(BufferReplacer):
    def replacement(self, b: Buffer) -> Optional[dict]:
        return {"scope": "local"} if b.scope in FRAGMENT_SCOPES else None

    def visit_Evaluate(self, s: Evaluate) -> Any:
        e = s.value
        if not is_fragment_op(e):
            return super().visit_Evaluate(s)
        role = FRAGMENT_SCOPES.get(e.args[0].buffer.scope, "accumulator")  # before it becomes local
        tiles = [(self.visit_expr(a), self.visit_expr(b)) for a, b, _ in tile_accesses(e)]
        shape = tile_shape(e)
        m, n, k = shape
        if e.op == MMA:
            return self._mma(tiles, m, n, k)
        frag = tiles[0][0]
        if e.op == FILL:
            value = self.visit_expr(e.args[5])
            return _grid((m, n), lambda i, j: _store(frag, i, j, value))
        mem, stride, layout = tiles[1][0], self.visit_expr(e.args[7]), e.args[8].value

        def mem_at(i: PrimExpr, j: PrimExpr) -> tuple:
            return _at(mem, stride, i, j) if layout == "row_major" else _at(mem, stride, j, i)

        extent = tile_extent(role, shape)
        if e.op == LOAD:
            return _grid(extent, lambda i, j: _store(frag, i, j, BufferLoad(mem.buffer, mem_at(i, j))))
        return _grid(extent, lambda i, j: BufferStore(mem.buffer, _cast(mem.buffer, _load(frag, i, j)), mem_at(i, j)))

    def _mma(self, tiles: list, m: int, n: int, k: int) -> Stmt:
        (d, _), (a, _), (b, _), (c, _) = tiles
        acc = d.buffer.dtype

        def product(i, j, kk):
            return _op.binary("mul", _op.cast(acc, _load(a, i, kk)), _op.cast(acc, _load(b, kk, j)))

        def update(i, j):
            total = _grid((k,), lambda kk: _store(d, i, j, _op.binary("add", _load(d, i, j), product(i, j, kk))))
            return seq(_store(d, i, j, _load(c, i, j)), total)

        return _grid((m, n), update)


def _load(first: BufferLoad, i: PrimExpr, j: PrimExpr) -> BufferLoad:
    return BufferLoad(first.buffer, _at(first, None, i, j))


def _cast(buf: Buffer, value: PrimExpr) -> PrimExpr:
    return value if value.dtype == buf.dtype else _op.cast(buf.dtype, value)


def _store(first: BufferLoad, i: PrimExpr, j: PrimExpr, value: PrimExpr) -> BufferStore:
    return BufferStore(first.buffer, _cast(first.buffer, value), _at(first, None, i, j))


def lower_fragments(func: PrimFunc, target: Any) -> PrimFunc:
    """``func`` with its fragments in per-thread memory and their operations as loops, or kept
    for the code generator where the target's ``warp_fragments`` allows (module docstring)."""
    finder = _ElementAccess()
    finder.visit_stmt(func.body)
    if finder.found is not None:
        raise TIRVerifyError(
            with_span(
                f"fragment '{finder.found.name}' (scope {finder.found.scope!r}) is read or written element by "
                "element inside a threadIdx.x loop, where the lanes of a warp would share it element by element; "
                "a tensor-core fragment is reached only through T.tvm_fill_fragment, T.tvm_load_matrix_sync, "
                "T.tvm_mma_sync and T.tvm_store_matrix_sync (tensorize the block, or give the buffer scope 'local')",
                finder.span,
            )
        )
    pairs = target.capability("warp_fragments")
    if pairs and not finder.by_element:
        from .fragments_native import native_fragments

        kept = native_fragments(func, tuple(pairs))
        if kept is not None:
            return kept
    body = _Lower().visit_stmt(func.body)
    return func if body is func.body else dataclasses.replace(func, body=body)
