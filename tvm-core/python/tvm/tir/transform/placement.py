"""Where a device function's shared and local buffers live.

TVMScript as Apache TVM writes it often allocates a kernel's shared and local buffers at the top
of the function (``A_shared = T.alloc_buffer(..., scope="shared")`` in the root block) and uses
them inside the thread-bound loops. A kernel can only hold them inside its launch, so
:func:`place_allocations` moves each such allocation down to where it is used:

* through thread-bound loops, sequences (when one statement of the sequence holds every use),
  ``if`` branches (when one branch does), let statements, asserts and other allocations;
* a ``shared`` buffer stops above the first loop bound to a thread (``threadIdx`` or a virtual
  thread): one copy per block (in a kernel without ``blockIdx`` loops, above its outermost
  thread loop: the kernel's one block); a ``local`` one may go below it (one copy per thread);
* never into a serial, parallel, vectorized or unrolled loop: a buffer allocated in a loop body
  would not keep its values from one iteration to the next. The exception is a ``local``
  buffer and a serial host loop around a kernel launch (outside every thread binding) whose
  body writes the buffer before it reads it on every path, always the same element: no launch
  sees another's registers, and none needs to.

An allocation that cannot reach a thread-bound loop this way (uses in several kernels, or in a
loop outside every thread binding) stays where it is, and the verifier says why, unless several
launches use it: then it is memory that outlives a launch, and the sequential meaning of the
function is that every kernel sees the values the ones before it left there, which only device
(global) memory keeps. :func:`across_launches` finds those buffers and
:func:`in_device_memory` (after the barriers, which treat them as the shared memory they were
written as) gives them global scope, with a :class:`MemoryPlacementWarning`. On a CPU target
shared buffers become ordinary (global) memory: the function's parallel loops are its threads,
and they all see it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional

from tvm.tir import dtype as _dt
from tvm.tir.analysis import structural_equal, uses_handle
from tvm.tir.expr import FRAGMENT_SCOPES, Buffer, BufferLoad, IntImm, is_per_thread
from tvm.tir.function import PrimFunc
from tvm.tir.functor import BufferReplacer, StmtExprMutator, StmtExprVisitor, post_order_visit
from tvm.tir.stmt import Allocate, AssertStmt, BufferStore, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt
from tvm.tir.printer import expr_text

from .verify import TIRVerifyError, is_device_target, opens_block_less_kernel, with_span
from tvm._user_warning import warn_at_caller

_SHARED_SCOPES = ("shared", "shared.dyn")
_MOVABLE_SCOPES = (*_SHARED_SCOPES, "local", *FRAGMENT_SCOPES)


def _is_thread_loop(s: Stmt) -> bool:
    return isinstance(s, For) and s.kind is ForKind.THREAD_BINDING


def _writes_first(s: Optional[Stmt], data: Any) -> Optional[bool]:
    """Whether ``s`` writes the buffer over ``data`` before it can read it on every path (True),
    may read it first (False), or does not use it (None). Conservative: any use other than a
    store that does not read the buffer, met first, counts as a read."""
    if s is None or not uses_handle(s, data):
        return None
    if isinstance(s, SeqStmt):
        for x in s.seq:
            first = _writes_first(x, data)
            if first is not None:
                return first
        return None
    if isinstance(s, BufferStore) and s.buffer.data is data:
        return not (uses_handle(s.value, data) or any(uses_handle(i, data) for i in s.indices))
    if isinstance(s, For):
        runs = s.kind is ForKind.THREAD_BINDING or (
            isinstance(s.extent, IntImm) and s.extent.value > 0 and not uses_handle(s.min, data)
        )
        return _writes_first(s.body, data) if runs else False
    if isinstance(s, (LetStmt, AssertStmt)):
        head = s.value if isinstance(s, LetStmt) else s.condition
        return False if uses_handle(head, data) else _writes_first(s.body, data)
    if isinstance(s, Allocate):
        return _writes_first(s.body, data)
    return False


def _one_element(body: Stmt, data: Any) -> bool:
    """Whether every access of the buffer over ``data`` in ``body`` is to the same element (so a
    write before the first read covers every read)."""
    accesses: list = []
    post_order_visit(
        body,
        lambda n: accesses.append(n) if isinstance(n, (BufferLoad, BufferStore)) and n.buffer.data is data else None,
    )
    return all(
        len(a.indices) == len(accesses[0].indices) and all(map(structural_equal, a.indices, accesses[0].indices))
        for a in accesses
    )


def _is_host_loop_into_launch(s: Stmt, buf: Buffer, in_block: bool, in_thread: bool) -> bool:
    """A serial loop around a kernel launch that a local buffer may enter (module docstring)."""
    return (
        isinstance(s, For)
        and s.kind is ForKind.SERIAL
        and is_per_thread(buf.scope)
        and not (in_block or in_thread)
        and not (uses_handle(s.min, buf.data) or uses_handle(s.extent, buf.data))
        and _writes_first(s.body, buf.data) is True
        and _one_element(s.body, buf.data)
    )


def _place(s: Stmt, buf: Buffer, in_block: bool, in_thread: bool) -> tuple[Stmt, bool]:
    """``s`` with ``buf``'s allocation moved as far down as it may go, and whether the place found
    is inside the launch (a blockIdx loop for shared memory, any thread-bound loop for local)."""
    data = buf.data
    tag = (s.thread_tag or "") if isinstance(s, For) else ""
    if _is_thread_loop(s) and (is_per_thread(buf.scope) or tag.startswith("blockIdx")):
        if not (uses_handle(s.min, data) or uses_handle(s.extent, data)):
            body, ok = _place(s.body, buf, in_block or tag.startswith("blockIdx"), True)
            return _replace(s, body=body), ok
    elif _is_host_loop_into_launch(s, buf, in_block, in_thread):
        body, ok = _place(s.body, buf, in_block, in_thread)
        if ok:
            return _replace(s, body=body), ok
    elif isinstance(s, SeqStmt):
        users = [i for i, x in enumerate(s.seq) if uses_handle(x, data)]
        if len(users) == 1:
            (i,) = users
            inner, ok = _place(s.seq[i], buf, in_block, in_thread)
            return SeqStmt(s.seq[:i] + (inner,) + s.seq[i + 1 :], span=s.span), ok
    elif isinstance(s, (LetStmt, AssertStmt)):
        head = s.value if isinstance(s, LetStmt) else s.condition
        if not uses_handle(head, data):
            body, ok = _place(s.body, buf, in_block, in_thread)
            return _replace(s, body=body), ok
    elif isinstance(s, Allocate) and not any(uses_handle(x, data) for x in s.buffer.shape):
        body, ok = _place(s.body, buf, in_block, in_thread)
        return _replace(s, body=body), ok
    elif isinstance(s, IfThenElse) and not uses_handle(s.condition, data):
        then_use, else_use = uses_handle(s.then_case, data), uses_handle(s.else_case, data)
        if then_use != else_use:
            branch = s.then_case if then_use else s.else_case
            inner, ok = _place(branch, buf, in_block, in_thread)
            cases = {"then_case": inner} if then_use else {"else_case": inner}
            return _replace(s, **cases), ok
    placed = Allocate(buf, s, span=getattr(s, "span", None))
    if not (in_block or in_thread) and opens_block_less_kernel(placed):
        return placed, True  # the one block of a kernel without blockIdx loops
    return placed, (in_thread if is_per_thread(buf.scope) else in_block)


def _replace(s: Stmt, **fields: Any) -> Stmt:
    return dataclasses.replace(s, **fields)


class _Placer(StmtExprMutator):
    """Moves the movable allocations that sit outside every thread-bound loop."""

    def __init__(self, moved: Optional[set]) -> None:
        self.thread_depth = 0
        self.changed = False
        self.moved = moved

    def visit_For(self, s: For) -> Stmt:
        self.thread_depth += _is_thread_loop(s)
        try:
            return super().visit_For(s)
        finally:
            self.thread_depth -= _is_thread_loop(s)

    def visit_Allocate(self, s: Allocate) -> Stmt:
        body = self._body(self.visit_stmt(s.body))
        if self.thread_depth or s.buffer.scope not in _MOVABLE_SCOPES:
            return s if body is s.body else _replace(s, body=body)
        placed, ok = _place(body, s.buffer, False, False)
        if not ok:
            return s if body is s.body else _replace(s, body=body)
        self.changed = True
        if self.moved is not None:
            self.moved.add(s.buffer.data)
        return placed


class _SharedAsGlobal(BufferReplacer):
    """Every shared buffer of a CPU function as an ordinary (global) one."""

    def replacement(self, b: Buffer) -> Optional[dict]:
        return {"scope": "global"} if b.scope in _SHARED_SCOPES else None


class _StaticShared(BufferReplacer):
    """``shared.dyn`` buffers of constant size as static shared ones."""

    def replacement(self, b: Buffer) -> Optional[dict]:
        return {"scope": "shared"} if b.scope == "shared.dyn" else None


#: Value of capability ``dynamic_shared_memory`` for languages whose shared arrays are typed
#: (SPIR-V, WGSL): one shared buffer per kernel may be sized at launch (its length a specialization
#: or override constant), every other one is static.
ONE_ARRAY = "one_array"


def byte_arena_shared_memory(target: Any) -> bool:
    """Whether ``target``'s dynamic shared memory is one byte arena sized at launch (capability
    ``dynamic_shared_memory`` True, or any other truthy value but :data:`ONE_ARRAY`)."""
    mode = target.capability("dynamic_shared_memory")
    return bool(mode) and mode != ONE_ARRAY


def without_dynamic_shared_memory(func: PrimFunc, target: Any) -> PrimFunc:
    """For a target without dynamic shared memory (capability ``dynamic_shared_memory`` False):
    its ``shared.dyn`` buffers of constant size become static shared buffers (the size is fixed
    anyway), and a shared buffer whose size is known only at launch is a :class:`TIRVerifyError`.
    With :data:`ONE_ARRAY` the constant-size ones become static too and the launch-sized ones stay
    dynamic (the code generator refuses a second one in one kernel)."""
    if byte_arena_shared_memory(target):
        return func
    mode = target.capability("dynamic_shared_memory")
    found: list[Allocate] = []
    post_order_visit(
        func.body,
        lambda n: found.append(n) if isinstance(n, Allocate) and n.buffer.scope in _SHARED_SCOPES else None,
    )
    sized_at_launch = [a for a in found if not all(isinstance(d, IntImm) for d in a.buffer.shape)]
    for alloc in sized_at_launch if mode != ONE_ARRAY else ():
        dims = [expr_text(d) for d in alloc.buffer.shape]
        shape = f"{dims[0]}," if len(dims) == 1 else ", ".join(dims)
        raise TIRVerifyError(
            with_span(
                f"in function '{func.global_symbol}': shared buffer '{alloc.buffer.name}' has a size known only "
                f"at launch ({shape}), which needs dynamic shared memory; target "
                f"'{target.kind.name}' has none: give it a constant size",
                alloc.span,
            )
        )
    return _StaticShared().rewrite(func) if found else func


class _DynamicShared(BufferReplacer):
    """Constant-size ``shared`` buffers of the given memories as ``shared.dyn`` ones."""

    def __init__(self, datas: set) -> None:
        super().__init__()
        self.datas = datas

    def replacement(self, b: Buffer) -> Optional[dict]:
        return {"scope": "shared.dyn"} if b.scope == "shared" and b.data in self.datas else None


def _static_shared(nest: Stmt) -> tuple[int, set]:
    """Bytes of the constant-size ``shared`` buffers a kernel's loop nest allocates (each rounded
    up to 32, as views into dynamic shared memory are), and their memories."""
    total, datas = 0, set()

    def visit(n: Any) -> None:
        nonlocal total
        if (
            isinstance(n, Allocate)
            and n.buffer.scope == "shared"
            and all(isinstance(d, IntImm) for d in n.buffer.shape)
        ):
            elems = math.prod(d.value for d in n.buffer.shape)
            size = elems * _dt.nbytes(n.buffer.dtype)
            total += -(-size // 32) * 32  # as dynamic shared memory places it (dynamic_shared_bytes)
            datas.add(n.buffer.data)

    post_order_visit(nest, visit)
    return total, datas


def shared_beyond_static_limit(func: PrimFunc, target: Any) -> PrimFunc:
    """On a target with dynamic shared memory whose blocks may opt in to more than the static limit
    (cuda: 48 KiB static, up to 227 KiB dynamic), a kernel whose static shared buffers exceed the
    static limit but fit the larger one gets them in dynamic shared memory (``shared.dyn``): tiles
    that Apache TVM's schedules size past 48 KiB run instead of failing to compile."""
    static = target.capability("max_shared_memory_per_block")
    dynamic = target.capability("max_dynamic_shared_memory_per_block")
    if not byte_arena_shared_memory(target) or static is None or dynamic is None or dynamic <= static:
        return func
    datas: set = set()

    def visit(s: Any) -> None:
        # an outermost thread-bound loop is one kernel; so is the shared allocation around the
        # thread loops of a kernel without blockIdx loops (one block)
        if _is_thread_loop(s) or isinstance(s, Allocate) and opens_block_less_kernel(s):
            total, found = _static_shared(s)
            if static < total <= dynamic:
                datas.update(found)
            return
        for child in _children(s):
            visit(child)

    visit(func.body)
    return _DynamicShared(datas).rewrite(func) if datas else func


def _children(s: Stmt) -> list:
    if isinstance(s, SeqStmt):
        return list(s.seq)
    if isinstance(s, IfThenElse):
        return [s.then_case] + ([s.else_case] if s.else_case is not None else [])
    body = getattr(s, "body", None)
    return [body] if isinstance(body, Stmt) else []


def place_allocations(func: PrimFunc, target: Any, moved: Optional[set] = None) -> PrimFunc:
    """``func`` with its shared and local allocations moved into the thread-bound loops that use
    them (see the module docstring); the handles of the buffers moved are added to ``moved``. On a
    CPU target, where the whole function is one block of threads (its parallel loops), shared
    memory is ordinary memory: shared buffers become global."""
    if not is_device_target(target):
        return _SharedAsGlobal().rewrite(func)
    placer = _Placer(moved)
    body = placer.visit_stmt(func.body)
    if not placer.changed:
        return func
    return dataclasses.replace(func, body=body)


class MemoryPlacementWarning(UserWarning):
    """A shared or local buffer used across kernel launches was placed in device memory."""


class _OutsideLaunches(StmtExprVisitor):
    """The shared and local allocations outside every thread-bound loop, and the launches."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.found: list[Buffer] = []
        self.launches: list[Stmt] = []

    def visit_For(self, s: For) -> None:
        bound = s.kind is ForKind.THREAD_BINDING
        if bound and self.depth == 0:
            self.launches.append(s)
        self.depth += bound
        super().visit_For(s)
        self.depth -= bound

    def visit_Allocate(self, s: Allocate) -> None:
        if self.depth == 0 and opens_block_less_kernel(s):
            self.launches.append(s)  # its allocations are its one block's
            return
        if self.depth == 0 and (s.buffer.scope in _SHARED_SCOPES or s.buffer.scope == "local"):
            self.found.append(s.buffer)
        super().visit_Allocate(s)


def across_launches(func: PrimFunc, target: Any) -> set:
    """The handles of ``func``'s shared and local buffers that :func:`place_allocations` left
    outside every launch and that two or more launches use (empty on CPU targets). A buffer that
    only one launch uses stays as it is: the verifier names it (its launch is in a host loop that
    would need its values kept from one iteration to the next, or its one copy per block cannot
    be told apart from one for the whole device)."""
    if not is_device_target(target):
        return set()
    finder = _OutsideLaunches()
    finder.visit_stmt(func.body)
    return {b.data for b in finder.found if sum(uses_handle(k, b.data) for k in finder.launches) >= 2}


def in_device_memory(func: PrimFunc, handles: set) -> PrimFunc:
    """``func`` with the buffers over ``handles`` (from :func:`across_launches`) in global
    memory, with a :class:`MemoryPlacementWarning` naming them."""
    if not handles:
        return func
    names: list[str] = []

    class _Global(BufferReplacer):
        def replacement(self, b: Buffer) -> Optional[dict]:
            if b.data not in handles:
                return None
            if b.name not in names:
                names.append(b.name)
            return {"scope": "global"}

    func = _Global().rewrite(func)
    warn_at_caller(
        f"device function '{func.global_symbol}': {', '.join(names)} outlive(s) a kernel launch "
        f"(used by several kernels, or by host loops between them): placed in device (global) "
        f"memory, which keeps values from one launch to the next",
        MemoryPlacementWarning,
    )
    return func
