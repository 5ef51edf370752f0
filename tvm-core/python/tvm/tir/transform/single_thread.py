"""Device functions without any thread binding run as one kernel of one thread.

Apache TVM compiles a device-targeted PrimFunc whose loops are all serial (an unscheduled
function) into a kernel launched with one block of one thread; :func:`launch_as_one_thread` gives
the same meaning here, with a :class:`SingleThreadKernelWarning`, because such a kernel uses one
thread of the whole device. A function that binds threads anywhere is left alone: its work outside
the launches must be host work (the split refuses the rest).
"""

from __future__ import annotations

import warnings
from typing import Any

from tvm.tir.analysis import any_node
from tvm.tir.expr import BufferLoad, Call, IntImm, Var
from tvm.tir.function import PrimFunc
from tvm.tir.stmt import Allocate, BufferStore, Evaluate, For, ForKind, Stmt

from .verify import is_device_target


class SingleThreadKernelWarning(UserWarning):
    """A device function without thread bindings was compiled as a kernel of one thread."""


def binds_threads(node: Any) -> bool:
    """Whether ``node`` (a statement) holds a thread-bound loop."""
    return any_node(node, lambda n: isinstance(n, For) and n.kind is ForKind.THREAD_BINDING)


def _device_work(node: Any) -> bool:
    """Whether ``node`` must run on the device: memory access, an allocation or a call."""
    if isinstance(node, (BufferStore, BufferLoad, Allocate)):
        return True
    return isinstance(node, Evaluate) and any_node(node.value, lambda n: isinstance(n, Call))


def launch_as_one_thread(func: PrimFunc, target: Any) -> PrimFunc:
    """``func`` with its body in a launch of one thread (``blockIdx.x`` of extent 1) when
    ``target`` is a device target, nothing in ``func`` binds a thread and the body does device
    work; else ``func`` unchanged."""
    body = func.body
    if not is_device_target(target) or binds_threads(body) or not any_node(body, _device_work):
        return func
    warnings.warn(
        f"device function '{func.global_symbol}' has no thread-bound loop: it runs as one "
        f"{target.kind.name} kernel of one thread (bind its loops with T.thread_binding to "
        f"use the device's parallelism)",
        SingleThreadKernelWarning,
        stacklevel=4,
    )
    return func.with_body(_launch_inside_global_allocations(body))


def _launch_inside_global_allocations(body: Stmt) -> Stmt:
    """``body`` in a one-thread launch; its outermost global allocations stay outside (the host
    allocates them in device memory, as for any kernel)."""
    if isinstance(body, Allocate) and body.buffer.scope == "global":
        return Allocate(body.buffer, _launch_inside_global_allocations(body.body), body.span)
    zero, one = IntImm("int32", 0), IntImm("int32", 1)
    return For(Var("blockIdx_x", "int32"), zero, one, ForKind.THREAD_BINDING, body, "blockIdx.x", {}, body.span)


__all__ = ["SingleThreadKernelWarning", "launch_as_one_thread"]
