"""Vector expressions (``float32x4`` values: ``T.ramp``, ``T.broadcast``, ``T.shuffle``, loads and
stores through a vector index) spelled lane by lane, so every code generator gets them.

:func:`scalarize_vectors` runs first in the lowering. A store of an ``n``-lane value becomes ``n``
scalar stores, each of one lane's expression (a ramp's lane ``l`` is ``base + l * stride``, a
broadcast's every lane its scalar, a shuffle's lane the lane it picks, arithmetic and math lane by
lane); when the value reads the buffer it stores to, every lane is computed before the first
store, as a vector store does. A vector ``let`` becomes one variable per lane. C compilers and
drivers vectorize the unrolled lanes again where the hardware has vectors.

Not supported, each refused by name: buffers whose element type is a vector, vector conditions
of ``if``, vector loop bounds, and intrinsics without a lane-by-lane meaning.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Optional

from tvm.tir import dtype as _dt
from tvm.tir.analysis import any_node, lanes_of, uses_handle
from tvm.tir.expr import (
    BinaryOp,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    FloatImm,
    IntImm,
    Let,
    Not,
    PrimExpr,
    Select,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer, StmtExprMutator
from tvm.tir.op import binary, bitwise_or, broadcast, is_reinterpret, ramp, shift_left, shift_right
from tvm.tir.stmt import BufferStore, Evaluate, For, IfThenElse, LetStmt, Stmt, seq

from .verify import TIRVerifyError, with_span

#: Calls that build vectors; every other call is applied lane by lane.
VECTOR_OPS = ("ramp", "broadcast", "shuffle")


def _store_lanes(s: BufferStore) -> int:
    return max([lanes_of(s.value), *(lanes_of(i) for i in s.indices)])


def _regroups_lanes(e: Call) -> bool:
    """Whether ``e`` is a reinterpret between dtypes of different lane widths (``uint8x4`` ->
    ``int32``): its lanes are not computed one from one."""
    return is_reinterpret(e) and _dt.bits(e.args[0].dtype) != _dt.bits(e.dtype)


def _ramp_lane(base: PrimExpr, stride: PrimExpr, k: int) -> PrimExpr:
    """Lane ``k`` of ``T.ramp(base, stride, n)``."""
    return base if k == 0 else binary("add", base, binary("mul", stride, k))


def _has_vectors(func: PrimFunc) -> bool:
    """Whether ``func`` holds a vector anywhere (stops at the first)."""
    if any(_dt.lanes(b.dtype) > 1 for b in func.buffer_map.values()):
        return True
    return any_node(func.body, lambda node: isinstance(node, PrimExpr) and lanes_of(node) > 1)


class _Scalarize(StmtExprMutator):
    def __init__(self) -> None:
        self.lane_vars: dict[Var, list[PrimExpr]] = {}  # a vector variable's value per lane
        self.stmt: Optional[Stmt] = None

    def fail(self, msg: str) -> TIRVerifyError:
        span = getattr(self.stmt, "span", None)
        return TIRVerifyError(with_span(msg, span), msg, span)

    def visit_stmt(self, s: Stmt) -> Optional[Stmt]:
        outer, self.stmt = self.stmt, s
        try:
            return super().visit_stmt(s)
        finally:
            self.stmt = outer

    # ---- statements with vector values
    def visit_BufferStore(self, s: BufferStore) -> Optional[Stmt]:
        self._scalar_buffer(s.buffer)
        if _store_lanes(s) == 1:
            return super().visit_BufferStore(s)
        return self._lanewise_store(s, None)

    def _lanewise_store(self, s: BufferStore, predicate: Optional[PrimExpr]) -> Stmt:
        """One scalar store per lane (only where ``predicate``'s lane is true, when given)."""
        n = _store_lanes(s)
        self._scalar_buffer(s.buffer)
        self._one_vector_index(s.buffer, s.indices)
        if lanes_of(s.value) not in (1, n) or (predicate is not None and lanes_of(predicate) not in (1, n)):
            raise self.fail(f"storing a {s.value.dtype} value at {n} lanes of buffer {s.buffer.name}")
        values = [self.lane(s.value, k) for k in range(n)]
        indices = [list(self.lane(i, k) for i in s.indices) for k in range(n)]
        guards = [self.lane(predicate, k) for k in range(n)] if predicate is not None else None
        lets: list[tuple[Var, PrimExpr]] = []
        reads_self = any(
            uses_handle(x, s.buffer.data, loads_only=True) for x in (s.value, *s.indices, predicate) if x is not None
        )
        if reads_self:  # a vector store reads every lane (value, index, predicate) before it writes one

            def early(expr: PrimExpr, name: str) -> PrimExpr:
                if isinstance(expr, (IntImm, FloatImm, Var)):
                    return expr
                var = Var(name, expr.dtype)
                lets.append((var, expr))
                return var

            values = [early(v, f"{s.buffer.name}_lane{k}") for k, v in enumerate(values)]
            indices = [
                [early(i, f"{s.buffer.name}_at{k}_{d}") for d, i in enumerate(idx)] for k, idx in enumerate(indices)
            ]
            if guards is not None:
                guards = [early(g, f"{s.buffer.name}_mask{k}") for k, g in enumerate(guards)]
        stores = [BufferStore(s.buffer, v, tuple(idx), s.span) for v, idx in zip(values, indices)]
        if guards is not None:
            stores = [IfThenElse(g, st, None, s.span) for g, st in zip(guards, stores)]
        body = seq(*stores)
        for var, value in reversed(lets):
            body = LetStmt(var, value, body, s.span)
        return body

    def visit_LetStmt(self, s: LetStmt) -> Optional[Stmt]:
        n = lanes_of(s.value)
        if n == 1:
            return super().visit_LetStmt(s)
        if isinstance(s.value, Call) and s.value.op in ("ramp", "broadcast"):
            return self._uniform_let(s)
        parts = [Var(f"{s.var.name}_{k}", _dt.element_of(s.var.dtype)) for k in range(n)]
        values = [self.lane(s.value, k) for k in range(n)]
        self.lane_vars[s.var] = parts
        body = self._body(self.visit_stmt(s.body))
        for var, value in reversed(list(zip(parts, values))):
            body = LetStmt(var, value, body, s.span)
        return body

    def _uniform_let(self, s: LetStmt) -> Stmt:
        """A vector let of a ramp or a broadcast: one variable for the first lane, the others
        computed from it (``at_0 + 1``, ...), so accesses through it stay visibly consecutive."""
        value = s.value
        first = self.visit_expr(value.args[0])
        base = Var(f"{s.var.name}_0", first.dtype)
        n = lanes_of(value)
        if value.op == "broadcast":
            self.lane_vars[s.var] = [base] * n
        else:
            stride = self.visit_expr(value.args[1])
            self.lane_vars[s.var] = [_ramp_lane(base, stride, k) for k in range(n)]
        return LetStmt(base, first, self._body(self.visit_stmt(s.body)), s.span)

    def visit_IfThenElse(self, s: IfThenElse) -> Optional[Stmt]:
        if lanes_of(s.condition) == 1:
            return super().visit_IfThenElse(s)
        store = s.then_case
        if isinstance(store, BufferStore) and s.else_case is None and _store_lanes(store) == lanes_of(s.condition):
            return self._lanewise_store(store, s.condition)
        raise self.fail(f"an if condition must be one boolean, got a vector of {lanes_of(s.condition)} lanes")

    def visit_For(self, s: For) -> Optional[Stmt]:
        if lanes_of(s.min) > 1 or lanes_of(s.extent) > 1:
            raise self.fail(f"loop {s.loop_var.name} has a vector bound")
        return super().visit_For(s)

    def visit_Evaluate(self, s: Evaluate) -> Optional[Stmt]:
        n = lanes_of(s.value)
        if n == 1:
            return super().visit_Evaluate(s)
        return seq(*(Evaluate(self.lane(s.value, k), s.span) for k in range(n)))

    def mutate_buffer(self, b: Buffer) -> Buffer:
        self._scalar_buffer(b)
        return super().mutate_buffer(b)

    def _one_vector_index(self, b: Buffer, indices: tuple) -> None:
        if sum(lanes_of(i) > 1 for i in indices) > 1:
            raise self.fail(
                f"an access of buffer {b.name} has vector indices in several dimensions; a vector runs "
                f"along one dimension (a region of several is a loop nest)"
            )

    def _scalar_buffer(self, b: Buffer) -> None:
        if _dt.lanes(b.dtype) > 1:
            raise self.fail(
                f"buffer {b.name} has vector elements ({b.dtype}); declare it with the element dtype "
                f"({_dt.element_of(b.dtype)}) and access lanes with a vector index, e.g. {b.name}[T.ramp(i, 1, 4)]"
            )

    # ---- a scalar expression holding a one-lane vector operation (T.shuffle(v, [2]))
    def visit_Call(self, e: Call) -> PrimExpr:
        if e.op in VECTOR_OPS:
            return self._vector_op_lane(e, 0)
        if _regroups_lanes(e):
            return self._regrouped_lane(e, 0)
        return super().visit_Call(e)

    def visit_Let(self, e: Let) -> PrimExpr:
        if lanes_of(e.value) == 1:
            return super().visit_Let(e)
        self._vector_let(e)  # T.let(v, vector, scalar body)
        return self.visit_expr(e.body)

    def _vector_let(self, e: Let) -> None:
        """Bind ``e``'s vector variable to its value's lanes (once, whichever lane asks first)."""
        if e.var not in self.lane_vars:
            self.lane_vars[e.var] = [self.lane(e.value, j) for j in range(lanes_of(e.value))]

    def visit_Var(self, e: Var) -> PrimExpr:
        if e in self.lane_vars:
            raise self.fail(f"vector variable {e.name} is used where one value is expected")
        return e

    # ---- one lane of a vector expression
    def lane(self, e: PrimExpr, k: int) -> PrimExpr:  # noqa: C901 - one case per expression kind
        """Lane ``k`` of ``e``'s value (a scalar ``e`` is the same in every lane)."""
        if lanes_of(e) == 1:
            return self.visit_expr(e)
        if isinstance(e, Var):
            return self.lane_vars[e][k]
        if isinstance(e, Call) and e.op in VECTOR_OPS:
            return self._vector_op_lane(e, k)
        if isinstance(e, BufferLoad):
            self._scalar_buffer(e.buffer)
            self._one_vector_index(e.buffer, e.indices)
            indices = tuple(self.lane(i, k) for i in e.indices)
            return BufferLoad(e.buffer, indices, _dt.element_of(e.dtype), e.span)
        if isinstance(e, (IntImm, FloatImm)):
            return type(e)(_dt.element_of(e.dtype), e.value)
        if isinstance(e, BinaryOp):
            return type(e)(self.lane(e.a, k), self.lane(e.b, k), e.span)
        if isinstance(e, Not):
            return Not(self.lane(e.a, k), span=e.span)
        if isinstance(e, Cast):
            return Cast(_dt.element_of(e.dtype), self.lane(e.value, k), e.span)
        if isinstance(e, Select):
            parts = (self.lane(x, k) for x in (e.condition, e.true_value, e.false_value))
            return Select(*parts, _dt.element_of(e.dtype), e.span)
        if isinstance(e, Let) and lanes_of(e.value) == 1:  # a scalar bound for a vector body
            return Let(e.var, self.visit_expr(e.value), self.lane(e.body, k), _dt.element_of(e.dtype), e.span)
        if isinstance(e, Let):
            self._vector_let(e)
            return self.lane(e.body, k)
        if isinstance(e, Call) and _regroups_lanes(e):
            return self._regrouped_lane(e, k)
        if isinstance(e, Call):
            return Call(_dt.element_of(e.dtype), e.op, tuple(self.lane(a, k) for a in e.args), e.span)
        raise self.fail(f"{type(e).__name__} {getattr(e, 'op', '')} of {e.dtype} cannot be computed lane by lane")

    def _regrouped_lane(self, e: Call, k: int) -> PrimExpr:
        """Lane ``k`` of a reinterpret whose lanes have another width than its operand's: the
        operand's lanes as unsigned bits, packed (lane 0 lowest) or shifted out, little-endian."""
        src, dst = e.args[0], _dt.element_of(e.dtype)
        src_bits, dst_bits = _dt.bits(src.dtype), _dt.bits(dst)

        def bits_of(j: int) -> PrimExpr:
            lane = self.lane(src, j)
            return lane if _dt.is_uint(lane.dtype) else Call(f"uint{src_bits}", e.op, (lane,), e.span)

        word = f"uint{max(src_bits, dst_bits)}"
        if dst_bits > src_bits:  # several source lanes make one
            r = dst_bits // src_bits
            parts = [shift_left(Cast(word, bits_of(k * r + j)), IntImm(word, j * src_bits)) for j in range(r)]
            packed = functools.reduce(bitwise_or, parts)
        else:  # one source lane holds several
            r = src_bits // dst_bits
            shifted = shift_right(bits_of(k // r), IntImm(word, (k % r) * dst_bits))
            packed = Cast(f"uint{dst_bits}", shifted)
        return packed if dst == packed.dtype else Call(dst, e.op, (packed,), e.span)

    def _vector_op_lane(self, e: Call, k: int) -> PrimExpr:
        if e.op == "ramp":
            return _ramp_lane(self.visit_expr(e.args[0]), self.visit_expr(e.args[1]), k)
        if e.op == "broadcast":
            return self.visit_expr(e.args[0])
        count = e.args[0].value
        vectors, picks = e.args[1 : 1 + count], e.args[1 + count :]
        pick = picks[k].value
        for v in vectors:
            n = lanes_of(v)
            if pick < n:
                return self.lane(v, pick)
            pick -= n
        raise self.fail(f"shuffle picks lane {picks[k].value}, past the end of its vectors")


def masked_store(store: BufferStore, predicate: PrimExpr) -> Stmt:
    """``store`` (a vector store) writing only the lanes whose ``predicate`` lane is true: an ``if``
    on the vector predicate around the store, which :func:`scalarize_vectors` spells per lane."""
    n = _store_lanes(store)
    if lanes_of(predicate) not in (1, n) or not _dt.is_bool(_dt.element_of(predicate.dtype)):
        raise TypeError(f"a store of {n} lanes needs a predicate of {n} booleans, got {predicate.dtype}")
    if lanes_of(predicate) == 1 and n > 1:
        predicate = broadcast(predicate, n)
    return IfThenElse(predicate, store, None, store.span)


class _UnpackVectorBuffers(BufferReplacer):
    """Buffers of vector elements (``T.Buffer((4,), "float32x4")``) as buffers of their element
    type with the lanes as one more, innermost dimension; each access reads or writes all the
    lanes of one element (an index vector ``T.ramp(0, 1, lanes)`` in that dimension)."""

    def replacement(self, b: Buffer) -> Optional[dict]:
        lanes = _dt.lanes(b.dtype)
        if lanes == 1 or b.strides:
            return None  # strided vector elements stay refused, naming the buffer
        offset = b.elem_offset
        if not (isinstance(offset, IntImm) and offset.value == 0):
            offset = binary("mul", offset, lanes)
        return {"shape": (*b.shape, IntImm("int32", lanes)), "dtype": _dt.element_of(b.dtype), "elem_offset": offset}

    def _element(self, b: Buffer, indices: tuple, span) -> tuple:
        if any(lanes_of(i) > 1 for i in indices):
            raise TIRVerifyError(
                with_span(
                    f"buffer {b.name} has vector elements ({b.dtype}) and a vector index: use the element "
                    f"dtype ({_dt.element_of(b.dtype)}) to access several elements at once",
                    span,
                )
            )
        return (*indices, ramp(IntImm(indices[0].dtype if indices else "int32", 0), 1, _dt.lanes(b.dtype)))

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        new = self.mutate_buffer(e.buffer)
        if new is e.buffer:
            return super().visit_BufferLoad(e)
        return BufferLoad(new, self._element(e.buffer, self._exprs(e.indices), e.span), e.buffer.dtype, e.span)

    def visit_BufferStore(self, s: BufferStore) -> Stmt:
        new = self.mutate_buffer(s.buffer)
        if new is s.buffer:
            return super().visit_BufferStore(s)
        indices = self._element(s.buffer, self._exprs(s.indices), s.span)
        return BufferStore(new, self.visit_expr(s.value), indices, s.span)


def scalarize_vectors(func: PrimFunc) -> PrimFunc:
    """``func`` with every vector value computed lane by lane (see the module docstring); the
    function itself when it has none. Buffers of vector elements become buffers of their element
    type with one more dimension, the lanes (a parameter ``T.Buffer((n,), "float32x4")`` takes an
    array of shape ``(n, 4)``)."""
    func = _UnpackVectorBuffers().rewrite(func)
    if not _has_vectors(func):
        return func
    body = _Scalarize().visit_stmt(func.body)
    return dataclasses.replace(func, body=StmtExprMutator._body(body), buffer_map=dict(func.buffer_map))


__all__ = ["VECTOR_OPS", "lanes_of", "masked_store", "scalarize_vectors"]
