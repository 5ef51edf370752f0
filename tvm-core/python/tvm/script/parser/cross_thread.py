"""Reductions across the threads of a block, as TVMScript writes them in two ways:

* a block whose reduction axis is bound to a ``threadIdx`` loop
  (``vk = T.axis.reduce(128, k)`` with ``k`` in ``T.thread_binding(128, "threadIdx.x")``) and
  whose body updates one element (``B[vi] = B[vi] + A[vi, vk]``, or ``*``, ``T.max``,
  ``T.min``): lowered as written, every thread would update ``B[vi]`` at once (a data race);
* ``T.tvm_thread_allreduce(n, value.., cond, result[i].., k, ...)`` under
  ``T.attr(T.comm_reducer(lambda x, y: ..., [identity]), "reduce_scope", ...)``, of one value
  or of ``n`` at once (an argmax's index and value: one scratch buffer each, combined together).

Both become the same code, which every thread of the block runs: its value (the reduction's
identity where the block's predicate or ``cond`` is false) goes into a shared-memory scratch
buffer with one slot per thread; a tree of ``log2(extent)`` steps, each followed by a barrier,
combines the slots of the threads that differ only in the reduced thread indices; then the
block's update is done once per group (by the thread whose reduced indices are 0, with the
group's total in place of its own value; by every thread when the updated buffer is local, so
each keeps the total), or every thread reads the total into ``result``.
Thread extents must be constants; the code must be reached by every thread of the block (the
barriers), as Apache TVM requires too. A block without ``T.init`` that updates only ``local``
buffers is not a reduction block (as in Apache TVM): each thread accumulates its own partial
result, as the in-thread half of a lowered cross-thread reduction does.
"""

from __future__ import annotations

import itertools
import math
import weakref
from dataclasses import dataclass
from typing import Callable, Optional

from tvm.tir import op as _op
from tvm.tir.analysis import any_node, free_vars, structural_equal
from tvm.tir.functor import StmtExprMutator, post_order_visit, substitute
from tvm.tir.expr import Add, And, Buffer, BufferLoad, FloatImm, IntImm, Max, Min, Mul, PrimExpr, Select, Var, const
from tvm.tir.stmt import Allocate, BufferStore, Evaluate, IfThenElse, LetStmt, SeqStmt, Stmt, seq, statements
from tvm.tir.printer import expr_text
from tvm.tir.transform.simplify import simplify_expr


class CrossThreadError(ValueError):
    """A cross-thread reduction this lowering cannot express (the message says which part)."""


@dataclass
class ThreadLoop:
    """An enclosing thread-bound loop: its variable, tag, extent and start (tag :data:`PARALLEL`
    for a ``T.parallel`` loop, whose iterations run at once too)."""

    var: Var
    tag: str
    extent: PrimExpr
    start: Optional[PrimExpr] = None  # None: 0

    @property
    def index(self) -> PrimExpr:
        """The hardware index the loop runs over: its variable less its start."""
        if self.start is None or (isinstance(self.start, IntImm) and self.start.value == 0):
            return self.var
        return _op.binary("sub", self.var, self.start)


#: The tag of a ``T.parallel`` loop among the enclosing loops.
PARALLEL = "parallel"

_FLOATS = ("float16", "float32", "float64", "bfloat16", "float8_e5m2", "float8_e4m3fn")

#: Float dtypes with an infinity, and the largest finite value of one without (float8_e4m3fn)
_WITH_INFINITY = ("float16", "float32", "float64", "bfloat16", "float8_e5m2")
_LARGEST_FINITE = {"float8_e4m3fn": 448.0}


def _extreme(dtype: str, sign: int) -> PrimExpr:
    """The identity of a max (``sign`` -1) or min (+1) of ``dtype``, which the threads a block's
    T.where leaves out contribute: an infinity where the dtype has one (the largest finite value
    turned a row of -inf into -3.4e38), else the dtype's extreme value."""
    if dtype in _WITH_INFINITY:
        return FloatImm(dtype, sign * math.inf)
    if dtype in _LARGEST_FINITE:
        return FloatImm(dtype, sign * _LARGEST_FINITE[dtype])
    return _op.min_value(dtype) if sign < 0 else _op.max_value(dtype)


#: The update operators a block reduction may use: op name, identity for a dtype.
_COMBINERS: dict[type, tuple[str, Callable[[str], PrimExpr]]] = {
    Add: ("add", lambda dt: FloatImm(dt, -0.0) if dt in _FLOATS else const(0, dt)),  # -0.0 + x is x, -0.0 too
    Mul: ("mul", lambda dt: const(1, dt)),
    Max: ("max", lambda dt: _extreme(dt, -1)),
    Min: ("min", lambda dt: _extreme(dt, 1)),
}

#: The guards the parser made of a block's ``T.init`` and ``T.where`` (a user's own ``if`` is
#: neither: taken for one, it ran once, or guarded the reduction with the accumulator's value)
INIT_GUARDS: "weakref.WeakSet[IfThenElse]" = weakref.WeakSet()
WHERE_GUARDS: "weakref.WeakSet[IfThenElse]" = weakref.WeakSet()

_names = itertools.count()


def _sync(span=None) -> Stmt:
    """A block-wide barrier of the reduction written at ``span`` (an error about it points there)."""
    return Evaluate(_op.tvm_storage_sync("shared"), span)


def _mentions(e: Optional[PrimExpr], names: set) -> bool:
    return e is not None and any(v in names for v in free_vars(e))


def allreduce(
    values: list[PrimExpr],
    valid: Optional[PrimExpr],
    combine: Callable[[list[PrimExpr], list[PrimExpr]], list[PrimExpr]],
    identities: list[PrimExpr],
    reduced: list[Var],
    threads: list[ThreadLoop],
    tail: Callable[[list[PrimExpr]], list[Stmt]],
    span=None,
) -> Stmt:
    """Every thread's ``values`` (``identities`` where ``valid`` is false) combined over the
    threads that differ only in ``reduced`` (variables of ``threads``, the enclosing ``threadIdx``
    loops) by ``combine(own, partner)``, a list of as many values (one for a sum; an index and a
    value for an argmax); ``tail(totals)`` is what runs next, each total the same load for every
    thread of a group."""
    extents = []
    for loop in threads:
        if not isinstance(loop.extent, IntImm):
            raise CrossThreadError(
                f"a cross-thread reduction needs constant thread extents; {loop.tag} has {expr_text(loop.extent)}"
            )
        extents.append(loop.extent.value)
    strides = [math.prod(extents[i + 1 :]) for i in range(len(extents))]  # row-major over the loops
    slot: PrimExpr = const(0, "int32")
    for loop, stride in zip(threads, strides):
        slot = _op.binary("add", slot, _op.binary("mul", loop.var, stride))
    scratch = [Buffer(f"red_buf{next(_names)}", (math.prod(extents),), v.dtype, scope="shared") for v in values]
    body: list[Stmt] = []
    for buf, value, identity in zip(scratch, values, identities):
        body.append(BufferStore(buf, value if valid is None else Select(valid, value, identity), (slot,)))
    body.append(_sync(span))
    base: PrimExpr = const(0, "int32")  # the group's first slot: its thread indices but the reduced ones
    for loop, stride in zip(threads, strides):
        if loop.var not in reduced:
            base = _op.binary("add", base, _op.binary("mul", loop.var, stride))
    by_var = {loop.var: (ext, stride) for loop, ext, stride in zip(threads, extents, strides)}
    for var in reduced:
        lanes, stride = by_var[var]
        step = 1 << ((lanes - 1).bit_length() - 1) if lanes > 1 else 0  # one thread: nothing to combine
        while step >= 1:
            cond = _op.binary("lt", var, step)
            if lanes & (lanes - 1):  # not a power of two: the partner may be past the end
                cond = _op.binary("and", cond, _op.binary("lt", _op.binary("add", var, step), lanes))
            partner = _op.binary("add", slot, step * stride)
            body += [IfThenElse(cond, _combine_slots(scratch, slot, partner, combine), None, span), _sync(span)]
            step //= 2
    body += tail([BufferLoad(buf, (base,)) for buf in scratch])
    body.append(_sync(span))
    out = seq(*body)
    for buf in reversed(scratch):
        out = Allocate(buf, out, span)
    return out


def _combine_slots(
    scratch: list[Buffer], slot: PrimExpr, partner: PrimExpr, combine: Callable[..., list[PrimExpr]]
) -> Stmt:
    """``slot`` of every scratch buffer = ``combine`` of its values and ``partner``'s; every new
    value is computed (into a let) before any is stored, as each may read all old ones."""
    new = combine([BufferLoad(b, (slot,)) for b in scratch], [BufferLoad(b, (partner,)) for b in scratch])
    if len(new) != len(scratch):
        raise CrossThreadError(f"the reducer combines {len(scratch)} value(s) into {len(new)}")
    return _store_together([BufferStore(b, v, (slot,)) for b, v in zip(scratch, new)], "next")


def _store_together(stores: list[BufferStore], suffix: str) -> Stmt:
    """``stores`` as if at once: with several, every value is computed (into a let named after
    its buffer and ``suffix``) before any is stored, as each may read the others' elements."""
    if len(stores) == 1:
        return stores[0]
    temps = [Var(f"{st.buffer.name}_{suffix}", st.buffer.dtype) for st in stores]
    out: Stmt = seq(*[BufferStore(st.buffer, t, st.indices, st.span) for st, t in zip(stores, temps)])
    for t, st in reversed(list(zip(temps, stores))):
        out = LetStmt(t, st.value, out)
    return out


def _conjuncts(e: PrimExpr) -> list[PrimExpr]:
    return _conjuncts(e.a) + _conjuncts(e.b) if isinstance(e, And) else [e]


def _all(conds: list[PrimExpr]) -> Optional[PrimExpr]:
    out = None
    for c in conds:
        out = c if out is None else _op.binary("and", out, c)
    return out


@dataclass
class _Reduction:
    """A reduction of a block: ``stores`` (one element each) combine their elements with the
    thread's ``values`` by ``combine(elements, values)`` (lists of as many values), starting from
    ``identities``."""

    stores: list[BufferStore]
    values: list[PrimExpr]
    combine: Callable[[list[PrimExpr], list[PrimExpr]], list[PrimExpr]]
    identities: list[PrimExpr]


def _binary_reduction(store: BufferStore, value: PrimExpr, op: type) -> _Reduction:
    """``store``'s element combined with ``value`` by ``op`` (a key of _COMBINERS)."""
    name, identity_of = _COMBINERS[op]
    return _Reduction([store], [value], lambda xs, ys: [_op.binary(name, xs[0], ys[0])], [identity_of(value.dtype)])


def _owns(load: PrimExpr, store: BufferStore) -> bool:
    """Whether ``load`` reads the element ``store`` writes."""
    return (
        isinstance(load, BufferLoad)
        and load.buffer is store.buffer
        and all(structural_equal(i, j) for i, j in zip(load.indices, store.indices))
    )


class _Replace(StmtExprMutator):
    """Each subexpression structurally equal to a key of ``pairs`` becomes its value."""

    def __init__(self, pairs: list[tuple[PrimExpr, PrimExpr]]):
        self.pairs = pairs

    def visit_expr(self, e: PrimExpr) -> PrimExpr:
        for old, new in self.pairs:
            if structural_equal(e, old):
                return new
        return super().visit_expr(e)


def _select_reduction(stores: list[BufferStore], values: list[PrimExpr], init: Optional[Stmt]) -> Optional[_Reduction]:
    """Updates ``B_k[i] = T.Select(C, B_k[i], y_k)`` sharing one condition ``C`` of the elements
    and the ``y``s (an argmax: keep the best index and value, or take the new ones), with a
    ``T.init`` giving each element's start: one reduction of all of them; None otherwise."""
    if init is None or len({id(x.buffer) for x in stores}) != len(stores):
        return None
    starts = {}
    for st in init.then_case.seq if isinstance(init.then_case, SeqStmt) else [init.then_case]:
        if isinstance(st, BufferStore):
            starts.update({k: st.value for k, x in enumerate(stores) if _owns(BufferLoad(st.buffer, st.indices), x)})
    if len(starts) != len(stores) or not all(isinstance(v, Select) for v in values):
        return None
    cond = values[0].condition
    ys = [v.false_value for v in values]
    if not all(structural_equal(v.condition, cond) and _owns(v.true_value, x) for v, x in zip(values, stores)):
        return None
    if any(any_node(y, lambda n: isinstance(n, BufferLoad) and any(n.buffer is x.buffer for x in stores)) for y in ys):
        return None
    xvars = [Var(f"x{k}", x.buffer.dtype) for k, x in enumerate(stores)]
    yvars = [Var(f"y{k}", y.dtype) for k, y in enumerate(ys)]
    pairs = [(BufferLoad(x.buffer, x.indices), v) for x, v in zip(stores, xvars)] + list(zip(ys, yvars))
    generic = _Replace(pairs).visit_expr(cond)
    if any_node(generic, lambda n: isinstance(n, BufferLoad)):
        return None  # the condition reads something other than the elements and the values

    def combine(xs: list[PrimExpr], others: list[PrimExpr]) -> list[PrimExpr]:
        c = substitute(generic, dict(zip(xvars + yvars, xs + others)))
        return [Select(c, x, y) for x, y in zip(xs, others)]

    return _Reduction(stores, ys, combine, [starts[k] for k in range(len(stores))])


def _local_stores(s: Stmt) -> bool:
    """Whether every store of ``s`` is to a ``local`` buffer (a thread's own memory)."""
    stores: list[BufferStore] = []
    post_order_visit(s, lambda n: stores.append(n) if isinstance(n, BufferStore) else None)
    return bool(stores) and all(x.buffer.scope == "local" for x in stores)


def _updates(s: Stmt, init: Optional[Stmt], shape: str) -> list[_Reduction]:
    """The reductions of a block body after its init: one update, or several independent ones
    (each reading only its own element), possibly through ``T.let`` values (as dlight writes a
    sum and a sum of squares), or an argmax's selects (one reduction of two elements)."""
    lets: dict[Var, PrimExpr] = {}
    while isinstance(s, LetStmt):
        lets[s.var] = substitute(s.value, lets)
        s = s.body
    stores = statements(s)
    if not all(isinstance(x, BufferStore) for x in stores):
        raise CrossThreadError(shape)
    values = [substitute(x.value, lets) if lets else x.value for x in stores]
    selected = _select_reduction(stores, values, init)
    if selected is not None:
        return [selected]
    updated = {x.buffer.data for x in stores}
    if len(updated) != len(stores):  # two updates of one buffer are not independent reductions
        raise CrossThreadError(shape)
    out = []
    for store, combined in zip(stores, values):
        if type(combined) not in _COMBINERS:
            raise CrossThreadError(shape)
        own = [x for x in (combined.a, combined.b) if _owns(x, store)]
        value = (combined.b if own[0] is combined.a else combined.a) if own else None
        if value is None or any_node(value, lambda n: isinstance(n, BufferLoad) and n.buffer.data in updated):
            raise CrossThreadError(shape)
        out.append(_binary_reduction(store, value, type(combined)))
    return out


def _racing(threads: list[ThreadLoop], kind: Callable[[str], bool], reduce_bindings: list, spatial: list) -> list:
    """The variables of the loops of ``kind`` whose iterations run at once and share a total: a
    reduction axis is bound to them and no spatial axis (which would give each its own)."""
    return [
        t.var
        for t in threads
        if kind(t.tag)
        and any(_mentions(b, {t.var}) for b in reduce_bindings)
        and not any(_mentions(b, {t.var}) for b in spatial)
    ]


def lower_block_reduction(
    body: Stmt,
    block: str,
    reduce_bindings: list[PrimExpr],
    threads: list[ThreadLoop],
    span=None,
    spatial_bindings: tuple = (),
) -> Stmt:
    """``body`` (a parsed block: its iteration variables' lets, an optional ``T.where`` guard,
    an optional ``T.init`` and its updates) as a cross-thread reduction when a reduction axis is
    bound to a ``threadIdx`` loop; unchanged otherwise."""
    across_blocks = _racing(threads, lambda tag: tag.startswith("blockIdx"), reduce_bindings, spatial_bindings)
    if across_blocks:  # blocks cannot wait for each other: every block would race on the total
        raise CrossThreadError(
            f"block '{block}' reduces over {', '.join(v.name for v in across_blocks)}, which is bound to blockIdx: "
            f"blocks cannot combine partial results (they would race on the total); bind the reduction axis to "
            f"threadIdx or keep it a serial loop"
        )
    in_parallel = _racing(threads, lambda tag: tag == PARALLEL, reduce_bindings, spatial_bindings)
    if in_parallel:  # its iterations run at once: each would read and write the total unordered
        raise CrossThreadError(
            f"block '{block}' reduces over {', '.join(v.name for v in in_parallel)}, a T.parallel loop: its "
            f"iterations run at the same time and would race on the total; keep the reduction axis a serial loop "
            f"(parallelize a spatial axis instead)"
        )
    in_scope = [t for t in threads if t.tag.startswith("threadIdx")]
    reduced = [t.var for t in in_scope if any(_mentions(b, {t.var}) for b in reduce_bindings)]
    if not reduced:
        return body
    if any(isinstance(t.extent, IntImm) and t.extent.value == 0 for t in in_scope if t.var in reduced):
        return Evaluate(IntImm("int32", 0), span)  # no thread runs the block: nothing is reduced
    lets, where, s = [], None, body
    while True:  # the iteration variables' lets and the T.where guard, written in either order
        if isinstance(s, LetStmt):
            lets.append(s)
            s = s.body
        elif where is None and isinstance(s, IfThenElse) and s in WHERE_GUARDS:
            where, s = s.condition, s.then_case
        else:
            break
    init = None
    if isinstance(s, SeqStmt) and len(s.seq) >= 2 and s.seq[0] in INIT_GUARDS:
        init, s = s.seq[0], (s.seq[1] if len(s.seq) == 2 else SeqStmt(list(s.seq[1:])))
    shape = (
        f"block '{block}' reduces over {', '.join(v.name for v in reduced)} (bound to threadIdx): its body must be "
        f"updates such as B[i] = B[i] + value (or *, T.max, T.min), each of its own element, after an optional "
        f"T.init"
    )
    if init is None and _local_stores(s):
        return body  # no T.init: not a reduction block; each thread accumulates its own copy
    updates = _updates(s, init, shape)
    written = {st.buffer.data for u in updates for st in u.stores}
    if where is not None and any_node(where, lambda n: isinstance(n, BufferLoad) and n.buffer.data in written):
        raise CrossThreadError(f"block '{block}': its T.where reads what the reduction writes; a predicate of the "
                               f"reduction may read its inputs only")  # fmt: skip
    reduced_lets = [let for let in lets if _mentions(let.value, set(reduced))]  # block vars of the reduced threads
    reduce_vars = {let.var for let in reduced_lets} | set(reduced)
    for st in (st for u in updates for st in u.stores):
        if any(_mentions(i, reduce_vars) for i in st.indices):
            element = f"{st.buffer.name}[{', '.join(expr_text(i) for i in st.indices)}]"
            raise CrossThreadError(
                f"block '{block}': the reduced element {element} depends on the thread-bound reduction axis"
            )
    init_when: Optional[PrimExpr] = None  # the group's first step, whichever thread runs the update
    if init is not None:
        zero = {v: const(0, v.dtype) for v in reduced}
        zero.update({let.var: substitute(let.value, zero) for let in reduced_lets})
        condition = simplify_expr(substitute(init.condition, zero))
        if not (isinstance(condition, IntImm) and condition.value):  # else no other reduction axis: always
            init_when = condition
    parts = _conjuncts(where) if where is not None else []
    guards = _Guards(
        _all([p for p in parts if not _mentions(p, reduce_vars)]), _all([_op.binary("eq", v, 0) for v in reduced])
    )
    inits = _inits_by_update(init, init_when, updates, block)
    out: Optional[Stmt] = None
    for u, u_init in zip(reversed(updates), reversed(inits)):  # built innermost first: each runs after the previous
        out = _reduce_one(u, where, reduced, in_scope, u_init, guards, out, span)
    for let in reversed(lets):
        out = LetStmt(let.var, let.value, out, let.span)
    return out


def _inits_by_update(
    init: Optional[IfThenElse], when: Optional[PrimExpr], updates: list, block: str
) -> list[Optional[Stmt]]:
    """The body of ``init`` (the block's T.init guard), under ``when`` (None: always), split
    between the updates: each gets the stores of its own buffers, so that a local buffer's init
    runs in every thread while a shared one's runs in the group's first. An init that is not such
    stores goes whole with the first update (all of one scope)."""
    if init is None:
        return [None] * len(updates)
    body = init.then_case
    stores = statements(body)
    owners = [{st.buffer.data for st in u.stores} for u in updates]
    split = all(isinstance(x, BufferStore) and sum(x.buffer.data in o for o in owners) == 1 for x in stores)
    if not split:
        if len({st.buffer.scope == "local" for u in updates for st in u.stores}) > 1:
            raise CrossThreadError(f"block '{block}': its T.init must be stores of the reduced buffers when it "
                                   f"reduces into local and shared buffers at once")  # fmt: skip
        whole = body if when is None else IfThenElse(when, body, None, init.span)
        return [whole] + [None] * (len(updates) - 1)
    out: list[Optional[Stmt]] = []
    for owned in owners:
        mine = [x for x in stores if x.buffer.data in owned]
        part = seq(*mine) if mine else None
        if part is not None and when is not None:
            part = IfThenElse(when, part, None, init.span)
        out.append(part)
    return out


@dataclass
class _Guards:
    """Who performs a reduction's update: where the block's predicate allows (``write``), and in
    shared memory only the group's first thread (``lane0``)."""

    write: Optional[PrimExpr]
    lane0: Optional[PrimExpr]


def _reduce_one(
    r: _Reduction,
    where: Optional[PrimExpr],
    reduced: list[Var],
    threads: list[ThreadLoop],
    init: Optional[Stmt],
    guards: _Guards,
    then: Optional[Stmt],
    span=None,
) -> Stmt:
    """The allreduce of one reduction, its update (after ``init``), then ``then``."""

    def tail(totals: list[PrimExpr]) -> list[Stmt]:
        new = r.combine([BufferLoad(st.buffer, st.indices) for st in r.stores], totals)
        update = _store_together(
            [BufferStore(st.buffer, v, st.indices, st.span) for st, v in zip(r.stores, new)], "total"
        )
        if init is not None:
            update = seq(init, update)
        if guards.write is not None:
            update = IfThenElse(guards.write, update, None, span)
        if any(st.buffer.scope != "local" for st in r.stores):  # local: every thread keeps the total
            update = IfThenElse(guards.lane0, update, None, span)
        return [update] if then is None else [update, then]

    return allreduce(r.values, where, r.combine, r.identities, reduced, threads, tail, span)
