"""WGSL from TIR: the shared C-family printer with WGSL's declarations, types and built-ins.

WGSL's expressions and statements are C's (``a + b``, ``if``, ``for``, ``{ }``), so
:class:`WGSLPrinter` is a :class:`tvm.codegen.c_family.CFamilyPrinter` that changes what differs:
declarations (``let x: f32 = ...``, ``var`` for loop counters and arrays), explicit conversions
(``f32(x)``), typed literals (``1i``, ``1u``, ``1.5f``, ``1.5h``), ``select`` for ``?:``,
``u32`` shift amounts, the built-in functions' names, module-scope ``var<workgroup>`` arrays and
the entry point's interface. A separate emitter would have repeated the printer's statement walk,
buffer indexing and naming for no gain.

Each kernel is one WGSL shader with one entry point, ``main`` (see :mod:`.codegen` for the
interface the runtime binds). Kernels arrive legalized (``legalize_arithmetic``): no floor
division, min or max remain, and every integer division has a safe divisor; 8- and 16-bit integers
are computed in 32 bits (``legalize_narrow_integers``), and their buffers are packed four (or two)
to a ``u32`` word (:meth:`WGSLPrinter.packed_load`, :meth:`WGSLPrinter.packed_store`).
"""

from __future__ import annotations

import math

from typing import Any

from tvm.codegen.c_family import CFamilyPrinter, CodegenError
from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.op import is_reinterpret
from tvm.tir.transform import dynamic_shared_bytes

#: Words WGSL reserves: its keywords, the type and address-space names kernels plausibly use,
#: and the reserved words of the WGSL specification (a kernel's `filter` or `target` failed
#: shader validation).
_WGSL_RESERVED = frozenset(
    (
        "alias array bitcast bool break case const const_assert continue continuing default diagnostic "
        "discard else enable f16 f32 false fn for i32 if let loop mat2x2 override ptr requires return "
        "struct switch true u32 var vec2 vec3 vec4 while main select workgroup storage uniform "
        "function private read write read_write atomic sampler texture_2d "
        # reserved words
        "NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto await become "
        "binding_array cast catch class co_await co_return co_yield coherent column_major common compile "
        "compile_fragment concept const_cast consteval constexpr constinit crate debugger decltype delete "
        "demote demote_to_helper do dynamic_cast enum explicit export extends extern external fallthrough "
        "filter final finally friend from fxgroup get goto groupshared highp impl implements import inline "
        "instanceof interface layout lowp macro macro_rules match mediump meta mod module move mut mutable "
        "namespace new nil noexcept noinline nointerpolation noperspective null nullptr of operator package "
        "packoffset partition pass patch pixelfragment precise precision premerge priv protected pub public "
        "readonly ref regardless register reinterpret_cast require resource restrict self set shared sizeof "
        "smooth snorm static static_assert static_cast std subroutine super target template this "
        "thread_local throw trait try type typedef typeid typename typeof union unless unorm unsafe unsized "
        "use using varying virtual volatile wgsl where with writeonly yield"
    ).split()
)

#: How each thread tag is read from the entry point's built-ins (blockIdx may be refolded, see
#: :meth:`WGSLPrinter.grid_prologue`).
_LOCAL_ID = {"threadIdx.x": "tvm_lid.x", "threadIdx.y": "tvm_lid.y", "threadIdx.z": "tvm_lid.z"}

#: Widest grid dimension every WebGPU device dispatches (maxComputeWorkgroupsPerDimension).
MAX_WORKGROUPS_PER_DIMENSION = 65535


#: The override constant holding the bytes of a kernel's launch-sized workgroup array (the
#: runtime sets it from the launch's ``dyn_shmem``).
DYNAMIC_SHARED_OVERRIDE = "tvm_dyn_shmem"


#: ``T.webgpu`` functions and the WGSL built-ins they are.
_SUBGROUP_FUNCTIONS = {
    "subgroup_add": "subgroupAdd",
    "subgroup_max": "subgroupMax",
    "subgroup_min": "subgroupMin",
    "subgroup_shuffle": "subgroupShuffle",
    "subgroup_shuffle_xor": "subgroupShuffleXor",
}
_SUBGROUP_BUILTINS = {"subgroup_size": "tvm_sg_size", "subgroup_invocation_id": "tvm_sg_id"}


#: dtype -> WGSL type of the private variable that makes a literal a run-time value.
_RUN_TIME_IDENTITY = {"float32": "f32", "float16": "f32", "int32": "i32", "uint32": "u32"}


def _constant(e: E.PrimExpr) -> bool:
    """Whether ``e`` is made of literals only (conversions and operations of them included)."""
    if isinstance(e, (E.IntImm, E.FloatImm)):
        return True
    if isinstance(e, E.Cast):
        return _constant(e.value)
    if isinstance(e, E.BinaryOp):
        return _constant(e.a) and _constant(e.b)
    return isinstance(e, E.Call) and bool(e.args) and all(_constant(a) for a in e.args)


class WGSLPrinter(CFamilyPrinter):
    """Prints one kernel as a WGSL compute shader."""

    TYPE_NAMES = {"bool": "bool", "int32": "i32", "uint32": "u32", "float32": "f32", "float16": "f16"}
    HALF_NATIVE = True
    RESTRICT = ""
    BARRIER = "workgroupBarrier();"
    BARRIERS = {"global": "storageBarrier();"}
    UNROLL_PRAGMA = ""
    INTRINSICS: dict[str, Any] = {
        op: op
        for op in (
            "exp exp2 log log2 sqrt sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh floor "
            "ceil trunc pow fma ldexp"
        ).split()
    }
    INTRINSICS.update({"round": "round", "nearbyint": "round", "fabs": "abs", "atan2": "atan2"})
    _INFIX = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}

    def __init__(self) -> None:
        super().__init__()
        #: Module-scope declarations of the kernel (bindings, ``var<workgroup>`` arrays).
        self.globals: list[str] = []
        #: Whether ``enable f16;`` is needed.
        self.uses_f16 = False
        #: Whether the kernel uses subgroup operations (``T.webgpu.*``): ``enable subgroups;``.
        self.uses_subgroups = False
        self.block_index: dict[str, str] = {}
        self._registers: set[Any] = set()  # one-element local buffers, declared as scalars
        self._source_line: int | None = None  # TVMScript line of the statement being printed
        self._marked_line: int | None = None
        self._dynamic_shared = False  # whether the kernel's launch-sized array is declared
        self._at_run_time: dict[int, E.PrimExpr] = {}  # constants printed as run-time values
        #: Buffers of 8/16-bit integers packed into u32 words: data variable -> whether its words
        #: are ``atomic<u32>`` (the kernel stores to it).
        self.packed: dict[Any, bool] = {}
        #: The buffer each storage binding is declared as (an ``array`` of its dtype), by data variable.
        self.bound: dict[Any, E.Buffer] = {}
        reserved = ("tvm_wid", "tvm_lid", "tvm_nwg", "tvm_args", "tvm_block", "tvm_inf_bits", "tvm_at", "tvm_bits")
        for name in (
            *reserved,
            *_SUBGROUP_BUILTINS.values(),
            "tvm_unpack_i8",
            "tvm_unpack_i16",
            DYNAMIC_SHARED_OVERRIDE,
        ):
            self.reserve(name)
        for t in _RUN_TIME_IDENTITY:
            self.reserve(f"tvm_one_{t}")
        self.reserve("tvm_sign_bit")

    # ------------------------------------------------------------------ names and types
    def name_of(self, node: Any, hint: str | None = None) -> str:
        base = hint or getattr(node, "name", "v")
        if base in _WGSL_RESERVED or base.startswith("_"):
            base = "v_" + base.lstrip("_")
        return super().name_of(node, base)

    def type_name(self, dtype: str) -> str:
        if dtype == "float16":
            self.uses_f16 = True
        try:
            return self.TYPE_NAMES[dtype]
        except KeyError:
            raise CodegenError(f"WGSL has no type for {dtype}") from None

    # ------------------------------------------------------------------ literals
    def visit_expr(self, e: E.PrimExpr) -> str:
        """An operation on constants only is a WGSL const-expression, which the shader compiler
        evaluates and rejects when it overflows (``exp(100.0f)``, float16 ``60000.0h * 2.0h``),
        where TIR computes inf or a wrapped value at run time: its first operand becomes a
        run-time value (:meth:`at_run_time`)."""
        if isinstance(e, E.FloatImm) and e.dtype_value == 0.0:
            return self.run_time_zero(e)
        run_time = self._at_run_time.pop(id(e), None) is e
        if isinstance(e, E.Call):
            operands = e.args
        elif isinstance(e, E.BinaryOp):
            operands = (e.a, e.b)
        else:  # a conversion of a constant is a const-expression too (f16(-977956736i) overflows)
            operands = (e.value,) if isinstance(e, E.Cast) else ()
        if operands and not isinstance(e, E.CmpOp) and all(_constant(x) for x in operands):
            self._at_run_time[id(operands[0])] = operands[0]  # also inside a run-time value
        text = super().visit_expr(e)
        return self.at_run_time(text, e.dtype) if run_time else text

    def visit_Let(self, e: E.Let) -> str:
        if _constant(e.value):  # the value is substituted where the variable is used
            self._at_run_time[id(e.value)] = e.value
        return super().visit_Let(e)

    def run_time_zero(self, zero: E.FloatImm) -> str:
        """A float zero, computed at run time from the workgroup id (no launch reaches
        0xFFFFFFFF): Mesa's llvmpipe takes ``x * 0.0`` for 0 and ``x / 0.0`` for an undefined
        value whatever x is, also through a variable, and folds a private variable's initial
        value."""
        t = self.type_name(zero.dtype)
        text = f"select({t}(0.0), {t}(1.0), tvm_wid.x == 0xffffffffu)"
        return f"(-{text})" if math.copysign(1.0, zero.dtype_value) < 0 else text

    def at_run_time(self, text: str, dtype: str) -> str:
        """``text`` times (or plus, for integers) a private variable's identity value."""
        t = _RUN_TIME_IDENTITY.get(dtype)
        if t is None:
            return text
        value = "1.0f" if t == "f32" else "0i" if t == "i32" else "0u"
        self.global_once(f"var<private> tvm_one_{t}: {t} = {value};")
        if dtype == "float32":  # bit for bit: drivers fold -0.0 * 1.0 to +0.0
            self.global_once("var<private> tvm_one_u32: u32 = 0u;")
            return f"bitcast<f32>(bitcast<u32>({text}) | tvm_one_u32)"
        if t == "f32":
            return f"({text} * f16(tvm_one_f32))"
        return f"({text} + tvm_one_{t})"

    def float_literal(self, value: float, dtype: str) -> str:
        self.uses_f16 |= dtype == "float16"  # a float16 value in an expression needs `enable f16;`
        suffix = "h" if dtype == "float16" else "f"
        if value != value or value in (float("inf"), float("-inf")):
            # no WGSL literal is infinite or NaN, and constant expressions must stay finite:
            # build the value from bits held in a private variable, at run time
            self.global_once("var<private> tvm_inf_bits: u32 = 0x7f800000u;")
            if value != value:
                bits = "(tvm_inf_bits | 0x400000u)"
            else:
                bits = "tvm_inf_bits" if value > 0 else "(tvm_inf_bits | 0x80000000u)"
            text = f"bitcast<f32>({bits})"
            return f"f16({text})" if dtype == "float16" else text
        if value == 0 and math.copysign(1.0, value) < 0:
            # from its bits, held at run time: drivers fold -0.0 literals and -0.0 * x to +0.0
            self.global_once("var<private> tvm_sign_bit: u32 = 0x80000000u;")
            return "f16(bitcast<f32>(tvm_sign_bit))" if dtype == "float16" else "bitcast<f32>(tvm_sign_bit)"
        text = repr(float(value))
        if "e" not in text and "." not in text:
            text += ".0"
        return text + suffix

    def int_literal(self, value: int, dtype: str) -> str:
        if dtype == "bool":
            return "true" if value else "false"
        if dtype == "uint32":
            return f"{value}u"
        if value == -(2**31):
            return "i32(-2147483648)"
        return f"{value}i"

    def global_once(self, text: str) -> None:
        """Add a module-scope declaration unless it is there already."""
        if text not in self.globals:
            self.globals.append(text)

    # ------------------------------------------------------------------ expressions
    def visit_Cast(self, e: E.Cast) -> str:
        src, dst = e.value.dtype, e.dtype
        v = self.expr(e.value)
        if src == dst:
            return v
        if dst == "bool" and _dt.is_float(src):  # a NaN is true: == is false for it, where != was too
            return f"(!({v} == {self.float_literal(0.0, src)}))"
        if dst == "bool":
            return f"({v} != {self.int_literal(0, src)})"
        return f"{self.type_name(dst)}({v})"

    def visit_Select(self, e: E.Select) -> str:
        return self._select(e.condition, e.true_value, e.false_value)  # select() evaluates both arms

    def logical(self, e: E.BinaryOp, name: str, symbol: str) -> str:
        """``&&`` / ``||``; with a subgroup operation on the right, WGSL's ``&`` / ``|`` of bools,
        which evaluate both sides."""
        if not self.converges(e.b):
            return super().logical(e, name, symbol)
        return f"({self.expr(e.a)} {symbol[0]} {self.expr(e.b)})"

    def _select(self, cond: E.PrimExpr, a: E.PrimExpr, b: E.PrimExpr) -> str:
        """``cond ? a : b`` (WGSL's select takes the false value first)."""
        return f"select({self.expr(b)}, {self.expr(a)}, {self.expr(cond)})"

    def wrapping(self, dtype: str, a: str, op: str, b: str) -> str:
        """Plain ``a op b``: WGSL's i32 and u32 arithmetic wraps, and it has no narrower integers."""
        return f"({a} {op} {b})"

    def call_fmod(self, call: E.Call) -> str:
        """WGSL's ``%`` on floats, ``x - y * trunc(x / y)``: C's fmod where ``y * trunc(x / y)``
        is exact in the float type, approximate beyond; a float16 one is computed in float32 (in
        float16 the remainder would lose its low bits)."""
        a, b = (self.expr(x) for x in call.args)
        if call.dtype == "float16":
            return f"f16(f32({a}) % f32({b}))"
        return f"({a} % {b})"

    def visit_Div(self, e: E.BinaryOp) -> str:
        return self._binary(e, "/")  # legalized: the divisor is safe, and WGSL defines a / 0

    def visit_Mod(self, e: E.BinaryOp) -> str:
        return self._binary(e, "%")  # WGSL's % on floats is fmod's truncated remainder

    def _unlegalized(self, e: E.BinaryOp) -> str:
        raise CodegenError(f"{type(e).__name__} reaches the WGSL printer unlegalized (legalize_arithmetic must run)")

    visit_FloorDiv = visit_FloorMod = visit_Min = visit_Max = _unlegalized

    def print_call(self, call: E.Call) -> str:
        op = call.op[4:] if call.op.startswith("tir.") else call.op
        if op.startswith("webgpu."):
            return self.subgroup_call(op[len("webgpu.") :], call)
        if op in ("shift_left", "shift_right"):
            a, b = (self.expr(x) for x in call.args)
            amount = call.args[1]
            if isinstance(amount, E.IntImm):
                b = f"{amount.value}u"
            elif amount.dtype != "uint32":
                b = f"u32({b})"
            return f"({a} {'<<' if op == 'shift_left' else '>>'} {b})"
        if op in ("log10", "exp10"):
            ln10 = self.float_literal(2.302585092994046, call.dtype)
            x = self.expr(call.args[0])
            return f"(log({x}) / {ln10})" if op == "log10" else f"exp({x} * {ln10})"
        return super().print_call(call)

    def subgroup_call(self, name: str, call: E.Call) -> str:
        """``T.webgpu.<name>``: a WGSL subgroup built-in (the shader then enables subgroups and its
        entry point reads the ``subgroup_size`` and ``subgroup_invocation_id`` built-ins)."""
        self.uses_subgroups = True
        if name in _SUBGROUP_BUILTINS:
            return f"i32({_SUBGROUP_BUILTINS[name]})"
        if name not in _SUBGROUP_FUNCTIONS:
            raise CodegenError(f"T.webgpu.{name} is not a WebGPU subgroup operation")
        args = [self.expr(call.args[0])] + [f"u32({self.expr(a)})" for a in call.args[1:]]
        return f"{_SUBGROUP_FUNCTIONS[name]}({', '.join(args)})"

    def _math_call(self, op: str, dtype: str, args: list[str]) -> str:
        if op == "abs":
            return f"abs({args[0]})"
        if op == "rsqrt":
            return f"inverseSqrt({args[0]})"
        if op == "fmod":
            return f"({args[0]} % {args[1]})"
        return super()._math_call(op, dtype, args)

    def intrinsic_name(self, op: str, dtype: str) -> str:
        if op not in self.INTRINSICS:
            raise CodegenError(f"'{op}' is not available in WGSL (no built-in function computes it)")
        return str(self.INTRINSICS[op])

    def call_call_extern(self, call: E.Call) -> str:
        name = call.args[0].value if call.args and isinstance(call.args[0], E.StringImm) else call.args[:1]
        raise CodegenError(
            f"T.call_extern of {name!r}: a WGSL shader calls no external function; use TVMScript's "
            f"intrinsics (T.fabs, T.exp, ...) instead"
        )

    call_call_pure_extern = call_call_extern

    def call_if_then_else(self, call: E.Call) -> str:
        # select evaluates both sides; WGSL bounds every buffer access, so a guarded load that
        # would be out of range reads a harmless value that select then discards
        return self._select(*call.args)

    def _f32_bits(self, x: E.PrimExpr) -> str:
        v = self.expr(x)
        return f"(bitcast<u32>(f32({v})) & 0x7fffffffu)"

    def visit_CmpOp(self, e: E.CmpOp) -> str:
        if isinstance(e, E.NE) and _dt.is_float(e.a.dtype):  # the driver's != of a NaN was false
            return f"(!({self.expr(e.a)} == {self.expr(e.b)}))"
        return super().visit_CmpOp(e)

    def call_isnan(self, call: E.Call) -> str:
        return f"({self._f32_bits(call.args[0])} > 0x7f800000u)"

    def call_isinf(self, call: E.Call) -> str:
        return f"({self._f32_bits(call.args[0])} == 0x7f800000u)"

    def call_isfinite(self, call: E.Call) -> str:
        return f"({self._f32_bits(call.args[0])} < 0x7f800000u)"

    def call_reinterpret(self, call: E.Call) -> str:
        src, dst = call.args[0], call.dtype
        if _dt.bits(src.dtype) == _dt.bits(dst) == 32:
            return f"bitcast<{self.type_name(dst)}>({self.expr(src)})"
        if dst == "uint16" and isinstance(src, E.BufferLoad) and src.buffer.data in self.packed:
            return self.packed_load(src, signed=False)  # a bfloat16's bits, as legalize_bfloat16 reads them
        raise CodegenError(
            f"reinterpret from {src.dtype} to {dst}: WGSL bitcasts 32-bit values only (wgpu's shader compiler "
            "cannot bitcast float16 to or from 16 bits); reinterpret 32-bit values, or compute in float32"
        )

    @staticmethod
    def _narrowed(value: E.PrimExpr) -> E.PrimExpr:
        """The 32-bit value whose low bits ``value`` (``Cast(<narrow>, x)`` as
        ``legalize_narrow_integers`` leaves it) keeps."""
        return value.value if isinstance(value, E.Cast) and _dt.bits(value.dtype) < 32 else value

    # ------------------------------------------------------------------ statements
    def stmt(self, s: S.Stmt) -> None:
        outer = self._source_line
        self._source_line = getattr(getattr(s, "span", None), "line", None) or outer
        try:
            super().stmt(s)
        finally:
            self._source_line = outer

    def emit(self, line: str) -> None:
        """Append a line; the first line printed for a TVMScript line says which (so that an error
        the WGSL compiler reports at a generated line leads back to the kernel's source)."""
        n = self._source_line
        if n is not None and n != self._marked_line and line.rstrip().endswith((";", "{")):
            self._marked_line = n
            line = f"{line}  // tvmscript line {n}"
        super().emit(line)

    def typed_view(self, allocation: E.Buffer, view: E.Buffer, name: str) -> str:
        raise CodegenError(
            f"buffer '{view.name}' views the memory of '{allocation.name}' ({allocation.dtype}) as {view.dtype}: "
            "WGSL has no pointer casts; give each dtype an allocation of its own, or convert with T.reinterpret"
        )

    def _refuse_binding_view(self, buf: E.Buffer) -> None:
        """A view of a binding's 32-bit words as another dtype would read its elements converted,
        not its bytes: refused, as views of allocations are."""
        binding = self.bound.get(buf.data)
        if binding is not None and binding.dtype != buf.dtype and 32 in (_dt.bits(binding.dtype), _dt.bits(buf.dtype)):
            self.typed_view(binding, buf, buf.name)

    def visit_BufferLoad(self, e: E.BufferLoad) -> str:
        self._refuse_binding_view(e.buffer)
        if e.buffer.data in self._registers:
            return self.buffer_ref(e.buffer)
        if e.buffer.data in self.packed:
            return self.packed_load(e)
        return super().visit_BufferLoad(e)

    def visit_BufferStore(self, s: S.BufferStore) -> None:
        self._refuse_binding_view(s.buffer)
        if s.buffer.data in self._registers:
            self.emit(f"{self.buffer_ref(s.buffer)} = {self.expr(s.value)};")
        elif s.buffer.data in self.packed:
            self.packed_store(s)
        else:
            super().visit_BufferStore(s)

    # ------------------------------------------------------------------ packed 8/16-bit buffers
    def packed_element(self, buf: E.Buffer, element: str) -> tuple[str, str, str]:
        """Where element ``element`` (a ``u32``) of packed ``buf`` lives: the ``u32`` word holding
        it (an lvalue), the shift of its bits in the word, and the mask of one element."""
        bits = _dt.bits(buf.dtype)
        per_word = 32 // bits
        word = f"{self.buffer_ref(buf)}[{element} >> {per_word.bit_length() - 1}u]"
        return word, f"(({element} & {per_word - 1}u) * {bits}u)", hex((1 << bits) - 1) + "u"

    def packed_load(self, e: E.BufferLoad, signed: bool | None = None) -> str:
        """An element of a packed buffer as the 32-bit value ``legalize_narrow_integers`` computes
        with: zero-extended (``u32``) for an unsigned dtype, sign-extended (``i32``) for a signed
        one (``signed`` says which for the bits of a bfloat16)."""
        if signed is None:
            if not _dt.is_integer(e.buffer.dtype):
                raise CodegenError(
                    f"a load of {e.buffer.dtype} buffer '{e.buffer.name}' reaches the WGSL printer unlegalized"
                )
            signed = not e.buffer.dtype.startswith("u")
        word, shift, mask = self.packed_element(e.buffer, f"u32({self.flat_index(e.buffer, e.indices)})")
        if self.packed[e.buffer.data]:
            word = f"atomicLoad(&{word})"
        if not signed:
            return f"(({word} >> {shift}) & {mask})"
        bits = _dt.bits(e.buffer.dtype)
        name = f"tvm_unpack_i{bits}"
        self.global_once(
            f"fn {name}(word: u32, shift: u32) -> i32 {{ return bitcast<i32>(word << ({32 - bits}u - shift)) >> "
            f"{32 - bits}u; }}"
        )
        return f"{name}({word}, {shift})"

    def packed_store(self, s: S.BufferStore) -> None:
        """A store into a packed buffer: its word's other elements may belong to other threads,
        so the element's bits are cleared and set with atomic operations (the value is computed
        first: it may read the element)."""
        value = s.value
        if is_reinterpret(value) and value.dtype == "bfloat16":
            value = value.args[0]  # a bfloat16's bits, as legalize_bfloat16 stores them
        value = self._narrowed(value)
        word, shift, mask = self.packed_element(s.buffer, "tvm_at")
        self.emit("{")
        self._indent += 1
        self.emit(f"let tvm_at = u32({self.flat_index(s.buffer, s.indices)});")
        self.emit(f"let tvm_bits = (u32({self.expr(value)}) & {mask}) << {shift};")
        self.emit(f"atomicAnd(&{word}, ~({mask} << {shift}));")
        self.emit(f"atomicOr(&{word}, tvm_bits);")
        self._indent -= 1
        self.emit("}")

    def visit_LetStmt(self, s: S.LetStmt) -> None:
        self.emit(f"let {self.name_of(s.var)}: {self.type_name(s.var.dtype)} = {self.expr(s.value)};")
        self.stmt(s.body)

    def visit_Allocate(self, s: S.Allocate) -> None:
        buf = s.buffer
        if dynamic_shared_bytes(buf) is not None:  # the one launch-sized shared buffer
            if self._dynamic_shared:
                raise CodegenError(f"allocation {buf.name}: a WebGPU kernel sizes one shared buffer at launch")
            self._dynamic_shared = True
            name, elem = self.name_of(buf.data, buf.name), self.type_name(buf.dtype)
            self.globals.append(f"override {DYNAMIC_SHARED_OVERRIDE}: u32 = 32u;")
            self.globals.append(
                f"var<workgroup> {name}: array<{elem}, {DYNAMIC_SHARED_OVERRIDE} / {_dt.nbytes(buf.dtype)}u>;"
            )
            self.stmt(s.body)
            return
        name, elem, size = self.name_of(buf.data, buf.name), self.type_name(buf.dtype), self.alloc_size(buf)
        decl = f"{name}: array<{elem}, {size}>"
        if buf.scope == "local" and size == "1":
            # a scalar, not an array: the WGSL compiler keeps it in a register, unchecked
            self._registers.add(buf.data)
            self.emit(f"var {name}: {elem};")
        elif buf.scope == "shared":
            self.globals.append(f"var<workgroup> {decl};")
        elif buf.scope == "local":
            self.emit(f"var {decl};")
        else:
            raise CodegenError(f"the WebGPU backend cannot allocate '{buf.name}' in scope '{buf.scope}'")
        self.stmt(s.body)

    def visit_For(self, s: S.For) -> None:
        if s.kind is S.ForKind.THREAD_BINDING:
            self.print_thread_binding(s)
            return
        if s.kind is S.ForKind.PARALLEL:
            raise CodegenError("parallel loops have no meaning in a WebGPU kernel; bind the loop to a thread")
        v = self.name_of(s.loop_var)
        t = self.type_name(s.loop_var.dtype)
        lo = self.expr(s.min)
        hi = self.expr(s.extent) if self._is_zero(s.min) else f"{lo} + {self.expr(s.extent)}"
        self.emit(f"for (var {v}: {t} = {lo}; {v} < {hi}; {v}++) {{")
        self._block(s.body)
        self.emit("}")

    def print_thread_binding(self, s: S.For) -> None:
        v = self.name_of(s.loop_var)
        t = self.type_name(s.loop_var.dtype)
        idx = f"{t}({self.thread_index(s.thread_tag or '')})"
        if not self._is_zero(s.min):
            idx = f"{idx} + {self.expr(s.min)}"
        self.emit("{")
        self._indent += 1
        self.emit(f"let {v}: {t} = {idx};")
        self.stmt(s.body)
        self._indent -= 1
        self.emit("}")

    def thread_index(self, tag: str) -> str:
        if tag in _LOCAL_ID:
            return _LOCAL_ID[tag]
        if tag in self.block_index:
            return self.block_index[tag]
        raise CodegenError(f"the WebGPU backend does not support thread tag '{tag}'")

    # ------------------------------------------------------------------ the shader
    def grid_prologue(self, extents: dict[str, E.PrimExpr]) -> list[str]:
        """How ``blockIdx`` is read. A grid whose extents are constants within
        :data:`MAX_WORKGROUPS_PER_DIMENSION` is dispatched as is; any other may be folded by the
        runtime (the workgroups numbered linearly over up to three dispatch dimensions), so the
        shader recovers each index from the linear workgroup number and returns from the
        workgroups past the grid (uniformly: the whole workgroup leaves)."""
        axes = [f"blockIdx.{a}" for a in "xyz" if f"blockIdx.{a}" in extents]
        fixed = all(isinstance(extents[t], E.IntImm) and extents[t].value <= MAX_WORKGROUPS_PER_DIMENSION for t in axes)
        if fixed:
            self.block_index = {t: f"tvm_wid.{t[-1]}" for t in axes}
            return []
        lines = ["let tvm_block = tvm_wid.x + tvm_nwg.x * (tvm_wid.y + tvm_nwg.y * tvm_wid.z);"]
        total, rest = [], "tvm_block"
        for i, tag in enumerate(axes):
            extent = f"u32({self.expr(extents[tag])})"
            total.append(extent)
            last = i == len(axes) - 1
            self.block_index[tag] = f"tvm_b{tag[-1]}"
            lines.append(f"let tvm_b{tag[-1]} = {rest if last else f'{rest} % {extent}'};")
            rest = f"({rest} / {extent})"
        lines.insert(1, f"if (tvm_block >= {' * '.join(total)}) {{ return; }}")
        return lines

    def print_shader(self, func: PrimFunc, bindings: list[str], extents: dict[str, E.PrimExpr]) -> str:
        """The WGSL text of kernel ``func``: ``bindings`` are its module-scope resource
        declarations, ``extents`` its thread tags' extents."""
        prologue = self.grid_prologue(extents)
        body = self.print_kernel(func, "main")
        sizes, overrides = self.workgroup_size(extents)
        builtins = [
            "@builtin(workgroup_id) tvm_wid: vec3<u32>",
            "@builtin(local_invocation_id) tvm_lid: vec3<u32>",
            "@builtin(num_workgroups) tvm_nwg: vec3<u32>",
        ]
        if self.uses_subgroups:
            builtins += ["@builtin(subgroup_size) tvm_sg_size: u32", "@builtin(subgroup_invocation_id) tvm_sg_id: u32"]
        head = [f"@compute @workgroup_size({sizes})", f"fn main({', '.join(builtins)}) {{"]
        lines = body.splitlines()
        assert lines[0].endswith("{"), lines[0]
        indented = [self.INDENT + line for line in prologue]
        enable = ["enable f16;"] if self.uses_f16 else []
        enable += ["enable subgroups;"] if self.uses_subgroups else []
        enable += [""] if enable else []
        # the workgroup size's overrides before the module's other globals: naga (wgpu 29) aborts
        # the process when they follow a workgroup array sized by an override expression
        text = enable + bindings + overrides + self.globals + [""] + head + indented + lines[1:]
        return "\n".join(text) + "\n"

    @staticmethod
    def workgroup_size(extents: dict[str, E.PrimExpr]) -> tuple[str, list[str]]:
        """The ``@workgroup_size`` arguments and the declarations they need: the constant
        ``threadIdx`` extents themselves when all are constants (the WGSL compiler then knows
        them, and the runtime refuses a launch with another size), else the override constants
        ``tvm_wg_x/y/z`` that the runtime sets when it builds the pipeline."""
        dims = [extents.get(f"threadIdx.{a}", E.IntImm("int32", 1)) for a in "xyz"]
        if all(isinstance(d, E.IntImm) for d in dims):
            return ", ".join(str(int(d.value)) for d in dims), []
        return "tvm_wg_x, tvm_wg_y, tvm_wg_z", [f"override tvm_wg_{a}: u32 = 1u;" for a in "xyz"]

    def kernel_signature(self, func: PrimFunc, name: str) -> str:
        return f"fn {name}()"


__all__ = ["DYNAMIC_SHARED_OVERRIDE", "MAX_WORKGROUPS_PER_DIMENSION", "WGSLPrinter"]
