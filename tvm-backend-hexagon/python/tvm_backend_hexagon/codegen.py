"""Code generation for Hexagon: C on the core's shared C-family printer, built into a static
executable that runs under qemu-hexagon.

How GPU-style kernels map onto the DSP: a kernel is one C function
``void name(args, grid, block, tid_, first_block_, end_block_)`` that runs blocks
``first_block_ .. end_block_ - 1`` (x fastest). :func:`run_mode` picks how the server runs it:

* PARALLEL (no barriers, no shared memory): the blocks are shared out in contiguous ranges among
  the DSP's hardware threads (``TVM_HEXAGON_THREADS``, default 4); a block's threads are loops
  (the ``threadIdx`` bindings in place, bounded by their guard where they have one, so clang can
  vectorize them; or one loop around the body when work lies outside the bindings);
* SERIAL (shared memory, no barriers): the same, on one hardware thread;
* TEAM (barriers): one POSIX thread per thread of the block (under the simulator, host threads)
  meeting at a ``pthread_barrier`` and at the end of every block, all blocks in turn.

Shared memory is ``static`` storage, which every thread of a team sees; dynamic shared memory
(a ``shared.dyn`` buffer sized at launch) is the server's buffer ``tvm_hexagon_dyn_shmem`` of the
launch's size (kernels with shared memory run one block at a time). Loops that TIR marks
vectorized, and those clang vectorizes itself, use 128-byte HVX vectors where the dtype allows
(HVX v66 has integer arithmetic only; float loops stay scalar); target ``hexagon -hvx=0`` builds
scalar code.
"""

from __future__ import annotations

import warnings
from typing import Any

from tvm.codegen.c_family import CFamilyPrinter
from tvm.contrib.cc import CompileError
from tvm.codegen.device_module import create_device_module, function_table
from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.analysis import any_node, free_vars
from tvm.tir.op import is_barrier, is_convergent
from tvm.tir.functor import post_order_visit

from . import toolchain

PRELUDE = """#include <stdint.h>
#include <stdbool.h>
#include <math.h>
typedef void (*tvm_hexagon_kernel_fn)(const uint64_t*, const int64_t*, const int64_t*, int64_t, int64_t, int64_t);
struct tvm_hexagon_kernel { const char* name; tvm_hexagon_kernel_fn fn; int32_t mode; };
void tvm_hexagon_barrier(void);
extern unsigned char* tvm_hexagon_dyn_shmem; /* the launch's dynamic shared memory (server.c) */
"""


def _uses(node: Any, var: E.Var) -> bool:
    return any(v is var for v in free_vars(node))


def threads_nest_once(body: S.Stmt) -> bool:
    """Whether every statement of a barrier-free kernel runs inside one nest of ``threadIdx``
    bindings (above it only block bindings, lets and allocations). Then the thread bindings can
    be loops in place, in any order, instead of one loop around the whole body."""
    node = body
    while True:
        if isinstance(node, S.For) and node.kind is S.ForKind.THREAD_BINDING:
            if (node.thread_tag or "").startswith("threadIdx"):
                return True
            node = node.body
        elif isinstance(node, (S.LetStmt, S.Allocate)):
            node = node.body
        else:
            return False


def _offset_thread_bindings(func: PrimFunc) -> bool:
    """Whether some ``threadIdx`` binding starts elsewhere than 0."""
    found = []

    def visit(n: Any) -> None:
        if isinstance(n, S.For) and (n.thread_tag or "").startswith("threadIdx") and not CFamilyPrinter._is_zero(n.min):
            found.append(n)

    post_order_visit(func.body, visit)
    return bool(found)


def guard_bound(loop: S.For) -> tuple[E.PrimExpr, E.PrimExpr | None] | None:
    """For ``for t: if t + x < n: ...`` (``x``, ``n`` free of ``t``, no else), ``(n, x)`` (x
    None for ``t < n``): the loop can stop at ``n - x`` instead of testing every iteration,
    which lets clang vectorize it."""
    guard = loop.body
    if not isinstance(guard, S.IfThenElse) or guard.else_case is not None or not isinstance(guard.condition, E.LT):
        return None
    lhs, bound = guard.condition.a, guard.condition.b
    t = loop.loop_var
    if _uses(bound, t):
        return None
    if lhs is t:
        return bound, None
    if isinstance(lhs, E.Add):
        for mine, other in ((lhs.a, lhs.b), (lhs.b, lhs.a)):
            if mine is t and not _uses(other, t):
                return bound, other
    return None


#: How the server runs a kernel (server.c's KERNEL_* values).
SERIAL, TEAM, PARALLEL = 0, 1, 2


def run_mode(func: PrimFunc) -> int:
    """TEAM for a kernel with barriers; SERIAL for one with shared memory but no barriers (its
    static shared storage allows one block at a time); otherwise PARALLEL: its blocks are shared
    out among the DSP's hardware threads."""
    if has_barrier(func):
        return TEAM
    shared = []
    post_order_visit(
        func.body,
        lambda n: shared.append(n) if isinstance(n, S.Allocate) and n.buffer.scope.startswith("shared") else None,
    )
    return SERIAL if shared else PARALLEL


def has_barrier(func: PrimFunc) -> bool:
    """Whether ``func`` synchronizes its threads (then they run as a team of POSIX threads)."""
    return any_node(func.body, is_barrier)


class HexagonPrinter(CFamilyPrinter):
    """Hexagon C: thread indices from the block loops, barriers of the team, shared memory as
    static storage, vectorized loops as HVX candidates."""

    THREAD_INDEX = {
        "blockIdx.x": "bx_",
        "blockIdx.y": "by_",
        "blockIdx.z": "bz_",
        "threadIdx.x": "tx_",
        "threadIdx.y": "ty_",
        "threadIdx.z": "tz_",
    }
    BARRIER = "tvm_hexagon_barrier()"
    SHARED_QUALIFIER = "static __attribute__((aligned(128))) "
    UNROLL_PRAGMA = "#pragma clang loop unroll_count({n})"
    # clang turns `a < b ? a : b` into Hexagon's sfmin, which returns `a` for a NaN `b` and -0.0
    # for -0.0 and 0.0 in either order: those cases are spelled out (sfmin is right for every
    # other input, a NaN `a` included)
    FLOAT_MINMAX = "(b != b || a == b) ? b : (a {op} b ? a : b)"

    def visit_CmpOp(self, e: E.CmpOp) -> str:
        """A comparison of floats, made an opaque int: clang's Hexagon back end turns a float
        ``c < d ? c : d`` (a select, an if, ``T.if_then_else``) into ``sfmin``, wrong for a NaN
        ``d`` and signed zeros, and a float64 ``!(c >= d)`` into ``c < d``, false for a NaN."""
        compared = super().visit_CmpOp(e)
        if not _dt.is_float(e.a.dtype) or _dt.lanes(e.a.dtype) != 1:
            return compared
        self.helpers.setdefault(
            "tvm_hexagon_opaque",
            f'{self.HELPER_QUALIFIER} int tvm_hexagon_opaque(int x) {{\n  __asm__("" : "+r"(x));\n  return x;\n}}',
        )
        return f"tvm_hexagon_opaque({compared})"

    def __init__(self) -> None:
        super().__init__()
        self._threads_as_loops = False
        self._modes: dict[str, int] = {}  # run_mode of each printed kernel, for kernel_table
        for name in (
            "hi_",
            "end_",
            "b_",
            "first_block_",
            "end_block_",
            "args",
            "grid",
            "block",
            "tid_",
            "gx_",
            "gy_",
            "gz_",
            "nx_",
            "ny_",
            "nz_",
        ):
            self.reserve(name)
        for name in self.THREAD_INDEX.values():
            self.reserve(name)

    def print_thread_binding(self, s: S.For) -> None:
        """In a kernel whose threads nest once, a ``threadIdx`` binding is a loop over the block's
        threads, bounded by its guard where it has one (see :func:`guard_bound`)."""
        tag = s.thread_tag or ""
        if not (self._threads_as_loops and tag.startswith("threadIdx")):
            super().print_thread_binding(s)
            return
        v = self.name_of(s.loop_var)
        self.count(s.loop_var, bounds=(s.min, s.extent))
        extent = {"threadIdx.x": "nx_", "threadIdx.y": "ny_", "threadIdx.z": "nz_"}[tag]
        guard = guard_bound(s)
        self.emit("{")
        self._indent += 1
        body = s.body
        if guard is not None:
            bound, offset = guard
            minus = "" if offset is None else f" - (int64_t)({self.index_expr(offset)})"
            self.emit(f"int64_t hi_ = (int64_t)({self.index_expr(bound)}){minus};")
            self.emit(f"const int32_t end_ = hi_ < 0 ? 0 : hi_ < {extent} ? (int32_t)hi_ : {extent};")
            extent, body = "end_", body.then_case
        self.emit(f"for (int32_t {v} = 0; {v} < {extent}; ++{v}) {{")
        self._block(body)
        self.emit("}")
        self._indent -= 1
        self.emit("}")

    def visit_Allocate(self, s: S.Allocate) -> None:
        """Dynamic shared memory is a view into the server's per-launch buffer."""
        if self.dynamic_shared_view(s.buffer, "tvm_hexagon_dyn_shmem"):
            self.stmt(s.body)
            return
        super().visit_Allocate(s)

    def loop_pragma(self, s: S.For) -> None:
        """Vectorized loops ask clang for vectors (HVX with the target's ``hvx``)."""
        if s.kind is S.ForKind.VECTORIZED:
            self.emit("#pragma clang loop vectorize(enable) interleave(enable)")
        super().loop_pragma(s)

    def read_param(self, func: PrimFunc, index: int, param: E.Var) -> str:
        """The declaration that reads kernel parameter ``index`` from its 8-byte slot."""
        buf = func.buffer_map.get(param)
        if buf is not None:
            var = self.name_of(buf.data, buf.name)
            self._names.setdefault(param, var)
            ctype = self.type_name(buf.dtype)
            return f"{ctype}* restrict {var} = ({ctype}*)(uintptr_t)(uint32_t)args[{index}];"
        if param.dtype == "handle":
            self._untyped.add(param)
            return f"void* {self.name_of(param)} = (void*)(uintptr_t)(uint32_t)args[{index}];"
        stored = self.type_name(param.dtype)
        value = f"*(const {stored}*)&args[{index}]"
        if self.is_emulated(param.dtype):
            value = f"{self.half_converters(param.dtype)[0]}({value})"
        return f"{self.compute_type(param.dtype)} {self.name_of(param)} = {value};"

    def print_kernel(self, func: PrimFunc, name: str | None = None) -> str:
        name = name or func.global_symbol
        self.reserve(name)
        self._modes[name] = run_mode(func)
        self.may_converge = is_convergent(func.body)
        team = self._modes[name] == TEAM
        self._threads_as_loops = not team and threads_nest_once(func.body) and not _offset_thread_bindings(func)
        self.emit(
            f"void {name}(const uint64_t* args, const int64_t* grid, const int64_t* block, int64_t tid_, "
            "int64_t first_block_, int64_t end_block_) {"
        )
        self._indent += 1
        for i, p in enumerate(func.params):
            self.emit(self.read_param(func, i, p))
        if team:  # this thread's index in the block, the same in every block
            self.emit("const int32_t tx_ = (int32_t)(tid_ % block[0]);")
            self.emit("const int32_t ty_ = (int32_t)((tid_ / block[0]) % block[1]);")
            self.emit("const int32_t tz_ = (int32_t)(tid_ / (block[0] * block[1]));")
        # launch extents are at most 2^31 - 1 (the runtime checks): 32-bit counters suffice
        self.emit("const int32_t gx_ = (int32_t)grid[0], gy_ = (int32_t)grid[1], gz_ = (int32_t)grid[2];")
        self.emit("const int32_t nx_ = (int32_t)block[0], ny_ = (int32_t)block[1], nz_ = (int32_t)block[2];")
        self.emit("(void)nx_; (void)ny_; (void)nz_; (void)tid_;")
        # blocks first_block_ .. end_block_ - 1 in x-fastest order (the server's share of them)
        self.emit("int32_t bx_ = (int32_t)(first_block_ % gx_);")
        self.emit("int32_t by_ = (int32_t)((first_block_ / gx_) % gy_);")
        self.emit("int32_t bz_ = (int32_t)(first_block_ / gx_ / gy_);")
        self.emit("for (int64_t b_ = first_block_; b_ < end_block_; ++b_) {")
        self._indent += 1
        if not team and not self._threads_as_loops:
            self.emit("for (int32_t tz_ = 0; tz_ < nz_; ++tz_)")
            self.emit("for (int32_t ty_ = 0; ty_ < ny_; ++ty_)")
            self.emit("for (int32_t tx_ = 0; tx_ < nx_; ++tx_) {")
            self._indent += 1
        if not self._threads_as_loops:
            self.emit("(void)tx_; (void)ty_; (void)tz_;")
        self.emit("(void)bx_; (void)by_; (void)bz_;")
        self.stmt(func.body)
        if team:
            self.emit("tvm_hexagon_barrier(); /* the next block reuses the shared memory */")
        elif not self._threads_as_loops:
            self._indent -= 1
            self.emit("}")
        self.emit("if (++bx_ == gx_) { bx_ = 0; if (++by_ == gy_) { by_ = 0; ++bz_; } }")
        self._indent -= 1
        self.emit("}")
        self._indent -= 1
        self.emit("}")
        return self.take()

    def prelude(self) -> str:
        return PRELUDE + super().prelude()

    def kernel_table(self, funcs: list[PrimFunc]) -> str:
        """The table the kernel server dispatches on (index = position in the module); the
        kernels must have been printed."""
        rows = [f'  {{"{f.global_symbol}", {f.global_symbol}, {self._modes[f.global_symbol]}}},' for f in funcs]
        return (
            "\nconst struct tvm_hexagon_kernel tvm_hexagon_kernels[] = {\n"
            + "\n".join(rows or ['  {"", 0, 0},'])
            + f"\n}};\nconst uint32_t tvm_hexagon_num_kernels = {len(funcs)};\n"
        )


def build(kernels: list[PrimFunc], target: Any) -> object:
    """Generate C for ``kernels``, build the static executable (kernels + server) with zig's
    clang for the target's CPU, and wrap it as a device module of kind ``hexagon`` (or its
    fallback, with the same bytes, where the simulator is missing). Without ziglang the module
    holds the C alone (with a warning), and launching it says what to install."""
    attrs = getattr(target, "attrs", {}) or {}
    hvx = attrs.get("hvx", 128)
    if isinstance(hvx, str) and hvx.strip().isdigit():
        hvx = int(hvx)
    if isinstance(hvx, bool) or not isinstance(hvx, int):
        raise ValueError(f"hexagon target: hvx={hvx!r} is not supported (128 for HVX, 0 for scalar code)")
    flags = toolchain.compile_flags(str(attrs.get("mcpu", toolchain.DEFAULT_MCPU)), hvx)
    printer = HexagonPrinter()
    source = printer.print_module(kernels) + printer.kernel_table(kernels)
    try:
        toolchain.zig_command()
    except CompileError as err:  # code generation still works; running says what to install
        warnings.warn(f"{err}; the module holds the generated C but no executable", RuntimeWarning, stacklevel=2)
        elf = b""
    else:
        elf = toolchain.build_executable(source, flags)
    return create_device_module("hexagon", "elf", function_table(kernels), elf, [["c", source]])


__all__ = ["HexagonPrinter", "build", "has_barrier"]
