"""Tensor-core fragments as Apache TVM's TVMScript writes them.

A buffer of scope ``"wmma.matrix_a"``, ``"wmma.matrix_b"`` or ``"wmma.accumulator"`` holds tiles
(``m x k``, ``k x n`` and ``m x n`` elements) that a warp loads, multiplies and stores together;
its elements are reached only through these intrinsics:

.. code-block:: python

    T.tvm_fill_fragment(C_frag.data, 16, 16, 16, 0, T.float32(0))
    T.tvm_load_matrix_sync(A_frag.data, 16, 16, 16, 0, A_shared.access_ptr("r"), 16, "row_major")
    T.tvm_mma_sync(C_frag.data, 0, A_frag.data, 0, B_frag.data, 0, C_frag.data, 0)
    T.tvm_store_matrix_sync(C_frag.data, 16, 16, 16, 0, C.access_ptr("w"), 16, "row_major")

The fragment index counts tiles row-major over the fragment buffer's two dimensions (a
``(32, 32)`` accumulator of 16 x 16 tiles holds tiles 0..3), or is ignored when the buffer (a
``T.match_buffer`` view) is one tile. Memory operands are pointers to a tile's first element
(``A.access_ptr("r")``, ``T.tvm_access_ptr(T.type_annotation("float16"), A.data, off, extent,
"r")``, ``T.address_of(A[i, j])``) with a row stride in elements; on a buffer of two or more
dimensions the stride must be its row length, so the tile is a block of its last two dimensions.

In the IR each operand becomes two elements, the tile's first and last, of the buffer that owns
the memory (views are resolved to the buffer they view), so allocation placement and compaction
see the region a tile covers: ``Evaluate(Call("handle", "tir.tvm_load_matrix_sync", (frag_first,
frag_last, m, n, k, mem_first, mem_last, stride, layout)))``; fill is ``(frag_first, frag_last,
m, n, k, value)``, mma ``(d_first, d_last, a_first, a_last, b_first, b_last, c_first, c_last, m,
n, k)``. :mod:`tvm.tir.transform.fragments` lowers them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from typing import Any, Iterator

from tvm.tir import dtype as _dt
from tvm.tir import op as _op
from tvm.tir.analysis import free_vars, structural_equal
from tvm.tir.functor import substitute
from tvm.tir.printer import expr_text
from tvm.tir.expr import FRAGMENT_SCOPES, Buffer, BufferLoad, Call, IntImm, PrimExpr, StringImm, Var
from tvm.tir.transform.flatten import buffer_strides, unravel_index
from tvm.tir.transform.fragments import FILL, LOAD, MMA, STORE, tile_extent
from tvm.tir.transform.simplify import simplify_expr

#: The tile shapes (m, n, k) Apache TVM's wmma intrinsics take.
TILE_SHAPES = ((16, 16, 16), (8, 32, 16), (32, 8, 16))
LAYOUTS = ("row_major", "col_major")


class _FunctionNames(threading.local):
    """What the function being parsed on this thread names (its objects stay alive while it is
    parsed); each thread parses its own functions."""

    def __init__(self) -> None:
        self.data_reads: list[tuple[Var, Buffer]] = []  # the statement's .data reads, in order
        self.views: dict[Buffer, tuple[Buffer, tuple, tuple]] = {}  # view -> (parent, its first element, dims)
        self.bound: dict[Var, PrimExpr] = {}  # variables a view's strides or offset name -> values
        self.shapes: dict[Var, tuple] = {}  # fragment data -> (m, n, k) of the fills, loads and stores


_names = _FunctionNames()


@contextlib.contextmanager
def names_of_one_function() -> Iterator[None]:
    """While one function is parsed: what its ``.data`` reads, views and bindings name (the
    previous function's, if one is being parsed around it, come back after)."""
    saved = (_names.data_reads, _names.views, _names.bound, _names.shapes)
    _names.data_reads, _names.views, _names.bound, _names.shapes = [], {}, {}, {}
    try:
        yield
    finally:
        _names.data_reads, _names.views, _names.bound, _names.shapes = saved


def new_statement() -> None:
    """The parser starts a statement: ``.data`` reads of earlier ones name nothing any more."""
    _names.data_reads.clear()


class FragmentError(ValueError):
    """A tensor-core fragment intrinsic used in a way that has no meaning."""


def note_data(buf: Buffer) -> None:
    """The parser read ``buf.data``: the next argument naming that memory means ``buf`` (views
    share their parent's ``data``, so each read is matched to the argument in order)."""
    _names.data_reads.append((buf.data, buf))


def note_view(view: Buffer, parent: Buffer, starts: list, dims: list) -> None:
    """``view`` is ``T.match_buffer(parent[region], ...)``: its index ``d`` adds to the parent's
    dimension ``dims[d]``, from ``starts``."""
    _names.views[view] = (parent, tuple(starts), tuple(dims))


def note_binding(var: Var, value: PrimExpr) -> None:
    """The parser bound ``var`` (named in a view's ``strides=`` or ``elem_offset=``) to ``value``."""
    _names.bound[var] = value


def _resolve(e: PrimExpr) -> PrimExpr:
    """``e`` with the variables views bound replaced by their values."""
    mapping = {v: _names.bound[v] for v in free_vars(e) if v in _names.bound}
    return substitute(e, mapping) if mapping else e


def _owner(data: Any) -> Buffer:
    index = next((i for i, (var, _) in enumerate(_names.data_reads) if var is data), None)
    if index is None:
        got = expr_text(data) if isinstance(data, PrimExpr) else repr(data)
        raise FragmentError(f"expected the .data of a buffer (such as A_frag.data), got {got}")
    return _names.data_reads.pop(index)[1]


def element(buf: Buffer, indices: tuple) -> BufferLoad:
    """``buf[indices]`` on the buffer that owns the memory (through views of views)."""
    while buf in _names.views:
        parent, starts, dims = _names.views[buf]
        full = list(starts)
        for d, i in zip(dims, indices):
            full[d] = _op.binary("add", full[d], i)
        buf, indices = parent, tuple(full)
    return BufferLoad(buf, tuple(_op.convert(i) for i in indices))


def _int(what: str, value: Any) -> int:
    value = getattr(value, "value", value)
    if isinstance(value, bool) or not isinstance(value, int):
        got = expr_text(value) if isinstance(value, PrimExpr) else repr(value)
        raise FragmentError(f"{what} must be a constant integer, got {got}")
    return value


def _tile_shape(m: Any, n: Any, k: Any) -> tuple:
    shape = (_int("m", m), _int("n", n), _int("k", k))
    if shape not in TILE_SHAPES:
        raise FragmentError(f"tile shape m, n, k = {shape} is not one of {list(TILE_SHAPES)}")
    return shape


def _last(first: BufferLoad, rows: int, cols: int) -> BufferLoad:
    idx = list(first.indices)
    idx[-2] = _op.binary("add", idx[-2], rows - 1)
    idx[-1] = _op.binary("add", idx[-1], cols - 1)
    return BufferLoad(first.buffer, tuple(idx))


def _fragment(data: Any, index: Any, shape: tuple, roles: tuple = ()) -> tuple:
    """The first and last element of tile ``index`` of the fragment whose ``.data`` is ``data``,
    and the tile's rows and columns."""
    buf = _owner(data)
    role = FRAGMENT_SCOPES.get(buf.scope)
    if role is not None and roles and role not in roles:
        want = " or ".join(f"wmma.{r}" for r in roles)
        raise FragmentError(f"{buf.name} has scope {buf.scope!r}; a fragment of scope {want} is expected")
    if role is None:  # a buffer of another scope: refused when compiled (intrinsic descriptions parse)
        role = roles[0] if roles else "accumulator"
    _names.shapes[buf.data] = shape
    rows, cols = tile_extent(role, shape)
    dims = [getattr(d, "value", None) for d in buf.shape]
    if None in dims or len(dims) < 2:
        shape_text = ", ".join(expr_text(d) for d in buf.shape)
        raise FragmentError(f"fragment {buf.name} needs a constant shape of two or more dimensions, got ({shape_text})")
    if buf in _names.views and dims[-2:] == [rows, cols] and all(d == 1 for d in dims[:-2]):
        start = (0,) * len(dims)  # a view of one tile: the index names it in the buffer viewed
    elif len(dims) == 2 and dims[0] % rows == 0 and dims[1] % cols == 0:
        per_row, tiles = dims[1] // cols, dims[0] // rows * (dims[1] // cols)
        index = _op.convert(index)
        if not _dt.is_integer(index.dtype):
            raise FragmentError(f"the tile index must be an integer, got {index.dtype}")
        if isinstance(index, IntImm) and not 0 <= index.value < tiles:
            raise FragmentError(f"tile {index.value} of fragment {buf.name}, which holds tiles 0 to {tiles - 1}")
        start = (
            _op.binary("mul", _op.floordiv(index, per_row), rows),
            _op.binary("mul", _op.floormod(index, per_row), cols),
        )
    else:
        raise FragmentError(f"fragment {buf.name} of shape {tuple(dims)} is not made of {rows} x {cols} tiles")
    first = element(buf, start)
    return first, _last(first, rows, cols), (rows, cols)


def _memory(ptr: Any, stride: Any, rows: int, cols: int) -> tuple:
    """The first and last element of a ``rows x cols`` tile at ``ptr`` with row stride ``stride``."""
    if not (isinstance(ptr, Call) and ptr.op == "address_of" and isinstance(ptr.args[0], BufferLoad)):
        got = (
            f"the variable '{ptr.name}' (write the pointer in the call itself)"
            if isinstance(ptr, Var)
            else expr_text(ptr)
        )
        raise FragmentError(f"expected a pointer such as A.access_ptr('r') or T.address_of(A[i, j]), got {got}")
    first = element(ptr.args[0].buffer, ptr.args[0].indices)
    buf, stride = first.buffer, _op.convert(stride)
    if buf.ndim == 1:
        offset = _op.binary("add", _op.binary("mul", stride, rows - 1), cols - 1)
        return first, BufferLoad(buf, (_op.binary("add", first.indices[0], offset),))
    row_length = buffer_strides(buf)[-2]
    same = simplify_expr(_op.binary("eq", _resolve(stride), row_length))
    if not (isinstance(same, IntImm) and same.value):
        raise FragmentError(
            f"stride {expr_text(stride)} is not the row length {expr_text(row_length)} of {buf.name}; a tile "
            f"of a buffer of {buf.ndim} dimensions is a block of its last two (use a 1-d view for other strides)"
        )
    return first, _last(first, rows, cols)


def _layout(layout: Any) -> str:
    layout = getattr(layout, "value", layout)
    if layout not in LAYOUTS:
        raise FragmentError(f"layout must be 'row_major' or 'col_major', got {layout!r}")
    return layout


def tvm_fill_fragment(data: Any, m: Any, n: Any, k: Any, index: Any, value: Any, dtype: str = "handle") -> PrimExpr:
    """``T.tvm_fill_fragment(frag.data, m, n, k, index, value)``: every element of tile ``index``
    of an accumulator fragment becomes ``value``."""
    shape = _tile_shape(m, n, k)
    first, last, _ = _fragment(data, index, shape, ("accumulator",))
    if isinstance(value, (bool, str)) or not isinstance(value, (int, float, PrimExpr)):
        got = f"buffer {value.name}" if isinstance(value, Buffer) else repr(value)[:80]
        raise FragmentError(f"value must be a number, got {got}")
    value = _op.convert(value)
    if not _dt.is_float(value.dtype) and not _dt.is_integer(value.dtype):
        raise FragmentError(f"value must be a number, got a {value.dtype}")
    return Call("handle", FILL, (first, last, *map(_op.convert, shape), value))


def _move(op: str, data: Any, m: Any, n: Any, k: Any, index: Any, ptr: Any, stride: Any, layout: Any) -> PrimExpr:
    shape = _tile_shape(m, n, k)
    first, last, (rows, cols) = _fragment(data, index, shape, () if op == LOAD else ("accumulator",))
    layout = _layout(layout)
    mem_first, mem_last = _memory(ptr, stride, *((rows, cols) if layout == "row_major" else (cols, rows)))
    args = (first, last, *map(_op.convert, shape), mem_first, mem_last, _op.convert(stride), StringImm(layout))
    return Call("handle", op, args)


def tvm_load_matrix_sync(
    data: Any, m: Any, n: Any, k: Any, index: Any, ptr: Any, stride: Any, layout: Any, dtype: str = "handle"
) -> PrimExpr:
    """``T.tvm_load_matrix_sync(frag.data, m, n, k, index, ptr, stride, layout)``: tile ``index``
    of the fragment from memory at ``ptr`` (rows ``stride`` elements apart; ``"col_major"``: the
    tile's columns are the memory's rows)."""
    return _move(LOAD, data, m, n, k, index, ptr, stride, layout)


def tvm_store_matrix_sync(
    data: Any, m: Any, n: Any, k: Any, index: Any, ptr: Any, stride: Any, layout: Any, dtype: str = "handle"
) -> PrimExpr:
    """``T.tvm_store_matrix_sync(frag.data, m, n, k, index, ptr, stride, layout)``: tile ``index``
    of an accumulator fragment to memory at ``ptr``."""
    return _move(STORE, data, m, n, k, index, ptr, stride, layout)


def tvm_mma_sync(d: Any, di: Any, a: Any, ai: Any, b: Any, bi: Any, c: Any, ci: Any, dtype: str = "handle") -> PrimExpr:
    """``T.tvm_mma_sync(d.data, di, a.data, ai, b.data, bi, c.data, ci)``: tile ``di`` of ``d`` =
    tile ``ai`` of ``a`` times tile ``bi`` of ``b`` plus tile ``ci`` of ``c``. The tile shape is
    the one the fills, loads and stores of these fragments use (16 x 16 x 16 if none)."""
    known = {_names.shapes[x] for x in (d, a, b, c) if isinstance(x, Var) and x in _names.shapes}
    if len(known) > 1:
        raise FragmentError(f"the fragments were filled, loaded or stored with different tile shapes {sorted(known)}")
    shape = known.pop() if known else (16, 16, 16)
    tiles = []
    for data, index, role in ((d, di, "accumulator"), (a, ai, "matrix_a"), (b, bi, "matrix_b"), (c, ci, "accumulator")):
        tiles += _fragment(data, index, shape, (role,))[:2]
    return Call("handle", MMA, (*tiles, *map(_op.convert, shape)))


def tvm_access_ptr(ptr_type: Any, data: Any, offset: Any, extent: Any, rw_mask: Any, dtype: str = "handle") -> PrimExpr:
    """``T.tvm_access_ptr(T.type_annotation(dtype), X.data, offset, extent, rw)``: the address of
    element ``offset`` of X's memory (counted from X's first element ``X.elem_offset``)."""
    return Call("handle", "address_of", (pointer_element(data, offset),))


def pointer_element(pointer: Any, offset: Any) -> BufferLoad:
    """The element ``offset`` elements past ``pointer``, where ``pointer`` is ``X.data`` (X's
    memory from its start, as Apache TVM's pointer arguments count: ``X.elem_offset`` first) or an
    address such as ``X.access_ptr("r")``; as an element of the buffer that owns the memory."""
    offset = _op.convert(offset)
    if isinstance(pointer, Call) and pointer.op == "address_of" and isinstance(pointer.args[0], BufferLoad):
        first = pointer.args[0]
        start = _op.convert(first.buffer.elem_offset)
        for index, stride in zip(first.indices, buffer_strides(first.buffer)):
            start = _op.binary("add", start, _op.binary("mul", index, stride))
        return _element_at(first.buffer, _op.binary("add", start, offset))
    return _element_at(_owner(pointer), offset)


def _element_at(buf: Buffer, offset: PrimExpr) -> BufferLoad:
    """Element ``offset`` of ``buf``'s memory, counted from its start (``buf.elem_offset`` first)."""
    rel = simplify_expr(_op.binary("sub", offset, buf.elem_offset))
    if structural_equal(offset, buf.elem_offset) or isinstance(rel, IntImm) and rel.value == 0:
        indices: tuple = (0,) * buf.ndim
    elif not buf.strides or _strides_are_compact(buf):
        indices = unravel_index(rel, buf.shape)
    else:
        raise FragmentError(
            f"offset {expr_text(offset)} inside the strided view {buf.name}; point at its first "
            f"element (offset {buf.name}.elem_offset) or use T.address_of({buf.name}[i, j])"
        )
    return element(buf, indices)


def _strides_are_compact(buf: Buffer) -> bool:
    """Whether ``buf``'s strides are the row-major ones of its shape (``strides=(32, 1)`` for a
    (128, 32) buffer), so that its memory is indexed as if it had none."""
    if len(buf.strides) != len(buf.shape):
        return False
    row_major = buffer_strides(dataclasses.replace(buf, strides=()))
    return all(
        a.value == b.value if isinstance(a, IntImm) and isinstance(b, IntImm) else structural_equal(a, b)
        for a, b in zip(buf.strides, row_major)
    )


def type_annotation(dtype: str = "handle") -> PrimExpr:
    """``T.type_annotation(dtype)``: names a dtype where an intrinsic takes one (T.tvm_access_ptr)."""
    return Call(str(dtype), "type_annotation", ())
