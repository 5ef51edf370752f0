"""The shared part of emulating a narrow dtype in a wider one (bfloat16 and float8 in float32,
8- and 16-bit integers in 32-bit ones): every expression of the narrow dtype becomes a wide one
holding a value of it; operations, casts and constants are computed in the wide dtype and rounded
back. A subclass says which dtypes are narrow and their wide dtype, how a value is rounded, how a
stored value is read and written, and what ``reinterpret`` to and from its bits is.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

from tvm.tir.expr import (
    BinaryOp,
    Buffer,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    FloatImm,
    IntImm,
    Let,
    PrimExpr,
    Select,
    Var,
)
from tvm.tir.analysis import attr_exprs_mapped
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer, StmtExprMutator, substitute
from tvm.tir.op import is_reinterpret
from tvm.tir import dtype as _dt
from tvm.tir.stmt import Allocate, BufferStore, For, LetStmt, Stmt

F32 = "float32"


class _ShapesRenamed(BufferReplacer):
    """Buffers whose shape, strides or offset name a renamed parameter, with the new one."""

    def __init__(self, renamed: dict) -> None:
        super().__init__()
        self.renamed = renamed

    def replacement(self, b: Buffer) -> Optional[dict]:
        return layout_replaced(b, lambda x: _renamed(x, self.renamed))


def layout_replaced(b: Buffer, rewrite: Any) -> Optional[dict]:
    """The fields of ``b``'s layout (shape, strides, offset) that ``rewrite`` of each of their
    expressions changes, for :meth:`BufferReplacer.replacement`; None when it changes none."""
    fields = {}
    for name in ("shape", "strides"):
        old = tuple(getattr(b, name))
        new = tuple(rewrite(x) for x in old)
        if any(n is not o for n, o in zip(new, old)):
            fields[name] = new
    if b.elem_offset is not None:
        offset = rewrite(b.elem_offset)
        if offset is not b.elem_offset:
            fields["elem_offset"] = offset
    return fields or None


def _renamed(value: Any, renamed: dict) -> Any:
    """An expression (or a list or dict of them: an attribute's value) over the wide parameters,
    its casts of them, now to their own dtype, dropped; ``value`` itself when it names none of
    the renamed ones."""
    from .simplify import simplify_expr

    def rename(e: PrimExpr) -> PrimExpr:
        new = substitute(e, renamed)
        return e if new is e else simplify_expr(new)

    return attr_exprs_mapped(value, rename)


class NarrowEmulator(StmtExprMutator):
    """Rewrites the narrow dtype's expressions to its wide dtype (module docstring); ``renamed``
    maps each variable of a narrow dtype to its wide replacement."""

    def __init__(self) -> None:
        super().__init__()
        self.renamed: dict[Var, Var] = {}
        self.launch_sized_scale = 1  # how many times wider a widened launch-sized buffer became

    def legalize(self, func: PrimFunc) -> PrimFunc:
        """``func`` rewritten, its scalar parameters of a narrow dtype replaced by wide ones;
        ``func`` itself when nothing changed. A launch-sized (dynamic) shared buffer made wider
        needs more bytes than the launch's ``dyn_shmem``, which the host computes from the
        narrow dtype: the kernel's attribute ``dyn_shmem_scale`` says how many times more."""
        body = self.visit_stmt(func.body)
        if body is func.body and not self.renamed:
            return func
        params = [self.renamed.get(p, p) for p in func.params]
        attrs = {key: _renamed(value, self.renamed) for key, value in func.attrs.items()}  # (launch bounds)
        if self.launch_sized_scale > 1:
            attrs["dyn_shmem_scale"] = max(self.launch_sized_scale, attrs.get("dyn_shmem_scale", 1))
        func = dataclasses.replace(func, params=params, body=body, buffer_map=dict(func.buffer_map), attrs=attrs)
        return _ShapesRenamed(self.renamed).rewrite(func) if self.renamed else func

    # ------------------------------------------------------------------ what a subclass says
    def narrow(self, dtype: str) -> bool:
        """Whether ``dtype`` is emulated."""
        raise NotImplementedError

    def wide(self, dtype: str) -> str:
        """The dtype that computes the values of narrow ``dtype`` (float32 unless overridden)."""
        return F32

    def rounded(self, dtype: str, f: PrimExpr) -> PrimExpr:
        """``f``, of the wide dtype, rounded to ``dtype``, as a value of the wide dtype."""
        raise NotImplementedError

    def widen(self, original: BufferLoad, load: BufferLoad) -> PrimExpr:
        """The wide value of a load of the narrow dtype (``load``: its indices visited)."""
        raise NotImplementedError

    def store(self, s: BufferStore, out: BufferStore) -> Stmt:
        """A store into a buffer of the narrow dtype (``out``: ``s`` with its parts visited)."""
        raise NotImplementedError

    def store_bits(self, s: BufferStore, out: BufferStore) -> Stmt:
        """A store of ``T.reinterpret(<narrow dtype>, bits)``: the bits as given (``out``: ``s``
        with the bits as its value, visited), so a NaN keeps its payload."""
        raise NotImplementedError

    def reinterpret(self, e: Call) -> PrimExpr:
        """``reinterpret`` from or to the narrow dtype."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the rewriting
    def visit_Allocate(self, s: Allocate) -> Optional[Stmt]:
        from .lower import dynamic_shared_bytes

        out = super().visit_Allocate(s)
        if isinstance(out, Allocate) and dynamic_shared_bytes(s.buffer) is not None:
            wider = _dt.nbytes(out.buffer.dtype) // _dt.nbytes(s.buffer.dtype)
            self.launch_sized_scale = max(self.launch_sized_scale, wider)
        return out

    def _wide_var(self, v: Var) -> Var:
        if v not in self.renamed:
            self.renamed[v] = Var(v.name, self.wide(v.dtype))
        return self.renamed[v]

    def visit_Var(self, e: Var) -> PrimExpr:
        return self._wide_var(e) if self.narrow(e.dtype) else e

    def visit_FloatImm(self, e: FloatImm) -> PrimExpr:
        return FloatImm(self.wide(e.dtype), e.dtype_value, e.span) if self.narrow(e.dtype) else e

    def visit_IntImm(self, e: IntImm) -> PrimExpr:
        return IntImm(self.wide(e.dtype), e.value, e.span) if self.narrow(e.dtype) else e

    def visit_BufferLoad(self, e: BufferLoad) -> PrimExpr:
        load = super().visit_BufferLoad(e)
        return self.widen(e, load) if self.narrow(e.dtype) else load

    def visit_BufferStore(self, s: BufferStore) -> Stmt:
        if not self.narrow(s.buffer.dtype):
            return super().visit_BufferStore(s)
        v = s.value
        if is_reinterpret(v) and not self.narrow(v.args[0].dtype):  # stored as given
            return self.store_bits(s, super().visit_BufferStore(dataclasses.replace(s, value=v.args[0])))
        return self.store(s, super().visit_BufferStore(s))

    def visit_Cast(self, e: Cast) -> PrimExpr:
        v = self.visit_expr(e.value)
        if self.narrow(e.dtype):
            wide = self.wide(e.dtype)
            return self.rounded(e.dtype, v if v.dtype == wide else Cast(wide, v))
        if self.narrow(e.value.dtype):
            return v if e.dtype == v.dtype else Cast(e.dtype, v, e.span)
        return e if v is e.value else Cast(e.dtype, v, e.span)

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        out = super().visit_BinaryOp(e)
        if not self.narrow(e.dtype) or isinstance(e, CmpOp):
            return out
        return self.rounded(e.dtype, type(out)(out.a, out.b, e.span))

    def visit_Select(self, e: Select) -> PrimExpr:
        out = super().visit_Select(e)
        if not self.narrow(e.dtype):
            return out
        return Select(out.condition, out.true_value, out.false_value, self.wide(e.dtype), e.span)

    def visit_Let(self, e: Let) -> PrimExpr:
        value = self.visit_expr(e.value)
        var = self._wide_var(e.var) if self.narrow(e.var.dtype) else e.var
        body = self.visit_expr(e.body)
        return Let(var, value, body, body.dtype, e.span)

    def visit_Call(self, e: Call) -> PrimExpr:
        if is_reinterpret(e) and (self.narrow(e.dtype) or self.narrow(e.args[0].dtype)):
            return self.reinterpret(e)
        args = self._exprs(e.args)
        if not self.narrow(e.dtype):
            return e if args is e.args else Call(e.dtype, e.op, args, e.span)
        out = Call(self.wide(e.dtype), e.op, args, e.span)
        return out if e.op in ("if_then_else", "tir.if_then_else") else self.rounded(e.dtype, out)

    def visit_For(self, s: For) -> Optional[Stmt]:
        out = super().visit_For(s)
        if out is None or not self.narrow(s.loop_var.dtype):
            return out
        wide = self._wide_var(s.loop_var)  # its values lie between its narrow bounds
        return For(wide, out.min, out.extent, out.kind, out.body, out.thread_tag, dict(out.annotations), out.span)

    def visit_LetStmt(self, s: LetStmt) -> Stmt:
        out = super().visit_LetStmt(s)
        if not self.narrow(s.var.dtype):
            return out
        return LetStmt(self._wide_var(s.var), out.value, out.body, s.span)
