"""WGSL code generation: the ``codegen`` of target kind ``webgpu``.

Each kernel becomes one WGSL shader whose entry point is ``main`` (:mod:`.wgsl`); the module's
payload (format ``wgsl``) is the shaders one after another, each introduced by a line
``//! kernel <name>``. The interface the runtime binds (``src/webgpu_module.cc``):

* buffer parameter k (counting buffers only, in parameter order) is
  ``@group(0) @binding(k) var<storage, read_write>``, an ``array`` of its element type, or
  ``var<storage, read>`` when the kernel never stores to it (the runtime reads the access mode
  off the declaration to bind it as read-only storage);
* scalar parameters are the members of one ``var<uniform>`` struct at binding (number of buffer
  parameters), in parameter order, 4 bytes each (``i32``, ``u32`` or ``f32``; a ``float16``
  scalar travels as ``f32``);
* ``threadIdx`` extents are the workgroup size: ``@workgroup_size(x, y, z)`` when they are
  constants, else the pipeline-overridable constants ``tvm_wg_x``, ``tvm_wg_y``, ``tvm_wg_z``;
  ``blockIdx`` extents are the dispatch, folded by the runtime over up to three dimensions when
  one exceeds 65535 (the shader unfolds it).

WebGPU's portable limits are checked here, at compile time, so a kernel that runs in wgpu-native
also runs in a browser: storage buffers per shader stage, workgroup size per dimension and in
total, workgroup storage. The target kind's capabilities carry them (``max_num_threads``,
``max_shared_memory_per_block``); a detected device's target may raise them.
"""

from __future__ import annotations

import math
from typing import Any

from tvm.codegen import device_module
from tvm.codegen.c_family import CodegenError
from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.functor import StmtExprVisitor, post_order_visit
from tvm.tir.transform.verify import TIRVerifyError, with_span

from .wgsl import WGSLPrinter

#: WebGPU's default limits (every adapter offers at least these; browsers give exactly these
#: unless a page asks for more).
LIMITS = {
    "maxStorageBuffersPerShaderStage": 8,
    "maxComputeWorkgroupSizeX": 256,
    "maxComputeWorkgroupSizeY": 256,
    "maxComputeWorkgroupSizeZ": 64,
    "maxComputeInvocationsPerWorkgroup": 256,
    "maxComputeWorkgroupStorageSize": 16384,
}

#: Value types WGSL has, and the element types a storage buffer may hold.
VALUE_DTYPES = ("bool", "int32", "uint32", "float32", "float16")
BUFFER_DTYPES = ("int32", "uint32", "float32", "float16")
#: Scalar parameters travel as 4-byte uniform members.
_SCALAR_ARG = {"bool": "int32", "float16": "float32"}

#: Marks the start of each kernel's shader in the payload.
KERNEL_MARK = "//! kernel "


class WGSLTypeError(TIRVerifyError):
    """A kernel uses a type WGSL does not have."""


def scalar_arg_type(dtype: str) -> str:
    """The arg type of a scalar parameter of ``dtype``: what the runtime writes in the uniform."""
    return _SCALAR_ARG.get(dtype, dtype)


def _type_advice(dtype: str) -> str:
    if dtype in ("int64", "uint64", "float64"):
        return "WebGPU has no 64-bit types; compute in int32/float32"
    if dtype in ("bfloat16",):
        return "WGSL has no bfloat16; use float16 or float32"
    return "WGSL has no 8- or 16-bit integers; use int32"


class _TypeCheck(StmtExprVisitor):
    """Raises :class:`WGSLTypeError` at the first variable or value of a type WGSL lacks, naming
    it and the TVMScript line."""

    def __init__(self, kernel: PrimFunc) -> None:
        self.kernel = kernel
        self.span: Any = None

    def fail(self, what: str, dtype: str, span: Any = None) -> None:
        msg = f"kernel '{self.kernel.global_symbol}': {what} has type {dtype}; {_type_advice(dtype)}"
        raise WGSLTypeError(with_span(msg, span or self.span))

    def check_var(self, var: E.Var, what: str = "variable") -> None:
        if var.dtype != "handle" and var.dtype not in VALUE_DTYPES:
            self.fail(f"{what} '{var.name}'", var.dtype)

    def check_buffer(self, buf: E.Buffer, span: Any = None) -> None:
        elem = _dt.element_of(buf.dtype)
        if _dt.lanes(buf.dtype) != 1:
            raise CodegenError(
                f"kernel '{self.kernel.global_symbol}': buffer '{buf.name}' has vector dtype {buf.dtype}"
            )
        allowed = BUFFER_DTYPES if buf.scope not in ("shared", "local") else VALUE_DTYPES
        if elem not in allowed:
            if elem == "bool":
                msg = f"kernel '{self.kernel.global_symbol}': buffer '{buf.name}' holds bool; WebGPU buffers cannot "
                raise WGSLTypeError(with_span(msg + "hold bool (store int32 0/1 instead)", span or self.span))
            self.fail(f"buffer '{buf.name}'", buf.dtype, span)

    def run(self) -> None:
        for p in self.kernel.params:
            buf = self.kernel.buffer_map.get(p)
            if buf is not None:
                self.check_buffer(buf)
            else:
                self.check_var(p, "parameter")
        self.visit_stmt(self.kernel.body)

    def visit_stmt(self, s: S.Stmt) -> None:
        outer, self.span = self.span, getattr(s, "span", None) or self.span
        if isinstance(s, S.Allocate):
            self.check_buffer(s.buffer)
        elif isinstance(s, S.For):
            self.check_var(s.loop_var, "loop variable")
        elif isinstance(s, S.LetStmt):
            self.check_var(s.var)
        super().visit_stmt(s)
        self.span = outer

    def visit_expr(self, e: E.PrimExpr) -> None:
        if isinstance(e, E.Let):
            self.check_var(e.var)
        dtype = getattr(e, "dtype", "void")
        if dtype not in ("void", "handle") and not isinstance(e, E.StringImm) and dtype not in VALUE_DTYPES:
            what = f"variable '{e.name}'" if isinstance(e, E.Var) else f"a {type(e).__name__} expression"
            self.fail(what, dtype)
        super().visit_expr(e)


def thread_extents(kernel: PrimFunc) -> dict[str, Any]:
    """Each thread tag's extent (the first loop bound to it) and that loop's span."""
    found: dict[str, Any] = {}

    def visit(node: Any) -> None:
        if isinstance(node, S.For) and node.kind is S.ForKind.THREAD_BINDING:
            found.setdefault(node.thread_tag, node)

    post_order_visit(kernel.body, visit)
    return found


def _capability(target: Any, name: str, default: int) -> int:
    got = target.capability(name) if target is not None else None
    return int(got) if got is not None else default


def check_limits(kernel: PrimFunc, loops: dict[str, S.For], target: Any) -> None:
    """Raise :class:`TIRVerifyError` when ``kernel`` exceeds a WebGPU limit (named)."""
    name = kernel.global_symbol
    nbuf = sum(1 for p in kernel.params if p in kernel.buffer_map)
    limit = LIMITS["maxStorageBuffersPerShaderStage"]
    if nbuf > limit:
        raise TIRVerifyError(
            f"kernel '{name}' binds {nbuf} storage buffers; WebGPU's maxStorageBuffersPerShaderStage is "
            f"{limit} (browsers enforce it): split the kernel or pack buffers together"
        )
    sizes = []
    for axis in "xyz":
        loop = loops.get(f"threadIdx.{axis}")
        extent = loop.extent.value if loop is not None and isinstance(loop.extent, E.IntImm) else 1
        key = f"maxComputeWorkgroupSize{axis.upper()}"
        if extent > LIMITS[key]:
            msg = f"kernel '{name}': threadIdx.{axis} = {extent} exceeds WebGPU's {key} ({LIMITS[key]})"
            raise TIRVerifyError(with_span(msg, loop.span))
        sizes.append(extent)
    limit = _capability(target, "max_num_threads", LIMITS["maxComputeInvocationsPerWorkgroup"])
    if math.prod(sizes) > limit:
        raise TIRVerifyError(
            f"kernel '{name}' runs {math.prod(sizes)} invocations per workgroup; WebGPU's "
            f"maxComputeInvocationsPerWorkgroup is {limit}"
        )
    used = _workgroup_bytes(kernel)
    limit = _capability(target, "max_shared_memory_per_block", LIMITS["maxComputeWorkgroupStorageSize"])
    if used > limit:
        raise TIRVerifyError(
            f"kernel '{name}' needs {used} bytes of workgroup storage; WebGPU's "
            f"maxComputeWorkgroupStorageSize is {limit}"
        )


def _workgroup_bytes(kernel: PrimFunc) -> int:
    """Bytes of the kernel's ``shared`` allocations (``var<workgroup>`` arrays)."""
    sizes: list[int] = []

    def visit(node: Any) -> None:
        if isinstance(node, S.Allocate) and node.buffer.scope == "shared":
            count = math.prod(int(d.value) for d in node.buffer.shape if isinstance(d, E.IntImm))
            sizes.append(count * _dt.bits(node.buffer.dtype) // 8)

    post_order_visit(kernel.body, visit)
    return sum(sizes)


def _written_buffers(kernel: PrimFunc) -> set[Any]:
    """The data variables of the buffers ``kernel`` stores to."""
    written: set[Any] = set()
    post_order_visit(kernel.body, lambda n: written.add(n.buffer.data) if isinstance(n, S.BufferStore) else None)
    return written


def _bindings(kernel: PrimFunc, printer: WGSLPrinter) -> list[str]:
    """The module-scope resources of ``kernel`` (and scalar parameters read from the uniform).
    A buffer the kernel never stores to is ``read`` (faster loads; the runtime binds it as
    read-only storage and refuses the same buffer passed for a written one in one launch)."""
    buffers, scalars = device_module.binding_interface(kernel, "WebGPU")
    written = _written_buffers(kernel)
    out = []
    for binding, buf in enumerate(buffers):
        access = "read_write" if buf.data in written else "read"
        var, elem = printer.name_of(buf.data, buf.name), printer.type_name(buf.dtype)
        out.append(f"@group(0) @binding({binding}) var<storage, {access}> {var}: array<{elem}>;")
    members = []
    for p in scalars:
        field, arg = printer.name_of(p), scalar_arg_type(p.dtype)
        members.append(f"{field}: {printer.type_name(arg)}")
        value = f"tvm_args.{field}"
        if p.dtype == "bool":
            value = f"(tvm_args.{field} != 0i)"
        elif arg != p.dtype:
            value = f"{printer.type_name(p.dtype)}(tvm_args.{field})"
        printer._subst[p] = value
    if members:
        out.append("struct tvm_args_t {\n" + "".join(f"  {m},\n" for m in members) + "}")
        out.append(f"@group(0) @binding({len(buffers)}) var<uniform> tvm_args: tvm_args_t;")
    return out


def kernel_shader(kernel: PrimFunc, target: Any = None) -> str:
    """The WGSL shader of one kernel (types and limits checked first)."""
    _TypeCheck(kernel).run()
    loops = thread_extents(kernel)
    check_limits(kernel, loops, target)
    printer = WGSLPrinter()
    bindings = _bindings(kernel, printer)
    extents = {tag: loop.extent for tag, loop in loops.items()}
    return printer.print_shader(kernel, bindings, extents)


def generate(kernels: list[PrimFunc], target: Any = None) -> str:
    """The payload: every kernel's shader after its ``//! kernel <name>`` line."""
    return "".join(f"{KERNEL_MARK}{k.global_symbol}\n{kernel_shader(k, target)}" for k in kernels)


def function_table(kernels: list[PrimFunc]) -> list[list]:
    """The module's function map (scalars as their uniform member types)."""
    return device_module.function_table(kernels, scalar_arg_type)


def build(kernels: list[PrimFunc], target: Any) -> Any:
    """Target kind ``webgpu``'s codegen: WGSL for ``kernels`` in a ``webgpu`` device module (the
    real module when the runtime is loaded, else the fallback with the same bytes)."""
    kernels = list(kernels)
    text = generate(kernels, target)
    return device_module.create_device_module("webgpu", "wgsl", function_table(kernels), text, [["wgsl", text]])


__all__ = ["KERNEL_MARK", "LIMITS", "WGSLTypeError", "build", "function_table", "generate", "kernel_shader"]
