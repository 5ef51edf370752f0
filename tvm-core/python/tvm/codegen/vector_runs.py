"""Runs of scalar stores printed as one vector store, for C-like languages with vector types.

The lowering spells every vector lane by lane (:func:`tvm.tir.transform.scalarize_vectors`), so
every code generator can print it. A printer whose language has vector types (its
``VECTOR_SPELLING``) gathers the lanes again: a run of stores ``B[i], B[i+1], ..., B[i+n-1]``
(one buffer, indices one element apart, no store reading ``B`` or calling an extern function)
becomes one store of an ``n``-lane value built lane-parallel: an expression equal in every lane
is broadcast, loads one element apart are one vector load, ``+ - *`` (and ``/`` of floats) and
casts apply to whole vectors, and any other expression is the vector of its lanes. No store of the run reads what an
earlier one wrote, so the vector store writes what the scalar stores would.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.analysis import any_node, linear_form, uses_handle

#: Element dtypes a vector may have: wider integers keep C's promotions out of the question.
VECTOR_ELEMENTS = ("int32", "uint32", "int64", "uint64", "float32", "float64")

_OPS = {E.Add: "+", E.Sub: "-", E.Mul: "*"}


#: Calls whose effects or results may depend on when they run: a run never holds them (a vector's
#: lanes are computed in no particular order).
_ORDERED_CALLS = ("call_extern", "call_pure_extern", "call_packed", "tvm_storage_sync")


def _has_ordered_call(e: E.PrimExpr) -> bool:
    return any_node(e, lambda n: isinstance(n, E.Call) and str(n.op).removeprefix("tir.") in _ORDERED_CALLS)


def _offset(index: E.PrimExpr, base: tuple[dict, int]) -> int | None:
    """How many elements ``index`` is past ``base`` (a linear form), None when not constant."""
    terms, const = linear_form(index)
    return const - base[1] if terms == base[0] else None


def _store_of(s: S.Stmt) -> S.BufferStore | None:
    """``s`` when it is a store a run may hold: one flat index, a vector-able element type, no
    read of its own buffer."""
    if not isinstance(s, S.BufferStore) or len(s.indices) != 1 or s.value.dtype != s.buffer.dtype:
        return None
    if s.buffer.dtype not in VECTOR_ELEMENTS or s.buffer.strides:
        return None
    if uses_handle(s.value, s.buffer.data, loads_only=True) or uses_handle(s.indices[0], s.buffer.data):
        return None
    return None if _has_ordered_call(s.value) else s


def _run_length(stmts: Sequence[S.Stmt], start: int, accessible: Callable[[Any], bool]) -> int:
    """Length of the run of consecutive stores starting at ``stmts[start]`` (0 if none)."""
    first = _store_of(stmts[start])
    if first is None or not accessible(first.buffer):
        return 0
    base = linear_form(first.indices[0])
    n = 1
    while start + n < len(stmts):
        s = _store_of(stmts[start + n])
        if s is None or s.buffer.data is not first.buffer.data or s.buffer.dtype != first.buffer.dtype:
            break
        if _offset(s.indices[0], base) != n:
            break
        n += 1
    return n


def group_store_runs(
    stmts: Sequence[S.Stmt], widths: Sequence[int], accessible: Callable[[Any], bool] = lambda buffer: True
) -> list:
    """``stmts`` with each run of consecutive stores cut into the widest ``widths`` that fit: a
    run is a list of stores, anything else the statement itself. Only buffers ``accessible``
    says yes to are stored to by vectors."""
    out: list = []
    i = 0
    while i < len(stmts):
        n = _run_length(stmts, i, accessible)
        width = max((w for w in widths if w <= n), default=0)
        if width >= 2:
            out.append(list(stmts[i : i + width]))
            i += width
        else:
            out.append(stmts[i])
            i += 1
    return out


class VectorBuilder:
    """Prints ``n`` lane expressions as one vector expression through ``printer`` (a
    :class:`~tvm.codegen.c_family.CFamilyPrinter` with a ``VECTOR_SPELLING`` table)."""

    def __init__(self, printer: Any) -> None:
        self.p = printer
        self.spell = printer.VECTOR_SPELLING

    def vector_type(self, dtype: str, n: int) -> str:
        """The language's type of ``n`` lanes of ``dtype``."""
        return self.p.type_name(f"{dtype}x{n}")

    def pointer(self, load_or_store: Any) -> str:
        """The address of element ``indices[0]`` of the access's buffer."""
        buf = load_or_store.buffer
        return f"{self.p.buffer_ref(buf)} + {self.p.flat_index(buf, load_or_store.indices)}"

    def store(self, stores: list[S.BufferStore]) -> str:
        """The statement storing the run ``stores``."""
        value = self.build([s.value for s in stores])
        return self.spell["store"].format(n=len(stores), value=value, ptr=self.pointer(stores[0]))

    def build(self, lanes: list[E.PrimExpr]) -> str:
        """One vector expression whose lane ``k`` is ``lanes[k]`` (all of one dtype)."""
        n, first = len(lanes), lanes[0]
        vtype = self.vector_type(first.dtype, n)
        same_kind = all(type(e) is type(first) for e in lanes)
        op = _OPS.get(type(first)) or ("/" if isinstance(first, E.Div) and _dt.is_float(first.dtype) else None)
        # the lanes' texts only where no operation splits them: printing every lane's whole
        # expression at each level of a deep one was quadratic in its depth
        if same_kind and op is not None and not all(e is first for e in lanes):
            return f"({self.build([e.a for e in lanes])} {op} {self.build([e.b for e in lanes])})"
        texts = [self.p.expr(e) for e in lanes]
        if all(t == texts[0] for t in texts):
            return self.spell["broadcast"].format(type=vtype, value=texts[0])
        if same_kind and isinstance(first, E.BufferLoad) and self._consecutive(lanes):
            return self.spell["load"].format(n=n, ptr=self.pointer(first))
        if same_kind and isinstance(first, E.Cast) and self._castable(lanes):
            return self.spell["cast"].format(type=vtype, value=self.build([e.value for e in lanes]))
        return self.spell["of"].format(type=vtype, values=", ".join(texts))

    def _consecutive(self, loads: list[E.BufferLoad]) -> bool:
        first = loads[0]
        if first.buffer.dtype not in VECTOR_ELEMENTS or len(first.indices) != 1 or first.buffer.strides:
            return False
        if not self.p.vector_accessible(first.buffer):
            return False
        base = linear_form(first.indices[0])
        return all(
            e.buffer.data is first.buffer.data and len(e.indices) == 1 and _offset(e.indices[0], base) == k
            for k, e in enumerate(loads)
        )

    def _castable(self, casts: list[E.Cast]) -> bool:
        src = casts[0].value.dtype
        if not self.p.converts_plainly(src, casts[0].dtype):
            return False  # the printer's scalar conversion gives NumPy's result; a vector one would not
        return src in VECTOR_ELEMENTS and all(e.value.dtype == src for e in casts)


__all__ = ["VECTOR_ELEMENTS", "VectorBuilder", "group_store_runs"]
