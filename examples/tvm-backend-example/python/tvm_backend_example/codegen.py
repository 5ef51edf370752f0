"""Code generation for the example device: C on the core's shared C-family printer.

Each kernel becomes ``int name(const ExampleArg* args, const int64_t* grid, const int64_t* block)``:
blocks run one after another; the threads of a block run as an OpenMP team (one OpenMP thread per
thread of the block) when the kernel has barriers, otherwise as a plain loop. Shared allocations
are declared once per block, outside the team, so every thread of the block sees them. It returns
0, or the size of a team OpenMP started short of the block (then no thread runs the body: a
barrier would wait for threads that do not exist).
"""

from __future__ import annotations

from tvm.codegen.c_family import CFamilyPrinter
from tvm.codegen.device_module import create_device_module, function_table
from tvm.contrib import cc
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.functor import post_order_visit

PRELUDE = """#include <stdint.h>
#include <stdbool.h>
#include <math.h>
#include <omp.h>
typedef union { void* v_handle; int64_t v_int64; double v_float64; } ExampleArg;
"""


class ExamplePrinter(CFamilyPrinter):
    """The example device's differences from plain C: where thread indices come from, barriers,
    and shared memory hoisted out of the thread team."""

    THREAD_INDEX = {
        "blockIdx.x": "bx_",
        "blockIdx.y": "by_",
        "blockIdx.z": "bz_",
        "threadIdx.x": "tx_",
        "threadIdx.y": "ty_",
        "threadIdx.z": "tz_",
    }
    BARRIER = '_Pragma("omp barrier")'

    def __init__(self) -> None:
        super().__init__()
        for name in ("args", "grid", "block", "bx_", "by_", "bz_", "tx_", "ty_", "tz_", "tid_", "short_team_"):
            self.reserve(name)
        self._hoisted: set[int] = set()

    def call_example_thread_count(self, call: E.Call) -> str:
        """``T.example.thread_count()`` (script.py): a namespace intrinsic ``<ns>.<name>`` is printed
        by the printer's ``call_<ns>_<name>`` method."""
        return "(int32_t)(block[0] * block[1] * block[2])"

    def visit_Allocate(self, s: S.Allocate) -> None:
        if id(s) in self._hoisted:
            self.stmt(s.body)
        else:
            super().visit_Allocate(s)

    def print_kernel(self, func: PrimFunc, name: str | None = None) -> str:
        name = name or func.global_symbol
        self.reserve(name)
        shared = []
        barrier = []

        def visit(node):
            if isinstance(node, S.Allocate) and node.buffer.scope in ("shared", "shared.dyn"):
                shared.append(node)
            elif isinstance(node, E.Call) and node.op == "tvm_storage_sync":
                barrier.append(node)

        post_order_visit(func.body, visit)
        self.emit(
            f'__attribute__((visibility("default"))) int {name}('
            "const ExampleArg* args, const int64_t* grid, const int64_t* block) {"
        )
        self._indent += 1
        for i, p in enumerate(func.params):
            buf = func.buffer_map.get(p)
            if buf is not None:
                var = self.name_of(buf.data, buf.name)
                self._names.setdefault(p, var)
                ctype = self.type_name(buf.dtype)
                self.emit(f"{ctype}* restrict {var} = ({ctype}*)args[{i}].v_handle;")
            elif p.dtype == "handle":
                self.emit(f"void* {self.name_of(p)} = args[{i}].v_handle;")
            else:
                field = "v_float64" if p.dtype.startswith(("float", "bfloat")) else "v_int64"
                ctype = self.compute_type(p.dtype)
                self.emit(f"{ctype} {self.name_of(p)} = ({ctype})args[{i}].{field};")
        self.emit("const int64_t nthreads_ = block[0] * block[1] * block[2];")
        if barrier:
            self.emit("int short_team_ = 0;")
        self.emit("for (int64_t bz_ = 0; bz_ < grid[2]; ++bz_)")
        self.emit("for (int64_t by_ = 0; by_ < grid[1]; ++by_)")
        self.emit("for (int64_t bx_ = 0; bx_ < grid[0]; ++bx_) {")
        self._indent += 1
        for alloc in shared:  # one array per block, which every thread of the team sees
            self._hoisted.add(id(alloc))
            buf = alloc.buffer
            size = buf.shape[0] if buf.shape else E.IntImm("int32", 1)
            # dynamic shared memory (a size known at launch) is a C variable-length array
            n = self.alloc_size(buf) if isinstance(size, E.IntImm) else self.expr(size)
            length = n if isinstance(size, E.IntImm) else f"({n}) > 0 ? ({n}) : 1"
            self.emit(f"{self.type_name(buf.dtype)} {self.name_of(buf.data, buf.name)}[{length}];")
        if barrier:
            self.emit('_Pragma("omp parallel num_threads(nthreads_)")')
            self.emit("{")
            self._indent += 1
            self.emit("const int64_t tid_ = omp_get_thread_num();")
            self.emit("if (omp_get_num_threads() != nthreads_) {")
            self.emit("  if (tid_ == 0) short_team_ = omp_get_num_threads();")
            self.emit("} else {")
        else:
            self.emit("for (int64_t tid_ = 0; tid_ < nthreads_; ++tid_) {")
            self._indent += 1
        self.emit("const int64_t tx_ = tid_ % block[0];")
        self.emit("const int64_t ty_ = (tid_ / block[0]) % block[1];")
        self.emit("const int64_t tz_ = tid_ / (block[0] * block[1]);")
        self.emit("(void)tx_; (void)ty_; (void)tz_; (void)bx_; (void)by_; (void)bz_;")
        self.stmt(func.body)
        self._indent -= 1
        self.emit("}" if not barrier else "}}")
        if barrier:
            self.emit("if (short_team_) return short_team_;")
        self._indent -= 1
        self.emit("}")
        self.emit("return 0;")
        self._indent -= 1
        self.emit("}")
        return self.take()

    def prelude(self) -> str:
        return PRELUDE + super().prelude()


def build(kernels: list[PrimFunc], target) -> object:
    """Generate C for ``kernels``, compile it (through the core's compile cache) into a shared
    object, and wrap it as a device module of kind ``example`` (or its fallback)."""
    printer = ExamplePrinter()
    source = printer.print_module(kernels)
    path, _ = cc.compile_shared(source, openmp=True, name="example_kernels")
    with open(path, "rb") as f:
        payload = f.read()
    cc.discard_scratch(path)  # without the compile cache the object was a scratch file: its bytes are kept
    return create_device_module("example", "so", function_table(kernels), payload, [["c", source]])
