"""Host/device split: ``lower(func, target) -> LoweredFunc`` (the lowering contract of
docs/development.md).

Pipeline: :func:`scalarize_vectors` (vector values spelled lane by lane) ->
:func:`launch_as_one_thread` (a device function that binds no thread runs as one thread) ->
:func:`legalize_float8` (float8 computed in float32, stored as bytes) ->
:func:`place_allocations` (device targets: shared and local buffers allocated outside the
thread-bound loops move into the loops that use them; on a CPU target, after compaction, shared
buffers become ordinary memory) -> :func:`compact_allocations` (shared and local buffers shrink
to the region their kernel touches) -> :func:`lower_fragments` (tensor-core fragments in local
memory, their operations as loops, unless the target has ``warp_fragments``) ->
:func:`without_dynamic_shared_memory` (targets without
dynamic shared memory hold constant-size ``shared.dyn`` buffers as static ones and refuse
launch-sized ones) -> :func:`shared_beyond_static_limit` (a kernel's static shared buffers past
the static limit but within the opt-in one move to dynamic shared memory) -> :func:`insert_barriers` (in kernels
using a moved shared buffer or shared memory without any barrier, where threads would race on
it) -> :func:`verify` -> :func:`simplify` ->
:func:`check_constant_bounds` (accesses whose index range is known must stay inside constant
dimensions) -> :func:`check_indices_at_run_time` (indices known only at run time are compared
with the extents before use; in kernels a failure is recorded in a device buffer the host reads
after them) -> :func:`flatten_buffers` -> :func:`simplify` -> split (host loops around
thread-bound nests stay on the host and launch once per iteration) -> the target kind's passes
and the capability check on every kernel (:mod:`.capabilities`).

CPU target (``target.kind.codegen is None``): no kernels; ``host`` is the flattened function;
parallel / vectorized / unrolled loops stay as ``For`` kinds. Thread bindings are an error.

Device target: every top-level thread-bound loop nest (a ``For`` of kind THREAD_BINDING reached
from the body through only sequences, let statements and asserts) becomes one kernel named
``f"{global_symbol}_kernel{i}"``. Kernel parameters: first the handle Vars of the global buffers
the nest uses (in the function's parameter order; ``buffer_map`` gives each its flattened 1-D
buffer, whose ``data`` is that same Var), then the scalar Vars the nest needs (scalar parameters,
shape variables, host let variables; parameters first in parameter order, then by first use).
The host replaces the nest by ``Evaluate(Call("int32", "tir.launch_kernel", (StringImm(name),
*kernel_params, *launch_extents)))``; ``kernel.attrs["launch_params"]`` lists the thread tags in
the order of the extents (``blockIdx.x/y/z`` then ``threadIdx.x/y/z``, only those used), plus
``"dyn_shmem"`` (bytes) when the kernel has dynamic shared memory (on targets with the capability
``dynamic_shared_memory``): allocations of scope
``"shared.dyn"`` (any size, so a block may opt in to more than the static limit) and ``"shared"``
allocations of non-constant size. Each is a view at an offset into one launch-sized region, in
the order the body allocates them, each rounded up to 32 bytes (:func:`dynamic_shared_bytes`;
code generators place their views with the same function). A tag bound by several
loops of one kernel with different constant extents launches with the largest; the smaller loops are
widened and guarded (``if tx < extent``). ``kernel.attrs["launch_bounds"]`` gives, per launch
parameter, its extent (an int when constant, else the expression): the device module records it
(where it is an expression of the kernel's scalar parameters) and a direct launch with a larger
extent, or with fewer bytes of dynamic shared memory, is refused. Host code outside the nests may only be scalar setup
(let statements without buffer access, asserts, ``if`` on scalar conditions) and serial loops
around nests: each iteration launches the nests it holds, with the loop variable as a scalar
argument, in order.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tvm._recursion import with_room
from tvm.tir import dtype as _dt
from tvm.tir.analysis import (
    any_node,
    buffers_touched,
    expr_uses_buffer,
    free_vars,
    free_vars_and_buffers,
    structural_equal,
)
from tvm.tir.expr import GE, LE, And, Buffer, BufferLoad, Call, Cast, IntImm, PrimExpr, StringImm, Var
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprMutator, StmtExprVisitor
from tvm.tir.op import binary
from tvm.tir.printer import expr_text
from tvm.tir.stmt import (
    Allocate,
    AssertStmt,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    seq,
)

from .bounds import check_constant_bounds
from .runtime_bounds import INDEX_ERRORS_RAISE, check_indices_at_run_time
from .capabilities import apply_target_passes
from .flatten import flat_bytes, flatten_buffers, flattened_buffer
from .float8 import legalize_float8
from .fragments import lower_fragments
from .float16 import exact_float16_conversions, legalize_float16
from .barriers import check_barriers_reach_every_thread, insert_barriers
from .compact import compact_allocations
from .parallel_private import private_to_parallel_iterations
from .placement import (
    across_launches,
    in_device_memory,
    place_allocations,
    shared_beyond_static_limit,
    without_dynamic_shared_memory,
)
from .simplify import simplify
from .single_thread import binds_threads, launch_as_one_thread
from .undef import remove_undef_stores
from .vectors import scalarize_vectors
from .verify import TIRVerifyError, check_tree_size, is_device_target, opens_block_less_kernel, verify, with_span

LAUNCH_ORDER = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


def dynamic_shared_bytes(buf: Buffer) -> PrimExpr | None:
    """Bytes ``buf`` takes in a kernel's dynamic shared memory, rounded up to 32 so every view is
    32-byte aligned (as tensor-core tiles need); None when it is not dynamic (not ``"shared.dyn"``
    and not a ``"shared"`` buffer of non-constant size). ``buf`` is a flattened (1-D) allocation."""
    size = buf.shape[0] if buf.shape else IntImm("int32", 1)
    if buf.scope != "shared.dyn" and not (buf.scope == "shared" and not isinstance(size, IntImm)):
        return None
    elem = _dt.nbytes(buf.dtype)
    if isinstance(size, IntImm):
        return IntImm(size.dtype, -(-size.value * elem // 32) * 32)
    return binary("mul", binary("floordiv", binary("add", binary("mul", size, elem), 31), 32), 32)


@dataclass
class LoweredFunc:
    """Result of :func:`lower`: the host function and its device kernels (empty on CPU)."""

    host: PrimFunc
    kernels: list = field(default_factory=list)
    target: Any = None


@with_room("lowering TIR")
def lower(func: PrimFunc, target: Any) -> LoweredFunc:
    """Verify, simplify, flatten and split ``func`` for ``target`` (see the module docstring)."""
    if isinstance(target, str):
        from tvm.target import Target

        target = Target(target)
    check_tree_size(func)  # before any pass walks a reused expression as a tree
    moved: set = set()  # shared/local buffers allocated outside the launch, as Apache TVM's schedules do
    func = legalize_float8(launch_as_one_thread(scalarize_vectors(remove_undef_stores(func)), target), target)
    func = exact_float16_conversions(func)
    if is_device_target(target):  # buffers first move into the launch, then shrink
        func = lower_fragments(compact_allocations(place_allocations(func, target, moved), target), target)
        func = shared_beyond_static_limit(without_dynamic_shared_memory(func, target), target)
        outliving = across_launches(func, target)
        func = check_barriers_reach_every_thread(insert_barriers(func, target, moved | outliving), target)
        func = in_device_memory(func, outliving)
    else:  # shrink while the buffers still have their scopes: placement makes CPU shared memory global
        func = lower_fragments(place_allocations(compact_allocations(func, target), target, moved), target)
        func = private_to_parallel_iterations(func)
    verify(func, target)
    f = check_indices_at_run_time(check_constant_bounds(simplify(func)), target)
    f = flatten_buffers(f)
    f = simplify(f)
    if not is_device_target(target):  # C has no float16 arithmetic: round per operation
        return LoweredFunc(legalize_float16(f), [], target)
    return _split(f, target)


def _unnarrowed(extent: PrimExpr) -> PrimExpr:
    """A launch extent narrowed from a wider or unsigned integer (``T.launch_thread("blockIdx.x",
    n)`` with an int64 or uint32 ``n``) as that value: the runtime refuses one that does not fit a launch, where
    the narrowed value would silently launch fewer threads."""
    source = extent.value.dtype if isinstance(extent, Cast) else None
    if source is not None and _dt.is_integer(source) and (_dt.bits(source) > 32 or _dt.is_uint(source)):
        return extent.value
    return extent


class _Splitter:
    def __init__(self, func: PrimFunc, target: Any):
        self.func = func
        self.target = target
        self.kernels: list[PrimFunc] = []
        self.symbol = func.global_symbol
        # flattened buffers by data var, for kernel buffer_maps
        self.param_order = {p: i for i, p in enumerate(func.params)}
        for p, b in func.buffer_map.items():
            self.param_order.setdefault(b.data, self.param_order[p])
        self.param_buffers = {b.data: b for b in func.buffer_map.values()}

    def _kernel_buffer(self, views: list, local: set) -> Buffer:
        """The buffer a kernel takes for the memory of ``views`` (the buffers its body uses over
        it): a buffer parameter's own, else the view of constant extent reaching furthest, else
        one sized by what is bound outside the kernel (a view sized by the kernel's own loop or
        let variables cannot size the argument: then one element is all that is known)."""
        own = self.param_buffers.get(views[0].data)
        if own is not None:
            return flattened_buffer(own)  # the function's buffer_map keeps the parameters' own shapes
        outside = [b for b in views if not any(v in local for x in b.shape for v in free_vars(x))]
        if outside:
            return max(outside, key=lambda b: -1 if flat_bytes(b) is None else flat_bytes(b))
        return dataclasses.replace(views[0], shape=(IntImm("int32", 1),))

    def host(self, s: Stmt, bound: list) -> Stmt:
        if isinstance(s, SeqStmt):
            return seq(*[self.host(x, bound) for x in s.seq])
        if (isinstance(s, For) and s.kind is ForKind.THREAD_BINDING) or opens_block_less_kernel(s):
            return self.make_kernel(s, bound)
        if isinstance(s, LetStmt):
            if expr_uses_buffer(s.value):
                raise TIRVerifyError(
                    _at(
                        s,
                        f"host code of a device function reads a buffer in "
                        f"'let {s.var.name}'; move it inside a thread-bound loop",
                    )
                )
            return LetStmt(s.var, s.value, self.host(s.body, bound + [s.var]), s.span)
        if isinstance(s, AssertStmt):
            return AssertStmt(s.condition, s.message, self.host(s.body, bound), s.span, s.kind)
        if isinstance(s, IfThenElse) and not expr_uses_buffer(s.condition):
            other = self.host(s.else_case, bound) if s.else_case is not None else None
            return IfThenElse(s.condition, self.host(s.then_case, bound), other, s.span)
        if isinstance(s, Evaluate) and not any_node(s.value, lambda n: isinstance(n, (Call, BufferLoad))):
            return s  # T.evaluate(n): nothing to compute, on the host or on the device
        if isinstance(s, Evaluate) and isinstance(s.value, Call) and s.value.op == INDEX_ERRORS_RAISE:
            return s  # reads what the kernels' index checks recorded
        if (
            isinstance(s, Evaluate)
            and isinstance(s.value, Call)
            and s.value.op == "ret"
            and not expr_uses_buffer(s.value)
        ):
            return s  # `return` (of a scalar) ends the host code: the kernels after it are not launched
        if isinstance(s, Allocate) and s.buffer.scope == "global":
            # device memory the kernels inside share (one writes it, a later one reads it): the
            # host allocates it on the function's device for the duration of the body
            if any(expr_uses_buffer(d) for d in s.buffer.shape):
                raise TIRVerifyError(_at(s, f"the size of buffer '{s.buffer.name}' reads a buffer"))
            return Allocate(s.buffer, self.host(s.body, bound), s.span)
        if isinstance(s, For) and s.kind is not ForKind.PARALLEL and binds_threads(s.body):
            if expr_uses_buffer(s.min) or expr_uses_buffer(s.extent):
                raise TIRVerifyError(_at(s, f"host loop over '{s.loop_var.name}' has bounds that read a buffer"))
            kind = ForKind.SERIAL if s.kind is ForKind.VECTORIZED else s.kind
            body = self.host(s.body, bound + [s.loop_var])
            return For(s.loop_var, s.min, s.extent, kind, body, None, dict(s.annotations), s.span)
        what = type(s).__name__
        if isinstance(s, For):
            what = f"a {s.kind.value} loop over '{s.loop_var.name}'"
        elif isinstance(s, Allocate):
            what = f"allocation of '{s.buffer.name}' (scope {s.buffer.scope})"
        raise TIRVerifyError(
            _at(
                s,
                f"{what} is outside any thread-bound loop of a {self.target.kind.name} "
                f"function; on a device target all work must be inside "
                f"T.thread_binding loops (only scalar setup may stay on the host)",
            )
        )

    def make_kernel(self, nest: Stmt, bound: list) -> Stmt:
        name = f"{self.symbol}_kernel{len(self.kernels)}"
        extents: dict[str, PrimExpr] = {}
        local: set = set()
        shmem: list[PrimExpr] = []
        uneven: set = set()

        class _Collect(StmtExprVisitor):
            def visit_For(self, s: For) -> None:
                if s.kind is ForKind.THREAD_BINDING:
                    tag = s.thread_tag
                    if tag not in LAUNCH_ORDER:
                        raise TIRVerifyError(_at(s, f"thread tag {tag!r} is not supported by lowering"))
                    old = extents.get(tag)
                    if old is None:
                        extents[tag] = s.extent
                    elif not structural_equal(old, s.extent):
                        if isinstance(old, IntImm) and isinstance(s.extent, IntImm):
                            if s.extent.value > old.value:
                                extents[tag] = s.extent
                            uneven.add(tag)
                        else:
                            raise TIRVerifyError(_at(s, f"{tag} is bound with different extents in kernel {name}"))
                local.add(s.loop_var)
                super().visit_For(s)

            def visit_LetStmt(self, s: LetStmt) -> None:
                local.add(s.var)
                super().visit_LetStmt(s)

            def visit_Allocate(self, s: Allocate) -> None:
                size = dynamic_shared_bytes(s.buffer)
                if size is not None:
                    shmem.append(size)
                super().visit_Allocate(s)

        _Collect().visit_stmt(nest)
        if uneven:
            nest = _pad_thread_loops(nest, {t: extents[t] for t in uneven})
        tags = [t for t in LAUNCH_ORDER if t in extents]
        launch = [_unnarrowed(extents[t]) for t in tags]
        if shmem:
            total = shmem[0]
            for x in shmem[1:]:
                total = binary("add", total, x)
            tags.append("dyn_shmem")
            launch.append(total)
        launch_vars = [free_vars(e) for e in launch]
        _check_launch_extents(nest, name, tags, launch, launch_vars, local)
        nest_vars, bufs = free_vars_and_buffers(nest)
        views: dict[Var, list] = {}
        for b in bufs:
            if b.scope not in ("global",):
                raise TIRVerifyError(
                    _at(nest, f"buffer '{b.name}' (scope {b.scope}) is used in kernel {name} but allocated outside it")
                )
            views.setdefault(b.data, []).append(b)
        kernel_bufs = {data: self._kernel_buffer(of, local) for data, of in views.items()}
        handles = sorted(kernel_bufs, key=lambda v: (self.param_order.get(v, len(self.param_order)),))
        scalars = dict.fromkeys(nest_vars)  # ordered, by identity (`in` a list builds an EQ per element)
        for used in [free_vars(x) for b in kernel_bufs.values() for x in b.shape] + launch_vars:
            scalars.update(dict.fromkeys(used))
        scalars = [v for v in scalars if v not in kernel_bufs]
        scalars.sort(key=lambda v: self.param_order.get(v, len(self.param_order)))
        params = list(handles) + scalars
        # the most each extent may be (the one the body indexes for), the fewest dynamic shared bytes
        bounds = [e.value if isinstance(e, IntImm) else e for e in launch]
        attrs = {"global_symbol": name, "launch_params": tags, "launch_bounds": bounds, "tir.is_kernel": True}
        kernel = PrimFunc(params, nest, {h: kernel_bufs[h] for h in handles}, attrs, name, nest.span)
        self.kernels.append(kernel)
        call = Call("int32", "tir.launch_kernel", (StringImm(name), *params, *launch))
        return Evaluate(call, nest.span)


def _check_launch_extents(nest: Stmt, name: str, tags: list, launch: list, launch_vars: list, local: set) -> None:
    """The host computes kernel ``name``'s launch extents before the launch: from scalars bound
    outside the kernel only (no memory reads, no kernel-local variables)."""
    for tag, extent, used in zip(tags, launch, launch_vars):
        read = buffers_touched(extent)
        if read:
            raise TIRVerifyError(
                _at(
                    nest,
                    f"launch extent of {tag} in kernel {name} reads '{read[0].name}' from memory "
                    f"({expr_text(extent)}), which the host cannot read before the launch: size a launch "
                    "from scalars (parameters, names assigned once) and read the buffer inside the kernel",
                )
            )
        bad = [v for v in used if v in local]
        if bad:
            raise TIRVerifyError(
                _at(nest, f"launch extent of {tag} in kernel {name} depends on kernel-local variable '{bad[0].name}'")
            )


def _pad_thread_loops(nest: Stmt, extents: dict) -> Stmt:
    """Widen thread loops of a tag bound with several constant extents to the largest one and
    guard their bodies (``if tx < original_extent``), so the launch has one extent per tag."""
    from tvm.tir.functor import StmtExprMutator

    class _Pad(StmtExprMutator):
        def visit_For(self, s: For):
            s2 = super().visit_For(s)
            want = extents.get(s.thread_tag) if s.kind is ForKind.THREAD_BINDING else None
            if want is None or structural_equal(want, s.extent):
                return s2
            guard = binary("lt", s.loop_var, s.extent)
            if not (isinstance(s.min, IntImm) and s.min.value == 0):
                guard = binary("lt", s.loop_var, binary("add", s.min, s.extent))
            return For(
                s.loop_var,
                s2.min,
                want,
                s2.kind,
                IfThenElse(guard, s2.body, None, s.span),
                s2.thread_tag,
                dict(s2.annotations),
                s2.span,
            )

    return _Pad().visit_stmt(nest)


def _at(s: Stmt, msg: str) -> str:
    return with_span(msg, getattr(s, "span", None))


def _split(func: PrimFunc, target: Any) -> LoweredFunc:
    if not func.global_symbol.isidentifier():  # kernels are named after it, in C-like languages
        raise TIRVerifyError(
            f"function name '{func.global_symbol}' is not a valid C identifier; "
            "set attrs['global_symbol'] to letters, digits and underscores"
        )
    sp = _Splitter(func, target)
    body = sp.host(func.body, [])
    host = func.with_body(body)
    # self-check: every kernel is a closed, well-formed function
    for k in sp.kernels:
        verify(k, target)
    verify(host)
    kernels = apply_target_passes(sp.kernels, target)
    return LoweredFunc(_checking_narrowed_arguments(host, sp.kernels, kernels, target), kernels, target)


def _checking_narrowed_arguments(host: PrimFunc, before: list, after: list, target: Any) -> PrimFunc:
    """``host`` with each launch of a kernel whose 64-bit integer parameters a target pass
    narrowed (``narrow_int64_indices`` on targets without int64) behind a check that the value
    fits: a ``ValueError`` naming the function, the value and the target, where the launch
    would otherwise refuse an argument of the internal kernel."""
    narrowed: dict[str, list[int]] = {}
    for old, new in zip(before, after):
        found = [
            i
            for i, (p, q) in enumerate(zip(old.params, new.params))
            if _dt.is_int(p.dtype) and _dt.bits(p.dtype) == 64 and _dt.bits(q.dtype) == 32
        ]
        if found:
            narrowed[new.global_symbol] = found
    if not narrowed:
        return host
    where = f"function '{host.global_symbol}'"

    class _Check(StmtExprMutator):
        def visit_Evaluate(self, s: Evaluate) -> Stmt:
            call = s.value
            if not (isinstance(call, Call) and call.op == "tir.launch_kernel"):
                return s
            checked: Stmt = s
            for i in reversed(narrowed.get(call.args[0].value, [])):
                value = call.args[1 + i]
                fits = And(GE(value, IntImm(value.dtype, -(2**31))), LE(value, IntImm(value.dtype, 2**31 - 1)))
                message = (
                    f"{where}: {expr_text(value)} must lie within int32 on target '{target.kind.name}', "
                    f"which has no 64-bit integers (its kernels compute int64 sizes and indices in int32)"
                )
                checked = AssertStmt(fits, message, checked, s.span, "ValueError")
            return checked

    return host.with_body(_Check().visit_stmt(host.body))


def split_host_device(func: PrimFunc, target: Any) -> LoweredFunc:
    """Only the split step of :func:`lower` (``func`` must already be flattened)."""
    return _split(func, target) if is_device_target(target) else LoweredFunc(func, [], target)


__all__ = ["LoweredFunc", "lower", "split_host_device", "LAUNCH_ORDER", "dynamic_shared_bytes"]
