"""Index arithmetic in 32 bits for targets without int64: ``narrow_int64_indices`` rewrites a
kernel's ``int64`` scalars (parameters, loop, thread and let variables, constants, the arithmetic
over them, and casts of bools and of 32-bit or narrower signed integers to ``int64``) to ``int32``, as Apache
TVM's WebGPU code generator does, so the kernels that Apache TVM's schedules write with ``int64``
shapes (``T.int64(0)`` grids, ``n = T.int64()``) run on WebGPU.

The kernel keeps its meaning as long as every such value fits in 32 bits: a scalar argument is
checked when the kernel is launched (a ``ValueError`` for one outside ``int32``), and an index
inside a buffer of fewer than 2**31 elements fits, and so do the ``+``, ``-`` and ``*`` it is
made of, wrapping (their low 32 bits are exact); a division, remainder, min or max inside an index
of arithmetic that may need 64 bits (bounded by its constants and loop ranges) is not, and is
refused, as is such arithmetic in a loop bound or a comparison. A kernel that holds ``int64`` in memory (a
buffer of ``int64``), converts a float or an unsigned value to ``int64``, reinterprets bits as
``int64``, uses ``uint64`` or a constant beyond ``int32``, or stores the result of ``int64``
arithmetic as a value (not as an index, a bound or a condition) is left as it is, and the
capability check refuses it by name. Usable as a target pass; ``func`` itself on a target with
int64.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from tvm.tir import dtype as _dt
from tvm.tir.expr import (
    Add,
    BinaryOp,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    PrimExpr,
    Sub,
    Var,
)
from tvm.tir.function import PrimFunc
from tvm.tir.analysis import any_node
from tvm.tir.functor import BufferReplacer, StmtExprMutator, StmtExprVisitor
from tvm.tir.op import is_reinterpret
from tvm.tir.printer import expr_text
from tvm.tir.stmt import Allocate, BufferStore, For, ForKind, LetStmt, Stmt

from tvm.tir.analysis import attr_exprs_mapped

from .narrow import NarrowEmulator, layout_replaced
from .verify import TIRVerifyError, with_span

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


class _NotNarrowable(StmtExprVisitor):
    """Finds what narrowing cannot keep exact (module docstring); ``found`` stays False if none.

    A value read from memory and widened to ``int64`` is exact in 32 bits as it is, so it may be
    compared, converted and used in an index (``A[T.Cast("int64", idx[i]) * m + j]``: an index
    inside its buffer fits); arithmetic on it anywhere else could need 64 bits and keeps ``int64``.
    Affine arithmetic on sizes and loop variables serves indices, loop bounds and conditions,
    where it stays within the buffers; a product of sizes stored as a value
    (``B[i] = T.Cast("float32", n * m)``), directly or through a let, could need 64 bits
    (50,000 * 50,000) and keeps ``int64`` too.
    """

    def __init__(self) -> None:
        super().__init__()
        self.found, self.why, self.span, self.statement = False, "", None, None
        self.in_index = 0
        self.in_value = 0  # inside the value a store writes (outside its loads' indices)
        self.in_compare = 0  # inside an operand of a comparison
        self.in_exact = 0  # inside ring arithmetic whose result keeps only low bits
        self.from_memory: set = set()  # let variables of int64 bound to values read from memory
        self.computed: set = set()  # let variables of int64 bound to int64 arithmetic
        self.loop_bounds: dict = {}  # loop variable -> the largest |value| it takes (constant ranges)

    def _refuse(self, why: str) -> None:
        """Narrowing would change the kernel: ``why`` (after "kernel 'f' ..."), at the statement
        being visited."""
        if not self.found:
            self.found, self.why, self.span = True, why, self.statement

    def visit_stmt(self, s: Any) -> None:
        outer, self.statement = self.statement, getattr(s, "span", None) or self.statement
        super().visit_stmt(s)
        self.statement = outer

    def _buffer(self, b: Buffer) -> None:
        if _dt.element_of(b.dtype) in ("int64", "uint64"):
            self._refuse("")  # the capability check names the buffer

    def _reads_memory(self, e: PrimExpr) -> bool:
        return any_node(e, lambda x: isinstance(x, BufferLoad) or x in self.from_memory)

    def _indices(self, indices: Any) -> None:
        self.in_index += 1
        for i in indices:
            self.visit_expr(i)
        self.in_index -= 1

    def _as_value(self) -> bool:
        """Inside a stored value, not in an index, a comparison (conditions are like indices) or
        an expression that 32-bit wrapping leaves exact (:func:`_exact_when_wrapped`)."""
        return self.in_value > 0 and self.in_index == 0 and self.in_compare == 0 and self.in_exact == 0

    def _exact(self, e: PrimExpr) -> None:
        self.in_exact += 1
        self.visit_expr(e)
        self.in_exact -= 1

    def visit_BufferLoad(self, e: BufferLoad) -> None:
        self._buffer(e.buffer)
        self._indices(e.indices)

    def visit_BufferStore(self, s: BufferStore) -> None:
        self._buffer(s.buffer)
        self._indices(s.indices)
        self.in_value += 1
        self.visit_expr(s.value)
        self.in_value -= 1

    def visit_Allocate(self, s: Allocate) -> None:
        self._buffer(s.buffer)
        super().visit_Allocate(s)

    def _bound(self, var: Var, value: PrimExpr) -> None:
        """A let's value: one read from memory decides where its variable may be used."""
        if var.dtype == "int64" and self._reads_memory(value):
            self.from_memory.add(var)
            self._indices((value,))
            return
        if var.dtype == "int64" and (_overflow_prone(value) or any_node(value, lambda x: x in self.computed)):
            self.computed.add(var)
        self.visit_expr(value)

    def visit_Var(self, e: Var) -> None:
        if e in self.computed and self._as_value():
            self._refuse(f"stores '{e.name}', computed in int64, as a value")

    def visit_LetStmt(self, s: LetStmt) -> None:
        self._bound(s.var, s.value)
        self.visit_stmt(s.body)

    def visit_Let(self, e: Let) -> None:
        self._bound(e.var, e.value)
        self.visit_expr(e.body)

    def visit_IntImm(self, e: IntImm) -> None:
        if e.dtype == "int64" and not _INT32_MIN <= e.value <= _INT32_MAX:
            self._refuse(f"uses the int64 constant {e.value}, beyond int32")

    def visit_BinaryOp(self, e: BinaryOp) -> None:
        if e.dtype == "int64" and not self.in_index:
            if self._as_value() and _overflow_prone(e) and _magnitude(e) > _INT32_MAX:
                self._refuse(f"stores int64 arithmetic ({expr_text(e)}) as a value")
            elif self.in_compare and not self.in_exact and _overflow_prone(e) and _magnitude(e) > _INT32_MAX:
                self._refuse(f"compares int64 arithmetic ({expr_text(e)}) that may need 64 bits")
            elif self._reads_memory(e.a) or self._reads_memory(e.b):
                self._refuse(f"computes in int64 with a value read from memory ({expr_text(e)})")
        if isinstance(e, FloorMod) and _power_of_two(e.b) and _ring(e.a):  # floormod(x, 8): x's low bits
            self._exact(e.a)
            self.visit_expr(e.b)
            return
        if self.in_index and not self.in_exact and not isinstance(e, (Add, Sub, Mul)):
            self._check_index_operands(e)
        compare = isinstance(e, CmpOp)
        self.in_compare += compare
        super().visit_BinaryOp(e)
        self.in_compare -= compare

    def _check_index_operands(self, e: BinaryOp) -> None:
        """An index is exact in 32 bits when it is ring arithmetic (its low bits are right and
        its value fits); a division, remainder, min, max or comparison of int64 arithmetic
        that may need 64 bits (``i * 40503 % 1000``) is not."""
        for operand in (e.a, e.b):
            if operand.dtype != "int64":
                continue
            most = _magnitude(operand, self.loop_bounds)
            if most > _INT32_MAX and (not math.isinf(most) or _overflow_prone(operand)):
                self._refuse(f"indexes with int64 arithmetic ({expr_text(operand)}) that may need 64 bits")

    def visit_For(self, s: For) -> None:
        self.in_compare += s.kind is not ForKind.THREAD_BINDING  # the loop compares its variable to them
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        self.in_compare -= s.kind is not ForKind.THREAD_BINDING
        if isinstance(s.min, IntImm) and isinstance(s.extent, IntImm):
            last = s.min.value + s.extent.value - 1
            self.loop_bounds[s.loop_var] = max(abs(s.min.value), abs(last))
        self.visit_stmt(s.body)

    def visit_Cast(self, e: Cast) -> None:
        source = e.value.dtype
        widening = _dt.is_bool(source) or (_dt.is_int(source) and _dt.bits(source) <= 32)
        if e.dtype == "int64" and source != "int64" and not widening:
            self._refuse(f"converts a {source} value to int64")
        if source == "int64" and _dt.is_integer(e.dtype) and _dt.bits(e.dtype) <= 32 and _ring(e.value):
            self._exact(e.value)  # the low 32 bits of int64 ring arithmetic are int32's
            return
        super().visit_Cast(e)

    def visit_Call(self, e: Call) -> None:
        if is_reinterpret(e) and "int64" in (e.dtype, e.args[0].dtype):
            # the bits of a float64 (copysign, asinh of one): the capability check names float64
            self._refuse("" if "float64" in (e.dtype, e.args[0].dtype) else "reinterprets bits as int64")
        super().visit_Call(e)

    def visit_expr(self, e: Any) -> None:
        if not self.found:
            if getattr(e, "dtype", None) == "uint64":
                self._refuse("")  # the capability check names it
            else:
                super().visit_expr(e)


def _magnitude(e: PrimExpr, bounds: dict | None = None) -> float:
    """A bound on ``|e|`` from its constants (``v % 8 * 4`` is at most 28) and the bounds of the
    variables ``bounds`` holds (loop variables); infinite where it depends on another value."""
    if isinstance(e, IntImm):
        return abs(e.value)
    if isinstance(e, Var) and bounds and e in bounds:
        return bounds[e]
    if isinstance(e, Cast) and _dt.is_integer(e.value.dtype) and _dt.bits(e.value.dtype) < 64:
        return 2 ** _dt.bits(e.value.dtype)
    if isinstance(e, (FloorMod, Mod)) and isinstance(e.b, IntImm):
        return abs(e.b.value) - 1
    if isinstance(e, (FloorDiv, Div)) and isinstance(e.b, IntImm) and e.b.value != 0:
        m = _magnitude(e.a, bounds)
        return m if math.isinf(m) else m // abs(e.b.value) + 1
    if isinstance(e, (Add, Sub)):
        return _magnitude(e.a, bounds) + _magnitude(e.b, bounds)
    if isinstance(e, Mul):
        a, b = _magnitude(e.a, bounds), _magnitude(e.b, bounds)
        return 0 if 0 in (a, b) else a * b
    if isinstance(e, (Min, Max)):
        return max(_magnitude(e.a, bounds), _magnitude(e.b, bounds))
    return math.inf


def _ring(e: PrimExpr) -> bool:
    """Whether ``e`` is ``+``, ``-`` and ``*`` of integer variables and constants: its low 32
    bits are the same computed in 32 bits, wrapping, as in 64."""
    if isinstance(e, (IntImm, Var)):
        return _dt.is_integer(e.dtype)
    if isinstance(e, Cast):
        return _dt.is_integer(e.value.dtype) and _ring(e.value)
    return isinstance(e, (Add, Sub, Mul)) and _ring(e.a) and _ring(e.b)


def _power_of_two(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and 0 < e.value <= 2**31 and e.value & (e.value - 1) == 0


def _overflow_prone(e: PrimExpr) -> bool:
    """Whether ``e`` multiplies two values known only at run time (``n * m``) or by a constant
    past 2**16: affine arithmetic of sizes and loop variables (``bx * 256 + tx``) stays within
    the buffers it serves; a product of sizes need not (50,000 * 50,000)."""

    def prone(x: Any) -> bool:
        if not (isinstance(x, Mul) and x.dtype == "int64"):
            return False
        consts = [abs(v.value) for v in (x.a, x.b) if isinstance(v, IntImm)]
        return not consts or max(consts) > 2**16

    return any_node(e, prone)


class _Int32Indices(NarrowEmulator, BufferReplacer):
    """``int64`` computed as ``int32`` with no rounding: every value is taken to fit."""

    def narrow(self, dtype: str) -> bool:
        return dtype == "int64"

    def wide(self, dtype: str) -> str:
        return "int32"

    def rounded(self, dtype: str, f: PrimExpr) -> PrimExpr:
        return f

    def replacement(self, b: Buffer) -> dict | None:
        return layout_replaced(b, self.visit_expr)

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        return StmtExprMutator.visit_BinaryOp(self, e)

    def visit_For(self, s: For) -> Stmt:
        out = super().visit_For(s)
        if not self.narrow(s.loop_var.dtype):
            return out
        return dataclasses.replace(out, loop_var=self._wide_var(s.loop_var))

    def legalize(self, func: PrimFunc) -> PrimFunc:
        for p in func.params:  # before the buffers, whose shapes name them
            if self.narrow(p.dtype):
                self._wide_var(p)
        buffer_map = {self.renamed.get(p, p): self.mutate_buffer(b) for p, b in func.buffer_map.items()}
        body = self._body(self.visit_stmt(func.body))
        if body is func.body and not self.renamed and not self.replaced:
            return func
        attrs = {key: attr_exprs_mapped(value, self.visit_expr) for key, value in func.attrs.items()}  # (launch bounds)
        params = [self.renamed.get(p, p) for p in func.params]
        return dataclasses.replace(func, params=params, body=body, buffer_map=buffer_map, attrs=attrs)


def narrow_int64_indices(func: PrimFunc, target: Any = None) -> PrimFunc:
    """``func`` with its ``int64`` index arithmetic in ``int32`` (see the module docstring);
    ``func`` itself when it has none, when ``target`` supports int64, or when narrowing could
    change a value held in memory (then the capability check names what needs int64)."""
    if target is not None and target.capability("supports_int64"):
        return func
    check = _NotNarrowable()
    for b in func.buffer_map.values():
        check._buffer(b)
    check.visit_stmt(func.body)
    if not check.found:
        return _Int32Indices().legalize(func)
    if check.why and target is not None:
        message = (
            f"kernel '{func.global_symbol}' {check.why}; target '{target.kind.name}' has no int64 (its int64 "
            "index arithmetic is computed in int32, values are not): compute it in int32 or float"
        )
        raise TIRVerifyError(with_span(message, check.span), message, check.span)
    return func  # the capability check names what needs int64


__all__ = ["narrow_int64_indices"]
