"""CPU code generation: TIR host functions as C against tvm-ffi's C ABI.

For each PrimFunc ``name`` the generated file holds

* ``static int tvm_impl_<name>(typed pointers, scalars, shape vars)``: the computation, with OpenMP
  ``parallel for`` for PARALLEL loops, ``omp simd`` for VECTORIZED loops and unroll pragmas, and
  device launches (``tir.launch_kernel``) through ``TVMFFIEnvModLookupFromImports``;
* ``int __tvm_ffi_<name>(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result)``:
  the exported entry that checks every argument (count, tensor-ness, ndim, dtype, shape with
  symbolic dims bound on first use, device type, contiguity, element alignment) and raises
  ``TypeError``/``ValueError`` naming the function, the argument and expected vs got.

Launch convention (read by ``LaunchConfig::Decode``): the kernel receives its arguments (buffers as
opaque pointers, scalars as int64 / float64 values) followed by the launch extents as int64.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Collection

from tvm.runtime.device import DEVICE_NAMES
from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.analysis import any_node, free_vars, linear_form, structural_equal
from tvm.tir.op import is_convergent
from tvm.tir.printer import expr_text
from tvm.tir.functor import post_order_visit
from tvm.tir.transform.flatten import constant_extent, flat_bytes
from tvm.tir.transform.runtime_bounds import BOUNDS_KIND, INDEX_ERRORS_RAISE, INDEX_OUT_OF_BOUNDS

from .c_family import CFamilyPrinter, CodegenError, c_string_literal
from .register_tiles import VectorLoopPrinter, register_tile_lanes, vector_loop_lanes

# DLPack type codes used in generated checks
_DL_CODE = {"int": 0, "uint": 1, "float": 2, "bfloat": 4, "bool": 6, "float8_e4m3fn": 10, "float8_e5m2": 12}
#: devices whose DLTensor.data is an opaque runtime handle rather than an address
_OPAQUE_HANDLE_DEVICES = frozenset({4, 7, 8, 15})

_RUNTIME_PRELUDE = r"""#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#define TVM_EXPORT __attribute__((visibility("default")))
#define TVM_COLD __attribute__((noinline, cold))
#define TVM_UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline uint32_t tvm_dtype_u32(DLDataType t) {
  return (uint32_t)t.code | ((uint32_t)t.bits << 8) | ((uint32_t)t.lanes << 16);
}

static TVM_COLD int tvm_raise(const char* kind, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  TVMFFIErrorSetRaisedFromCStr(kind, msg);
  return -1;
}

static TVM_COLD const char* tvm_dtype_str(DLDataType t, char* buf, size_t n) {
  static const char* fam[] = {"int", "uint", "float", "handle", "bfloat", "complex", "bool"};
  /* DLPack's codes 7 to 17: the small float formats, named whole */
  static const char* small[] = {"float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                                "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                                "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"};
  const char* f = t.code < 7 ? fam[t.code] : "custom";
  if (t.code == 6 && t.bits == 8) snprintf(buf, n, "bool");
  else if (t.code >= 7 && t.code <= 17 && t.lanes == 1) snprintf(buf, n, "%s", small[t.code - 7]);
  else if (t.code >= 7 && t.code <= 17) snprintf(buf, n, "%sx%d", small[t.code - 7], (int)t.lanes);
  else if (t.lanes == 1) snprintf(buf, n, "%s%d", f, (int)t.bits);
  else snprintf(buf, n, "%s%dx%d", f, (int)t.bits, (int)t.lanes);
  return buf;
}

static TVM_COLD const char* tvm_shape_str(const DLTensor* t, char* buf, size_t n) {
  size_t k = 0;
  k += snprintf(buf + k, n - k, "(");
  for (int i = 0; i < t->ndim && k < n; ++i) {
    k += snprintf(buf + k, n - k, i ? ", %lld" : "%lld", (long long)t->shape[i]);
  }
  if (k < n) snprintf(buf + k, n - k, t->ndim == 1 ? ",)" : ")");
  return buf;
}

static TVM_COLD const char* tvm_type_str(int32_t type_index) {
  switch (type_index) {
    case kTVMFFINone: return "None";
    case kTVMFFIInt: return "int";
    case kTVMFFIBool: return "bool";
    case kTVMFFIFloat: return "float";
    case kTVMFFIOpaquePtr: return "opaque pointer";
    case kTVMFFIRawStr: case kTVMFFISmallStr: case kTVMFFIStr: return "str";
    case kTVMFFISmallBytes: case kTVMFFIBytes: return "bytes";
    case kTVMFFIShape: return "Shape";
    case kTVMFFIArray: return "Array";
    case kTVMFFIDevice: return "Device";
    case kTVMFFIDataType: return "dtype";
    case kTVMFFIBigInt: return "an int past 64 bits";
    default: {
      const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
      return info ? info->type_key.data : "object";
    }
  }
}

/* 1 when t has row-major compact strides (dims of extent 1 may have any stride; a tensor with no
   elements is compact whatever its strides) */
static TVM_COLD int tvm_is_compact(const DLTensor* t) {
  int64_t expect = 1;
  for (int i = 0; i < t->ndim; ++i) {
    if (t->shape[i] == 0) return 1;
  }
  for (int i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expect) return 0;
    expect *= t->shape[i];
  }
  return 1;
}

static TVM_COLD int tvm_err_tensor(const char* fn, const char* arg, int idx, int32_t type_index) {
  return tvm_raise("TypeError", "%s: argument '%s' (#%d) expects a Tensor, got %s", fn, arg, idx,
                   tvm_type_str(type_index));
}

static TVM_COLD int tvm_err_ndim(const char* fn, const char* arg, const char* want, const DLTensor* t) {
  char s[256];
  return tvm_raise("ValueError", "%s: argument '%s' expects a %s, got ndim %d with shape %s", fn, arg,
                   want, (int)t->ndim, tvm_shape_str(t, s, sizeof(s)));
}

/* nonzero when t has a negative dimension, or elements but no data (a producer's NULL pointer) */
static inline int tvm_bad_memory(const DLTensor* t) {
  int empty = 0;
  for (int i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0) return 1;
    empty |= t->shape[i] == 0;
  }
  return t->data == NULL && !empty;
}

static TVM_COLD int tvm_err_memory(const char* fn, const char* arg, const DLTensor* t) {
  char s[256];
  int negative = 0;
  for (int i = 0; i < t->ndim; ++i) negative |= t->shape[i] < 0;
  return tvm_raise("ValueError", "%s: argument '%s' has %s: shape %s", fn, arg,
                   negative ? "a negative dimension" : "elements but no data (a NULL pointer)",
                   tvm_shape_str(t, s, sizeof(s)));
}

static TVM_COLD int tvm_err_dtype(const char* fn, const char* arg, const char* want, const DLTensor* t) {
  char s[64];
  return tvm_raise("TypeError", "%s: argument '%s' expects dtype %s, got %s", fn, arg, want,
                   tvm_dtype_str(t->dtype, s, sizeof(s)));
}

static const char* tvm_device_type_name(int device_type);  /* the names known when compiled */

static TVM_COLD int tvm_err_device(const char* fn, const char* arg, const char* want, const DLTensor* t) {
  int dt = (int)t->device.device_type;
  return tvm_raise("ValueError", "%s: argument '%s' expects a tensor on %s, got one on %s(%d) (device type %d)",
                   fn, arg, want, tvm_device_type_name(dt), (int)t->device.device_id, dt);
}

static TVM_COLD int tvm_err_device_id(const char* fn, const char* arg, int want, const DLTensor* t) {
  return tvm_raise("ValueError", "%s: argument '%s' is on device %d but earlier tensor arguments are on device %d",
                   fn, arg, (int)t->device.device_id, want);
}

static TVM_COLD int tvm_err_shape(const char* fn, const char* arg, const char* want, const DLTensor* t,
                                  const char* detail) {
  char s[256];
  return tvm_raise("ValueError", "%s: argument '%s' expects shape %s, got %s%s", fn, arg, want,
                   tvm_shape_str(t, s, sizeof(s)), detail);
}

static TVM_COLD int tvm_err_symbolic(const char* fn, const char* arg, const char* want, const DLTensor* t,
                                     int dim, const char* var, long long value, const char* where) {
  char s[256];
  return tvm_raise("ValueError", "%s: argument '%s' expects shape %s, got %s: dimension %d is %s = %lld "
                   "(bound by %s)", fn, arg, want, tvm_shape_str(t, s, sizeof(s)), dim, var, value, where);
}

static TVM_COLD int tvm_err_stride(const char* fn, const char* arg, int dim, long long got, const char* want,
                                   long long value) {
  char declared[256];
  if (want[0]) snprintf(declared, sizeof(declared), "%s = %lld", want, value);  /* "" for a constant */
  else snprintf(declared, sizeof(declared), "%lld", value);
  return tvm_raise("ValueError", "%s: argument '%s' has stride %lld in dimension %d; the function declares stride %s",
                   fn, arg, got, dim, declared);
}

static TVM_COLD int tvm_err_size_range(const char* fn, const char* arg, const char* want, const DLTensor* t,
                                       int dim, const char* dtype) {
  char s[256];
  return tvm_raise("ValueError", "%s: argument '%s' expects shape %s, got %s: dimension %d is past what %s (the "
                   "dtype of its size) holds; declare the sizes with T.int64()", fn, arg, want,
                   tvm_shape_str(t, s, sizeof(s)), dim, dtype);
}

static int tvm_is_empty(const DLTensor* t) {
  for (int i = 0; i < t->ndim; ++i) {
    if (t->shape[i] == 0) return 1;
  }
  return 0;
}

static TVM_COLD int tvm_err_strides(const char* fn, const char* arg) {
  return tvm_raise("ValueError", "%s: argument '%s' must be a contiguous (row-major compact) tensor", fn, arg);
}

static TVM_COLD int tvm_err_align(const char* fn, const char* arg, int align) {
  return tvm_raise("ValueError", "%s: argument '%s' data pointer is not %d-byte aligned", fn, arg, align);
}

static TVM_COLD int tvm_err_scalar(const char* fn, const char* arg, int idx, const char* want, int32_t type_index) {
  return tvm_raise("TypeError", "%s: argument '%s' (#%d) expects %s, got %s", fn, arg, idx, want,
                   tvm_type_str(type_index));
}
"""


class CPrinter(CFamilyPrinter):
    """The CPU C dialect: GCC/Clang C11 with OpenMP pragmas and emulated half/bfloat16."""

    RESTRICT = "restrict"
    HELPER_QUALIFIER = "static inline"
    UNROLL_PRAGMA = "#pragma GCC unroll {n}"
    #: allocations with more elements than this (or non-constant) go on the heap
    STACK_LIMIT = 16384

    def __init__(self, device_type: int = 1, vector_bytes: int = 16) -> None:
        super().__init__()
        #: bytes of the target's widest vector register (register tiles are arrays of them)
        self.vector_bytes = vector_bytes
        #: the register tiles in scope: handle -> element dtype, and handle -> C array name
        self._tiles: dict[E.Var, str] = {}
        self._tile_names: dict[E.Var, str] = {}
        self.has_parallel = False
        self._parallel_depth = 0
        self._structured_depth = 0  # enclosing parallel and vectorized loops
        self._launch_handles: dict[str, str] = {}
        self._views: list[str] = []  # tensor views made for the T.call_packed being printed
        #: the statements releasing the heap buffers live at this point, innermost last
        self._heaps: list[str] = []
        #: per enclosing loop: how many of ``_heaps`` were live when its body began
        self._loop_marks: list[int] = []
        #: DLPack device type of the functions printed (not kDLCPU: the host code of a device
        #: function, whose "global" allocations are device memory for its kernels)
        self.device_type = device_type

    @property
    def device_type_c(self) -> str:
        """The C expression of :attr:`device_type` (a vendor's looked up by name: :func:`device_type_c`)."""
        return device_type_c(self.device_type, self.use_helper)

    def _free_heaps(self) -> str:
        return "".join(f"{release} " for release in reversed(self._heaps))

    def use_helper(self, name: str) -> None:
        """Put C helper ``name`` (tvm_heap_alloc, tvm_device_read ...) and those it calls into
        the prelude, each once."""
        definition, uses = _HELPERS[name]
        for other in uses:
            self.use_helper(other)
        self.helpers.setdefault(name, definition)

    def fail_return(self, value: str) -> str:
        """``return value;`` for an error, freeing the heap buffers live here first."""
        frees = self._free_heaps()
        return f"{{ {frees}return {value}; }}" if frees else f"return {value};"

    def call_tvm_static_handle(self, call: E.Call) -> str:
        """``T.tvm_static_handle()``: the address of a pointer-sized slot of its own (NULL when
        the library loads) that keeps its value from one call to the next, for state a callee
        caches (``T.call_packed("f", T.tvm_static_handle(), ...)``)."""
        name = f"tvm_static_slot{sum(key.startswith('tvm_static_slot') for key in self.helpers)}"
        self.helpers[name] = f"static void* {name} = NULL;"
        return f"((void*)&{name})"

    def call_ret(self, call: E.Call) -> str:
        """``return x``: ``x`` into the packed function's result, then leave the implementation
        (``return``: leave it, the result staying None)."""
        if not call.args:
            return f"{{ {self._free_heaps()}return 0; }}"
        v = call.args[0]
        if v.dtype == "bool":
            kind, field, ctype = "kTVMFFIBool", "v_int64", "int64_t"
        elif _dt.is_float(v.dtype):
            kind, field, ctype = "kTVMFFIFloat", "v_float64", "double"
        else:
            kind, field, ctype = "kTVMFFIInt", "v_int64", "int64_t"
        value = self.expr(v)  # read before the heap buffers it may use are freed
        frees = self._free_heaps()
        if v.dtype == "uint64":  # past int64 it is an ffi.BigInt
            self.use_helper("tvm_uint64")
            return f"{{ int tvm_rc = tvm_uint64_result(result, (uint64_t)({value})); {frees}return tvm_rc; }}"
        return f"{{ result->type_index = {kind}; result->{field} = ({ctype})({value}); {frees}return 0; }}"

    def loop_pragma(self, s: S.For) -> None:
        # (counted in visit_For) the outermost OpenMP loop only: one inside a `simd` loop may not be
        if s.kind is S.ForKind.PARALLEL and self._parallel_depth == 1 and self._structured_depth == 1:
            self.has_parallel = True
            self.emit("#pragma omp parallel for schedule(static)")
        elif s.kind is S.ForKind.VECTORIZED:
            if _iterations_independent(s):  # `omp simd` promises it: gcc then ignores dependences
                self.emit("#pragma omp simd")
        else:
            super().loop_pragma(s)

    def visit_For(self, s: S.For) -> None:
        vector = vector_loop_lanes(s, self._tiles, self.vector_bytes) if self._tiles else None
        if vector is not None:
            dtype, lanes, stores = vector
            VectorLoopPrinter(self, self._tile_names, dtype, lanes).print_loop(s, stores)
            return
        par = s.kind is S.ForKind.PARALLEL
        structured = par or s.kind is S.ForKind.VECTORIZED  # an OpenMP loop: no return inside
        defers = structured and self._structured_depth == 0 and any_node(s.body, _may_fail)
        if defers:  # an error inside is recorded, and raised after the loop
            self.use_helper("tvm_deferred_error")
            self.emit("{")
            self.emit("tvm_deferred_error_t tvm_deferred = {0, NULL, NULL, 0, 0};")
        self._parallel_depth += par
        self._structured_depth += structured
        self._loop_marks.append(len(self._heaps))
        try:
            super().visit_For(s)
        finally:
            self._parallel_depth -= par
            self._structured_depth -= structured
            self._loop_marks.pop()
        if defers:
            self.emit(
                f"if (TVM_UNLIKELY(tvm_deferred.claimed)) {self.fail_return('tvm_deferred_raise(&tvm_deferred)')}"
            )
            self.emit("}")

    def fail_or_defer(self, kind: str, what: str, index: str = "0", extent: str = "0") -> None:
        """Raise ``kind`` with the message ``what`` (a C string literal; a bounds check's is the
        access, completed by ``index`` and ``extent``) now, or inside an OpenMP loop record it
        for after the loop (the failing statement is then skipped)."""
        self.use_helper("tvm_deferred_error")
        # the values are read before anything is freed: the index may read a heap buffer; a block
        # of its own, as a check that always fails is printed without the `if` around it
        self.emit("{")
        self._indent += 1
        self.emit(f"long long tvm_bad_index = (long long)({index}), tvm_bad_extent = (long long)({extent});")
        args = f'"{kind}", {what}, tvm_bad_index, tvm_bad_extent'
        if self._structured_depth:
            self.emit(f"tvm_defer_error(&tvm_deferred, {args});")
        else:
            self.emit(self.fail_return(f"tvm_raise_error({args})"))
        self._indent -= 1
        self.emit("}")

    def print_index_error(self, call: E.Call) -> None:
        """A failed run-time bounds check: ``tvm_index_out_of_bounds(where, index, extent)``."""
        index, extent = self.expr(call.args[1]), self.expr(call.args[2])
        self.fail_or_defer(BOUNDS_KIND, c_string_literal(call.args[0].value), index, extent)

    def visit_While(self, s: S.While) -> None:
        self._loop_marks.append(len(self._heaps))
        try:
            super().visit_While(s)
        finally:
            self._loop_marks.pop()

    def _free_loop_heaps(self) -> None:
        """Before ``break``/``continue``: free the heap buffers allocated in this iteration."""
        for release in reversed(self._heaps[self._loop_marks[-1] :] if self._loop_marks else []):
            self.emit(release)

    def visit_Break(self, s: S.Break) -> None:
        self._free_loop_heaps()
        super().visit_Break(s)

    def visit_Continue(self, s: S.Continue) -> None:
        self._free_loop_heaps()
        super().visit_Continue(s)

    def print_thread_binding(self, s: S.For) -> None:
        # an unlowered thread binding on the CPU is just a loop
        self.visit_For(S.For(s.loop_var, s.min, s.extent, S.ForKind.SERIAL, s.body))

    def visit_Allocate(self, s: S.Allocate) -> None:
        buf = s.buffer
        name = self.name_of(buf.data, buf.name)
        t = self.type_name(buf.dtype)
        const = all(isinstance(d, E.IntImm) for d in buf.shape)
        n = 1
        for d in buf.shape:
            n *= int(d.value) if isinstance(d, E.IntImm) else 1
        if const and n <= self.STACK_LIMIT and buf.scope != "global":
            lanes = register_tile_lanes(s, self.vector_bytes)
            if lanes is None:
                self.emit(f"{t} {name}[{n}] __attribute__((aligned(64)));")
                self.stmt(s.body)
                return
            self.emit(f"{self.vector_type(f'{buf.dtype}x{lanes}')} {name}[{n // lanes}];")
            self._tiles[buf.data], self._tile_names[buf.data] = buf.dtype, name
            try:
                self.stmt(s.body)
            finally:
                del self._tiles[buf.data], self._tile_names[buf.data]
            return
        size = " * ".join(f"(int64_t)({self.expr(d)})" for d in buf.shape) or "1"
        if self.device_type != 1:  # device memory the function's kernels share
            self.use_helper("tvm_device_alloc")
            self.emit(f"void* {name} = NULL;")
            fail = self.fail_return("-1")
            self.emit(
                f"if (tvm_device_alloc({self.device_type_c}, tvm_device_id, ({size}) * (int64_t)sizeof({t}), "
                f'"{buf.name}", &{name}) != 0) {fail}'
            )
            release = f"tvm_device_free({self.device_type_c}, tvm_device_id, {name});"
        else:
            self.use_helper("tvm_heap_alloc")
            dims = ", ".join(f"(int64_t)({self.expr(d)})" for d in buf.shape) or "1"
            ndim = max(len(buf.shape), 1)
            self.emit(f"{t}* {name} = ({t}*)tvm_heap_alloc(sizeof({t}), {ndim}, (const int64_t[]){{{dims}}});")
            self.emit(f"if (TVM_UNLIKELY({name} == NULL)) {{")
            self._indent += 1
            self.fail_or_defer(
                "MemoryError",
                c_string_literal(
                    f"cannot allocate buffer {buf.name}: its size is negative, "
                    f"overflows or exceeds the memory available"
                ),
            )
            self._indent -= 1
            self.emit("} else {")  # inside an OpenMP loop a failed allocation skips its body
            self._indent += 1
            release = f"free({name});"
        self._heaps.append(release)
        self.stmt(s.body)
        self._heaps.pop()
        self.emit(release)
        if self.device_type == 1:
            self._indent -= 1
            self.emit("}")

    def visit_AssertStmt(self, s: S.AssertStmt) -> None:
        self.emit(f"if (TVM_UNLIKELY(!({self.expr(s.condition)}))) {{")
        self._indent += 1
        self.fail_or_defer(s.kind, c_string_literal(s.message))
        self._indent -= 1
        self.emit("} else {")  # inside an OpenMP loop a failed assert skips what it guards
        self._indent += 1
        self.stmt(s.body)
        self._indent -= 1
        self.emit("}")

    def visit_Evaluate(self, s: S.Evaluate) -> None:
        v = s.value
        if isinstance(v, E.Call) and v.op in ("tir.launch_kernel", "launch_kernel"):
            self.print_launch(v)
            return
        if isinstance(v, E.Call) and v.op == "call_packed":
            self.print_call_packed(v)
            return
        if _is_index_error(v):
            self.print_index_error(v)
            return
        if isinstance(v, E.Call) and v.op == INDEX_ERRORS_RAISE:
            self.print_index_errors_raise(v)
            return
        super().visit_Evaluate(s)

    def print_index_errors_raise(self, call: E.Call) -> None:
        """After the kernels of a device function with run-time checks: read the failures they
        recorded (three elements per check site: failed, index, extent) and raise for the first
        site that failed (its kind: IndexError for an index, an assert's own for an assert)."""
        self.use_helper("tvm_deferred_error")
        self.use_helper("tvm_device_read")
        data, dtype, pairs = call.args[0], call.args[1].value, call.args[2:]
        kinds, sites = pairs[0::2], pairs[1::2]
        n = len(sites)
        self.emit("{")
        self.emit(f"{dtype}_t tvm_errs[{3 * n}];")
        fail = self.fail_return("-1")
        self.emit(
            f"if (tvm_device_read({self.device_type_c}, tvm_device_id, {self.expr(data)}, tvm_errs, "
            f"sizeof(tvm_errs)) != 0) {fail}"
        )
        names = ", ".join(c_string_literal(w.value) for w in sites)
        self.emit(f"static const char* const tvm_sites[{n}] = {{{names}}};")
        self.emit(
            f"static const char* const tvm_kinds[{n}] = {{{', '.join(c_string_literal(k.value) for k in kinds)}}};"
        )
        self.emit(f"for (int k = 0; k < {n}; ++k) {{")
        raise_ = self.fail_return(
            "tvm_raise_error(tvm_kinds[k], tvm_sites[k], tvm_errs[3 * k + 1], tvm_errs[3 * k + 2])"
        )
        self.emit(f"  if (TVM_UNLIKELY(tvm_errs[3 * k] != 0)) {raise_}")
        self.emit("}")
        self.emit("}")

    def call_call_packed(self, call: E.Call) -> str:
        raise CodegenError("the result of T.call_packed cannot be used: call it as a statement")

    def _pack_args(self, array: str, args: tuple) -> None:
        """Declare ``TVMFFIAny array[]`` holding ``args``: strings as strings, handles as opaque
        pointers, numbers as ints or floats, ``tensor_of`` (a buffer in T.call_packed) as a
        DLTensor on the stack."""
        self.emit(f"TVMFFIAny {array}[{max(len(args), 1)}];")
        for i, a in enumerate(args):
            if isinstance(a, E.Call) and a.op == "tensor_of":
                tidx, field_, val = "kTVMFFITensor", "v_obj", f"(TVMFFIObject*){self._tensor_view(a)}"
            elif isinstance(a, E.StringImm):  # the callee gets a str (it was an opaque pointer)
                tidx, field_, val = "kTVMFFIRawStr", "v_c_str", c_string_literal(a.value)
            elif a.dtype == "handle":
                tidx, field_, val = "kTVMFFIOpaquePtr", "v_ptr", f"(void*)({self.expr(a)})"
            elif _dt.is_float(a.dtype):
                tidx, field_, val = "kTVMFFIFloat", "v_float64", f"(double)({self.expr(a)})"
            else:
                tidx, field_, val = "kTVMFFIInt", "v_int64", f"(int64_t)({self.expr(a)})"
            self.emit(
                f"{array}[{i}].type_index = {tidx}; {array}[{i}].zero_padding = 0; {array}[{i}].{field_} = {val};"
            )

    def _tensor_view(self, a: E.Call) -> str:
        """A tvm-ffi Tensor viewing ``tensor_of(dtype, data, elem_offset, ndim, *shape, *strides)``
        (CPU memory; the view owns only its metadata, so a callee may keep it); returns the
        handle's variable."""
        self.use_helper("tvm_tensor_view")
        code, bits, lanes = _dlpack_dtype(a.args[0].value)
        ndim = a.args[3].value
        shape, strides = a.args[4 : 4 + ndim], a.args[4 + ndim :]
        name = f"tvm_view{len(self._views)}"
        dims = ", ".join(f"(int64_t)({self.expr(d)})" for d in (*shape, *strides)) or "1"
        self.emit(f"int64_t {name}_dims[{max(len(shape) + len(strides), 1)}] = {{{dims}}};")
        itemsize = (bits * lanes + 7) // 8
        self.emit(
            f"TVMFFIObjectHandle {name} = tvm_tensor_view((void*)({self.expr(a.args[1])}), "
            f"(uint64_t)({self.expr(a.args[2])}) * {itemsize}, (DLDataType){{{code}, {bits}, {lanes}}}, "
            f"{ndim}, {name}_dims, {1 if strides else 0});"
        )
        self.emit(f"if (TVM_UNLIKELY({name} == NULL)) {{ {self._release_call_objects()} {self.fail_return('-1')} }}")
        self._views.append(name)
        return name

    def _release_call_objects(self) -> str:
        """C statements releasing what the T.call_packed being printed holds so far."""
        return " ".join(f"TVMFFIObjectDecRef({h});" for h in ("fn", *self._views))

    def print_call_packed(self, call: E.Call) -> None:
        """``T.call_packed(name, args...)``: the global function, looked up on every call (a
        registration may change), called with the packed arguments; its error propagates."""
        if self._structured_depth:  # its error exits cannot leave an OpenMP loop
            raise CodegenError("T.call_packed cannot be inside a parallel or vectorized loop; call it outside the loop")
        name = call.args[0].value if isinstance(call.args[0], E.StringImm) else None
        if name is None:
            raise CodegenError("T.call_packed needs the function's name as its first argument")
        literal = name.replace("\\", "\\\\").replace('"', '\\"')
        self.emit("{")
        self._indent += 1
        self.emit(f'TVMFFIByteArray fname = {{"{literal}", {len(name.encode())}}};')
        self.emit("TVMFFIObjectHandle fn = NULL;")
        self.emit(f"if (TVMFFIFunctionGetGlobal(&fname, &fn) != 0) {self.fail_return('-1')}")
        missing = (
            f'tvm_raise("RuntimeError", "T.call_packed: no global function \'{literal.replace("%", "%%")}\' '
            f'is registered (register it with tvm_ffi.register_global_func)")'
        )
        self.emit(f"if (fn == NULL) {self.fail_return(missing)}")
        self._views = []
        self._pack_args("pargs", call.args[1:])
        self.emit("TVMFFIAny pret; pret.type_index = kTVMFFINone; pret.zero_padding = 0; pret.v_int64 = 0;")
        self.emit(f"int prc = TVMFFIFunctionCall(fn, pargs, {len(call.args) - 1}, &pret);")
        self.emit(self._release_call_objects())
        self.emit(f"if (prc != 0) {self.fail_return('-1')}")
        self.emit("if (pret.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(pret.v_obj);")
        self._indent -= 1
        self.emit("}")

    def print_launch(self, call: E.Call) -> None:
        """A device kernel launch: look the kernel up once, then call it with args + extents."""
        if self._structured_depth:
            raise CodegenError("a device launch cannot be inside a parallel or vectorized loop")
        name_node, rest = call.args[0], call.args[1:]
        if not isinstance(name_node, E.StringImm):
            raise CodegenError("tir.launch_kernel needs the kernel name as its first argument")
        kname = name_node.value
        handle = self._launch_handles.get(kname)
        if handle is None:
            handle = f"tvm_kernel_{len(self._launch_handles)}"
            self._launch_handles[kname] = handle
        n = len(rest)
        self.emit("{")
        self._indent += 1
        self.emit(
            f"if (TVM_UNLIKELY({handle} == NULL) && TVMFFIEnvModLookupFromImports("
            f'__tvm_ffi__library_ctx, "{kname}", &{handle}) != 0) {self.fail_return("-1")}'
        )
        self._pack_args("kargs", rest)
        self.emit("TVMFFIAny kret; kret.type_index = kTVMFFINone; kret.zero_padding = 0; kret.v_int64 = 0;")
        self.emit(f"if (TVMFFIFunctionCall({handle}, kargs, {n}, &kret) != 0) {self.fail_return('-1')}")
        self.emit("if (kret.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(kret.v_obj);")
        self._indent -= 1
        self.emit("}")


@dataclass
class HostModuleSource:
    """What :func:`generate_host` produced."""

    code: str
    function_names: list[str]
    has_parallel: bool = False
    has_launch: bool = False
    extern_functions: list[str] = field(default_factory=list)  # what T.call_extern names


def _is_index_error(node: Any) -> bool:
    """Whether ``node`` is the failure of a run-time bounds check (tvm.tir.transform.runtime_bounds)."""
    return isinstance(node, E.Call) and node.op == INDEX_OUT_OF_BOUNDS


def _may_fail(node: Any) -> bool:
    """Whether ``node`` raises when it fails: a bounds check, an assert, a heap allocation."""
    return _is_index_error(node) or isinstance(node, (S.AssertStmt, S.Allocate))


_DEFERRED_ERROR_HELPER = r"""typedef struct {
  int claimed;
  const char* kind;
  const char* what;
  long long index, extent;
} tvm_deferred_error_t;

/* a failed bounds check ("IndexError.bounds") is an IndexError whose message is its access,
   completed by the index and the extent; any other kind raises its message as it is */
static TVM_COLD int tvm_raise_error(const char* kind, const char* what, long long index, long long extent) {
  if (strcmp(kind, "IndexError.bounds") != 0) return tvm_raise(kind, "%s", what);
  return tvm_raise("IndexError", "out-of-bounds access in %s has extent %lld, got index %lld (an index known only at "
                   "run time)", what, extent, index);
}

/* the first error inside an OpenMP loop, raised after the loop */
static TVM_COLD void tvm_defer_error(tvm_deferred_error_t* e, const char* kind, const char* what, long long index,
                                     long long extent) {
  if (__atomic_exchange_n(&e->claimed, 1, __ATOMIC_ACQ_REL) == 0) {
    e->kind = kind;
    e->what = what;
    e->index = index;
    e->extent = extent;
  }
}

static TVM_COLD int tvm_deferred_raise(const tvm_deferred_error_t* e) {
  return tvm_raise_error(e->kind, e->what, e->index, e->extent);
}"""

_DIMS_PRODUCT_HELPER = r"""/* start times the product of the n dims into *out; nonzero when a dim is negative or the
   product overflows (a zero dim makes it 0, whatever the others) */
static int tvm_dims_product(size_t start, int n, const int64_t* dims, size_t* out) {
  for (int i = 0; i < n; ++i) {
    if (dims[i] < 0) return 1;
    if (dims[i] == 0) { *out = 0; return 0; }
  }
  size_t p = start;
  for (int i = 0; i < n; ++i) {
    if (__builtin_mul_overflow(p, (size_t)dims[i], &p)) return 1;
  }
  *out = p;
  return 0;
}"""

_COUNT_EXCEEDS_HELPER = r"""/* whether the product of the n dims (each >= 0) exceeds limit */
static int tvm_count_exceeds(int n, const int64_t* dims, long long limit) {
  size_t count;
  return tvm_dims_product(1, n, dims, &count) != 0 || count > (size_t)limit;
}"""

_REACH_EXCEEDS_HELPER = r"""/* whether the elements a non-empty tensor's strides reach (off plus the sum of
   (dims[d] - 1) * strides[d], at either end) leave [lo, hi]; *far is then the end that does
   (INT64_MAX when it overflows) */
static int tvm_reach_exceeds(int n, const int64_t* dims, const int64_t* strides, long long off, long long lo,
                             long long hi, long long* far) {
  for (int i = 0; i < n; ++i) {
    if (dims[i] <= 0) return 0;
  }
  long long least = off, most = off;
  for (int i = 0; i < n; ++i) {
    long long t;
    if (__builtin_mul_overflow((long long)(dims[i] - 1), (long long)strides[i], &t) ||
        __builtin_add_overflow(t < 0 ? least : most, t, t < 0 ? &least : &most)) {
      *far = INT64_MAX;
      return 1;
    }
  }
  *far = most > hi ? most : least;
  return least < lo || most > hi;
}"""

_ROUND_FLOAT_HELPER = r"""/* x rounded to nearest even with `digits` significant bits, subnormals sharing the quantum
   2**min_exp, and past max_finite an infinity: a float16 or bfloat16 argument's value */
static double tvm_round_float(double x, int digits, int min_exp, double max_finite) {
  if (!isfinite(x) || x == 0) return x;
  int e;
  frexp(x, &e);
  int q = e - digits < min_exp ? min_exp : e - digits;
  double r = ldexp(nearbyint(ldexp(x, -q)), q);
  return fabs(r) > max_finite ? copysign(INFINITY, x) : r;
}"""

#: tvm_round_float's arguments for the scalar parameters whose dtype the host computes in float
_SCALAR_ROUNDING = {"float16": "11, -24, 65504.0", "bfloat16": "8, -133, 3.3895313892515355e38"}

_UINT64_HELPER = r"""/* a uint64 argument: an int >= 0, or an ffi.BigInt (a Python int past int64) below 2**64; 0 when
   the argument is no such number */
static int tvm_uint64_arg(const TVMFFIAny* a, uint64_t* out) {
  int64_t words[2];
  if (a->type_index == kTVMFFIInt || a->type_index == kTVMFFIBool) {
    *out = (uint64_t)a->v_int64;
    return a->v_int64 >= 0;
  }
  if (a->type_index != kTVMFFIBigInt) return 0;
  TVMFFIByteArray content = TVMFFIBigIntGetContentByteArray(a);
  if (content.size != sizeof(words)) return 0;
  memcpy(words, content.data, sizeof(words));
  *out = (uint64_t)words[0];
  return words[1] == 0;
}

/* a uint64 result: an int, or an ffi.BigInt past int64 (a Python int either way); nonzero when
   the BigInt cannot be made */
static int tvm_uint64_result(TVMFFIAny* result, uint64_t v) {
  int64_t words[2] = {(int64_t)v, 0};
  TVMFFIByteArray content = {(const char*)words, sizeof(words)};
  if (v > (uint64_t)INT64_MAX) return TVMFFIBigIntFromByteArray(&content, result);
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = (int64_t)v;
  return 0;
}"""

_HEAP_ALLOC_HELPER = r"""/* 64-byte aligned host memory for the product of dims elements of elem bytes; NULL when that
   size is negative or overflows, or the allocator refuses it */
static void* tvm_heap_alloc(size_t elem, int ndim, const int64_t* dims) {
  size_t n;
  if (tvm_dims_product(elem, ndim, dims, &n) != 0 || n > SIZE_MAX - 64) return NULL;
  return aligned_alloc(64, n == 0 ? 64 : (n + 63) & ~(size_t)63);
}"""

_DEVICE_READ_HELPER = r"""/* nbytes of device buffer src into host memory dst, after the work queued on the device */
static int tvm_device_read(int32_t device_type, int32_t device_id, void* src, void* dst, int64_t nbytes) {
  TVMFFIAny ret, args[4];
  args[0].type_index = kTVMFFIDevice; args[0].zero_padding = 0; args[0].v_int64 = 0;
  args[0].v_device.device_type = (DLDeviceType)device_type; args[0].v_device.device_id = device_id;
  if (tvm_call_global("runtime.DeviceSync", args, 1, &ret) != 0) return -1;
  int64_t shape[1] = {nbytes};
  DLTensor from = {src, {(DLDeviceType)device_type, device_id}, 1, {kDLUInt, 8, 1}, shape, NULL, 0};
  DLTensor to = {dst, {kDLCPU, 0}, 1, {kDLUInt, 8, 1}, shape, NULL, 0};
  args[0].type_index = kTVMFFIDLTensorPtr; args[0].v_int64 = 0; args[0].v_ptr = &from;
  args[1].type_index = kTVMFFIDLTensorPtr; args[1].zero_padding = 0; args[1].v_ptr = &to;
  args[2].type_index = kTVMFFIBool; args[2].zero_padding = 0; args[2].v_int64 = 0;
  args[3].type_index = kTVMFFIBool; args[3].zero_padding = 0; args[3].v_int64 = 1;
  return tvm_call_global("runtime.TensorCopyFromTo", args, 4, &ret);
}
"""

_CALL_GLOBAL_HELPER = r"""static int tvm_call_global(const char* fname, TVMFFIAny* args, int32_t num_args,
                           TVMFFIAny* ret) {
  TVMFFIByteArray name = {fname, strlen(fname)};
  TVMFFIObjectHandle fn = NULL;
  if (TVMFFIFunctionGetGlobal(&name, &fn) != 0) return -1;
  if (fn == NULL) return tvm_raise("RuntimeError", "%s is not registered: libtvm_runtime is not loaded", fname);
  ret->type_index = kTVMFFINone; ret->zero_padding = 0; ret->v_int64 = 0;
  int rc = TVMFFIFunctionCall(fn, args, num_args, ret);
  TVMFFIObjectDecRef(fn);
  return rc;
}"""

_VENDOR_DEVICE_TYPE_HELPER = r"""/* A vendor backend's device type is handed out where the library runs (in the order
   backends load there), so the library looks its device up by name when it first needs it. */
static int32_t tvm_vendor_device_type(int slot, const char* name) {
  static int32_t known[64];  /* 0: not looked up yet, or not registered then */
  if (known[slot] > 0) return known[slot];
  TVMFFIAny arg, ret;
  arg.type_index = kTVMFFIRawStr; arg.zero_padding = 0; arg.v_c_str = name;
  if (tvm_call_global("runtime.DeviceTypeOf", &arg, 1, &ret) != 0) {
    TVMFFIObjectHandle err = NULL;  /* an older runtime: the device is unknown here */
    TVMFFIErrorMoveFromRaised(&err);
    if (err != NULL) TVMFFIObjectDecRef(err);
    return -1;
  }
  if (ret.type_index != kTVMFFIInt || ret.v_int64 <= 0) return -1;
  known[slot] = (int32_t)ret.v_int64;
  return known[slot];
}"""

_DEVICE_ALLOC_HELPER = r"""static int tvm_device_call(const char* fname, int32_t device_type, int32_t device_id,
                           TVMFFIAny third, TVMFFIAny* ret) {
  TVMFFIAny args[3];
  args[0].type_index = kTVMFFIInt; args[0].zero_padding = 0; args[0].v_int64 = device_type;
  args[1].type_index = kTVMFFIInt; args[1].zero_padding = 0; args[1].v_int64 = device_id;
  args[2] = third;
  return tvm_call_global(fname, args, 3, ret);
}
static int tvm_device_alloc(int32_t device_type, int32_t device_id, int64_t nbytes, const char* buffer,
                            void** out) {
  TVMFFIAny n; n.type_index = kTVMFFIInt; n.zero_padding = 0; n.v_int64 = nbytes;
  TVMFFIAny ret;
  if (tvm_device_call("runtime.DeviceAllocData", device_type, device_id, n, &ret) != 0) return -1;
  if (ret.type_index != kTVMFFIOpaquePtr || ret.v_ptr == NULL)
    return tvm_raise("MemoryError", "cannot allocate buffer %s (%lld bytes) on the device", buffer, (long long)nbytes);
  *out = ret.v_ptr;
  return 0;
}
static void tvm_device_free(int32_t device_type, int32_t device_id, void* ptr) {
  if (ptr == NULL) return;
  TVMFFIAny p; p.type_index = kTVMFFIOpaquePtr; p.zero_padding = 0; p.v_ptr = ptr;
  TVMFFIAny ret;
  if (tvm_device_call("runtime.DeviceFreeData", device_type, device_id, p, &ret) != 0) {
    TVMFFIObjectHandle err = NULL;  /* a failed free is not the caller's error: drop it */
    TVMFFIErrorMoveFromRaised(&err);
    if (err != NULL) TVMFFIObjectDecRef(err);
  }
}
"""

_TENSOR_VIEW_HELPER = r"""static void tvm_view_deleter(DLManagedTensor* self) { free(self); }

/* a tvm-ffi Tensor over CPU memory it does not own (T.call_packed's buffer arguments): dims holds
   the shape, then the strides when has_strides; the metadata lives as long as the Tensor; NULL
   with the error set on failure */
static TVMFFIObjectHandle tvm_tensor_view(void* data, uint64_t byte_offset, DLDataType dtype, int ndim,
                                          const int64_t* dims, int has_strides) {
  int n = ndim * (has_strides ? 2 : 1);
  DLManagedTensor* m = (DLManagedTensor*)malloc(sizeof(DLManagedTensor) + sizeof(int64_t) * (n + 1));
  if (m == NULL) {
    tvm_raise("MemoryError", "cannot allocate a tensor view for T.call_packed");
    return NULL;
  }
  int64_t* copy = (int64_t*)(m + 1);
  for (int i = 0; i < n; ++i) copy[i] = dims[i];
  m->dl_tensor.data = data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.device.device_id = 0;
  m->dl_tensor.ndim = ndim;
  m->dl_tensor.dtype = dtype;
  m->dl_tensor.shape = copy;
  m->dl_tensor.strides = has_strides ? copy + ndim : NULL;
  m->dl_tensor.byte_offset = byte_offset;
  m->manager_ctx = NULL;
  m->deleter = tvm_view_deleter;
  TVMFFIObjectHandle out = NULL;
  if (TVMFFITensorFromDLPack(m, 0, 0, &out) != 0) {
    free(m);
    return NULL;
  }
  return out;
}"""

_TENSOR_BYTES_HELPER = r"""/* the bytes of t's elements (INT64_MAX when they overflow, so a size check passes and
   the tensor's producer is trusted with its own sizes) */
static int64_t tvm_tensor_bytes(const DLTensor* t) {
  size_t bytes = 0;
  size_t element = ((size_t)t->dtype.bits * t->dtype.lanes + 7) / 8;
  return tvm_dims_product(element, t->ndim, t->shape, &bytes) || bytes > INT64_MAX ? INT64_MAX : (int64_t)bytes;
}"""

#: The C helpers host code may use, by name: (definition, the helpers it calls).
_HELPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "tvm_call_global": (_CALL_GLOBAL_HELPER, ()),
    "tvm_device_alloc": (_DEVICE_ALLOC_HELPER, ("tvm_call_global",)),
    "tvm_vendor_device_type": (_VENDOR_DEVICE_TYPE_HELPER, ("tvm_call_global",)),
    "tvm_device_read": (_DEVICE_READ_HELPER, ("tvm_call_global",)),
    "tvm_deferred_error": (_DEFERRED_ERROR_HELPER, ()),
    "tvm_dims_product": (_DIMS_PRODUCT_HELPER, ()),
    "tvm_heap_alloc": (_HEAP_ALLOC_HELPER, ("tvm_dims_product",)),
    "tvm_count_exceeds": (_COUNT_EXCEEDS_HELPER, ("tvm_dims_product",)),
    "tvm_reach_exceeds": (_REACH_EXCEEDS_HELPER, ()),
    "tvm_tensor_view": (_TENSOR_VIEW_HELPER, ()),
    "tvm_uint64": (_UINT64_HELPER, ()),
    "tvm_round_float": (_ROUND_FLOAT_HELPER, ()),
    "tvm_tensor_bytes": (_TENSOR_BYTES_HELPER, ("tvm_dims_product",)),
}


def _is_vendor(device_type: int) -> bool:
    """Whether ``device_type`` is one the core hands vendor backends where they load."""
    from tvm.backend import VENDOR_DEVICE_TYPES

    return device_type in VENDOR_DEVICE_TYPES


def device_type_c(device_type: int, use_helper: Any) -> str:
    """``device_type`` as a C expression: the number, or for a vendor's device the type its name
    has where the library runs (``use_helper``: the printer's, to include the lookup)."""
    if not _is_vendor(device_type):
        return str(device_type)
    use_helper("tvm_vendor_device_type")
    name = DEVICE_NAMES.get(device_type, f"device type {device_type}")
    return f"tvm_vendor_device_type({device_type}, {c_string_literal(name)})"


def _device_type_names(use_helper: Any) -> str:
    """``tvm_device_type_name``: the device names registered now (backends add theirs; a vendor's
    looked up by name where the library runs), for messages about a tensor on another device."""
    named = sorted(DEVICE_NAMES.items())
    cases = "".join(
        f"    case {code}: return {c_string_literal(name)};\n" for code, name in named if not _is_vendor(code)
    )
    vendors = "".join(
        f"  if (device_type == {device_type_c(code, use_helper)}) return {c_string_literal(name)};\n"
        for code, name in named
        if _is_vendor(code)
    )
    head = "static const char* tvm_device_type_name(int device_type) {\n" + vendors + "  switch (device_type) {\n"
    return head + cases + '    default: return "?";\n  }\n}'


def _dlpack_dtype(dtype: str) -> tuple[str, int, int]:
    """DLPack's (type code, bits, lanes) of ``dtype`` as C initializers."""
    family, bits, lanes = _dt.parse(dtype)
    return str(_DL_CODE.get(family, 3)), 8 if family == "bool" else bits, lanes  # 3: kDLOpaqueHandle


def _dtype_check(dtype: str) -> str:
    """C condition (on ``t``) that is true when the tensor's dtype differs from ``dtype``:
    one 32-bit compare of the packed DLDataType (code | bits << 8 | lanes << 16)."""
    fam, bits, lanes = _dt.parse(dtype)
    code = _DL_CODE[fam]
    bits = 8 if fam == "bool" else bits
    return f"(tvm_dtype_u32(t->dtype) != {code | (bits << 8) | (lanes << 16)}u)"


def _shape_text(buf: E.Buffer, p: CPrinter) -> str:
    """``buf``'s shape as TVMScript writes it, ``(n * 3, 4)``, escaped for a C string literal."""
    parts = [str(d.value) if isinstance(d, E.IntImm) else expr_text(d) for d in buf.shape]
    text = "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    return c_string_literal(text)[1:-1]


class HostFunctionPrinter:
    """Prints the implementation and the checked ``__tvm_ffi_<name>`` entry of one host PrimFunc."""

    def __init__(self, printer: CPrinter, func: PrimFunc):
        self.p = printer
        self.func = func
        self.device_type = printer.device_type
        self.name = func.global_symbol

    def _impl_params(self) -> tuple[list[str], list[str]]:
        """(declarations, call arguments) of the implementation: the parameters, then the shape
        variables it needs that are not parameters."""
        p, func = self.p, self.func
        decls, args = [], []
        for prm in func.params:
            decls.append(p.param_decl(func, prm))
            buf = func.buffer_map.get(prm)
            args.append(p.name_of(buf.data) if buf is not None else p.name_of(prm))
        extra: list[E.Var] = []
        seen = set(func.params)
        for prm in func.params:
            buf = func.buffer_map.get(prm)
            if buf is None:
                continue
            for d in (*buf.shape, *buf.strides, buf.elem_offset):
                for n in free_vars(d):  # a let inside a size binds its own variables
                    if n not in seen and n.dtype != "handle":
                        seen.add(n)
                        extra.append(n)
        for v in extra:
            decls.append(f"{p.compute_type(v.dtype)} {p.name_of(v)}")
            args.append(p.name_of(v))
        if self.device_type != 1:  # where the function's device allocations go
            decls.append("int32_t tvm_device_id")
            args.append("tvm_device_id")
        return decls, args

    def print(self) -> str:
        """The C text of this function (implementation + exported entry)."""
        p, func, name = self.p, self.func, self.name
        decls, call_args = self._impl_params()
        impl = f"tvm_impl_{name}"
        p.reserve(impl)
        decls.append("TVMFFIAny* result")  # where `return x` (tir "ret") puts x
        call_args.append("result")
        p.emit(f"static int {impl}({', '.join(decls)}) {{")
        p._indent += 1
        p.stmt(func.body)
        p.emit("return 0;")
        p._indent -= 1
        p.emit("}")
        p.emit("")
        self._print_entry(impl, call_args)
        return p.take()

    def _print_entry(self, impl: str, call_args: list[str]) -> None:
        p, func, name = self.p, self.func, self.name
        fn = f'"{name}"'
        nparams = len(func.params)
        pnames = ", ".join(func.buffer_map[x].name if x in func.buffer_map else x.name for x in func.params)
        p.emit(
            f"TVM_EXPORT int __tvm_ffi_{name}(void* self, const TVMFFIAny* args, int32_t num_args, "
            f"TVMFFIAny* result) {{"
        )
        p._indent += 1
        p.emit(
            f'if (TVM_UNLIKELY(num_args != {nparams})) return tvm_raise("TypeError", '
            f'"%s expects {nparams} argument{"s" if nparams != 1 else ""} ({pnames}), got %d", {fn}, (int)num_args);'
        )
        self._bufs = {b.name: b for b in func.buffer_map.values()}
        self._after_binding: list[str] = []  # checks of values bound from several arguments
        bound: dict[E.Var, str] = {}  # var -> where it was bound (for messages)
        deferred: list[tuple[str, str, str, str]] = []
        # scalars first: they may appear in buffer shapes
        for i, prm in enumerate(func.params):
            if prm in func.buffer_map:
                continue
            self._bind_scalar(i, prm)
            bound[prm] = f"argument '{prm.name}'"
        first_tensor = True
        if self.device_type != 1 and not func.buffer_map:
            p.emit("int32_t tvm_device_id = 0;  /* no tensor argument names a device */")
        for i, prm in enumerate(func.params):
            buf = func.buffer_map.get(prm)
            if buf is None:
                continue
            self._bind_tensor(i, buf, bound, deferred, first_tensor)
            first_tensor = False
        for cond, argname, want, detail in deferred:
            tv = f"t_{p.name_of(self._bufs[argname].data)}"
            if isinstance(detail, tuple) and detail[0] == "stride":
                _, d, got, value, text = detail
                p.emit(
                    f'if (TVM_UNLIKELY({cond})) return tvm_err_stride({fn}, "{argname}", {d}, (long long){got}, '
                    f"{c_string_literal(text)}, {value});"
                )
            elif isinstance(detail, tuple) and detail[0] == "range":
                _, d, dtype = detail
                p.emit(
                    f'if (TVM_UNLIKELY({cond})) return tvm_err_size_range({fn}, "{argname}", "{want}", {tv}, {d}, '
                    f'"{dtype}");'
                )
            elif isinstance(detail, tuple):  # (dim, var): a symbolic dim bound earlier
                d, var = detail
                p.emit(
                    f'if (TVM_UNLIKELY({cond})) return tvm_err_symbolic({fn}, "{argname}", "{want}", '
                    f'{tv}, {d}, "{var.name}", (long long){p.name_of(var)}, "{bound[var]}");'
                )
            else:
                p.emit(f'if (TVM_UNLIKELY({cond})) return tvm_err_shape({fn}, "{argname}", "{want}", {tv}, {detail});')
        for line in self._after_binding:
            p.emit(line)
        p.emit("result->type_index = kTVMFFINone; result->zero_padding = 0; result->v_int64 = 0;")
        p.emit(f"return {impl}({', '.join(call_args)});")
        p._indent -= 1
        p.emit("}")

    def _bind_scalar(self, i: int, prm: E.Var) -> None:
        p, fn = self.p, f'"{self.name}"'
        v = p.name_of(prm)
        a = f"args[{i}]"
        t = p.compute_type(prm.dtype)
        if prm.dtype == "handle":
            p.emit(f"void* {v};")
            none = (
                f'return tvm_raise("ValueError", "%s: argument \'%s\' is None, but the function reads or '
                f'writes memory through it: pass a tensor or a pointer", {fn}, "{prm.name}")'
                if prm in self._dereferenced
                else f"{v} = NULL"
            )
            p.emit(
                f"if ({a}.type_index == kTVMFFIOpaquePtr) {v} = {a}.v_ptr; "
                f"else if ({a}.type_index == kTVMFFINone) {none}; "
                f"else if ({a}.type_index == kTVMFFIDLTensorPtr || {a}.type_index == kTVMFFITensor) "
                f"{self._tensor_as_pointer(i, prm)} "
                f'else return tvm_err_scalar({fn}, "{prm.name}", {i}, "a pointer", {a}.type_index);'
            )
        elif _dt.is_float(prm.dtype):
            rounding = _SCALAR_ROUNDING.get(prm.dtype)  # float16 / bfloat16, computed in float
            if rounding is not None:
                p.use_helper("tvm_round_float")
            from_float, from_int = (
                f"({t})tvm_round_float((double){x}, {rounding})" if rounding else f"({t}){x}"
                for x in (f"{a}.v_float64", f"{a}.v_int64")
            )
            p.emit(f"{t} {v};")
            p.emit(
                f"if ({a}.type_index == kTVMFFIFloat) {v} = {from_float}; "
                f"else if ({a}.type_index == kTVMFFIInt || {a}.type_index == kTVMFFIBool) {v} = {from_int}; "
                f'else return tvm_err_scalar({fn}, "{prm.name}", {i}, "a float ({prm.dtype})", {a}.type_index);'
            )
        elif prm.dtype == "uint64":
            p.use_helper("tvm_uint64")
            p.emit(f"{t} {v};")
            p.emit(
                f"if (!tvm_uint64_arg(&{a}, &{v})) return {a}.type_index == kTVMFFIInt || {a}.type_index == "
                f'kTVMFFIBigInt ? {_does_not_fit(fn, prm)} : tvm_err_scalar({fn}, "{prm.name}", {i}, "an int '
                f'(uint64)", {a}.type_index);'
            )
        else:
            what = "a bool" if prm.dtype == "bool" else f"an int ({prm.dtype})"
            conv = f"({a}.v_int64 != 0)" if prm.dtype == "bool" else f"({t}){a}.v_int64"
            p.emit(f"{t} {v};")
            if prm.dtype != "bool":
                p.emit(f"if (TVM_UNLIKELY({a}.type_index == kTVMFFIBigInt)) return {_does_not_fit(fn, prm)};")
            p.emit(
                f"if ({a}.type_index != kTVMFFIInt && {a}.type_index != kTVMFFIBool) "
                f'return tvm_err_scalar({fn}, "{prm.name}", {i}, "{what}", {a}.type_index);'
            )
            if prm.dtype != "bool":  # a value the dtype cannot hold is an error, not a wrapped value
                _emit_range_check(p, fn, f"{a}.v_int64", prm, f"argument '{prm.name}'", scalar=True)
            p.emit(f"{v} = {conv};")

    @functools.cached_property
    def _dereferenced(self) -> dict:
        """The handle parameters memory is accessed through (asked only of a function that has
        such a parameter: a walk of its body), each with the bytes its views of constant size
        reach (0 when none has one)."""
        return _buffer_data_vars(self.func)

    def _pointer_checks(self, t: str, prm: E.Var) -> str:
        """C statements refusing tensor ``t`` passed for handle parameter ``prm`` when the
        function's views over ``prm`` reach past its bytes, or when it is strided (the views
        read it as compact memory)."""
        need = self._dereferenced.get(prm)
        if need is None:  # passed on, not read here: a kernel's launch checks it, a called function cannot
            return ""
        fn = f'"{self.name}"'
        strided = f"{t}->strides != NULL && !tvm_is_compact({t})"
        out = f'if (TVM_UNLIKELY({strided})) return tvm_err_strides({fn}, "{prm.name}"); '
        if need:
            self.p.use_helper("tvm_tensor_bytes")
            out += (
                f'if (TVM_UNLIKELY(tvm_tensor_bytes({t}) < {need})) return tvm_raise("ValueError", '
                f"\"%s: argument '%s' holds %lld bytes, and the function accesses {need} bytes through it\", "
                f'{fn}, "{prm.name}", (long long)tvm_tensor_bytes({t})); '
            )
        return out

    def _tensor_as_pointer(self, i: int, prm: E.Var) -> str:
        """A C block setting the pointer a tensor passed for handle parameter ``prm``
        stands for (its first element: ``data`` plus ``byte_offset``; a device whose ``data``
        is a driver handle takes only views at their memory's start), once the tensor is on
        this function's device. Its dtype and size are not known to a pointer parameter."""
        fn, a = f'"{self.name}"', f"args[{i}]"
        t = f"tvm_handle_{self.p.name_of(prm)}"
        tensor = (
            f"({a}.type_index == kTVMFFITensor ? (DLTensor*)((char*){a}.v_obj + sizeof(TVMFFIObject)) "
            f": (DLTensor*){a}.v_ptr)"
        )
        if self.device_type in _OPAQUE_HANDLE_DEVICES:
            offset, first = self._refuse_a_view(t, prm.name) + " ", f"{t}->data"
        else:
            offset, first = "", f"(void*)((char*){t}->data + {t}->byte_offset)"
        return (
            f"{{ DLTensor* {t} = {tensor}; if (TVM_UNLIKELY({self._on_another_device(t)})) return "
            f'tvm_err_device({fn}, "{prm.name}", "{self._device_name}", {t}); {offset}'
            f"{self._pointer_checks(t, prm)}{self.p.name_of(prm)} = {first}; }}"
        )

    @property
    def _device_name(self) -> str:
        """The device's name as it stands inside a C string literal (escaped: a vendor's name may
        hold quotes or backslashes)."""
        return c_string_literal(DEVICE_NAMES.get(self.device_type, f"device type {self.device_type}"))[1:-1]

    def _on_another_device(self, t: str) -> str:
        """The C condition that DLTensor ``t`` is not on this function's device type."""
        if self.device_type == 1:
            return f"{t}->device.device_type != kDLCPU && {t}->device.device_type != kDLCUDAHost"
        return f"{t}->device.device_type != {device_type_c(self.device_type, self.p.use_helper)}"

    def _refuse_a_view(self, t: str, name: str) -> str:
        """The C statement refusing DLTensor ``t`` (argument ``name``) when it is a view into its
        memory, on a device whose ``data`` is a driver handle (no pointer arithmetic on it)."""
        return (
            f'if (TVM_UNLIKELY({t}->byte_offset != 0)) return tvm_raise("ValueError", "%s: argument '
            f"'%s' is a view with byte_offset %llu; {self._device_name.replace('%', '%%')} kernels need tensors that "
            f'start at their allocation", "{self.name}", "{name}", (unsigned long long){t}->byte_offset);'
        )

    def _bind_tensor(self, i: int, buf: E.Buffer, bound: dict, deferred: list, first: bool) -> None:
        """Emits the unpacking of tensor argument ``i`` into ``buf``: its kind, rank, dtype and
        device, then its shape, strides and data pointer; variables its shape, strides or offset
        bind go into ``bound``, checks that must wait for later arguments into ``deferred``."""
        tv = self._bind_tensor_kind(i, buf, first)
        ptr = self.p.name_of(buf.data, buf.name)
        self._bind_shape(buf, tv, bound, deferred)
        self._bind_strides(buf, tv, ptr, bound, deferred)
        self._bind_data(buf, tv, ptr, bound)

    def _bind_tensor_kind(self, i: int, buf: E.Buffer, first: bool) -> str:
        """The checks of argument ``i``'s kind, rank, dtype and device; the C name of its DLTensor."""
        p, fn = self.p, f'"{self.name}"'
        an = buf.name
        tv = f"t_{p.name_of(buf.data, buf.name)}"
        a = f"args[{i}]"
        p.emit(f"DLTensor* {tv};")
        p.emit(
            f"if ({a}.type_index == kTVMFFITensor) {tv} = (DLTensor*)((char*){a}.v_obj + sizeof(TVMFFIObject)); "
            f"else if ({a}.type_index == kTVMFFIDLTensorPtr) {tv} = (DLTensor*){a}.v_ptr; "
            f'else return tvm_err_tensor({fn}, "{an}", {i}, {a}.type_index);'
        )
        shape = _shape_text(buf, p)
        want = f"{len(buf.shape)}-d tensor of shape {shape}"
        p.emit(f'if (TVM_UNLIKELY({tv}->ndim != {len(buf.shape)})) return tvm_err_ndim({fn}, "{an}", "{want}", {tv});')
        p.emit(f'if (TVM_UNLIKELY(tvm_bad_memory({tv}))) return tvm_err_memory({fn}, "{an}", {tv});')
        p.emit(
            f"if (TVM_UNLIKELY({_dtype_check(buf.dtype).replace('t->', tv + '->')})) "
            f'return tvm_err_dtype({fn}, "{an}", "{buf.dtype}", {tv});'
        )
        dev = self.device_type
        p.emit(
            f"if (TVM_UNLIKELY({self._on_another_device(tv)})) "
            f'return tvm_err_device({fn}, "{an}", "{self._device_name}", {tv});'
        )
        if dev != 1:
            if first:
                p.emit(f"int32_t tvm_device_id = {tv}->device.device_id;")
            else:
                p.emit(
                    f"if (TVM_UNLIKELY({tv}->device.device_id != tvm_device_id)) "
                    f'return tvm_err_device_id({fn}, "{an}", tvm_device_id, {tv});'
                )
        return tv

    def _bind_shape(self, buf: E.Buffer, tv: str, bound: dict, deferred: list) -> None:
        """Each dimension of ``tv`` checked against ``buf``'s or binding its variable."""
        p, fn, an, shape = self.p, f'"{self.name}"', buf.name, _shape_text(buf, self.p)
        for d, dim in enumerate(buf.shape):
            got = f"{tv}->shape[{d}]"
            if isinstance(dim, E.IntImm):
                p.emit(
                    f'if (TVM_UNLIKELY({got} != {dim.value})) return tvm_err_shape({fn}, "{an}", "{shape}", {tv}, "");'
                )
            elif isinstance(dim, E.Var) and dim not in bound:
                _emit_range_check(p, fn, got, dim, f"argument '{an}' dimension {d}")
                p.emit(f"{p.compute_type(dim.dtype)} {p.name_of(dim)} = ({p.compute_type(dim.dtype)}){got};")
                bound[dim] = f"argument '{an}' dimension {d}"
            else:  # a size bound before, or an expression of sizes: computed exactly, in 64 bits
                expect = p.expr(_in_int64(dim))
                detail = (d, dim) if isinstance(dim, E.Var) else f'" (dimension {d} mismatch)"'
                if _dt.bits(dim.dtype) < 64:  # the kernel computes the size in its dtype: it must hold it
                    lo, hi = _dt.integer_range(dim.dtype)
                    deferred.append((f"{got} < {lo}LL || {got} > {hi}LL", an, shape, ("range", d, dim.dtype)))
                deferred.append((f"{got} != (int64_t)({expect})", an, shape, detail))
        # a flat index is computed in 32 bits when every size is 32-bit (a 64-bit one makes every
        # stride 64-bit: flatten.buffer_strides): the element count must fit them
        narrow = len(buf.shape) > 1 and all(_dt.bits(d.dtype) <= 32 for d in buf.shape)
        if narrow and not all(isinstance(d, E.IntImm) for d in buf.shape):
            # its flat index is computed in 32 bits: the element count must fit them
            dims = ", ".join(f"{tv}->shape[{d}]" for d in range(len(buf.shape)))
            p.emit(
                f"if (TVM_UNLIKELY(tvm_count_exceeds({len(buf.shape)}, (const int64_t[]){{{dims}}}, 2147483647LL))) "
                f'return tvm_raise("ValueError", "%s: argument \'%s\' has more than 2147483647 elements, which '
                f'32-bit indices do not reach; declare its shape with T.int64() sizes", {fn}, "{an}");'
            )
            p.use_helper("tvm_count_exceeds")

    def _bind_strides(self, buf: E.Buffer, tv: str, ptr: str, bound: dict, deferred: list) -> None:
        """``tv``'s strides checked against ``buf``'s (or binding their variables), or compact."""
        p, fn, an, shape = self.p, f'"{self.name}"', buf.name, _shape_text(buf, self.p)
        if buf.strides:
            for d, st in enumerate(buf.strides):
                got = f"({tv}->strides ? {tv}->strides[{d}] : tvm_cstride_{ptr}_{d})"
                # compact stride of dim d, used when the tensor has no explicit strides
                prod = " * ".join(f"{tv}->shape[{k}]" for k in range(d + 1, len(buf.shape))) or "1"
                p.emit(f"int64_t tvm_cstride_{ptr}_{d} = {prod};")
                if isinstance(st, E.Var) and st not in bound:
                    _emit_range_check(p, fn, got, st, f"argument '{an}' stride {d}")
                    p.emit(f"{p.compute_type(st.dtype)} {p.name_of(st)} = ({p.compute_type(st.dtype)}){got};")
                    bound[st] = f"argument '{an}' strides"
                else:  # an empty tensor's strides reach no element: any will do
                    value = f"(long long)({p.expr(_in_int64(st))})"
                    cond = f"{got} != {value} && !tvm_is_empty({tv})"
                    text = "" if isinstance(st, E.IntImm) else expr_text(st)
                    deferred.append((cond, an, shape, ("stride", d, got, value, text)))
            self._check_reach(buf, tv)
            if self.device_type != 1:
                self._check_reach_before_memory(buf, tv)
        else:
            # inline exact check first (one compare per dim); the helper accepts any stride on
            # dims of extent 1
            nd = len(buf.shape)
            exact = (
                " && ".join(
                    [f"{tv}->strides[{nd - 1}] == 1"]
                    + [
                        f"{tv}->strides[{d}] == {tv}->strides[{d + 1}] * {tv}->shape[{d + 1}]"
                        for d in range(nd - 2, -1, -1)
                    ]
                )
                if nd
                else "1"
            )
            p.emit(
                f"if (TVM_UNLIKELY({tv}->strides != NULL && !({exact}) && !tvm_is_compact({tv}))) "
                f'return tvm_err_strides({fn}, "{an}");'
            )

    def _check_reach(self, buf: E.Buffer, tv: str) -> None:
        """For a strided ``buf`` whose flat index is computed in 32 bits (a stride narrower than
        64 bits, sizes not all constant: :func:`~tvm.tir.transform.flatten.needs_int64_indices`
        widens those), a check, made once the shape and strides are bound and checked, that the
        elements its strides reach fit ``int32``: each dimension and stride can fit while
        ``r * stride`` does not (a column slice of a tall matrix)."""
        if constant_extent(buf) is not None:
            return
        if not any(_dt.bits(st.dtype) < 64 and not (isinstance(st, E.IntImm) and st.value == 1) for st in buf.strides):
            return
        off = buf.elem_offset.value if isinstance(buf.elem_offset, E.IntImm) else 0
        self._check_reach_within(
            buf,
            tv,
            "reach",
            f"{off}LL",
            "-2147483648LL, 2147483647LL",
            "has strides that reach element %lld, which 32-bit indices do not reach; declare its strides "
            "with T.int64() sizes (or pass a compact copy)",
        )

    def _check_reach_before_memory(self, buf: E.Buffer, tv: str) -> None:
        """For a strided ``buf`` on a device (whose tensors' ``data`` is where their memory
        starts), a check that a negative stride does not reach before that start."""
        self._check_reach_within(
            buf,
            tv,
            "low",
            f"(long long)({tv}->byte_offset / {_dt.nbytes(buf.dtype)})",
            "0LL, INT64_MAX",
            "is a view whose strides reach element %lld of its device memory, which starts at element 0: "
            "a view must lie inside its memory",
        )

    def _check_reach_within(self, buf: E.Buffer, tv: str, tag: str, start: str, bounds: str, says: str) -> None:
        """A check, made once the shapes and strides are bound, that the elements ``tv``'s
        strides reach from element ``start`` lie within ``bounds`` (C ``lo, hi``); else a
        ValueError naming the argument and ``says`` (with ``%lld``, the element out of them)."""
        p, nd = self.p, len(buf.shape)
        ptr = p.name_of(buf.data, buf.name)
        dims = ", ".join(f"{tv}->shape[{d}]" for d in range(nd))
        strides = ", ".join(f"({tv}->strides ? {tv}->strides[{d}] : tvm_cstride_{ptr}_{d})" for d in range(nd))
        far = f"tvm_{tag}_{ptr}"
        self._after_binding.append(
            f"{{ long long {far}; if (TVM_UNLIKELY(tvm_reach_exceeds({nd}, (const int64_t[]){{{dims}}}, "
            f"(const int64_t[]){{{strides}}}, {start}, {bounds}, &{far}))) "
            f'return tvm_raise("ValueError", "%s: argument \'%s\' {says}", "{self.name}", "{buf.name}", {far}); }}'
        )
        p.use_helper("tvm_reach_exceeds")

    def _bind_data(self, buf: E.Buffer, tv: str, ptr: str, bound: dict) -> None:
        """The data pointer ``ptr`` of ``tv``, its alignment and the view's offset."""
        p, fn, an, dev = self.p, f'"{self.name}"', buf.name, self.device_type
        ctype = p.type_name(buf.dtype)
        elem = _dt.nbytes(buf.dtype)
        if dev in _OPAQUE_HANDLE_DEVICES:
            p.emit(self._refuse_a_view(tv, an))  # data is a runtime handle (cl_mem, VkBuffer ...)
            p.emit(f"{ctype}* {ptr} = ({ctype}*){tv}->data;")
        else:
            p.emit(f"{ctype}* {ptr} = ({ctype}*)((char*){tv}->data + {tv}->byte_offset);")
        if elem > 1 and dev == 1:
            p.emit(f'if (TVM_UNLIKELY(((uintptr_t){ptr}) % {elem} != 0)) return tvm_err_align({fn}, "{an}", {elem});')
        off = buf.elem_offset
        if isinstance(off, E.Var) and off not in bound:
            p.emit(f"{p.compute_type(off.dtype)} {p.name_of(off)} = 0;")
            bound[off] = f"argument '{an}' offset"
        elif isinstance(off, E.IntImm) and off.value != 0:  # as in Apache TVM: the view's byte_offset
            want = off.value * elem
            p.emit(
                f'if (TVM_UNLIKELY({tv}->byte_offset != {want}ULL)) return tvm_raise("ValueError", '
                f"\"%s: argument '%s' declares elem_offset={off.value}: it must be a view starting {want} bytes "
                f'into its memory (byte_offset {want}), got byte_offset %llu", {fn}, "{an}", '
                f"(unsigned long long){tv}->byte_offset);"
            )
            p.emit(f"{ptr} = ({ctype}*){tv}->data;  /* the indices hold the offset */")
        elif not isinstance(off, E.IntImm):  # bound elsewhere (a scalar, a size): known once all are
            self._after_binding.append(self._offset_check(buf, tv, ptr, off))

    def _offset_check(self, buf: E.Buffer, tv: str, ptr: str, off: E.PrimExpr) -> str:
        """The check that tensor ``tv`` is a view starting ``off`` elements into its memory (its
        ``byte_offset``), as an elem_offset of a value bound by other arguments declares; the
        kernel's indices then hold the offset, so ``ptr`` becomes the memory's start."""
        p, fn, an = self.p, f'"{self.name}"', buf.name
        elem, ctype = _dt.nbytes(buf.dtype), p.type_name(buf.dtype)
        value = f"(long long)({p.expr(off)})"
        if self.device_type in _OPAQUE_HANDLE_DEVICES:  # its views start at their allocation (byte_offset 0)
            return (
                f'if (TVM_UNLIKELY({value} != 0)) return tvm_raise("ValueError", "%s: argument \'%s\' declares '
                f"elem_offset=%s = %lld, but {self._device_name.replace('%', '%%')} kernels take tensors that start at "
                f'their allocation: it must be 0 there", {fn}, "{an}", {c_string_literal(expr_text(off))}, {value});'
            )
        return (
            f"if (TVM_UNLIKELY({value} < 0 || (unsigned long long){value} > 0xFFFFFFFFFFFFFFFFULL / {elem} || "
            f'{tv}->byte_offset != (unsigned long long){value} * {elem}ULL)) return tvm_raise("ValueError", '
            f"\"%s: argument '%s' declares elem_offset=%s = %lld: it must be a view starting that many "
            f'elements into its memory (byte_offset %lld), got byte_offset %llu", {fn}, "{an}", '
            f"{c_string_literal(expr_text(off))}, {value}, {value} * {elem}LL, (unsigned long long){tv}->byte_offset); "
            f"{ptr} = ({ctype}*){tv}->data;"
        )


_INT64_ARITHMETIC = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max)


def _in_int64(e: E.PrimExpr) -> E.PrimExpr:
    """Integer size expression ``e`` computed in int64 (``n * 3`` of an int32 ``n`` wraps in 32
    bits: a check of a shape against it would accept a wrong one)."""
    if isinstance(e, E.IntImm):
        return E.IntImm("int64", e.value)
    if isinstance(e, _INT64_ARITHMETIC):
        return type(e)(_in_int64(e.a), _in_int64(e.b))
    return e if e.dtype == "int64" else E.Cast("int64", e)


def _iterations_independent(loop: S.For) -> bool:
    """Whether no iteration of ``loop`` reads or writes memory another writes: each memory it
    writes is accessed through one buffer at one index, and that index names the loop variable
    (``C[i] = C[i] + A[i]``). A loop that reads what an earlier iteration wrote (``A[i + m] =
    A[i] + 1``, a histogram ``H[A[i]] += 1``) or updates one element (a sum) is not."""
    accesses: dict = {}
    written: set = set()

    def visit(node: Any) -> None:
        if isinstance(node, (E.BufferLoad, S.BufferStore)):
            accesses.setdefault(node.buffer.data, []).append((node.buffer, node.indices))
            if isinstance(node, S.BufferStore):
                written.add(node.buffer.data)

    post_order_visit(loop.body, visit)
    for data in written:
        (buffer, indices), *others = accesses[data]
        if not _one_element_per_iteration(indices, loop.loop_var):
            return False
        for other_buffer, other_indices in others:
            if other_buffer is not buffer or len(other_indices) != len(indices):
                return False
            if not all(structural_equal(a, b) for a, b in zip(indices, other_indices)):
                return False
    return True


def _one_element_per_iteration(indices: Any, var: E.Var) -> bool:
    """Whether ``indices`` name a different element for each value of ``var``: some index is
    ``c * var + rest`` (c nonzero, ``rest`` free of ``var``), and ``var`` appears nowhere else
    (``i // 2``, ``A[i] & 7`` may name one element twice)."""
    injective = False
    for index in indices:
        terms_of: dict = {}
        terms, _ = linear_form(index, terms_of)
        for key, term in terms_of.items():
            if key not in terms:
                continue
            if term is var:
                injective = True
            elif any_node(term, lambda x: x is var):
                return False
    return injective


def _buffer_data_vars(func: PrimFunc) -> dict:
    """The variables holding the data of a buffer ``func`` loads from or stores into, each with
    the most bytes its (flat) buffers of constant extent reach."""
    found: dict = {}

    def visit(node: Any) -> None:
        if isinstance(node, (E.BufferLoad, S.BufferStore)):
            found[node.buffer.data] = max(found.get(node.buffer.data, 0), flat_bytes(node.buffer) or 0)

    post_order_visit(func.body, visit)
    return found


def _does_not_fit(fn: str, var: E.Var) -> str:
    """The C expression raising that integer argument ``var`` got a value its dtype cannot hold."""
    lo, hi = _dt.integer_range(var.dtype)
    message = f"%s: argument '%s' does not fit its dtype {var.dtype} ({lo} to {hi})"
    return f'tvm_raise("ValueError", "{message}", {fn}, "{var.name}")'


def _emit_range_check(p: CFamilyPrinter, fn: str, got: str, var: E.Var, what: str, scalar: bool = False) -> None:
    """A size bound to a shape/stride variable (or a ``scalar`` argument) narrower than 64 bits
    must fit it: otherwise the kernel would silently run with a truncated value."""
    bits, signed = _dt.bits(var.dtype), not _dt.is_uint(var.dtype)
    if bits >= 64 and signed:
        return
    lo, hi = _dt.integer_range(var.dtype)
    out_of_range = f"{got} < {lo}LL" if bits >= 64 else f"{got} > {hi}LL || {got} < {lo}LL"
    if scalar:
        message = f'"%s: {what} = %lld does not fit its dtype {var.dtype} ({lo} to {hi})"'
    else:
        message = (
            f"\"%s: {what} = %lld does not fit the {var.dtype} size variable '{var.name}' of this "
            f'kernel (declare it T.int64() for larger sizes)"'
        )
    p.emit(f'if (TVM_UNLIKELY({out_of_range})) return tvm_raise("ValueError", {message}, {fn}, (long long)({got}));')


def extern_calls(printer: CFamilyPrinter, funcs: list[PrimFunc]) -> dict[str, set[str]]:
    """Each C function ``funcs`` call with ``T.call_extern``, with the prototypes its calls' types
    give it (the C headers declare no such function: without one C would assume ``int f()``)."""
    found: dict[str, set[str]] = {}

    def visit(node: Any) -> None:
        if isinstance(node, E.Call) and node.op == "call_extern" and isinstance(node.args[0], E.StringImm):
            params = ", ".join(printer.type_name(a.dtype) for a in node.args[1:]) or "void"
            ret = "void" if node.dtype == "void" else printer.type_name(node.dtype)
            found.setdefault(node.args[0].value, set()).add(f"extern {ret} {node.args[0].value}({params});")

    for f in funcs:
        post_order_visit(f.body, visit)
    return found


def extern_prototypes(calls: dict[str, set[str]], names: Collection[str]) -> list[str]:
    """The prototypes of the functions ``names`` among ``calls`` (:func:`extern_calls`)."""
    out = []
    for name in sorted(n for n in calls if n in names):
        protos = sorted(calls[name])
        if len(protos) > 1:
            raise CodegenError(f"T.call_extern of '{name}' with two signatures: {protos[0]} and {protos[1]}")
        out.append(protos[0])
    return out


def _entry_alias(name: str) -> str:
    """``__tvm_ffi_main`` calling a library's one function: a module of one function is callable
    as ``mod(...)`` (tvm-ffi's entry is "main"), as in Apache TVM."""
    return (
        "TVM_EXPORT int __tvm_ffi_main(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {\n"
        f"  return __tvm_ffi_{name}(self, args, num_args, result);\n}}\n"
    )


def generate_host(
    funcs: list[PrimFunc],
    device_type: int = 1,
    declare: Collection[str] = (),
    on_cpu: Collection[str] = (),
    vector_bytes: int = 16,
) -> HostModuleSource:
    """C source of a host library exporting one checked tvm-ffi function per PrimFunc.

    ``device_type`` is the DLPack device type tensor arguments must live on (1 = CPU for the ``c``
    target; the device's type for host functions that launch device kernels), except for the
    functions named in ``on_cpu`` (functions of a device module that name a CPU target of their
    own), whose arguments live on the CPU. ``declare`` names ``T.call_extern`` functions no
    included header declares (they get prototypes). ``vector_bytes``: the widest vector register
    of the ISA the C is compiled for, the vectors register tiles are made of.
    """
    printer = CPrinter(device_type, vector_bytes)
    for reserved in ("args", "num_args", "result", "self", "kargs", "kret", "tvm_device_id"):
        printer.reserve(reserved)
    bodies = []
    names = []
    for f in funcs:
        if not f.global_symbol.isidentifier():
            raise CodegenError(
                f"function name '{f.global_symbol}' is not a valid C identifier; "
                "set attrs['global_symbol'] to letters, digits and underscores"
            )
        # every function gets its own name scope (but one helper set)
        printer._names, printer._used = {}, set(printer._used)
        printer.device_type = 1 if f.global_symbol in on_cpu else device_type
        printer.may_converge = is_convergent(f.body)
        bodies.append(HostFunctionPrinter(printer, f).print())
        names.append(f.global_symbol)
    handles = printer._launch_handles
    calls = extern_calls(printer, funcs)
    names_table = _device_type_names(printer.use_helper)
    head = [_RUNTIME_PRELUDE, *extern_prototypes(calls, declare)]
    if printer.helpers:
        head.append(printer.prelude())
    head.append(names_table)
    if handles:
        head.append("TVM_EXPORT void* __tvm_ffi__library_ctx = NULL;")
        for h in handles.values():
            head.append(f"static TVMFFIObjectHandle {h} = NULL;")
    if len(names) == 1 and names[0] != "main":
        bodies.append(_entry_alias(names[0]))
    code = "\n".join(head) + "\n\n" + "\n".join(bodies)
    return HostModuleSource(code, names, printer.has_parallel, bool(handles), sorted(calls))
