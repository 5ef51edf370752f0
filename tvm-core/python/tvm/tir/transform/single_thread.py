"""Device work outside every thread binding runs as a kernel of one thread.

Apache TVM compiles a device-targeted PrimFunc whose loops are all serial (an unscheduled
function) into a kernel launched with one block of one thread; :func:`launch_as_one_thread` gives
the same meaning here, with a :class:`SingleThreadKernelWarning`, because such a kernel uses one
thread of the whole device. The same holds for the unscheduled parts of a function that binds
threads elsewhere (a schedule applied to some of its blocks only): each statement of the host
code that reads or writes memory outside every thread binding becomes one such launch, in program
order between the others. Host code that only computes scalars, loops around launches or calls
functions stays on the host.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.tir.analysis import any_node
from tvm.tir.expr import BufferLoad, Call, IntImm, Var
from tvm.tir.function import PrimFunc
from tvm.tir.stmt import Allocate, AssertStmt, BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt

from .verify import is_device_target, opens_block_less_kernel
from tvm._user_warning import warn_at_caller


class SingleThreadKernelWarning(UserWarning):
    """A device function without thread bindings was compiled as a kernel of one thread."""


def binds_threads(node: Any) -> bool:
    """Whether ``node`` (a statement) holds a thread-bound loop."""
    return any_node(node, lambda n: isinstance(n, For) and n.kind is ForKind.THREAD_BINDING)


def _memory_work(node: Any) -> bool:
    """Whether ``node`` reads, writes or allocates memory."""
    return isinstance(node, (BufferStore, BufferLoad, Allocate))


def _device_work(node: Any) -> bool:
    """Whether ``node`` must run on the device: memory access, an allocation or a call (not a
    ``return``: giving the caller a scalar is the host's; a read in its value counts by itself)."""
    if _memory_work(node):
        return True
    if not isinstance(node, Evaluate) or (isinstance(node.value, Call) and node.value.op == "ret"):
        return False
    return any_node(node.value, lambda n: isinstance(n, Call))


def launch_as_one_thread(func: PrimFunc, target: Any) -> PrimFunc:
    """``func`` with its device work outside every thread binding in launches of one thread
    (``blockIdx.x`` of extent 1) when ``target`` is a device target: the whole body when nothing
    in ``func`` binds a thread, else each host statement that reads or writes memory (see the
    module docstring); else ``func`` unchanged."""
    body = func.body
    if not is_device_target(target) or not any_node(body, _device_work):
        return func
    kind = target.kind.name
    if binds_threads(body):
        unbound: list[Stmt] = []
        body = _unbound_work_in_launches(body, unbound)
        if not unbound:
            return func
        what = (
            f"reads or writes memory outside its thread-bound loops in {len(unbound)} statement(s): "
            f"each runs as one {kind} kernel of one thread (bind their loops"
        )
    else:
        body = _launch_inside_global_allocations(body)
        what = f"has no thread-bound loop: it runs as one {kind} kernel of one thread (bind its loops"
    warn_at_caller(
        f"device function '{func.global_symbol}' {what} with T.thread_binding to use the device's parallelism)",
        SingleThreadKernelWarning,
    )
    return func.with_body(body)


def _host_call(node: Any) -> bool:
    """A call of a packed function: only the host can make it (such a statement is left to the
    split, which names it)."""
    return isinstance(node, Call) and node.op == "call_packed"


def _unbound_work_in_launches(s: Stmt, unbound: list) -> Stmt:
    """``s`` (host code of a function that binds threads) with every statement that touches
    memory outside all thread bindings in a one-thread launch; those statements go to ``unbound``.
    Statements that hold a launch are entered when the host can run their own part (loops,
    lets, asserts, allocations, conditions) and left as they are otherwise."""
    if isinstance(s, SeqStmt):
        return SeqStmt(tuple(_unbound_work_in_launches(x, unbound) for x in s.seq), span=s.span)
    if not binds_threads(s):
        if not any_node(s, _memory_work) or any_node(s, _host_call):
            return s
        unbound.append(s)
        return _launch_inside_global_allocations(s)
    if (isinstance(s, For) and s.kind is ForKind.THREAD_BINDING) or opens_block_less_kernel(s):
        return s
    if isinstance(s, (For, LetStmt, AssertStmt, Allocate)):
        return dataclasses.replace(s, body=_unbound_work_in_launches(s.body, unbound))
    if isinstance(s, IfThenElse):
        other = None if s.else_case is None else _unbound_work_in_launches(s.else_case, unbound)
        return dataclasses.replace(s, then_case=_unbound_work_in_launches(s.then_case, unbound), else_case=other)
    return s


def _launch_inside_global_allocations(body: Stmt) -> Stmt:
    """``body`` in a one-thread launch; its outermost global allocations stay outside (the host
    allocates them in device memory, as for any kernel)."""
    if isinstance(body, Allocate) and body.buffer.scope == "global":
        return Allocate(body.buffer, _launch_inside_global_allocations(body.body), body.span)
    zero, one = IntImm("int32", 0), IntImm("int32", 1)
    return For(Var("blockIdx_x", "int32"), zero, one, ForKind.THREAD_BINDING, body, "blockIdx.x", {}, body.span)


__all__ = ["SingleThreadKernelWarning", "launch_as_one_thread"]
