"""OpenCL C code generation: the ``codegen`` of target kind ``opencl``.

:class:`OpenCLPrinter` is the core's shared :class:`~tvm.codegen.c_family.CFamilyPrinter` with
OpenCL C's differences:

* kernels are ``__kernel void``; buffer parameters are ``__global T* restrict``;
  ``shared`` allocations are ``__local`` arrays, ``local`` ones private arrays;
* ``blockIdx``/``threadIdx`` become ``get_group_id(d)``/``get_local_id(d)``;
  ``tvm_storage_sync`` becomes ``barrier(CLK_LOCAL_MEM_FENCE)``;
* math calls use OpenCL's overloaded built-ins (``exp``, ``sqrt`` ...) for float and double;
* ``float64`` code starts with ``#pragma OPENCL EXTENSION cl_khr_fp64 : enable`` (the runtime
  refuses it, naming the extension, on devices without ``cl_khr_fp64``);
* ``float16`` is computed in float and stored through ``vload_half``/``vstore_half``, which need
  no extension; with target attribute ``supports_float16`` (set by the detector when the device
  has ``cl_khr_fp16``) half is a native type under the ``cl_khr_fp16`` pragma instead;
* ``bfloat16`` is stored as ``ushort`` and computed in float;
* vectors are native: stores to consecutive elements (what ``float32x4`` values and ``T.ramp``
  indices lower to) are one ``vstoreN`` of a ``floatN`` value built with ``vloadN``, vector
  arithmetic and ``convert_floatN`` (:mod:`tvm.codegen.vector_runs`);
* ``bool`` is stored as ``uchar`` (OpenCL forbids bool in buffers and kernel parameters);
* float16/bfloat16 scalar parameters are printed as ``float`` (arg type ``float32``);
* with a ``dyn_shmem`` launch parameter the kernel takes a trailing ``__local uchar*`` argument
  and shared allocations of non-constant size (or scope ``shared.dyn``) are views of it.
"""

from __future__ import annotations

import re
from typing import Any

from tvm.codegen.c_family import CFamilyPrinter, CodegenError
from tvm.codegen import device_module
from tvm.tir import dtype as _dt
from tvm.tir.analysis import any_node
from tvm.tir.op import is_barrier
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.functor import post_order_visit
from tvm.tir.transform import legalize_float16

#: OpenCL C vector widths.
_VECTOR_LANES = (2, 3, 4, 8, 16)

#: Names of the OpenCL built-in math functions (overloaded for float and double).
_MATH = (
    "exp exp2 exp10 expm1 log log2 log10 log1p sqrt sin cos tan asin acos atan sinh cosh tanh "
    "asinh acosh atanh erf floor ceil trunc fabs pow atan2 fmod hypot copysign fma nextafter ldexp"
).split()

FP64_PRAGMA = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"
FP16_PRAGMA = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable"


def _attrs(target: Any) -> dict:
    return getattr(target, "attrs", None) or {}


def _native_half(target: Any) -> bool:
    """Whether ``target``'s device computes in half itself (``supports_float16``: cl_khr_fp16)."""
    return bool(_attrs(target).get("supports_float16", False))


def legalize_half(kernel: PrimFunc, target: Any) -> PrimFunc:
    """The target pass of kind ``opencl``: float16 arithmetic computed in float and rounded per
    operation (:func:`tvm.tir.transform.legalize_float16`), unless the device computes in half."""
    return kernel if _native_half(target) else legalize_float16(kernel, target)


class OpenCLPrinter(CFamilyPrinter):
    """Prints TIR device kernels as OpenCL C 1.2."""

    LANGUAGE = "OpenCL C"
    #: OpenCL C's work-item, synchronization and memory functions (a variable named get_local_id
    #: hid the function and the program failed to build)
    RESERVED_NAMES = frozenset(
        "get_work_dim get_global_size get_global_id get_local_size get_local_id get_num_groups get_group_id "
        "get_global_offset barrier mem_fence read_mem_fence write_mem_fence async_work_group_copy "
        "async_work_group_strided_copy wait_group_events prefetch vload_half vstore_half printf "
        # access qualifiers and the image, sampler, event and pipe types
        "read_only write_only read_write image1d_t image1d_array_t image1d_buffer_t image2d_t image2d_array_t "
        "image3d_t sampler_t event_t pipe".split()
    )

    TYPE_NAMES: dict[str, str] = {
        "bool": "uchar",
        "int8": "char",
        "int16": "short",
        "int32": "int",
        "int64": "long",
        "uint8": "uchar",
        "uint16": "ushort",
        "uint32": "uint",
        "uint64": "ulong",
        "float16": "half",
        "bfloat16": "ushort",
        "float32": "float",
        "float64": "double",
        "handle": "__global void*",
    }
    RESTRICT = "restrict"
    KERNEL_QUALIFIER = "__kernel void"
    GLOBAL_PTR_QUALIFIER = "__global "
    SHARED_QUALIFIER = "__local "
    LOCAL_QUALIFIER = ""
    HELPER_QUALIFIER = "static inline"
    THREAD_INDEX: dict[str, str] = {
        "blockIdx.x": "get_group_id(0)",
        "blockIdx.y": "get_group_id(1)",
        "blockIdx.z": "get_group_id(2)",
        "threadIdx.x": "get_local_id(0)",
        "threadIdx.y": "get_local_id(1)",
        "threadIdx.z": "get_local_id(2)",
    }
    BARRIER = "barrier(CLK_LOCAL_MEM_FENCE);"
    BARRIERS = {"global": "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"}
    UNROLL_PRAGMA = "#pragma unroll {n}"
    VECTOR_WIDTHS = _VECTOR_LANES
    VECTOR_SPELLING = {
        "load": "vload{n}(0, {ptr})",
        "store": "vstore{n}({value}, 0, {ptr});",
        "broadcast": "(({type})({value}))",
        "of": "(({type})({values}))",
        "cast": "convert_{type}({value})",
    }
    INTRINSICS: dict[str, Any] = {**{op: op for op in _MATH}, "round": "rint", "nearbyint": "rint"}

    def __init__(self, native_half: bool = False) -> None:
        super().__init__()
        #: float16 is a native type (device has cl_khr_fp16) rather than storage-only.
        self.HALF_NATIVE = native_half
        self._dyn_shmem: str | None = None
        self._volatile: set[Any] = set()  # private arrays declared volatile (see print_kernel)

    def float_literal(self, value: float, dtype: str) -> str:
        """A NaN is chosen at run time (no group id is all ones): PoCL's compiler crashed the
        process on ``pow(1.0f, NAN)`` and made garbage of a floor division by a NaN literal."""
        text = super().float_literal(value, dtype)
        if value == value:
            return text
        return f"(get_group_id(0) != (size_t)-1 ? {text} : {super().float_literal(0.0, dtype)})"

    # ------------------------------------------------------------------ types
    def vector_type(self, dtype: str) -> str:
        elem, n = _dt.element_of(dtype), _dt.lanes(dtype)
        if n not in _VECTOR_LANES:
            raise CodegenError(f"OpenCL has no {n}-lane vectors (dtype '{dtype}')")
        if self.is_emulated(elem) or elem == "bool":
            raise CodegenError(f"OpenCL codegen does not support vector dtype '{dtype}'")
        return f"{self.TYPE_NAMES[elem]}{n}"

    def view_qualifier(self, allocation: E.Buffer) -> str:
        return self.SHARED_QUALIFIER if allocation.scope == "shared" else ""

    def typed_view(self, allocation: E.Buffer, view: E.Buffer, name: str) -> str:
        if self._half_storage(allocation) or self._half_storage(view):
            raise CodegenError(
                f"buffer '{view.name}' views the memory of '{allocation.name}' ({allocation.dtype}) as {view.dtype}, "
                "but unless the target computes in half (supports_float16: a device with cl_khr_fp16) float16 "
                "arrays hold floats, whose bits cannot be reinterpreted: give each dtype an allocation of its own, "
                "or convert with T.reinterpret"
            )
        return super().typed_view(allocation, view, name)

    def _half_storage(self, buf: E.Buffer) -> bool:
        """True for a float16 buffer accessed through vload_half/vstore_half."""
        return _dt.element_of(buf.dtype) == "float16" and not self.HALF_NATIVE

    # ------------------------------------------------------------------ literals
    def int_literal(self, value: int, dtype: str) -> str:
        if dtype != "bool" and _dt.bits(dtype) == 64:
            if _dt.is_uint(dtype):
                return f"{value}UL"
            return "(-9223372036854775807L - 1)" if value == -(2**63) else f"{value}L"
        return super().int_literal(value, dtype)

    # ------------------------------------------------------------------ emulated 16-bit floats
    def half_converters(self, dtype: str) -> tuple[str, str]:
        if _dt.element_of(dtype) == "float16":
            self.helpers.setdefault(
                "tvm_round_half",
                (
                    f"{self.HELPER_QUALIFIER} float tvm_round_half(float v) {{\n"
                    "  ushort h;\n  vstore_half(v, 0, (half*)&h);\n  return vload_half(0, (const half*)&h);\n}"
                ),
            )
            # float16 values are floats already; rounding keeps a real conversion's result
            return ("", "tvm_round_half")
        self.helpers.setdefault(
            "tvm_bfloat16",
            (
                f"{self.HELPER_QUALIFIER} float tvm_bf2f(ushort h) {{ return as_float((uint)h << 16); }}\n"
                f"{self.HELPER_QUALIFIER} ushort tvm_f2bf(float f) {{\n"
                "  uint x = as_uint(f);\n"
                "  if ((x & 0x7fffffffu) > 0x7f800000u) return (ushort)((x >> 16) | 0x40u);\n"
                "  return (ushort)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);\n}"
            ),
        )
        return ("tvm_bf2f", "tvm_f2bf")

    def emulated_bits(self, value: E.PrimExpr) -> str:
        if _dt.element_of(value.dtype) != "float16":
            return super().emulated_bits(value)
        if isinstance(value, E.BufferLoad) and value.buffer.scope == "global":
            index = self.flat_index(value.buffer, value.indices)
            return f"((__global const ushort*){self.buffer_ref(value.buffer)})[{index}]"
        self.helpers.setdefault(
            "tvm_half_bits",
            f"{self.HELPER_QUALIFIER} ushort tvm_half_bits(float v) {{\n"
            "  ushort h;\n  vstore_half(v, 0, (half*)&h);\n  return h;\n}",
        )
        return f"tvm_half_bits({self.expr(value)})"

    def emulated_from_bits(self, bits: str, dtype: str) -> str:
        if _dt.element_of(dtype) != "float16":
            return super().emulated_from_bits(bits, dtype)
        self.helpers.setdefault(
            "tvm_half_from_bits",
            f"{self.HELPER_QUALIFIER} float tvm_half_from_bits(ushort h) {{ return vload_half(0, (const half*)&h); }}",
        )
        return f"tvm_half_from_bits({bits})"

    def visit_Cast(self, e: E.Cast) -> str:
        dst = e.dtype
        if self.is_emulated(dst):
            v = f"(float)({self.expr(e.value)})"
            if _dt.element_of(dst) == "float16":
                return f"{self.half_converters(dst)[1]}({v})"
            to_f, from_f = self.half_converters(dst)
            return f"{to_f}({from_f}({v}))"
        return super().visit_Cast(e)

    def visit_BufferLoad(self, e: E.BufferLoad) -> str:
        buf = e.buffer
        if self._half_storage(buf) and buf.scope == "global":
            return f"vload_half({self.flat_index(buf, e.indices)}, {self.buffer_ref(buf)})"
        if self._half_storage(buf):  # __local / private float16 arrays hold rounded floats
            return f"{self.buffer_ref(buf)}[{self.flat_index(buf, e.indices)}]"
        return super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: S.BufferStore) -> None:
        buf = s.buffer
        bits = self.stored_bits(s) if self._half_storage(buf) and buf.scope == "global" else None
        if bits is not None:
            index = self.flat_index(buf, s.indices)
            self.emit(f"((__global ushort*){self.buffer_ref(buf)})[{index}] = {bits};")
            return
        if self._half_storage(buf):
            value = self.expr(s.value)
            idx = self.flat_index(buf, s.indices)
            if buf.scope == "global":
                self.emit(f"vstore_half({value}, {idx}, {self.buffer_ref(buf)});")
            else:
                if not (isinstance(s.value, E.Cast) and s.value.dtype == buf.dtype):  # rounded already
                    value = f"{self.half_converters(buf.dtype)[1]}({value})"
                self.emit(f"{self.buffer_ref(buf)}[{idx}] = {value};")
            return
        super().visit_BufferStore(s)

    def vector_accessible(self, buffer: E.Buffer) -> bool:
        """A volatile array is read and written element by element (vloadN / vstoreN take no
        volatile pointer)."""
        return buffer.data not in self._volatile

    # ------------------------------------------------------------------ statements
    def bitcast(self, value: str, src_dtype: str, dtype: str) -> str:
        st, dt_ = self.type_name(src_dtype), self.type_name(dtype)
        return value if st == dt_ else f"as_{dt_}({value})"

    def visit_Allocate(self, s: S.Allocate) -> None:
        buf = s.buffer
        name = self.name_of(buf.data, buf.name)
        elem = self._elem_type(buf)
        if self.dynamic_shared_view(buf, self._dyn_shmem, "__local ", elem):
            pass
        elif buf.scope == "global":
            raise CodegenError(f"OpenCL kernels cannot allocate global memory (buffer {buf.name})")
        elif buf.scope == "shared":
            pass  # declared at kernel scope by kernel_prologue (OpenCL requires it)
        else:
            qual = "volatile " if buf.data in self._volatile else self.LOCAL_QUALIFIER
            self.emit(f"{qual}{elem} {name}[{self.alloc_size(buf)}];")
        self.stmt(s.body)

    def kernel_prologue(self, func: PrimFunc) -> list[str]:
        """Declarations of the kernel's fixed-size ``__local`` arrays: OpenCL C only allows them
        at kernel function scope, so they are printed before the body, wherever TIR put them."""
        found: list[E.Buffer] = []

        def visit(node: Any) -> None:
            if isinstance(node, S.Allocate) and node.buffer.scope == "shared" and _const_shape(node.buffer):
                found.append(node.buffer)

        post_order_visit(func.body, visit)
        decls = []
        for buf in found:
            decls.append(
                f"{self.SHARED_QUALIFIER}{self._elem_type(buf)} {self.name_of(buf.data, buf.name)}"
                f"[{self.alloc_size(buf)}];"
            )
        return decls

    def _elem_type(self, buf: E.Buffer) -> str:
        """C element type of an allocation (16-bit floats without cl_khr_fp16 are kept as float)."""
        return "float" if self._half_storage(buf) else self.type_name(buf.dtype)

    # ------------------------------------------------------------------ functions
    def param_decl(self, func: PrimFunc, param: E.Var) -> str:
        buf = func.buffer_map.get(param)
        if buf is None and param.dtype in ("float16", "bfloat16"):
            return f"float {self.name_of(param)}"  # 16-bit float scalars travel as float
        if buf is not None and _dt.element_of(buf.dtype) == "float16":
            name = self.name_of(buf.data, buf.name)
            self._names.setdefault(param, name)
            return f"__global half* restrict {name}"
        return super().param_decl(func, param)

    def kernel_signature(self, func: PrimFunc, name: str) -> str:
        sig = super().kernel_signature(func, name)
        if self._dyn_shmem is None:
            return sig
        extra = f"__local uchar* {self._dyn_shmem}"
        return sig[:-1] + (", " if func.params else "") + extra + ")"

    def print_kernel(self, func: PrimFunc, name: str | None = None) -> str:
        self._volatile = arrays_stored_at_loaded_indices(func) if has_barrier(func) else set()
        self._dyn_shmem = None
        if "dyn_shmem" in list(func.attrs.get("launch_params", ())):
            self._dyn_shmem = self.name_of(object(), "tvm_dyn_shmem")
        return super().print_kernel(func, name)

    def print_module(self, funcs: list[PrimFunc]) -> str:
        bodies = "\n".join(self.print_kernel(f) for f in funcs)
        helpers = super().prelude()
        text = helpers + "\n" + bodies
        pragmas = []
        if re.search(r"\bdouble\b", text):
            pragmas.append(FP64_PRAGMA)
        if self.HALF_NATIVE and re.search(r"\bhalf\b", text):
            pragmas.append(FP16_PRAGMA)
        # OpenCL C may fuse a * b + c into one rounding (FP_CONTRACT is on by default): every
        # operation is rounded on its own, as on the CPU and every other backend
        pragmas.append("#pragma OPENCL FP_CONTRACT OFF")
        head = "// OpenCL C generated by tvm-backend-opencl\n" + "".join(p + "\n" for p in pragmas)
        return head + ("\n" if helpers else "") + text


def has_barrier(func: PrimFunc) -> bool:
    """Whether ``func`` holds a ``tvm_storage_sync``."""
    return any_node(func.body, is_barrier)


def arrays_stored_at_loaded_indices(func: PrimFunc) -> set[Any]:
    """The data variables of ``func``'s private arrays (scope ``local``) that a store indexes with
    a value read from memory (``L[L[1] & 3] = x``, ``L[A[i] % 4] = x``).

    PoCL 3.1's work-group vectorizer (its default, ``loopvec``) miscompiles such a store in a
    kernel with a barrier: a later load of the array reads the element as it was before the
    store. Declared ``volatile`` they are right; on a GPU such an array lives in memory anyway."""

    out: set[Any] = set()

    def visit(node: Any) -> None:
        if isinstance(node, S.BufferStore) and node.buffer.scope == "local":
            if any(any_node(i, lambda n: isinstance(n, E.BufferLoad)) for i in node.indices):
                out.add(node.buffer.data)

    post_order_visit(func.body, visit)
    return out


def _const_shape(buf: E.Buffer) -> bool:
    return all(isinstance(d, E.IntImm) for d in buf.shape)


#: Longest kernel name generated (PoCL aborts while linking names of about 245 characters).
MAX_KERNEL_NAME = 200


def generate_source(kernels: list[PrimFunc], target: Any = None) -> str:
    """The OpenCL C translation unit holding every kernel in ``kernels``."""
    attrs = _attrs(target)
    for k in kernels:  # PoCL aborts the process when it links a longer kernel name
        if len(k.global_symbol) > MAX_KERNEL_NAME:
            raise CodegenError(
                f"kernel name '{k.global_symbol[:40]}...' has {len(k.global_symbol)} characters; OpenCL "
                f"implementations take at most {MAX_KERNEL_NAME} here: give the function a shorter global_symbol"
            )
    printer = OpenCLPrinter(native_half=_native_half(target))
    source = printer.print_module(list(kernels))
    if attrs.get("supports_float64") is False and FP64_PRAGMA in source:
        names = ", ".join(k.global_symbol for k in kernels)
        raise CodegenError(
            f"kernel(s) {names} use float64, but the target device "
            f"({attrs.get('model', 'unknown')}) lacks cl_khr_fp64; use float32 or "
            f"another device"
        )
    return source


def build(kernels: list[PrimFunc], target: Any) -> Any:
    """Target kind ``opencl``'s codegen: OpenCL C for ``kernels`` in an ``opencl`` device module
    (the real module when the runtime is loaded, else the fallback with the same bytes)."""
    source = generate_source(kernels, target)
    return device_module.create_device_module(
        "opencl", "cl", function_table(kernels), source.encode("utf-8"), [["opencl", source]]
    )


def function_table(kernels: list[PrimFunc]) -> list[list]:
    """The module's function map: float16/bfloat16 scalar parameters are printed as ``float``, so
    their arg type is ``float32`` (an arg type means the same C type for every backend)."""
    return device_module.function_table(kernels, lambda t: "float32" if t in ("float16", "bfloat16") else t)


__all__ = ["OpenCLPrinter", "build", "function_table", "generate_source"]
