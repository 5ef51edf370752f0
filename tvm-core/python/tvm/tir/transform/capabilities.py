"""Device kernels against what their target's devices can do (``Target.capability``): threads,
statically sized shared memory and local memory per block, kernel arguments, and the dtypes a
target lacks. A
kernel over a limit is a compile-time :class:`TIRVerifyError` naming the kernel, the amount and
the limit (with the TVMScript line where one is known), instead of a launch failure or a crash."""

from __future__ import annotations

import math
from typing import Any, Callable

from tvm.tir import dtype as _dt
from tvm.tir.expr import BufferLoad, IntImm, PrimExpr, Var
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprVisitor, post_order_visit
from tvm.tir.op import is_reinterpret
from tvm.tir.stmt import Allocate, BufferStore, For, LetStmt

from .placement import byte_arena_shared_memory
from .verify import TIRVerifyError, is_thread_index_loop, with_span

#: Capability -> the dtype element types it covers.
_DTYPE_CAPABILITIES = {
    "supports_float64": ("float64",),
    "supports_int64": ("int64", "uint64"),
    "supports_bfloat16": ("bfloat16",),
    "supports_float8": _dt.FLOAT8_DTYPES,
}


def _constant(e: Any) -> int | None:
    return e.value if isinstance(e, IntImm) else None


def _threads_per_block(kernel: PrimFunc) -> tuple[int, Any]:
    """The product of the constant ``threadIdx`` extents and the span of one such loop."""
    extents: dict[str, int] = {}
    span = None

    def visit(node: Any) -> None:
        nonlocal span
        if is_thread_index_loop(node):
            n = _constant(node.extent)
            if n is not None and n > extents.get(node.thread_tag, 0):
                extents[node.thread_tag] = n
                span = span or node.span

    post_order_visit(kernel.body, visit)
    return math.prod(extents.values()) if extents else 1, span


def _allocations(kernel: PrimFunc, scopes: tuple[str, ...]) -> list[tuple[str, int, str, Any]]:
    """(scope, bytes, name, span) of each constant-size allocation in ``scopes`` (sizes of the
    others are checked at launch)."""
    found = []

    def visit(node: Any) -> None:
        if isinstance(node, Allocate) and node.buffer.scope in scopes:
            dims = [_constant(d) for d in node.buffer.shape]
            if None not in dims:
                found.append(
                    (node.buffer.scope, math.prod(dims) * _dt.nbytes(node.buffer.dtype), node.buffer.name, node.span)
                )

    post_order_visit(kernel.body, visit)
    return found


def _total_bytes(allocations: list[tuple[str, int, str, Any]], scopes: tuple[str, ...]) -> tuple[int, list[str], Any]:
    """Bytes of ``allocations`` in ``scopes``, their names, and the span of the largest."""
    mine = [a for a in allocations if a[0] in scopes]
    largest = max(mine, key=lambda a: a[1], default=None)
    return sum(a[1] for a in mine), [a[2] for a in mine], largest[3] if largest else None


def static_shared_bytes(kernel: PrimFunc) -> int:
    """Bytes of ``kernel``'s constant-size ``shared`` allocations (what a launch-sized shared
    buffer's bytes add to)."""
    return _total_bytes(_allocations(kernel, ("shared",)), ("shared",))[0]


def first_use(kernel: PrimFunc, matches: Callable[[str], bool]) -> tuple[str, str, Any] | None:
    """The first use in ``kernel`` of a dtype that ``matches`` (a buffer parameter, a scalar
    parameter, an allocation, a variable, else a value): ``(what, dtype, span)``, ``what`` naming
    it ("variable 'i' of int64") and ``span`` the statement where it appears; None when there is
    none. Code generators use it to refuse the types their language lacks."""
    for buf in kernel.buffer_map.values():
        if matches(buf.dtype):
            span = getattr(buf, "span", None) or _first_span(kernel, buf.data)
            return f"buffer '{buf.name}' of {buf.dtype}", buf.dtype, span
    for p in kernel.params:
        if p not in kernel.buffer_map and p.dtype != "handle" and matches(p.dtype):
            return f"parameter '{p.name}' of {p.dtype}", p.dtype, _first_span(kernel, p)
    finder = _FirstUse(matches)
    finder.visit_stmt(kernel.body)
    return finder.found


def _first_span(kernel: PrimFunc, var: Var) -> Any:
    """The span of the first statement of ``kernel`` that uses ``var`` (a parameter, or the data
    of a buffer it loads or stores); None when none has one."""
    finder = _FirstStatementUsing(var)
    finder.visit_stmt(kernel.body)
    return finder.found


class _FirstStatementUsing(StmtExprVisitor):
    def __init__(self, var: Var):
        self.var = var
        self.found: Any = None
        self.span: Any = None

    def visit_stmt(self, s: Any) -> None:
        if self.found is not None:
            return
        outer, self.span = self.span, getattr(s, "span", None) or self.span
        if isinstance(s, BufferStore) and s.buffer.data is self.var:
            self.found = self.span
        else:
            super().visit_stmt(s)
        self.span = outer

    def visit_expr(self, e: PrimExpr) -> None:
        if self.found is not None:
            return
        if e is self.var or (isinstance(e, BufferLoad) and e.buffer.data is self.var):
            self.found = self.span
        else:
            super().visit_expr(e)


class _FirstUse(StmtExprVisitor):
    """Finds the first variable, allocation or value whose dtype ``matches``."""

    def __init__(self, matches: Callable[[str], bool]):
        self.matches = matches
        self.found: tuple[str, str, Any] | None = None
        self.span: Any = None

    def _has(self, dtype: str) -> bool:
        return dtype not in ("handle", "void") and self.matches(dtype)

    def visit_stmt(self, s: Any) -> None:
        if self.found is not None:
            return
        outer, self.span = self.span, getattr(s, "span", None) or self.span
        if isinstance(s, Allocate) and self._has(s.buffer.dtype):
            self.found = (f"buffer '{s.buffer.name}' of {s.buffer.dtype}", s.buffer.dtype, self.span)
        elif isinstance(s, (LetStmt, For)):
            var = s.var if isinstance(s, LetStmt) else s.loop_var
            if self._has(var.dtype):
                self.found = (f"variable '{var.name}' of {var.dtype}", var.dtype, self.span)
        if self.found is None:
            super().visit_stmt(s)
        self.span = outer

    def visit_expr(self, e: Any) -> None:
        if self.found is not None:
            return
        if isinstance(e, PrimExpr) and self._has(getattr(e, "dtype", "") or "void"):
            what = f"variable '{e.name}' of {e.dtype}" if isinstance(e, Var) else f"a value of {e.dtype}"
            if is_reinterpret(e) and _dt.is_float(e.args[0].dtype):  # how a float's sign bit is read
                what = f"the bits of a {e.args[0].dtype} value as {e.dtype} (to read its sign, as T.copysign does)"
            self.found = (what, e.dtype, self.span)
            return
        super().visit_expr(e)


def check_capabilities(kernel: PrimFunc, target: Any) -> None:
    """Raise :class:`TIRVerifyError` when ``kernel`` needs more than ``target`` offers."""
    name, kind = kernel.global_symbol, target.kind.name
    limit = target.capability("max_num_threads")
    threads, span = _threads_per_block(kernel)
    if limit is not None and threads > int(limit):
        raise TIRVerifyError(
            with_span(f"kernel '{name}' runs {threads} threads per block; target '{kind}' allows at most {limit}", span)
        )
    static_limit = target.capability("max_shared_memory_per_block")
    dynamic_limit = target.capability("max_dynamic_shared_memory_per_block") or static_limit
    allocations = _allocations(kernel, ("shared", "shared.dyn"))
    for scopes, limit, what in (
        (("shared",), static_limit, "static shared memory"),
        (("shared", "shared.dyn"), dynamic_limit, "shared memory (static and dynamic)"),
    ):
        used, names, span = _total_bytes(allocations, scopes)
        if limit is not None and used > int(limit):
            opt_in = byte_arena_shared_memory(target) and dynamic_limit is not None and dynamic_limit > limit
            hint = (
                f" (static shared buffers of up to {dynamic_limit} bytes in all move to dynamic shared memory; "
                "use smaller tiles)"
                if scopes == ("shared",) and opt_in
                else ""
            )
            raise TIRVerifyError(
                with_span(
                    f"kernel '{name}' needs {used} bytes of {what} ({', '.join(names)}); "
                    f"target '{kind}' allows at most {limit} per block{hint}",
                    span,
                )
            )
    _check_local_memory(kernel, target, threads)
    limit = target.capability("max_kernel_args")
    if limit is not None and len(kernel.params) > int(limit):
        raise TIRVerifyError(
            f"kernel '{name}' takes {len(kernel.params)} arguments; target '{kind}' allows at most {limit}"
        )
    for capability, elements in _DTYPE_CAPABILITIES.items():
        if target.capability(capability):
            continue
        use = first_use(kernel, lambda dtype, elements=elements: _dt.element_of(dtype) in elements)
        if use is not None:
            raise TIRVerifyError(
                with_span(f"kernel '{name}' uses {use[0]}; target '{kind}' has no {elements[0]}", use[2])
            )


def _check_local_memory(kernel: PrimFunc, target: Any, threads: int) -> None:
    limit = target.capability("max_local_memory_per_block")
    if limit is None:
        return
    used, names, span = _total_bytes(_allocations(kernel, ("local",)), ("local",))
    if used * threads > int(limit):
        raise TIRVerifyError(
            with_span(
                f"kernel '{kernel.global_symbol}' needs {used} bytes of local memory per thread "
                f"({', '.join(names)}), {used * threads} for its {threads} threads; target "
                f"'{target.kind.name}' allows at most {limit} per block: use fewer threads per block, "
                f"smaller local buffers, or shared memory",
                span,
            )
        )


def apply_target_passes(kernels: list[PrimFunc], target: Any) -> list[PrimFunc]:
    """Run the target kind's passes on every kernel, then check it against the capabilities."""
    out = []
    for kernel in kernels:
        for p in target.kind.passes:
            kernel = p(kernel, target)
        check_capabilities(kernel, target)
        out.append(kernel)
    return out
