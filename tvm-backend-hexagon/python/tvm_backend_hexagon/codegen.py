"""Code generation for Hexagon: C on the core's shared C-family printer, built into a static
executable that runs under qemu-hexagon.

How GPU-style kernels map onto the DSP: a kernel is one C function
``void name(const uint64_t* args, const int64_t* grid, const int64_t* block, int64_t tid_)``.
Blocks run one after another. The threads of a block run as a loop on one hardware thread, or,
when the kernel has barriers (``tvm_storage_sync``), as a team of POSIX threads (one per thread of
the block, each a hardware thread of the DSP, under the simulator a host thread) that meet at a
``pthread_barrier`` and at the end of every block. Shared memory is ``static`` storage, which every
thread of the team sees. Loops that TIR marks vectorized, and those clang vectorizes itself, use
128-byte HVX vectors where the dtype allows (HVX v66 has integer arithmetic only; float loops stay
scalar); target ``hexagon -hvx=0`` builds scalar code.
"""

from __future__ import annotations

from typing import Any

from tvm.codegen.c_family import CFamilyPrinter, CodegenError
from tvm.codegen.device_module import create_device_module, function_table
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.functor import post_order_visit

from . import toolchain

PRELUDE = """#include <stdint.h>
#include <stdbool.h>
#include <math.h>
typedef void (*tvm_hexagon_kernel_fn)(const uint64_t*, const int64_t*, const int64_t*, int64_t);
struct tvm_hexagon_kernel { const char* name; tvm_hexagon_kernel_fn fn; int32_t team; };
void tvm_hexagon_barrier(void);
"""


def has_barrier(func: PrimFunc) -> bool:
    """Whether ``func`` synchronizes its threads (then they run as a team of POSIX threads)."""
    found = []
    post_order_visit(
        func.body, lambda n: found.append(n) if isinstance(n, E.Call) and n.op == "tvm_storage_sync" else None
    )
    return bool(found)


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

    def __init__(self) -> None:
        super().__init__()
        for name in ("args", "grid", "block", "tid_", "gx_", "gy_", "gz_", "nx_", "ny_", "nz_"):
            self.reserve(name)
        for name in self.THREAD_INDEX.values():
            self.reserve(name)

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
        team = has_barrier(func)
        self.emit(f"void {name}(const uint64_t* args, const int64_t* grid, const int64_t* block, int64_t tid_) {{")
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
        self.emit("for (int32_t bz_ = 0; bz_ < gz_; ++bz_)")
        self.emit("for (int32_t by_ = 0; by_ < gy_; ++by_)")
        self.emit("for (int32_t bx_ = 0; bx_ < gx_; ++bx_) {")
        self._indent += 1
        if not team:
            self.emit("for (int32_t tz_ = 0; tz_ < nz_; ++tz_)")
            self.emit("for (int32_t ty_ = 0; ty_ < ny_; ++ty_)")
            self.emit("for (int32_t tx_ = 0; tx_ < nx_; ++tx_) {")
            self._indent += 1
        self.emit("(void)tx_; (void)ty_; (void)tz_; (void)bx_; (void)by_; (void)bz_;")
        self.stmt(func.body)
        if team:
            self.emit("tvm_hexagon_barrier(); /* the next block reuses the shared memory */")
        else:
            self._indent -= 1
            self.emit("}")
        self._indent -= 1
        self.emit("}")
        self._indent -= 1
        self.emit("}")
        return self.take()

    def prelude(self) -> str:
        return PRELUDE + super().prelude()

    def kernel_table(self, funcs: list[PrimFunc]) -> str:
        """The table the kernel server dispatches on (index = position in the module)."""
        rows = [f'  {{"{f.global_symbol}", {f.global_symbol}, {int(has_barrier(f))}}},' for f in funcs]
        return (
            "\nconst struct tvm_hexagon_kernel tvm_hexagon_kernels[] = {\n"
            + "\n".join(rows or ['  {"", 0, 0},'])
            + f"\n}};\nconst uint32_t tvm_hexagon_num_kernels = {len(funcs)};\n"
        )


def _check_launch(func: PrimFunc) -> None:
    tags = [str(t) for t in func.attrs.get("launch_params", ())]
    if "dyn_shmem" in tags:
        raise CodegenError(
            f"hexagon kernel {func.global_symbol}: dynamic shared memory is not supported; "
            "allocate shared buffers with a constant shape"
        )


def build(kernels: list[PrimFunc], target: Any) -> object:
    """Generate C for ``kernels``, build the static executable (kernels + server) with zig's
    clang for the target's CPU, and wrap it as a device module of kind ``hexagon`` (or its
    fallback, with the same bytes, where the simulator is missing)."""
    for k in kernels:
        _check_launch(k)
    attrs = getattr(target, "attrs", {}) or {}
    flags = toolchain.compile_flags(str(attrs.get("mcpu", toolchain.DEFAULT_MCPU)), int(attrs.get("hvx", 128)))
    printer = HexagonPrinter()
    source = printer.print_module(kernels) + printer.kernel_table(kernels)
    elf = toolchain.build_executable(source, flags)
    return create_device_module("hexagon", "elf", function_table(kernels), elf, [["c", source]])


__all__ = ["HexagonPrinter", "build", "has_barrier"]
