"""The dialect CUDA C and HIP share, for the backends that generate either.

:class:`GPUCPrinter` is the C-family printer with what the two languages agree on:
``extern "C" __global__`` kernels whose ``__launch_bounds__`` come from their constant thread
extents, ``__shared__`` allocations, one file-scope ``extern __shared__`` array for dynamic shared
memory, ``__syncthreads`` barriers, ``#pragma unroll`` and 16-bit float scalar arguments passed as
float. A backend subclasses it and changes its tables (thread indices, the spelling of launch
bounds and alignment, helpers) and adds its own intrinsics.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from tvm.codegen.c_family import CFamilyPrinter, CodegenError
from tvm.codegen.device_module import function_table
from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.functor import post_order_visit

__all__ = ["FIXED_WIDTH_TYPEDEFS", "GPUCPrinter", "threads_per_block", "gpu_function_table"]

#: The fixed-width integer types the printer names, for a prelude compiled without any header.
FIXED_WIDTH_TYPEDEFS = """typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
"""


class GPUCPrinter(CFamilyPrinter):
    """CUDA-like C: subclass for CUDA (``tvm-backend-cuda``) and HIP (``tvm-backend-rocm``)."""

    #: The language's name in error messages.
    LANGUAGE = "CUDA"
    #: CUDA's built-in variables (a parameter named blockIdx hid blockIdx.x)
    RESERVED_NAMES = frozenset("blockIdx threadIdx blockDim gridDim warpSize".split())
    RESTRICT = "__restrict__"
    EXTERN_C = 'extern "C" '
    KERNEL_QUALIFIER = "__global__ void"
    SHARED_QUALIFIER = "__shared__ __align__(32) "
    LOCAL_QUALIFIER = ""
    HELPER_QUALIFIER = "static __device__ __forceinline__"
    THREAD_INDEX = {
        "threadIdx.x": "threadIdx.x",
        "threadIdx.y": "threadIdx.y",
        "threadIdx.z": "threadIdx.z",
        "blockIdx.x": "blockIdx.x",
        "blockIdx.y": "blockIdx.y",
        "blockIdx.z": "blockIdx.z",
    }
    BARRIER = "__syncthreads();"
    INTRINSICS = {**CFamilyPrinter.INTRINSICS, "exp10": ("exp10f", "exp10")}  # CUDA's math has exp10
    UNROLL_PRAGMA = "#pragma unroll {n}"
    HALF_NATIVE = False
    BF16_NATIVE = False
    #: Attribute before a kernel's name bounding its threads per block (``{n}``: the bound).
    LAUNCH_BOUNDS = "__launch_bounds__({n}) "
    #: Declaration of the module's dynamic shared memory (``{name}``: the array).
    DYNAMIC_SHARED = "extern __shared__ __align__(32) unsigned char {name}[];"

    def __init__(self) -> None:
        super().__init__()
        self._dyn_base: Optional[str] = None  # the kernel's extern __shared__ array, if launched with one

    def param_decl(self, func: PrimFunc, param: E.Var) -> str:
        """Emulated 16-bit float scalars arrive as float (see :func:`gpu_function_table`)."""
        if param not in func.buffer_map and param.dtype != "handle" and self.is_emulated(param.dtype):
            return f"float {self.name_of(param)}"
        return super().param_decl(func, param)

    def kernel_signature(self, func: PrimFunc, name: str) -> str:
        params = ", ".join(self.param_decl(func, p) for p in func.params)
        bounds = threads_per_block(func)
        lb = self.LAUNCH_BOUNDS.format(n=bounds) if bounds else ""
        return f"{self.EXTERN_C}{self.KERNEL_QUALIFIER} {lb}{name}({params})"

    def print_kernel(self, func: PrimFunc, name: Optional[str] = None) -> str:
        self._dyn_base = None
        if "dyn_shmem" in list(func.attrs.get("launch_params", [])):
            # one file-scope array serves every kernel of the module
            self._dyn_base = "tvm_dyn_shmem"
            self.reserve(self._dyn_base)
            self.helpers.setdefault(self._dyn_base, self.DYNAMIC_SHARED.format(name=self._dyn_base))
        return super().print_kernel(func, name)

    #: Namespace of the backend's warp reductions (``T.<namespace>.warp_sum/max/min``), printed
    #: by :meth:`warp_reduce`.
    WARP_NAMESPACE = ""

    def print_call(self, call: E.Call) -> str:
        op = call.op.removeprefix("tir.")
        namespace, _, name = op.partition(".")
        if namespace == self.WARP_NAMESPACE and name in ("warp_sum", "warp_max", "warp_min"):
            return self.warp_reduce(name.removeprefix("warp_"), call)
        return super().print_call(call)

    def warp_reduce(self, kind: str, call: E.Call) -> str:
        """A warp reduction (``kind``: sum, max or min) of ``call``'s arguments, usually through
        :meth:`warp_reduce_helper`."""
        raise CodegenError(f"{self.LANGUAGE} has no warp reductions")

    def warp_reduce_helper(self, prefix: str, kind: str, dtype: str, shfl_xor: str, extra_params: str = "") -> str:
        """Define (once) and name a helper ``<prefix>_<kind>_<type>(v, width<extra_params>)`` that
        reduces ``v`` over ``width`` lanes with an xor butterfly, every lane getting the result;
        ``kind`` is sum, max or min and ``shfl_xor`` the language's xor shuffle of ``v`` by ``d``
        within ``width`` lanes (e.g. ``__shfl_xor_sync(mask, v, d, width)``)."""
        t = self.compute_type(dtype)
        name = f"{prefix}_{kind}_{t.replace(' ', '_')}"
        combine = "v + o" if kind == "sum" else _symmetric(kind, _dt.is_float(dtype))
        self.helpers.setdefault(
            name,
            (
                f"{self.HELPER_QUALIFIER} {t} {name}({t} v, int32_t width{extra_params}) {{\n"
                f"  for (int32_t d = width >> 1; d > 0; d >>= 1) {{\n"
                f"    {t} o = {shfl_xor};\n"
                f"    v = {combine};\n"
                f"  }}\n  return v;\n}}"
            ),
        )
        return name

    def visit_Allocate(self, s: S.Allocate) -> None:
        buf = s.buffer
        if self.dynamic_shared_view(buf, self._dyn_base):
            self.stmt(s.body)
            return
        if buf.scope not in ("shared", "local"):
            raise CodegenError(f"{self.LANGUAGE} kernels cannot allocate '{buf.name}' in scope '{buf.scope}'")
        super().visit_Allocate(s)


def _symmetric(kind: str, is_float: bool) -> str:
    """The larger (``kind`` max) or smaller of ``v`` and ``o``, the same whichever comes first,
    so that every lane of an xor butterfly ends with the same value: a NaN wins (as in NumPy's
    max), and of two zeros +0.0 is the larger (C's ``o > v ? o : v`` gave each lane its own)."""
    op = ">" if kind == "max" else "<"
    if not is_float:
        return f"(o {op} v ? o : v)"
    keep_other = "1 / v < 0" if kind == "max" else "1 / v > 0"  # v is the zero of the other sign
    return f"((v != v || o != o) ? v + o : v {op} o ? v : o {op} v ? o : (v == 0 && {keep_other}) ? o : v)"


def threads_per_block(func: PrimFunc) -> Optional[int]:
    """Product of the constant ``threadIdx.*`` extents of ``func`` (None when any is symbolic)."""
    extents: dict[str, int] = {}
    symbolic = []

    def visit(n: Any) -> None:
        if (
            isinstance(n, S.For)
            and n.kind is S.ForKind.THREAD_BINDING
            and (n.thread_tag or "").startswith("threadIdx.")
        ):
            if isinstance(n.extent, E.IntImm):
                extents[n.thread_tag] = max(extents.get(n.thread_tag, 0), int(n.extent.value))
            else:
                symbolic.append(n.thread_tag)

    post_order_visit(func.body, visit)
    if symbolic or not extents:
        return None
    total = 1
    for v in extents.values():
        total *= v
    return total


def gpu_function_table(kernels: list[PrimFunc], is_emulated: Callable[[str], bool]) -> list[list[Any]]:
    """``[name, [arg types], [launch tags]]`` for each kernel (the device-module function map);
    emulated float16/bfloat16 scalars are passed as float32 (see :meth:`GPUCPrinter.param_decl`)."""
    return function_table(kernels, lambda dtype: "float32" if is_emulated(dtype) else dtype)
