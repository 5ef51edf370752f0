"""Apache TVM's TIRx device regions in TVMScript: ``T.device_entry()`` and its scope ids.

``T.device_entry()`` makes the rest of the function one kernel. ``T.cta_id([n, ...])`` and
``T.thread_id([m, ...])`` declare its launch (blockIdx and threadIdx, x first); ``T.warp_id``,
``T.lane_id``, ``T.warpgroup_id``, ``T.warp_id_in_wg`` and ``T.thread_id_in_wg`` name parts of
the linear thread index ``threadIdx.x + threadIdx.y * X + threadIdx.z * X * Y`` (warps of 32
threads, warpgroups of four warps). The launch wraps the whole region wherever its ids are
declared in it, so statements before a declaration run on every thread, as in Apache TVM; a
region that declares no id runs on one thread.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Optional

from tvm.tir import dtype as _dt
from tvm.tir import op as _op
from tvm.tir.analysis import any_node, buffers_touched, free_vars, structural_equal
from tvm.tir.expr import IntImm, PrimExpr, Var
from tvm.tir.printer import expr_text
from tvm.tir.stmt import For, ForKind, LetStmt, Stmt
from tvm.tir.transform.single_thread import binds_threads
from tvm.tir.transform.verify import is_thread_index_loop

from .cross_thread import ThreadLoop

_INT32_MAX = _dt.integer_range("int32")[1]

WARP_THREADS = 32
WARPGROUP_WARPS = 4
_LAUNCHED = {"cta": "blockIdx.", "thread": "threadIdx."}
#: For each id derived from the linear thread index: the extent it always has (None: it depends
#: on the block) and the threads per unit of its extent (for a block size told by it).
_DERIVED = {
    "warp": (None, WARP_THREADS),
    "lane": (WARP_THREADS, None),
    "warpgroup": (None, WARP_THREADS * WARPGROUP_WARPS),
    "warp_in_wg": (WARPGROUP_WARPS, None),
    "thread_in_wg": (WARP_THREADS * WARPGROUP_WARPS, None),
}


class ScopeIdError(ValueError):
    """A scope id the region cannot launch; ``node`` is the statement to point at."""

    def __init__(self, message: str, node: ast.AST):
        super().__init__(message)
        self.node = node


@dataclass
class _Launch:
    vars: list
    extents: list


@dataclass
class _Derived:
    var: Var
    kind: str
    extent: Optional[PrimExpr]
    call: str
    node: ast.AST


class DeviceRegion:
    """The scope ids declared after one ``T.device_entry()``, and the launch they give."""

    def __init__(self, in_threads: bool, bound_variables: Callable[[], list]):
        self.in_threads = in_threads  # T.device_entry() under T.launch_thread: a marker only
        self._bound_variables = bound_variables  # what the kernel's names are bound to now
        self.outside = {id(v) for v in bound_variables()}  # bound before the region
        self.launches: dict[str, _Launch] = {}
        self.lets: list[tuple[Var, PrimExpr]] = []  # names given again or in another dtype
        self.derived: list[_Derived] = []

    def declare(self, spec, names: list[str], node: ast.AST) -> tuple[list[Var], list[ThreadLoop]]:
        """The variables of scope id ``spec`` (named ``names``, one per extent) and the thread
        loops it opens, which the parser keeps as enclosing threads."""
        if self.in_threads:
            raise ScopeIdError(
                f"T.{spec.call} in a device region opened inside thread loops (T.launch_thread, "
                f"T.thread_binding): those loops launch the threads already; declare the launch one way, with "
                f"T.cta_id / T.thread_id after T.device_entry() at the top of the function, or with thread loops only",
                node,
            )
        if spec.dtype not in ("int32", "uint32", "int64"):
            raise ScopeIdError(f"T.{spec.call}: dtype must be 'int32', 'uint32' or 'int64', got {spec.dtype!r}", node)
        if spec.kind in _LAUNCHED:
            return self._declare_launch(spec, names, node)
        if spec.extents is not None and len(spec.extents) != 1:
            raise ScopeIdError(f"T.{spec.call} takes one extent, got {len(spec.extents)}", node)
        extent = None if spec.extents is None else _extent(spec.extents[0], spec.call, node)
        fixed = _DERIVED[spec.kind][0]
        if fixed is not None and extent is not None and _known(extent) not in (None, fixed):
            raise ScopeIdError(f"T.{spec.call}([{_known(extent)}]): it always has {fixed} values", node)
        var = Var(_one_name(names, spec.call, node), spec.dtype)
        self.derived.append(_Derived(var, spec.kind, extent, spec.call, node))
        return [var], []

    def _declare_launch(self, spec, names: list[str], node: ast.AST) -> tuple[list[Var], list[ThreadLoop]]:
        extents = spec.extents
        if extents is None and spec.kind in self.launches:  # T.thread_id() after T.thread_id([n])
            extents = self.launches[spec.kind].extents
        if extents is None:
            if spec.kind == "cta":
                raise ScopeIdError(
                    "T.cta_id() without extents: give the number of blocks, T.cta_id([n]) (clusters, from which "
                    "Apache TVM infers it, are not supported)",
                    node,
                )
            extents = [self._threads_from_derived(node)]
        if not 1 <= len(extents) <= 3:
            raise ScopeIdError(f"T.{spec.call} takes one to three extents (x, y, z), got {len(extents)}", node)
        extents = [_extent(e, spec.call, node) for e in extents]
        self._check_defined_outside(extents, spec.call, node)
        if len(names) != len(extents):
            raise ScopeIdError(
                f"T.{spec.call} with {len(extents)} extent(s) gives {len(extents)} variable(s); "
                f"{len(names)} name(s) are assigned",
                node,
            )
        earlier = self.launches.get(spec.kind)
        if earlier is not None:
            if len(earlier.extents) != len(extents) or not all(map(structural_equal, earlier.extents, extents)):
                raise ScopeIdError(
                    f"T.{spec.call} is declared again with other extents ({_shown(extents)}; before: "
                    f"{_shown(earlier.extents)}): a kernel has one launch",
                    node,
                )
            return self._alias(earlier.vars, names, spec.dtype), []
        launch_vars = [
            Var(n if spec.dtype == "int32" else _tag(spec.kind, i).replace(".", "_"), "int32")
            for i, n in enumerate(names)
        ]
        self.launches[spec.kind] = _Launch(launch_vars, extents)
        loops = [ThreadLoop(v, _tag(spec.kind, i), e) for i, (v, e) in enumerate(zip(launch_vars, extents))]
        if spec.dtype == "int32":
            return launch_vars, loops
        return self._alias(launch_vars, names, spec.dtype), loops

    def computed_ids(self) -> set:
        """The ids bound to an expression of the launch's variables (derived ids, ids in another
        dtype or declared again), which a block reduction cannot see through."""
        return {var for var, _ in self.lets} | {d.var for d in self.derived}

    def _check_defined_outside(self, extents: list, call: str, node: ast.AST) -> None:
        """The launch wraps the whole region: its extents can use only what is bound before it."""
        region = {id(v) for v in self._bound_variables()} - self.outside
        for e in extents:
            inside = [v for v in free_vars(e) if id(v) in region]
            inside += [b.data for b in buffers_touched(e) if id(b.data) in region]
            if inside:
                raise ScopeIdError(
                    f"T.{call}: its extent uses '{inside[0].name}', which the device region defines; "
                    f"the launch wraps the whole region, so compute the extent before T.device_entry()",
                    node,
                )

    def _alias(self, launch_vars: list[Var], names: list[str], dtype: str) -> list[Var]:
        out = []
        for launched, name in zip(launch_vars, names):
            if dtype == launched.dtype:  # the same id declared again: the same variable
                out.append(launched)
                continue
            var = Var(name, dtype)
            self.lets.append((var, _op.cast(dtype, launched)))
            out.append(var)
        return out

    def _threads_from_derived(self, node: ast.AST) -> PrimExpr:
        """The block size told by the warp or warpgroup ids declared so far."""
        told = self._told_block_size()
        if told is None:
            raise ScopeIdError(
                "T.thread_id() without extents: give the number of threads, T.thread_id([n]), or declare "
                "T.warp_id([w]) or T.warpgroup_id([g]) before it",
                node,
            )
        return told

    def _told_block_size(self) -> Optional[PrimExpr]:
        for d in self.derived:
            per = _DERIVED[d.kind][1]
            if per is not None and d.extent is not None:
                return d.extent * per
        return None

    def build(self, body: Stmt, span) -> Stmt:
        """``body`` (the region) inside its launch, with the derived ids bound first. A region
        without scope ids whose threads are launched otherwise (``T.thread_binding`` loops in it,
        ``T.launch_thread`` before it) is left as it is."""
        if not self.launches and not self.derived and (self.in_threads or binds_threads(body)):
            return body
        if self.derived and any_node(body, is_thread_index_loop):
            first = self.derived[0]
            raise ScopeIdError(
                f"T.{first.call} counts the threads T.thread_id declares, and a T.thread_binding or "
                f"T.launch_thread over threadIdx in the region adds threads it does not see: declare them all "
                f"with T.thread_id([x, y, z])",
                first.node,
            )
        threads = self._block_size()
        if "thread" not in self.launches and (_known(threads) != 1 or "cta" not in self.launches):
            self.launches["thread"] = _Launch([Var("threadIdx_x", "int32")], [threads])
        linear = self._linear_thread_index()
        for d in reversed(self.derived):
            body = LetStmt(d.var, _op.cast(d.var.dtype, _derived_value(d.kind, linear)), body, span)
        for var, value in reversed(self.lets):
            body = LetStmt(var, value, body, span)
        for kind in ("thread", "cta"):
            launch = self.launches.get(kind)
            for i in reversed(range(len(launch.vars) if launch else 0)):
                ext = launch.extents[i]
                body = For(
                    launch.vars[i], IntImm(ext.dtype, 0), ext, ForKind.THREAD_BINDING, body, _tag(kind, i), {}, span
                )
        return body

    def _block_size(self) -> PrimExpr:
        """The threads of a block: the product of ``T.thread_id``'s extents, or what a warp or
        warpgroup id tells (one thread without either); checked against each warp and warpgroup id."""
        launch = self.launches.get("thread")
        if launch is not None:
            size = launch.extents[0]
            for e in launch.extents[1:]:
                size = size * e
        else:
            size = self._told_block_size()
            if size is None and self.derived:
                raise ScopeIdError(
                    f"T.{self.derived[0].call} needs the number of threads of the block: declare T.thread_id([n]), "
                    "T.warp_id([w]) or T.warpgroup_id([g]) in the region",
                    self.derived[0].node,
                )
            size = IntImm("int32", 1) if size is None else size
        n = _known(size)
        for d in self.derived:
            per = _DERIVED[d.kind][1]
            if n is None or per is None or d.extent is None or _known(d.extent) is None:
                continue
            if n % per or n // per != _known(d.extent):
                unit = "warps" if d.kind == "warp" else "warpgroups"
                raise ScopeIdError(
                    f"T.{d.call}([{_known(d.extent)}]) in a block of {n} threads, which has {n / per:g} {unit} "
                    f"of {per} threads",
                    d.node,
                )
        return size

    def _linear_thread_index(self) -> PrimExpr:
        launch = self.launches.get("thread")
        if launch is None:
            return IntImm("int32", 0)
        index, stride = launch.vars[0], None
        for var, ext in zip(launch.vars[1:], launch.extents):
            stride = ext if stride is None else stride * ext
            index = index + var * stride
        return index


def _derived_value(kind: str, linear: PrimExpr) -> PrimExpr:
    """A warp or warpgroup id of the thread whose linear index in its block is ``linear``."""
    group = WARP_THREADS * WARPGROUP_WARPS
    if kind == "warp":
        return _op.floordiv(linear, WARP_THREADS)
    if kind == "lane":
        return _op.floormod(linear, WARP_THREADS)
    if kind == "warpgroup":
        return _op.floordiv(linear, group)
    if kind == "warp_in_wg":
        return _op.floormod(_op.floordiv(linear, WARP_THREADS), WARPGROUP_WARPS)
    return _op.floormod(linear, group)


def _tag(kind: str, dim: int) -> str:
    """The thread tag of dimension ``dim`` of a launch of ``kind`` (``blockIdx.y``)."""
    return f"{_LAUNCHED[kind]}{'xyz'[dim]}"


def _extent(value, call: str, node: ast.AST) -> PrimExpr:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, PrimExpr))
        or (isinstance(value, PrimExpr) and not _dt.is_integer(value.dtype))
    ):
        shown = expr_text(value) if isinstance(value, PrimExpr) else repr(value)
        raise ScopeIdError(f"T.{call}: an extent must be an integer, got {shown}", node)
    ext = _op.convert(value, "int32")
    if _known(ext) is not None and not 1 <= _known(ext) <= _INT32_MAX:
        raise ScopeIdError(f"T.{call}: an extent must be in [1, {_INT32_MAX}], got {_known(ext)}", node)
    if ext.dtype != "int32":  # T.int64(32) or an int64 size: int32 threads, as T.launch_thread makes them
        # (a run-time value that does not fit is refused at launch: the launch passes the wide value)
        ext = IntImm("int32", ext.value) if isinstance(ext, IntImm) else _op.cast("int32", ext)
    return ext


def _known(value) -> Optional[int]:
    return value.value if isinstance(value, IntImm) else None


def _shown(extents: list) -> str:
    return ", ".join(expr_text(e) for e in extents)


def _one_name(names: list[str], call: str, node: ast.AST) -> str:
    if len(names) != 1:
        raise ScopeIdError(f"T.{call} gives one variable; {len(names)} names are assigned", node)
    return names[0]
