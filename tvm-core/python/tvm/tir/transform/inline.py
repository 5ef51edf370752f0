"""Calls between the functions of one module, replaced by the callee's body.

TVMScript's ``Module.f(args)`` (inside an ``@I.ir_module class Module``) parses to a placeholder
``Call(dtype, "call_function", (StringImm("f"), *args))``. :func:`inline_calls` replaces each one,
so every target, host and device alike, compiles the module without a calling convention between
its functions (a host's ``T.call_packed`` of a device kernel of the module, as Apache TVM's
host/device split writes them, is such a call too):

* a call used as a statement becomes ``f``'s body with its parameters bound to the arguments (a
  buffer parameter's memory to the handle passed for it);
* a call used as a value needs ``f`` to compute one value: a body of ``let`` statements ending in
  ``return <expression>``, which becomes that expression (the lets as ``T.let``).

A private function (``@T.prim_func(private=True)``) that other functions call is not kept on
its own. A call of a function the module lacks, a recursive call, or a value call of a function that does
more than return a value is a :class:`TIRVerifyError` naming the functions.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from tvm.tir.analysis import any_node, free_vars, structural_equal
from tvm.tir.expr import BinaryOp, Buffer, Call, IntImm, Let, PrimExpr, StringImm, Var
from tvm.tir.fold import fold_binary
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, Substitute
from tvm.tir.op import binary, cast, is_barrier
from tvm.tir.printer import expr_text
from tvm.tir.stmt import Allocate, Evaluate, For, ForKind, IfThenElse, LetStmt, Stmt

from .verify import TIRVerifyError, with_span

CALL_FUNCTION = "call_function"


class _Bind(Substitute):
    """The callee's body with its parameters (and the memory of its buffer parameters) replaced,
    and every variable and buffer it defines (lets, loops, allocations) a fresh copy, so that two
    calls in one scope do not define the same names."""

    def __init__(self, vmap: dict, threads: dict):
        super().__init__(vmap)
        self.buffers: dict[Buffer, Buffer] = {}
        self.threads = threads  # the call site's thread loops: tag -> (variable, start, extent)

    def _fresh(self, var: Var) -> Var:
        self.vmap[var] = Var(var.name, var.dtype)
        return self.vmap[var]

    def mutate_buffer(self, b: Buffer) -> Buffer:
        if b not in self.buffers:
            data = self.vmap.get(b.data, b.data)
            shape = tuple(self.visit_expr(x) for x in b.shape)
            same = data is b.data and all(x is y for x, y in zip(shape, b.shape))
            self.buffers[b] = b if same else dataclasses.replace(b, data=data, shape=shape)
        return self.buffers[b]

    def visit_For(self, s: For) -> Optional[Stmt]:
        mn, ext = self.visit_expr(s.min), self.visit_expr(s.extent)
        if s.kind is ForKind.THREAD_BINDING and s.thread_tag in self.threads:
            return self._same_threads(s, mn, ext)
        var = self._fresh(s.loop_var)
        body = self._body(self.visit_stmt(s.body))
        return For(var, mn, ext, s.kind, body, s.thread_tag, dict(s.annotations), s.span)

    def _same_threads(self, s: For, mn: PrimExpr, ext: PrimExpr) -> Stmt:
        """A thread loop of the callee under the caller's loop of the same thread index: the
        same threads (as the parser reads such nested loops), guarded when its extent is smaller."""
        outer, outer_min, outer_ext = self.threads[s.thread_tag]
        constants = isinstance(ext, IntImm) and isinstance(outer_ext, IntImm)
        smaller = constants and ext.value < outer_ext.value
        same = (constants and ext.value == outer_ext.value) or structural_equal(ext, outer_ext)
        if not (isinstance(mn, IntImm) and mn.value == 0) or not (smaller or same):
            raise TIRVerifyError(
                with_span(
                    f"{s.thread_tag} is launched by the caller with extent {expr_text(outer_ext)} and again by the "
                    f"called function with extent {expr_text(ext)} from {expr_text(mn)}: a call inside threads runs "
                    f"on those threads, so the callee's may be at most as many, from 0",
                    s.span,
                )
            )
        index = outer if isinstance(outer_min, IntImm) and outer_min.value == 0 else binary("sub", outer, outer_min)
        self.vmap[s.loop_var] = index if index.dtype == s.loop_var.dtype else cast(s.loop_var.dtype, index)
        body = self._body(self.visit_stmt(s.body))
        if not smaller:
            return body
        if any_node(body, is_barrier):
            raise TIRVerifyError(
                with_span(
                    f"{s.thread_tag}: the called function launches fewer threads ({ext.value}) than the caller "
                    f"({outer_ext.value}) and holds a barrier, which the guarded threads would not reach",
                    s.span,
                )
            )
        return IfThenElse(binary("lt", index, IntImm(index.dtype, ext.value)), body, None, s.span)

    def visit_LetStmt(self, s: LetStmt) -> Optional[Stmt]:
        value = self.visit_expr(s.value)
        return LetStmt(self._fresh(s.var), value, self._body(self.visit_stmt(s.body)), s.span)

    def visit_Let(self, e: Let) -> PrimExpr:
        value = self.visit_expr(e.value)
        return Let(self._fresh(e.var), value, self.visit_expr(e.body), e.dtype, e.span)

    def visit_BinaryOp(self, e: BinaryOp) -> PrimExpr:
        out = super().visit_BinaryOp(e)  # constant arguments fold as the parser folds them (64 + 64)
        folded = fold_binary(out) if out is not e else None
        return out if folded is None else folded

    def visit_Allocate(self, s: Allocate) -> Optional[Stmt]:
        self._fresh(s.buffer.data)
        return Allocate(self.mutate_buffer(s.buffer), self._body(self.visit_stmt(s.body)), s.span)


class _Inline(StmtExprMutator):
    def __init__(self, caller: str, resolve: Callable[[str], PrimFunc]):
        self.caller, self.resolve = caller, resolve
        self.span = None  # of the statement being inlined into: where a failing call is
        self.threads: dict = {}  # the thread loops around the statement: tag -> (variable, start, extent)

    def visit_For(self, s: For) -> Optional[Stmt]:
        if s.kind is not ForKind.THREAD_BINDING or s.thread_tag in self.threads:
            return super().visit_For(s)
        self.threads[s.thread_tag] = (s.loop_var, s.min, s.extent)
        try:
            return super().visit_For(s)
        finally:
            del self.threads[s.thread_tag]

    def visit_stmt(self, s: Stmt) -> Optional[Stmt]:
        outer, self.span = self.span, getattr(s, "span", None) or self.span
        try:
            return super().visit_stmt(s)
        finally:
            self.span = outer

    def error(self, message: str) -> TIRVerifyError:
        """A malformed call, at the statement that makes it."""
        return TIRVerifyError(with_span(message, self.span), message, self.span)

    def _callee(self, e: Call) -> tuple[PrimFunc, list]:
        name = e.args[0].value if isinstance(e.args[0], StringImm) else "?"
        try:
            callee = self.resolve(name)
        except TIRVerifyError as err:  # recursion, an unknown callee: at this call
            if err.span is not None:
                raise
            raise self.error(err.reason) from None
        args = [self.visit_expr(a) for a in e.args[1:]]
        if len(args) != len(callee.params):
            raise self.error(f"{self.caller} calls {name} with {len(args)} argument(s); it takes {len(callee.params)}")
        return callee, args

    def _bind(self, callee: PrimFunc, args: list) -> tuple[_Bind, list]:
        """The binder of ``callee``'s parameters to ``args``, and the (variable, value) pairs to
        bind first: a pointer argument that is an expression (``T.address_of(A[i, 0])``) goes
        through a variable, since buffers are views of a variable's memory."""
        vmap, lets = {}, []
        for param, arg in zip(callee.params, args):
            if param.dtype != arg.dtype and "handle" not in (param.dtype, arg.dtype):
                arg = cast(param.dtype, arg)  # a call converts its arguments to the parameters' types
            if param.dtype == "handle" and not isinstance(arg, Var):
                lets.append((Var(param.name, "handle"), arg))
                arg = lets[-1][0]
            vmap[param] = arg
            buf = callee.buffer_map.get(param)
            if buf is not None:
                vmap[buf.data] = arg  # the memory the caller passes (A.data)
                unbound = [v.name for dim in buf.shape for v in free_vars(dim) if v not in callee.params]
                if unbound:
                    raise TIRVerifyError(
                        f"{self.caller} calls {callee.name}, whose buffer {buf.name} takes its size "
                        f"({', '.join(unbound)}) from its argument's shape; a call passes only memory: make "
                        f"the size a parameter of {callee.name}"
                    )
        return _Bind(vmap, dict(self.threads)), lets

    def visit_Evaluate(self, s: Evaluate) -> Optional[Stmt]:
        e = s.value
        if not (isinstance(e, Call) and e.op == CALL_FUNCTION):
            return super().visit_Evaluate(s)
        callee, args = self._callee(e)
        if _returned(callee.body) is not None:  # a value nobody uses: the body has no effect
            return None
        binder, lets = self._bind(callee, args)
        body = binder.visit_stmt(callee.body)
        for var, value in reversed(lets):
            body = LetStmt(var, value, body, s.span)
        return body

    def visit_Call(self, e: Call) -> PrimExpr:
        if e.op != CALL_FUNCTION:
            return super().visit_Call(e)
        callee, args = self._callee(e)
        value = _returned(callee.body)
        if value is None:
            raise self.error(
                f"{self.caller} uses the result of {callee.name}, whose body does more than return one "
                f"value (a function called in an expression must be lets and 'return <expression>')"
            )
        binder, lets = self._bind(callee, args)
        out = binder.visit_expr(value)
        for var, bound in reversed(lets):
            out = Let(var, bound, out, out.dtype)
        return out


def _returned(body: Stmt) -> Optional[PrimExpr]:
    """``return x`` after let statements, as one expression (the lets as ``Let``), else None."""
    if isinstance(body, LetStmt):
        inner = _returned(body.body)
        return None if inner is None else Let(body.var, body.value, inner, inner.dtype)
    if isinstance(body, Evaluate) and isinstance(body.value, Call) and body.value.op == "ret" and body.value.args:
        return body.value.args[0]
    return None


#: Apache TVM's calling convention of a device kernel its host/device split made (``calling_conv``)
DEVICE_KERNEL_LAUNCH = 2


class _Launches(StmtExprMutator):
    """``T.call_packed(symbol, *args, *launch_extents)`` of a module function that is a device
    kernel, as a call of that function: its body launches its threads itself, so the extents
    (``tirx.kernel_launch_params``) the launch passes after the arguments are not needed."""

    def __init__(self, caller: str, kernels: dict[str, tuple[str, int, int]]):
        self.caller = caller
        self.kernels = kernels  # global symbol -> (function name, parameter count, launch extents)

    def visit_Call(self, e: Call) -> PrimExpr:
        e = super().visit_Call(e)
        symbol = e.args[0].value if e.op == "call_packed" and isinstance(e.args[0], StringImm) else None
        if symbol not in self.kernels:
            return e
        name, count, extents = self.kernels[symbol]
        if len(e.args) - 1 != count + extents:
            raise TIRVerifyError(
                f"{self.caller} launches {name} with {len(e.args) - 1} argument(s); it takes {count} and "
                f"{extents} launch extent(s) (tirx.kernel_launch_params)"
            )
        return Call(e.dtype, CALL_FUNCTION, (StringImm(name), *e.args[1 : 1 + count]))


def _launch_params(f: PrimFunc) -> tuple:
    """The launch extents a host passes after a split kernel's arguments (both spellings)."""
    return tuple(f.attrs.get("tirx.kernel_launch_params", f.attrs.get("tir.kernel_launch_params", ())))


def _launched_kernels_as_calls(funcs: dict[str, PrimFunc]) -> dict[str, PrimFunc]:
    """``funcs`` with the host's launches of device kernels (functions of calling convention
    :data:`DEVICE_KERNEL_LAUNCH`, as Apache TVM's host/device split writes a module) made calls."""
    kernels = {
        f.attrs.get("global_symbol", name): (name, len(f.params), len(_launch_params(f)))
        for name, f in funcs.items()
        if getattr(f.attrs.get("calling_conv"), "value", f.attrs.get("calling_conv")) == DEVICE_KERNEL_LAUNCH
    }
    if not kernels:
        return funcs
    out = {}
    for name, f in funcs.items():
        body = _Launches(name, kernels).visit_stmt(f.body)
        out[name] = f if body is f.body else f.with_body(StmtExprMutator._body(body))
    return out


def inline_calls(funcs: dict[str, PrimFunc]) -> dict[str, PrimFunc]:
    """The module ``funcs`` (by name) with every call between its functions replaced by the
    callee's body (see the module docstring)."""
    funcs = _launched_kernels_as_calls(funcs)
    done: dict[str, PrimFunc] = {}
    called: set[str] = set()

    def resolve(name: str, stack: tuple) -> PrimFunc:
        if stack:
            called.add(name)
        if name in done:
            return done[name]
        if name not in funcs:
            raise TIRVerifyError(
                f"{stack[-1]} calls {name}, which is not a function of the module (it has: {', '.join(sorted(funcs))})"
            )
        if name in stack:
            raise TIRVerifyError(f"recursive calls between module functions: {' -> '.join((*stack, name))}")
        f = funcs[name]
        body = _Inline(name, lambda callee: resolve(callee, (*stack, name))).visit_stmt(f.body)
        done[name] = f if body is f.body else f.with_body(StmtExprMutator._body(body))
        return done[name]

    linked = {name: resolve(name, ()) for name in funcs}
    # a private function (no global_symbol) that others call lives on only inside them
    return {name: f for name, f in linked.items() if name not in called or "global_symbol" in f.attrs}


__all__ = ["CALL_FUNCTION", "inline_calls"]
