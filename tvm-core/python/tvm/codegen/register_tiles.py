"""Register tiles in the CPU's C: small per-thread arrays printed as arrays of vectors.

A kernel that accumulates a block of results (a matmul's ``mr x nr`` tile of C) writes it as a
``local`` buffer updated in ``T.vectorized`` loops. Printed as a plain C array, the C compiler
keeps such an array in registers only when its own unrolling happens to turn every access into
one whole vector, which depends on the tile's shape and the ISA (an AVX2 build of the zoo's
matmul loaded and stored every accumulator on every step: three to six times slower).

:func:`register_tile_lanes` finds the buffers the printer can spell as vectors itself: a stack
buffer of ``float32`` or ``float64`` whose every access lies in a vectorized loop of constant
extent, a multiple of the vector's lanes, starting at 0, whose body only stores (see
:func:`vector_loop_lanes`), at an element index ``c + j`` where ``j`` is the loop variable and
``c`` a multiple of the lanes. Such a buffer is declared as an array of GCC vector-extension
vectors, and the loops that touch it are printed one vector at a time (:class:`VectorLoopPrinter`):
a tile element group is one array element, other buffers are read and written with ``memcpy``
(any alignment), and an expression that does not depend on ``j`` is broadcast. Each lane computes
what the scalar loop computes, in the same order of operations.
"""

from __future__ import annotations

from typing import Any, Iterable

from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.analysis import any_node, expr_key, free_vars, linear_form, uses_handle
from tvm.tir.functor import StmtExprVisitor, post_order_visit

#: Element types a register tile may have (integer vectors would need C's wrapping rules).
TILE_ELEMENTS = ("float32", "float64")

_OPS = {E.Add: "+", E.Sub: "-", E.Mul: "*", E.Div: "/"}


def vector_bytes_of(mcpu: str | None) -> int:
    """Bytes of the widest vector register the C compiler targets for ``-march=<mcpu>`` (16
    without one: the baseline x86-64 and AArch64 ISAs)."""
    if not mcpu:
        return 16
    from tvm.tune.fingerprint import mcpu_features, vector_bits  # the ISA tables live with the tuner

    return max(16, vector_bits(mcpu_features(mcpu)) // 8)


def _lane_offset(index: E.PrimExpr, j: E.Var, lanes: int | None) -> bool:
    """Whether ``index`` is ``c + j`` with ``c`` free of ``j`` (and, given ``lanes``, a multiple
    of it): consecutive lanes read consecutive elements."""
    exprs: dict = {}
    terms, const = linear_form(index, exprs)
    key = expr_key(j)
    if terms.get(key) != 1:
        return False
    rest = {k: c for k, c in terms.items() if k != key}
    if any(j in free_vars(exprs[k]) for k in rest):
        return False
    return lanes is None or (const % lanes == 0 and all(c % lanes == 0 for c in rest.values()))


#: Most vector registers a tile may take (AVX-512 and NEON have 32): a larger array gains
#: nothing and its full unroll makes the C compiler slow
MAX_TILE_VECTORS = 32

#: Deepest value a vector statement may hold (C compilers built on clang refuse 256 brackets)
MAX_DEPTH = 24


def _depth(e: E.PrimExpr) -> int:
    if isinstance(e, E.BinaryOp):
        return 1 + max(_depth(e.a), _depth(e.b))
    if isinstance(e, E.Cast):
        return 1 + _depth(e.value)
    return 1


def _reads_memory(index: E.PrimExpr) -> bool:
    """Whether ``index`` holds a load, a call or a let: its value is not plain index arithmetic."""
    return any_node(index, lambda n: isinstance(n, (E.BufferLoad, E.Call, E.Let)))


def _plain_values(e: E.PrimExpr, dtype: str) -> bool:
    """Whether ``e`` is ``+ - * /`` of ``dtype`` over constants, variables, loads and casts of
    those (their indices any integer arithmetic without loads or calls)."""
    if isinstance(e, (E.IntImm, E.FloatImm, E.Var)):
        return True
    if isinstance(e, E.BufferLoad):
        return e.dtype == dtype and not any(_reads_memory(i) for i in e.indices)
    if isinstance(e, E.Cast):
        return e.dtype == dtype and isinstance(e.value, (E.IntImm, E.FloatImm, E.Var))
    if type(e) in _OPS:
        return e.dtype == dtype and _plain_values(e.a, dtype) and _plain_values(e.b, dtype)
    return False


def _plain_access(buf: E.Buffer, indices: Iterable[E.PrimExpr]) -> bool:
    return len(list(indices)) == 1 and not buf.strides


class _LoopCheck:
    """Whether a vectorized loop's body can be printed one vector of ``lanes`` at a time with
    ``dtype`` lanes, given the tile buffers (handles) ``tiles``."""

    def __init__(self, j: E.Var, dtype: str, lanes: int, tiles: Any) -> None:
        self.j, self.dtype, self.lanes, self.tiles = j, dtype, lanes, tiles

    def _scalar(self, e: E.PrimExpr) -> bool:
        """A value the same in every lane, printed once and broadcast: plain arithmetic of the
        tile's dtype over constants, variables and loads (a call may differ per iteration, a let
        or a 16-bit float needs the statement preparation the scalar loop gets)."""
        if self.j in free_vars(e) or any(uses_handle(e, t, loads_only=True) for t in self.tiles):
            return False
        return _plain_values(e, self.dtype)

    def access(self, buf: E.Buffer, indices: Any) -> bool:
        if buf.dtype != self.dtype or not _plain_access(buf, indices):
            return False
        if _reads_memory(indices[0]):
            return False  # (the tile's, or a buffer the loop writes)
        if buf.data not in self.tiles:
            return _lane_offset(indices[0], self.j, None)
        offset = buf.elem_offset
        return isinstance(offset, E.IntImm) and offset.value == 0 and _lane_offset(indices[0], self.j, self.lanes)

    def value(self, e: E.PrimExpr) -> bool:
        if e.dtype != self.dtype:
            return False
        if self._scalar(e):
            return True
        if isinstance(e, E.BufferLoad):
            return self.access(e.buffer, e.indices)
        if type(e) in _OPS:
            return self.value(e.a) and self.value(e.b)
        return False

    def stores(self, body: S.Stmt) -> list[S.BufferStore] | None:
        items = body.seq if isinstance(body, S.SeqStmt) else [body]
        if not all(isinstance(s, S.BufferStore) for s in items):
            return None
        if not all(self.access(s.buffer, s.indices) and self.value(s.value) for s in items):
            return None
        if any(_depth(s.value) > MAX_DEPTH for s in items):
            return None  # the scalar loop's printer splits a deep expression; this one does not
        return items if self._lanes_independent(items) else None

    def _lanes_independent(self, stores: list[S.BufferStore]) -> bool:
        """Whether computing a vector of lanes at once gives what the scalar loop gives: every
        buffer the loop writes, other than a tile, is read and written at one index only
        (``A[j + 1] = A[j] + ...`` carries a value from one lane to the next). A tile's offsets
        are multiples of the lanes, so lanes never meet another lane of the same vector."""
        written = {s.buffer.data for s in stores if s.buffer.data not in self.tiles}
        indices: dict = {}
        for s in stores:
            accesses = [(s.buffer, s.indices[0])]
            post_order_visit(
                s.value, lambda n: accesses.append((n.buffer, n.indices[0])) if isinstance(n, E.BufferLoad) else None
            )
            for buf, index in accesses:
                if buf.data in written:
                    form = linear_form(index)
                    if indices.setdefault(buf.data, form) != form:
                        return False
        return True


def vector_loop_lanes(loop: S.For, tiles: dict, vector_bytes: int) -> tuple[str, int, list] | None:
    """``(dtype, lanes, stores)`` when vectorized ``loop`` touches buffers of ``tiles`` (handle
    -> dtype) of one dtype and can be printed a vector at a time (module docstring); None
    otherwise."""
    if loop.kind is not S.ForKind.VECTORIZED or not (isinstance(loop.min, E.IntImm) and loop.min.value == 0):
        return None
    touched = {tiles[t] for t in tiles if uses_handle(loop.body, t)}
    if len(touched) != 1 or not isinstance(loop.extent, E.IntImm):
        return None
    dtype = touched.pop()
    lanes = vector_bytes * 8 // _dt.bits(dtype)
    if loop.extent.value % lanes:
        return None
    stores = _LoopCheck(loop.loop_var, dtype, lanes, tiles).stores(loop.body)
    return None if stores is None else (dtype, lanes, stores)


class _TileUses(StmtExprVisitor):
    """Whether every use of ``data`` in a statement is inside a loop printable as vectors."""

    def __init__(self, data: E.Var, dtype: str, vector_bytes: int) -> None:
        super().__init__()
        self.data, self.tiles = data, {data: dtype}
        self.vector_bytes = vector_bytes
        self.ok = True

    def visit_For(self, s: S.For) -> None:
        if not uses_handle(s, self.data):
            return
        if s.kind is S.ForKind.VECTORIZED:
            self.ok = self.ok and vector_loop_lanes(s, self.tiles, self.vector_bytes) is not None
            return
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        self.visit_stmt(s.body)

    def visit_BufferStore(self, s: S.BufferStore) -> None:
        self.ok = self.ok and not uses_handle(s, self.data)

    def visit_expr(self, e: E.PrimExpr) -> None:
        if uses_handle(e, self.data):
            self.ok = False


def register_tile_lanes(alloc: S.Allocate, vector_bytes: int) -> int | None:
    """The lanes of each vector of stack allocation ``alloc`` when it is a register tile (module
    docstring), else None."""
    buf = alloc.buffer
    if buf.dtype not in TILE_ELEMENTS or buf.scope == "global" or buf.strides:
        return None
    if not all(isinstance(d, E.IntImm) for d in buf.shape):
        return None
    lanes = vector_bytes * 8 // _dt.bits(buf.dtype)
    count = 1
    for d in buf.shape:
        count *= int(d.value)
    if count == 0 or count % lanes or count // lanes > MAX_TILE_VECTORS:
        return None
    uses = _TileUses(buf.data, buf.dtype, vector_bytes)
    uses.visit_stmt(alloc.body)
    return lanes if uses.ok else None


class VectorLoopPrinter:
    """Prints a vectorized loop over register tiles one vector at a time through ``printer`` (the
    CPU's :class:`~tvm.codegen.c_host.CPrinter`); ``tiles`` maps each tile's handle to its C
    array name."""

    def __init__(self, printer: Any, tiles: dict, dtype: str, lanes: int) -> None:
        self.p, self.tiles, self.lanes = printer, tiles, lanes
        self.scalar = printer.type_name(dtype)
        self.vtype = printer.vector_type(f"{dtype}x{lanes}")
        self._helpers()

    def _helpers(self) -> None:
        v, s = self.vtype, self.scalar
        q = self.p.HELPER_QUALIFIER
        self.p.helpers.setdefault(
            f"tvm_splat_{v}",
            f"{q} {v} tvm_splat_{v}({s} x) {{\n  return ({v}){{{', '.join(['x'] * self.lanes)}}};\n}}",
        )
        self.p.helpers.setdefault(
            f"tvm_vload_{v}",
            f"{q} {v} tvm_vload_{v}(const void* p) {{\n  {v} v;\n  memcpy(&v, p, sizeof v);\n  return v;\n}}",
        )
        self.p.helpers.setdefault(
            f"tvm_vstore_{v}", f"{q} void tvm_vstore_{v}(void* p, {v} v) {{\n  memcpy(p, &v, sizeof v);\n}}"
        )

    def _element(self, buf: E.Buffer, indices: Any) -> str:
        return f"{self.tiles[buf.data]}[({self.p.flat_index(buf, indices)}) / {self.lanes}]"

    def _address(self, buf: E.Buffer, indices: Any) -> str:
        return f"&{self.p.buffer_ref(buf)}[{self.p.flat_index(buf, indices)}]"

    def value(self, e: E.PrimExpr, j: E.Var) -> str:
        """``e`` as a vector whose lane ``k`` is ``e`` at ``j + k``."""
        if j not in free_vars(e) and not any(uses_handle(e, t, loads_only=True) for t in self.tiles):
            return f"tvm_splat_{self.vtype}({self.p.expr(e)})"
        if isinstance(e, E.BufferLoad):
            if e.buffer.data in self.tiles:
                return self._element(e.buffer, e.indices)
            return f"tvm_vload_{self.vtype}({self._address(e.buffer, e.indices)})"
        return f"({self.value(e.a, j)} {_OPS[type(e)]} {self.value(e.b, j)})"

    def print_loop(self, loop: S.For, stores: list[S.BufferStore]) -> None:
        """Emit ``loop`` stepping a vector at a time, its ``stores`` as vector stores."""
        p, j = self.p, loop.loop_var
        name = p.name_of(j)
        p.count(j, bounds=(loop.min, loop.extent))
        p.emit(f"#pragma GCC unroll {loop.extent.value // self.lanes}")
        t = p.compute_type(j.dtype)
        p.emit(f"for ({t} {name} = 0; {name} < {p.index_expr(loop.extent)}; {name} += {self.lanes}) {{")
        p._indent += 1
        for s in stores:
            value = self.value(s.value, j)
            if s.buffer.data in self.tiles:
                p.emit(f"{self._element(s.buffer, s.indices)} = {value};")
            else:
                p.emit(f"tvm_vstore_{self.vtype}({self._address(s.buffer, s.indices)}, {value});")
        p._indent -= 1
        p.emit("}")


__all__ = ["TILE_ELEMENTS", "VectorLoopPrinter", "register_tile_lanes", "vector_bytes_of", "vector_loop_lanes"]
