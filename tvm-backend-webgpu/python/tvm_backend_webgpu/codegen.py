"""WGSL code generation: the ``codegen`` of target kind ``webgpu``.

Each kernel becomes one WGSL shader whose entry point is ``main`` (:mod:`.wgsl`); the module's
payload (format ``wgsl``) is the shaders one after another, each introduced by a line
``//! kernel <name>`` (and ``//! loop_bound <bound>``, see :func:`generate`). The interface the
runtime binds (``src/webgpu_module.cc``):

* buffer parameter k (counting buffers only, in parameter order) is
  ``@group(0) @binding(k) var<storage, read_write>``, an ``array`` of its element type, or
  ``var<storage, read>`` when the kernel never stores to it (the runtime reads the access mode
  off the declaration to bind it as read-only storage); a buffer of 8- or 16-bit integers is an
  ``array<u32>`` of its bytes (``array<atomic<u32>>`` when the kernel stores to it);
* scalar parameters are the members of one ``var<uniform>`` struct at binding (number of buffer
  parameters), in parameter order, 4 bytes each (``i32``, ``u32`` or ``f32``; a ``float16``
  scalar travels as ``f32``);
* ``threadIdx`` extents are the workgroup size: ``@workgroup_size(x, y, z)`` when they are
  constants, else the pipeline-overridable constants ``tvm_wg_x``, ``tvm_wg_y``, ``tvm_wg_z``;
  ``blockIdx`` extents are the dispatch, folded by the runtime over up to three dimensions when
  one exceeds 65535 (the shader unfolds it).

WebGPU's portable limits are checked at compile time, so a kernel that runs in wgpu-native also
runs in a browser: storage buffers per shader stage and the workgroup size per dimension here;
invocations and workgroup storage per workgroup by the core's capability check, from the target
kind's ``max_num_threads`` and ``max_shared_memory_per_block`` (a detected device's target may
raise them).
"""

from __future__ import annotations

from typing import Any

from tvm.codegen import device_module
from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.functor import post_order_visit
from tvm.tir.transform.capabilities import first_use, static_shared_bytes
from tvm.tir.transform.narrow_int import NARROW_INTEGERS
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
PACKED_DTYPES = (*NARROW_INTEGERS, "bfloat16")  # buffers of u32 words, two or four elements each
BUFFER_DTYPES = ("int32", "uint32", "float32", "float16", *PACKED_DTYPES)
#: Scalar parameters travel as 4-byte uniform members.
_SCALAR_ARG = {"bool": "int32", "float16": "float32"}

#: Marks the start of each kernel's shader in the payload.
KERNEL_MARK = "//! kernel "
LOOP_BOUND_MARK = "//! loop_bound "
#: Then, when one thread holds arrays, how many scalars they hold in all (the runtime refuses to
#: build such a pipeline on llvmpipe past its limit: see :func:`local_array_scalars`).
LOCAL_SCALARS_MARK = "//! local_scalars "
#: Then, when the kernel sizes a workgroup array at launch, the bytes of its other workgroup
#: arrays (the runtime checks both together against maxComputeWorkgroupStorageSize).
STATIC_SHARED_MARK = "//! static_shared "
#: Shader header: how many times the launch's dynamic shared bytes the launch-sized array takes
#: (its 8- or 16-bit elements are stored in 32 bits; the host computed the narrow size).
DYN_SHARED_SCALE_MARK = "//! dyn_shmem_scale "


class WGSLTypeError(TIRVerifyError):
    """A kernel uses a type WGSL does not have."""


def scalar_arg_type(dtype: str) -> str:
    """The arg type of a scalar parameter of ``dtype``: what the runtime writes in the uniform."""
    return _SCALAR_ARG.get(dtype, dtype)


def _type_advice(dtype: str) -> str:
    if _dt.lanes(dtype) != 1:
        return "the WebGPU backend has no vector dtypes yet; use scalars"
    if dtype in ("int64", "uint64", "float64"):
        return "WebGPU has no 64-bit types; compute in int32/float32"
    return "WGSL has no 8- or 16-bit values (their buffers are packed into 32-bit words); convert to int32"


def check_types(kernel: PrimFunc) -> None:
    """Raise :class:`WGSLTypeError` at the first buffer, variable or value of a type WGSL lacks,
    naming it and the TVMScript line (the core's :func:`first_use` finds it)."""
    name = kernel.global_symbol
    for buf in kernel.buffer_map.values():  # storage buffers hold fewer types than values have
        if buf.dtype not in BUFFER_DTYPES:
            raise WGSLTypeError(f"kernel '{name}': buffer '{buf.name}' has type {buf.dtype}; {_type_advice(buf.dtype)}")
    arrays: list[S.Allocate] = []
    post_order_visit(kernel.body, lambda n: arrays.append(n) if isinstance(n, S.Allocate) else None)
    for node in arrays:
        if node.buffer.dtype == "bfloat16":
            msg = f"kernel '{name}': array '{node.buffer.name}' of bfloat16; WGSL has no bfloat16: use a float32 array"
            raise WGSLTypeError(with_span(msg, node.span))
    # legalize_narrow_integers and legalize_bfloat16 left those dtypes only in packed buffers'
    # loads and stores
    use = first_use(kernel, lambda dtype: dtype not in VALUE_DTYPES and dtype not in PACKED_DTYPES)
    if use is not None:
        what, dtype, span = use
        raise WGSLTypeError(with_span(f"kernel '{name}': {what}; {_type_advice(dtype)}", span))


def thread_extents(kernel: PrimFunc) -> dict[str, Any]:
    """Each thread tag's extent (the first loop bound to it) and that loop's span."""
    found: dict[str, Any] = {}

    def visit(node: Any) -> None:
        if isinstance(node, S.For) and node.kind is S.ForKind.THREAD_BINDING:
            found.setdefault(node.thread_tag, node)

    post_order_visit(kernel.body, visit)
    return found


def check_limits(kernel: PrimFunc, loops: dict[str, S.For]) -> None:
    """Raise :class:`TIRVerifyError` when ``kernel`` exceeds a WebGPU limit the target's
    capabilities do not cover (invocations and workgroup storage per workgroup are the core's
    ``max_num_threads`` and ``max_shared_memory_per_block`` checks): storage buffers per stage and
    the workgroup size per dimension."""
    name = kernel.global_symbol
    nbuf = sum(1 for p in kernel.params if p in kernel.buffer_map)
    limit = LIMITS["maxStorageBuffersPerShaderStage"]
    if nbuf > limit:
        records = [b.name for b in kernel.buffer_map.values() if b.name.endswith("_index_errors")]
        why = (
            f" (one is {records[0]}, where its run-time index checks record failures: indices no proof keeps "
            f"in bounds, such as indices read from memory; guard them, e.g. `if i < n`, to need none)"
            if records
            else ""
        )
        raise TIRVerifyError(
            f"kernel '{name}' binds {nbuf} storage buffers{why}; WebGPU's maxStorageBuffersPerShaderStage is "
            f"{limit} (browsers enforce it): split the kernel or pack buffers together"
        )
    for axis in "xyz":
        loop = loops.get(f"threadIdx.{axis}")
        extent = loop.extent.value if loop is not None and isinstance(loop.extent, E.IntImm) else 1
        key = f"maxComputeWorkgroupSize{axis.upper()}"
        if extent > LIMITS[key]:
            msg = f"kernel '{name}': threadIdx.{axis} = {extent} exceeds WebGPU's {key} ({LIMITS[key]})"
            raise TIRVerifyError(with_span(msg, loop.span))


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
        var = printer.name_of(buf.data, buf.name)
        printer.bound[buf.data] = buf
        if buf.dtype in PACKED_DTYPES:
            printer.packed[buf.data] = buf.data in written
            elem = "atomic<u32>" if buf.data in written else "u32"
        else:
            elem = printer.type_name(buf.dtype)
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


def kernel_shader(kernel: PrimFunc) -> str:
    """The WGSL shader of one kernel (types and limits checked first)."""
    check_types(kernel)
    loops = thread_extents(kernel)
    check_limits(kernel, loops)
    printer = WGSLPrinter()
    bindings = _bindings(kernel, printer)
    extents = {tag: loop.extent for tag, loop in loops.items()}
    return printer.print_shader(kernel, bindings, extents)


def local_array_scalars(kernel: PrimFunc) -> int:
    """How many scalars the function-scope arrays of one thread of ``kernel`` hold in all. WGSL
    zero-initializes them on entry, and Mesa's llvmpipe takes a time that grows with the square
    of that count to build the pipeline (1,024 float32: 15 s; 4,096: minutes), so its runtime
    refuses past a limit."""
    total = 0

    def visit(node: Any) -> None:
        nonlocal total
        if not isinstance(node, S.Allocate) or node.buffer.scope != "local":
            return
        count = _dt.lanes(node.buffer.dtype)
        for extent in node.buffer.shape:
            count *= int(extent.value) if isinstance(extent, E.IntImm) else 1
        total += count if count > 1 else 0  # a single scalar is a register

    post_order_visit(kernel.body, visit)
    return total


def generate(kernels: list[PrimFunc]) -> str:
    """The payload: every kernel's shader after its ``//! kernel <name>`` line, the shader first
    saying ``//! loop_bound <bound>`` when its loop iterations per thread can be bounded
    (:func:`tvm.codegen.device_module.loop_bound`; the runtime refuses launches that could run
    longer than a driver allows), then ``//! local_scalars <n>`` when its threads hold arrays
    (:func:`local_array_scalars`), then ``//! static_shared <bytes>`` when it sizes a workgroup
    array at launch (its constant-size ones' bytes) and ``//! dyn_shmem_scale <k>`` when that
    array's 8- or 16-bit elements are stored widened (``k`` times the launch's bytes)."""
    parts = []
    for k in kernels:
        bound = device_module.loop_bound(k)
        parts.append(f"{KERNEL_MARK}{k.global_symbol}\n")
        if bound != "0":
            parts.append(f"{LOOP_BOUND_MARK}{bound}\n")
        scalars = local_array_scalars(k)
        if scalars:
            parts.append(f"{LOCAL_SCALARS_MARK}{scalars}\n")
        if "dyn_shmem" in list(k.attrs.get("launch_params", ())):
            parts.append(f"{STATIC_SHARED_MARK}{static_shared_bytes(k)}\n")
            scale = int(k.attrs.get("dyn_shmem_scale", 1))
            if scale > 1:  # a widened array of 8- or 16-bit elements (see NarrowEmulator.legalize)
                parts.append(f"{DYN_SHARED_SCALE_MARK}{scale}\n")
        parts.append(kernel_shader(k))
    return "".join(parts)


def function_table(kernels: list[PrimFunc]) -> list[list]:
    """The module's function map (scalars as their uniform member types)."""
    return device_module.function_table(kernels, scalar_arg_type)


def build(kernels: list[PrimFunc], target: Any) -> Any:
    """Target kind ``webgpu``'s codegen: WGSL for ``kernels`` in a ``webgpu`` device module (the
    real module when the runtime is loaded, else the fallback with the same bytes)."""
    kernels = list(kernels)
    text = generate(kernels)
    return device_module.create_device_module("webgpu", "wgsl", function_table(kernels), text, [["wgsl", text]])


__all__ = [
    "KERNEL_MARK",
    "LIMITS",
    "LOCAL_SCALARS_MARK",
    "LOOP_BOUND_MARK",
    "STATIC_SHARED_MARK",
    "DYN_SHARED_SCALE_MARK",
    "WGSLTypeError",
    "build",
    "function_table",
    "generate",
    "kernel_shader",
    "local_array_scalars",
]
