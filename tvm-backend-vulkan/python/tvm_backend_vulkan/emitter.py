"""SPIR-V from TIR: one :class:`KernelEmitter` per device kernel, over a shared :class:`spirv.Module`.

The kernel interface (what the runtime binds; see the package README):

* buffer parameter k (counting buffers only, in parameter order) is a storage buffer at
  descriptor set 0, binding k: a ``Block`` struct holding one runtime array of the element type
  (bool buffers arrive as ``uint8`` ones: ``legalize_bool_storage`` is a pass of the target kind);
* scalar parameters are members of one ``Block``, in parameter order, each at an offset aligned to
  its size; narrower scalars travel as 32-bit values (see :func:`scalar_arg_type`). The block is
  push constants, or when it is over 128 bytes a uniform buffer at descriptor set 0, binding
  (number of buffer parameters) (see :func:`scalar_block`);
* ``threadIdx`` extents are the workgroup size, given by specialization constants 0, 1, 2;
  ``blockIdx`` extents are the dispatch size;
* ``shared`` allocations are ``Workgroup`` arrays, ``local`` ones ``Function`` arrays; the one
  shared buffer of a kernel that may be sized at launch (capability ``dynamic_shared_memory`` is
  ``"one_array"``) has the length specialization constant 3 (its bytes, the launch's
  ``dyn_shmem``) divided by its element size, and each kernel's static shared bytes are an
  ``OpString`` "tvm.static_shared:<kernel>:<bytes>" (the runtime checks both together against the
  device's limit).

Expressions become SSA ids (:class:`tvm.tir.functor.ExprFunctor` of ``int``); loops are structured
(``OpLoopMerge`` with the loop variable as an ``OpPhi``), conditionals use ``OpSelectionMerge``.
Integer division, floor division, min and max arrive legalized (``legalize_arithmetic`` is a pass
of the target kind), so they map to single instructions.
"""

from __future__ import annotations

import math

from typing import Any

from tvm.codegen.c_family import CodegenError, located_codegen_errors
from tvm.codegen.device_module import binding_interface, loop_bound
from tvm.tir import dtype as _dt
from tvm.tir import expr as E
from tvm.tir import stmt as S
from tvm.tir.function import PrimFunc
from tvm.tir.functor import ExprFunctor
from tvm.tir.op import binary
from tvm.tir.printer import expr_text
from tvm.tir.transform import flat_index
from tvm.tir.transform.capabilities import static_shared_bytes

from .spirv import (
    BuiltIn,
    Cap,
    Deco,
    GROUP_REDUCE,
    Module,
    Op,
    SCOPE_DEVICE,
    SCOPE_SUBGROUP,
    SCOPE_WORKGROUP,
    SEMANTICS_GLOBAL_BARRIER,
    SEMANTICS_WORKGROUP_BARRIER,
    Storage,
    instruction,
)

#: How a scalar parameter of each dtype travels in the push constants (and its arg type).
_SCALAR_ARG = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}
_SCALAR_ARG.update({"float16": "float32", "bfloat16": "float32"})

#: GLSL.std.450 instruction numbers of the math calls (float16/float32 only unless in _F64_OK).
_GLSL = {
    "round": 2,
    "nearbyint": 2,
    "trunc": 3,
    "fabs": 4,
    "floor": 8,
    "ceil": 9,
    "sin": 13,
    "cos": 14,
    "tan": 15,
    "asin": 16,
    "acos": 17,
    "atan": 18,
    "sinh": 19,
    "cosh": 20,
    "tanh": 21,
    "asinh": 22,
    "acosh": 23,
    "atanh": 24,
    "atan2": 25,
    "pow": 26,
    "exp": 27,
    "log": 28,
    "exp2": 29,
    "log2": 30,
    "sqrt": 31,
    "rsqrt": 32,
    "fma": 50,
}
_F64_OK = {"round", "nearbyint", "trunc", "fabs", "floor", "ceil", "sqrt", "rsqrt", "fma"}
_GLSL_SABS = 5
_GLSL_NCLAMP = 81  # NaN-aware: a NaN clamps to the lower bound


def _conversion_bounds(src: str, dst: str) -> tuple[float, float]:
    """The range a ``src`` float is clamped to before it converts to integer ``dst``: the ``dst``
    values ``src`` represents. Outside it the conversion is undefined, and Mesa's compiler made
    that a process crash (SIGFPE in a division it guards) or dropped an int-float-int rounding."""
    import numpy as np

    ftype = np.dtype(_dt.element_of(src)).type
    fmax = float(np.finfo(ftype).max)
    least, most = _dt.integer_range(_dt.element_of(dst))
    hi = ftype(min(most, fmax))
    if float(hi) > most:
        hi = np.nextafter(hi, ftype(-np.inf))
    return float(max(least, -fmax)), float(hi)


#: Binary operations: class name -> (signed int, unsigned int, float, bool) opcode.
_BINARY = {
    "Add": (Op.IAdd, Op.IAdd, Op.FAdd, None),
    "Sub": (Op.ISub, Op.ISub, Op.FSub, None),
    "Mul": (Op.IMul, Op.IMul, Op.FMul, None),
    "Div": (Op.SDiv, Op.UDiv, Op.FDiv, None),
    "Mod": (Op.SRem, Op.UMod, Op.FRem, None),
    "EQ": (Op.IEqual, Op.IEqual, Op.FOrdEqual, Op.LogicalEqual),
    "NE": (Op.INotEqual, Op.INotEqual, Op.FUnordNotEqual, Op.LogicalNotEqual),
    "LT": (Op.SLessThan, Op.ULessThan, Op.FOrdLessThan, None),
    "LE": (Op.SLessThanEqual, Op.ULessThanEqual, Op.FOrdLessThanEqual, None),
    "GT": (Op.SGreaterThan, Op.UGreaterThan, Op.FOrdGreaterThan, None),
    "GE": (Op.SGreaterThanEqual, Op.UGreaterThanEqual, Op.FOrdGreaterThanEqual, None),
    "And": (None, None, None, Op.LogicalAnd),
    "Or": (None, None, None, Op.LogicalOr),
}


#: Integer bit operations (calls): op -> (signed, unsigned) opcode.
_BITWISE = {
    "bitwise_and": (Op.BitwiseAnd, Op.BitwiseAnd),
    "bitwise_or": (Op.BitwiseOr, Op.BitwiseOr),
    "bitwise_xor": (Op.BitwiseXor, Op.BitwiseXor),
    "shift_left": (Op.ShiftLeftLogical, Op.ShiftLeftLogical),
    "shift_right": (Op.ShiftRightArithmetic, Op.ShiftRightLogical),
}
_THREAD_BUILTINS = {"blockIdx": BuiltIn.WorkgroupId, "threadIdx": BuiltIn.LocalInvocationId}


def scalar_arg_type(dtype: str) -> str:
    """The arg type of a scalar parameter of ``dtype``: what the runtime packs."""
    return _SCALAR_ARG.get(dtype, dtype)


def _size_of(arg_type: str) -> int:
    return _dt.bits(arg_type) // 8


#: Bytes of push constants every Vulkan device offers (maxPushConstantsSize >= 128).
PUSH_CONSTANT_LIMIT = 128

#: Prefix of the ``OpString`` "tvm.loop_bound:<kernel>:<bound>" each kernel whose serial loop
#: iterations per thread can be bounded carries (:func:`tvm.codegen.device_module.loop_bound`):
#: lavapipe ends every shader invocation after 65535 loop iterations, silently, so the runtime
#: refuses a launch that could run longer there.
LOOP_BOUND_MARK = "tvm.loop_bound:"
#: Prefix of the ``OpString`` "tvm.static_shared:<kernel>:<bytes>" of a kernel with a launch-sized
#: shared buffer: its constant-size shared bytes, which the runtime adds to the launch's.
STATIC_SHARED_MARK = "tvm.static_shared:"
#: The specialization constant holding the bytes of a kernel's launch-sized shared buffer.
DYNAMIC_SHARED_SPEC_ID = 3


def scalar_block(arg_types: list[str]) -> tuple[list[int], int, bool]:
    """The layout of a kernel's scalar block, from the arg types of its scalar parameters in order:
    each member's offset (the previous end rounded up to the member's size, 4 or 8 bytes), the
    block's size, and whether it is a uniform buffer (size over :data:`PUSH_CONSTANT_LIMIT`) rather
    than push constants. The runtime's ``MakeLayout`` (src/vulkan_module.cc) applies the same rule
    to the function table's arg types; the two must agree."""
    offsets, end = [], 0
    for arg_type in arg_types:
        size = _size_of(arg_type)
        offset = (end + size - 1) // size * size
        offsets.append(offset)
        end = offset + size
    return offsets, end, end > PUSH_CONSTANT_LIMIT


class ModuleState:
    """What the kernels of one SPIR-V module share: the module, the built-in input variables, the
    workgroup-size specialization constants, and where each result id came from (TIR spans)."""

    def __init__(self) -> None:
        self.module = Module()
        self.builtins: dict[int, int] = {}
        self.spans: dict[int, Any] = {}
        self._workgroup_size: int | None = None
        self._dynamic_shared: int | None = None

    def builtin(self, which: int, type_id: int) -> int:
        """The Input variable of built-in ``which`` (made once per module)."""
        if which not in self.builtins:
            m = self.module
            var = m.variable(m.pointer(Storage.Input, type_id), Storage.Input)
            m.decorate(var, Deco.BuiltIn, which)
            self.builtins[which] = var
        return self.builtins[which]

    def dynamic_shared_bytes(self) -> int:
        """Specialization constant 3: the bytes of the kernel's launch-sized shared buffer (the
        runtime sets it from the launch's ``dyn_shmem``; 32 unless set)."""
        if self._dynamic_shared is None:
            m = self.module
            self._dynamic_shared = m.new_id()
            m.add("globals", Op.SpecConstant, m.int(32, False), self._dynamic_shared, 32)
            m.decorate(self._dynamic_shared, Deco.SpecId, DYNAMIC_SHARED_SPEC_ID)
        return self._dynamic_shared

    def declare_workgroup_size(self) -> None:
        """``WorkgroupSize`` built from specialization constants 0..2 (the runtime sets them)."""
        if self._workgroup_size is not None:
            return
        m = self.module
        u32 = m.int(32, False)
        dims = []
        for axis in range(3):
            sid = m.new_id()
            m.add("globals", Op.SpecConstant, u32, sid, 1)
            m.decorate(sid, Deco.SpecId, axis)
            dims.append(sid)
        self._workgroup_size = m.new_id()
        m.add("globals", Op.SpecConstantComposite, m.vector(u32, 3), self._workgroup_size, *dims)
        m.decorate(self._workgroup_size, Deco.BuiltIn, BuiltIn.WorkgroupSize)


class _Binding:
    """Where a buffer's data lives: its variable, storage class, and stored element type."""

    __slots__ = ("var", "storage", "dtype", "elem", "runtime_array")

    def __init__(self, var: int, storage: int, dtype: str, elem: int, runtime_array: bool):
        self.var, self.storage, self.dtype, self.elem, self.runtime_array = var, storage, dtype, elem, runtime_array


class KernelEmitter(ExprFunctor[int]):
    """Emits one kernel as an entry point of ``state.module``."""

    def __init__(self, state: ModuleState) -> None:
        self.state = state
        self.m = state.module
        self.code: list[int] = []
        self.local_vars: list[int] = []
        self.label = 0
        self.reachable = True  # whether a branch enters the current block
        self.values: dict[E.Var, int] = {}
        self.buffers: dict[E.Var, _Binding] = {}
        self.interface: set[int] = set()
        self.run_time_zeros: dict[tuple, int] = {}  # (dtype, sign) -> its id (see run_time_zero)
        self.prologue: list[int] = []  # instructions of the entry block, before the body's
        self.span: Any = None
        self.loops: list[tuple[int, int]] = []  # (merge, continue) block of each enclosing loop
        self.dynamic_shared: str | None = None  # the name of the launch-sized shared buffer
        #: integers widened by a cast: result id -> (the narrow value's id, its dtype)
        self.widened: dict[int, tuple[int, str]] = {}

    # ------------------------------------------------------------------ instructions
    def ins(self, opcode: int, type_id: int, *operands: int) -> int:
        """Emit an instruction with a result; returns the result id."""
        rid = self.m.new_id()
        self.code.extend(instruction(opcode, (type_id, rid, *operands)))
        if self.span is not None:
            self.state.spans[rid] = self.span
        return rid

    def raw(self, opcode: int, *operands: int) -> None:
        """Emit an instruction without a result."""
        self.code.extend(instruction(opcode, operands))

    def start_block(self, label: int, reachable: bool = True) -> None:
        """Begin basic block ``label`` (``reachable=False``: the block after a break or continue,
        which no branch enters)."""
        self.raw(Op.Label, label)
        self.label = label
        self.reachable = reachable

    def branch(self, target: int) -> None:
        """End the current block with a branch to ``target`` (an unreachable block ends with
        OpUnreachable: a branch from outside the loop construct to its continue target or merge
        is invalid SPIR-V)."""
        if self.reachable:
            self.raw(Op.Branch, target)
        else:
            self.raw(Op.Unreachable)

    # ------------------------------------------------------------------ types and constants
    def ty(self, dtype: str) -> int:
        """The SPIR-V type of a TIR scalar dtype."""
        if _dt.lanes(dtype) != 1:
            raise CodegenError(f"the Vulkan backend does not support vector dtype '{dtype}'")
        if dtype == "bool":
            return self.m.bool()
        if dtype == "bfloat16":  # storage only: legalize_bfloat16 left no bfloat16 arithmetic
            return self.m.int(16, False)
        if _dt.is_float(dtype):
            return self.m.float(_dt.bits(dtype))
        if _dt.is_int(dtype) or _dt.is_uint(dtype):
            return self.m.int(_dt.bits(dtype), _dt.is_int(dtype))
        raise CodegenError(f"the Vulkan backend does not support dtype '{dtype}'")

    def const(self, dtype: str, value: Any) -> int:
        """A constant of ``dtype``."""
        if dtype == "bool":
            return self.m.bool_constant(bool(value))
        if _dt.is_float(dtype):
            return self.m.constant(self.ty(dtype), float(value), "float", _dt.bits(dtype))
        kind = "sint" if _dt.is_int(dtype) else "int"
        return self.m.constant(self.ty(dtype), int(value), kind, _dt.bits(dtype))

    def declare_storage_caps(self, dtype: str) -> None:
        """The capability a storage-buffer element of ``dtype`` needs for loads and stores."""
        bits = _dt.bits(dtype)
        if bits == 8:
            self.m.capability(Cap.StorageBuffer8BitAccess, "SPV_KHR_8bit_storage")
        elif bits == 16:
            self.m.capability(Cap.StorageBuffer16BitAccess, "SPV_KHR_16bit_storage")

    # ------------------------------------------------------------------ expressions
    def unsupported_expr(self, e: E.PrimExpr) -> int:
        raise CodegenError(f"the Vulkan backend cannot compile expression {type(e).__name__}")

    def visit_IntImm(self, e: E.IntImm) -> int:
        return self.const(e.dtype, e.value)

    def visit_FloatImm(self, e: E.FloatImm) -> int:
        """A float constant; a zero is computed at run time (see :meth:`run_time_zero`)."""
        if e.dtype_value == 0.0:
            return self.run_time_zero(e.dtype, math.copysign(1.0, e.dtype_value) < 0)
        return self.const(e.dtype, e.dtype_value)

    def visit_Var(self, e: E.Var) -> int:
        try:
            return self.values[e]
        except KeyError:
            raise CodegenError(f"variable '{e.name}' is used where it is not defined") from None

    def visit_Let(self, e: E.Let) -> int:
        self.values[e.var] = self.visit_expr(e.value)
        return self.visit_expr(e.body)

    def visit_Not(self, e: E.Not) -> int:
        return self.ins(Op.LogicalNot, self.m.bool(), self.visit_expr(e.a))

    def visit_Select(self, e: E.Select) -> int:
        c, a, b = (self.visit_expr(x) for x in (e.condition, e.true_value, e.false_value))
        return self.ins(Op.Select, self.ty(e.dtype), c, a, b)

    def visit_BinaryOp(self, e: E.BinaryOp) -> int:
        return self.binary(type(e).__name__, e.a.dtype, e.dtype, self.visit_expr(e.a), self.visit_expr(e.b))

    def run_time_zero(self, dtype: str, negative: bool) -> int:
        """A float zero the driver cannot see at compile time, made once per kernel: Mesa's
        llvmpipe (lavapipe) takes ``x * 0.0`` for 0, ``0.0 / x`` for 0, ``x / 0.0`` for an
        undefined value and ``0.0 - x`` for ``-x`` whatever x is (infinities, NaNs, zeros'
        signs), execution modes notwithstanding, and so does a zero reaching an operation
        through a variable or memory."""
        key = (dtype, negative)
        if key not in self.run_time_zeros:
            if negative:
                zero = self.run_time_zero(dtype, False)
                self.prologue.extend(instruction(Op.FNegate, (self.ty(dtype), negated := self.m.new_id(), zero)))
                self.run_time_zeros[key] = negated
            else:
                self.run_time_zeros[key] = self._run_time_zero(dtype)
        return self.run_time_zeros[key]

    def _run_time_zero(self, dtype: str) -> int:
        """0.0 of ``dtype`` computed in the entry block (so that it dominates every use) as
        ``workgroup id x == 0xFFFFFFFF ? 1.0 : 0.0``: no launch has that many workgroups."""
        u32, t = self.m.int(32, False), self.ty(dtype)
        var = self.state.builtin(BuiltIn.WorkgroupId, self.m.vector(u32, 3))
        self.interface.add(var)
        ids = [self.m.new_id() for _ in range(4)]
        self.prologue.extend(instruction(Op.Load, (self.m.vector(u32, 3), ids[0], var)))
        self.prologue.extend(instruction(Op.CompositeExtract, (u32, ids[1], ids[0], 0)))
        self.prologue.extend(instruction(Op.IEqual, (self.m.bool(), ids[2], ids[1], self.const("uint32", 0xFFFFFFFF))))
        one, zero = self.const(dtype, 1.0), self.const(dtype, 0.0)
        self.prologue.extend(instruction(Op.Select, (t, ids[3], ids[2], one, zero)))
        return ids[3]

    def binary(self, name: str, dtype: str, result: str, a: int, b: int) -> int:
        """The instruction of binary operation ``name`` on values ``a`` and ``b`` of ``dtype``."""
        ops = _BINARY.get(name)
        if ops is None:
            raise CodegenError(f"{name} reaches the Vulkan emitter unlegalized")
        kind = 3 if dtype == "bool" else 2 if _dt.is_float(dtype) else 1 if _dt.is_uint(dtype) else 0
        opcode = ops[kind]
        if opcode is None:
            raise CodegenError(f"{name} is not defined for {dtype}")
        return self.ins(opcode, self.ty(result), a, b)

    def visit_CmpOp(self, e: E.CmpOp) -> int:
        """A comparison of a widened integer with a constant that fits the narrow type is made in
        that type (``int64(x) < 1024`` as ``x < 1024``, through lets too): the same result, and
        Mesa's llvmpipe (lavapipe 22.3) took the 64-bit constant for a large negative one. With a
        constant outside the narrow type the range decides it (``int64(x) < 2**31`` is true)."""
        name = type(e).__name__
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        for wide, const, flipped in ((a, e.b, False), (b, e.a, True)):
            narrow = self.widened.get(wide)
            if narrow is None or not isinstance(const, E.IntImm):
                continue
            least, most = _dt.integer_range(narrow[1])
            if not least <= const.value <= most:
                above = const.value > most  # the constant is past every value of the narrow one
                x_less = above != flipped  # whether the left operand is the smaller
                truth = {"LT": x_less, "LE": x_less, "GT": not x_less, "GE": not x_less, "EQ": False, "NE": True}
                return self.const("bool", truth[name])
            c = self.const(narrow[1], const.value)
            x, y = (c, narrow[0]) if flipped else (narrow[0], c)
            return self.binary(name, narrow[1], e.dtype, x, y)
        return self.binary(name, e.a.dtype, e.dtype, a, b)

    def visit_Cast(self, e: E.Cast) -> int:
        return self.cast(self.visit_expr(e.value), e.value.dtype, e.dtype)

    def cast(self, v: int, src: str, dst: str) -> int:
        """Convert value ``v`` of ``src`` to ``dst`` (C conversion rules)."""
        if src == dst:
            return v
        if dst == "bool":
            zero = self.const(src, 0)
            return self.ins(Op.FUnordNotEqual if _dt.is_float(src) else Op.INotEqual, self.m.bool(), v, zero)
        if src == "bool":
            return self.ins(Op.Select, self.ty(dst), v, self.const(dst, 1), self.const(dst, 0))
        if _dt.is_float(src) and _dt.is_float(dst):
            return self.ins(Op.FConvert, self.ty(dst), v)
        if _dt.is_float(dst):
            return self.ins(Op.ConvertSToF if _dt.is_int(src) else Op.ConvertUToF, self.ty(dst), v)
        if _dt.is_float(src):
            if _dt.lanes(src) == 1:  # an out-of-range value makes the conversion undefined: clamped
                if src == "float16" and _dt.integer_range(_dt.element_of(dst))[1] > 65504:
                    # to the integer's range, as other floats are: NaN to its lowest, inf to its ends
                    v, src = self.ins(Op.FConvert, self.ty("float32"), v), "float32"
                lo, hi = (self.const(src, bound) for bound in _conversion_bounds(src, dst))
                v = self.ins(Op.ExtInst, self.ty(src), self.m.glsl, _GLSL_NCLAMP, v, lo, hi)
            return self.ins(Op.ConvertFToS if _dt.is_int(dst) else Op.ConvertFToU, self.ty(dst), v)
        signed = _dt.is_int(src)
        narrow = v
        if _dt.bits(src) != _dt.bits(dst):
            v = self.ins(Op.SConvert if signed else Op.UConvert, self.m.int(_dt.bits(dst), signed), v)
        if signed != _dt.is_int(dst):
            v = self.ins(Op.Bitcast, self.ty(dst), v)
        if _dt.bits(src) < _dt.bits(dst) and (not signed or _dt.is_int(dst)):  # the value is kept
            self.widened[v] = (narrow, src)
        return v

    def visit_BufferLoad(self, e: E.BufferLoad) -> int:
        b = self._binding(e.buffer)
        return self.ins(Op.Load, b.elem, self._element_pointer(b, e.buffer, e.indices))

    def visit_Call(self, e: E.Call) -> int:
        op = e.op[4:] if e.op.startswith("tir.") else e.op
        special = getattr(self, "call_" + op.replace(".", "_"), None)
        if special is not None:
            return special(e)
        if op in _BITWISE:
            a, b = (self.visit_expr(x) for x in e.args)
            return self.ins(_BITWISE[op][0 if _dt.is_int(e.dtype) else 1], self.ty(e.dtype), a, b)
        if op in _GLSL or op in ("abs", "sigmoid", "log10", "exp10"):
            return self.math(op, e)
        raise CodegenError(f"the Vulkan backend does not support intrinsic '{e.op}'")

    # ------------------------------------------------------------------ calls
    def math(self, op: str, e: E.Call) -> int:
        """A math function through GLSL.std.450 (float16/float32; float64 where GLSL allows)."""
        needs = {"sigmoid": "exp", "log10": "log", "exp10": "exp"}.get(op, op)
        if e.dtype == "float64" and needs in _GLSL and needs not in _F64_OK:
            # a T.log may also be what T.log1p or T.asinh became before code generation
            what = f"'{op}' on float64 (T.{op}, or a function computed with it such as T.log1p or T.asinh)"
            if needs != op:
                what = f"T.{op} on float64 (computed with {needs})"
            raise CodegenError(
                f"{what} is not available in Vulkan shaders (GLSL.std.450 defines {needs} for 16- and 32-bit "
                f"floats only); compute it in float32"
            )
        args = [self.visit_expr(a) for a in e.args]
        t = self.ty(e.dtype)
        if op == "abs" and not _dt.is_float(e.dtype):
            if _dt.is_uint(e.dtype):
                return args[0]
            return self.ins(Op.ExtInst, t, self.m.glsl, _GLSL_SABS, *args)
        op = "fabs" if op == "abs" else op
        if op == "sigmoid":
            neg = self.ins(Op.FNegate, t, args[0])
            exp = self._glsl("exp", e.dtype, t, neg)
            one = self.const(e.dtype, 1.0)
            return self.ins(Op.FDiv, t, one, self.ins(Op.FAdd, t, one, exp))
        if op in ("log10", "exp10"):
            ln10 = self.const(e.dtype, 2.302585092994046)
            if op == "log10":
                return self.ins(Op.FDiv, t, self._glsl("log", e.dtype, t, args[0]), ln10)
            return self._glsl("exp", e.dtype, t, self.ins(Op.FMul, t, args[0], ln10))
        return self._glsl(op, e.dtype, t, *args)

    def _glsl(self, op: str, dtype: str, t: int, *args: int) -> int:
        """GLSL.std.450's ``op`` (float64 ones :meth:`math` refused already unless allowed)."""
        return self.ins(Op.ExtInst, t, self.m.glsl, _GLSL[op], *args)

    def call_fmod(self, e: E.Call) -> int:
        """``OpFRem``, whose precision Vulkan inherits from ``x - y * trunc(x / y)`` (approximate
        where the quotient is large); a float16 one is computed in float32 (in float16 that
        loses the remainder's low bits)."""
        a, b = (self.visit_expr(x) for x in e.args)
        if e.dtype != "float16":
            return self.ins(Op.FRem, self.ty(e.dtype), a, b)
        wide = (self.cast(v, "float16", "float32") for v in (a, b))
        return self.cast(self.ins(Op.FRem, self.ty("float32"), *wide), "float32", "float16")

    def call_bitwise_not(self, e: E.Call) -> int:
        return self.ins(Op.Not, self.ty(e.dtype), self.visit_expr(e.args[0]))

    def call_isnan(self, e: E.Call) -> int:
        return self.ins(Op.IsNan, self.m.bool(), self.visit_expr(e.args[0]))

    def call_isinf(self, e: E.Call) -> int:
        return self.ins(Op.IsInf, self.m.bool(), self.visit_expr(e.args[0]))

    def call_isfinite(self, e: E.Call) -> int:
        v = self.visit_expr(e.args[0])
        b = self.m.bool()
        bad = self.ins(Op.LogicalOr, b, self.ins(Op.IsNan, b, v), self.ins(Op.IsInf, b, v))
        return self.ins(Op.LogicalNot, b, bad)

    def call_likely(self, e: E.Call) -> int:
        return self.visit_expr(e.args[0])

    call_unlikely = call_likely

    def call_reinterpret(self, e: E.Call) -> int:
        src = e.args[0]
        if _dt.bits(src.dtype) != _dt.bits(e.dtype):
            raise CodegenError(f"reinterpret from {src.dtype} to {e.dtype} changes the width")
        value = self.visit_expr(src)
        if self.ty(src.dtype) == self.ty(e.dtype):  # bfloat16 <-> uint16: the same bits and type
            return value
        return self.ins(Op.Bitcast, self.ty(e.dtype), value)

    def call_if_then_else(self, e: E.Call) -> int:
        """``cond ? a : b`` evaluating only the chosen side (a guarded load must not run)."""
        cond = self.visit_expr(e.args[0])
        then_l, else_l, merge = self.m.new_id(), self.m.new_id(), self.m.new_id()
        self.raw(Op.SelectionMerge, merge, 0)
        self.raw(Op.BranchConditional, cond, then_l, else_l)
        results = []
        for label, arg in ((then_l, e.args[1]), (else_l, e.args[2])):
            self.start_block(label)
            results.append((self.visit_expr(arg), self.label))
            self.branch(merge)
        self.start_block(merge)
        (a, a_from), (b, b_from) = results
        return self.ins(Op.Phi, self.ty(e.dtype), a, a_from, b, b_from)

    def call_tvm_storage_sync(self, e: E.Call) -> int:
        scope = e.args[0].value if e.args and isinstance(e.args[0], E.StringImm) else "shared"
        if scope not in ("shared", "warp", "global"):
            raise CodegenError(f"tvm_storage_sync('{scope}') has no Vulkan equivalent")
        u32 = self.m.int(32, False)
        execution = SCOPE_SUBGROUP if scope == "warp" else SCOPE_WORKGROUP
        memory = SCOPE_DEVICE if scope == "global" else execution
        semantics = SEMANTICS_GLOBAL_BARRIER if scope == "global" else SEMANTICS_WORKGROUP_BARRIER
        c = lambda v: self.m.constant(u32, v)  # noqa: E731
        self.raw(Op.ControlBarrier, c(execution), c(memory), c(semantics))
        return 0

    # subgroup operations (T.vulkan.*)
    def _subgroup(self, e: E.Call, ops: tuple[int, int, int], cap: int) -> int:
        self.m.capability(Cap.GroupNonUniform)
        self.m.capability(cap)
        v = self.visit_expr(e.args[0])
        kind = 2 if _dt.is_float(e.dtype) else 1 if _dt.is_uint(e.dtype) else 0
        scope = self.m.constant(self.m.int(32, False), SCOPE_SUBGROUP)
        return self.ins(ops[kind], self.ty(e.dtype), scope, GROUP_REDUCE, v)

    def call_vulkan_subgroup_add(self, e: E.Call) -> int:
        adds = (Op.GroupNonUniformIAdd, Op.GroupNonUniformIAdd, Op.GroupNonUniformFAdd)
        return self._subgroup(e, adds, Cap.GroupNonUniformArithmetic)

    def call_vulkan_subgroup_max(self, e: E.Call) -> int:
        maxes = (Op.GroupNonUniformSMax, Op.GroupNonUniformUMax, Op.GroupNonUniformFMax)
        return self._subgroup(e, maxes, Cap.GroupNonUniformArithmetic)

    def _shuffle(self, e: E.Call, opcode: int) -> int:
        self.m.capability(Cap.GroupNonUniform)
        self.m.capability(Cap.GroupNonUniformShuffle)
        v = self.visit_expr(e.args[0])
        lane = self.cast(self.visit_expr(e.args[1]), e.args[1].dtype, "uint32")
        scope = self.m.constant(self.m.int(32, False), SCOPE_SUBGROUP)
        return self.ins(opcode, self.ty(e.dtype), scope, v, lane)

    def call_vulkan_subgroup_shuffle(self, e: E.Call) -> int:
        return self._shuffle(e, Op.GroupNonUniformShuffle)

    def call_vulkan_subgroup_shuffle_xor(self, e: E.Call) -> int:
        return self._shuffle(e, Op.GroupNonUniformShuffleXor)

    def _builtin_u32(self, which: int) -> int:
        u32 = self.m.int(32, False)
        var = self.state.builtin(which, u32)
        self.interface.add(var)
        return self.ins(Op.Load, u32, var)

    def call_vulkan_subgroup_size(self, e: E.Call) -> int:
        self.m.capability(Cap.GroupNonUniform)
        return self.cast(self._builtin_u32(BuiltIn.SubgroupSize), "uint32", e.dtype)

    def call_vulkan_subgroup_invocation_id(self, e: E.Call) -> int:
        self.m.capability(Cap.GroupNonUniform)
        return self.cast(self._builtin_u32(BuiltIn.SubgroupLocalInvocationId), "uint32", e.dtype)

    # ------------------------------------------------------------------ buffers
    def _binding(self, buf: E.Buffer) -> _Binding:
        try:
            b = self.buffers[buf.data]
        except KeyError:
            raise CodegenError(f"buffer '{buf.name}' is used outside its allocation") from None
        if _dt.element_of(buf.dtype) != _dt.element_of(b.dtype):
            raise CodegenError(
                f"buffer '{buf.name}' reads memory that holds {_dt.element_of(b.dtype)} as "
                f"{_dt.element_of(buf.dtype)}: SPIR-V has no pointer casts; give each dtype an allocation "
                f"of its own, or convert the values with T.reinterpret"
            )
        return b

    def _element_pointer(self, b: _Binding, buf: E.Buffer, indices: Any) -> int:
        flat = _flat_index(buf, list(indices))
        index = self.visit_expr(flat)
        if _dt.bits(flat.dtype) < 32:  # AccessChain reads its indices as signed: uint16 40000 was -25536
            index = self.cast(index, flat.dtype, "int32")
        ptr = self.m.pointer(b.storage, b.elem)
        if b.runtime_array:
            return self.ins(Op.AccessChain, ptr, b.var, self.const("int32", 0), index)
        return self.ins(Op.AccessChain, ptr, b.var, index)

    # ------------------------------------------------------------------ statements
    def stmt(self, s: S.Stmt) -> None:
        """Emit a statement."""
        fn = getattr(self, "visit_" + type(s).__name__, None)
        if fn is None:
            raise CodegenError(f"the Vulkan backend cannot compile statement {type(s).__name__}")
        outer, self.span = self.span, getattr(s, "span", None) or self.span
        try:
            located_codegen_errors(s, fn)
        finally:
            self.span = outer

    def visit_SeqStmt(self, s: S.SeqStmt) -> None:
        for x in s.seq:
            self.stmt(x)
            if isinstance(x, (S.Break, S.Continue)):
                break  # the statements after it never run

    def visit_Evaluate(self, s: S.Evaluate) -> None:
        if not isinstance(s.value, (E.IntImm, E.FloatImm)):
            self.visit_expr(s.value)

    def visit_AssertStmt(self, s: S.AssertStmt) -> None:
        self.stmt(s.body)  # device code cannot raise: its asserts became records the host raises

    def visit_LetStmt(self, s: S.LetStmt) -> None:
        self.values[s.var] = self.visit_expr(s.value)
        self.stmt(s.body)

    def visit_BufferStore(self, s: S.BufferStore) -> None:
        b = self._binding(s.buffer)
        value = self.visit_expr(s.value)
        self.raw(Op.Store, self._element_pointer(b, s.buffer, s.indices), value)

    def visit_IfThenElse(self, s: S.IfThenElse) -> None:
        cond = self.visit_expr(s.condition)
        then_l, merge = self.m.new_id(), self.m.new_id()
        else_l = self.m.new_id() if s.else_case is not None else merge
        self.raw(Op.SelectionMerge, merge, 0)
        self.raw(Op.BranchConditional, cond, then_l, else_l)
        self.start_block(then_l)
        self.stmt(s.then_case)
        self.branch(merge)
        if s.else_case is not None:
            self.start_block(else_l)
            self.stmt(s.else_case)
            self.branch(merge)
        self.start_block(merge)

    def visit_For(self, s: S.For) -> None:
        if s.kind is S.ForKind.THREAD_BINDING:
            self._thread_binding(s)
        elif s.kind is S.ForKind.PARALLEL:
            raise CodegenError("parallel loops have no meaning in a Vulkan kernel; bind the loop to a thread")
        else:
            self._serial_loop(s)

    def _serial_loop(self, s: S.For) -> None:
        """``for v in [min, min + extent)`` as a structured loop; ``v`` is an OpPhi. An 8- or
        16-bit variable counts in 32 bits: its end (int8 108 + 20) would wrap in its own type."""
        dtype = s.loop_var.dtype
        counter = ("int32" if _dt.is_int(dtype) else "uint32") if _dt.bits(dtype) < 32 else dtype
        t = self.ty(counter)
        lo = self.cast(self.visit_expr(s.min), s.min.dtype, counter)
        hi = self.ins(Op.IAdd, t, lo, self.cast(self.visit_expr(s.extent), s.extent.dtype, counter))
        pre = self.label
        header, body, cont, merge = (self.m.new_id() for _ in range(4))
        nxt = self.m.new_id()
        self.branch(header)
        self.start_block(header)
        v = self.ins(Op.Phi, t, lo, pre, nxt, cont)
        signed = _dt.is_int(counter)
        cond = self.ins(Op.SLessThan if signed else Op.ULessThan, self.m.bool(), v, hi)
        self.raw(Op.LoopMerge, merge, cont, 1 if s.kind is S.ForKind.UNROLLED else 0)
        self.raw(Op.BranchConditional, cond, body, merge)
        self.start_block(body)
        self.values[s.loop_var] = v if counter == dtype else self.cast(v, counter, dtype)
        self._loop_body(s.body, merge, cont)
        self.branch(cont)
        self.start_block(cont)
        self.code.extend(instruction(Op.IAdd, (t, nxt, v, self.const(counter, 1))))
        self.branch(header)
        self.start_block(merge)

    def _loop_body(self, body: S.Stmt, merge: int, cont: int) -> None:
        """``body`` of a loop whose ``break`` goes to ``merge`` and ``continue`` to ``cont``."""
        self.loops.append((merge, cont))
        try:
            self.stmt(body)
        finally:
            self.loops.pop()

    def visit_While(self, s: S.While) -> None:
        # The condition gets a block of its own: evaluating it may branch (a select of loads), and
        # the header may hold nothing but the loop merge and one branch.
        header, check, body, cont, merge = (self.m.new_id() for _ in range(5))
        self.branch(header)
        self.start_block(header)
        self.raw(Op.LoopMerge, merge, cont, 0)
        self.branch(check)
        self.start_block(check)
        self.raw(Op.BranchConditional, self.visit_expr(s.condition), body, merge)
        self.start_block(body)
        self._loop_body(s.body, merge, cont)
        self.branch(cont)
        self.start_block(cont)
        self.branch(header)
        self.start_block(merge)

    def _leave(self, which: int, what: str) -> None:
        if not self.loops:
            raise CodegenError(f"{what} outside a serial loop of the kernel")
        self.branch(self.loops[-1][which])
        self.start_block(self.m.new_id(), reachable=False)

    def visit_Break(self, s: S.Break) -> None:
        self._leave(0, "break")

    def visit_Continue(self, s: S.Continue) -> None:
        self._leave(1, "continue")

    def _thread_binding(self, s: S.For) -> None:
        tag = s.thread_tag or ""
        group, _, axis = tag.partition(".")
        if group not in _THREAD_BUILTINS or axis not in ("x", "y", "z"):
            raise CodegenError(f"the Vulkan backend does not support thread tag '{tag}'")
        u32 = self.m.int(32, False)
        var = self.state.builtin(_THREAD_BUILTINS[group], self.m.vector(u32, 3))
        self.interface.add(var)
        vec = self.ins(Op.Load, self.m.vector(u32, 3), var)
        index = self.cast(self.ins(Op.CompositeExtract, u32, vec, "xyz".index(axis)), "uint32", s.loop_var.dtype)
        if not (isinstance(s.min, E.IntImm) and s.min.value == 0):
            index = self.ins(Op.IAdd, self.ty(s.loop_var.dtype), index, self.visit_expr(s.min))
        self.values[s.loop_var] = index
        self.stmt(s.body)

    def visit_Allocate(self, s: S.Allocate) -> None:
        buf = s.buffer
        if buf.scope not in ("shared", "local"):
            raise CodegenError(f"the Vulkan backend cannot allocate '{buf.name}' in scope '{buf.scope}'")
        elem = self.ty(buf.dtype)
        array = self._array_type(buf, elem)
        if buf.scope == "shared":
            var = self.m.variable(self.m.pointer(Storage.Workgroup, array), Storage.Workgroup)
            storage = Storage.Workgroup
        else:
            var = self.m.new_id()
            storage = Storage.Function
            self.local_vars.extend(instruction(Op.Variable, (self.m.pointer(storage, array), var, storage)))
        self.m.name(var, buf.name)
        self.buffers[buf.data] = _Binding(var, storage, buf.dtype, elem, False)
        self.stmt(s.body)

    def _array_type(self, buf: E.Buffer, elem: int) -> int:
        """The array type of an allocation: of constant length, or for the launch-sized shared
        buffer (dynamic shared memory) of the length specialization constant 3 gives."""
        if all(isinstance(d, E.IntImm) for d in buf.shape):
            count = 1
            for d in buf.shape:
                count *= int(d.value)
            return self.m.array(elem, max(count, 1))
        if buf.scope != "shared" or self.dynamic_shared is not None:
            raise CodegenError(
                f"allocation '{buf.name}' has a size known only at run time "
                f"({', '.join(expr_text(d) for d in buf.shape)}); the Vulkan backend sizes one shared buffer "
                f"per kernel at launch, and every other shared or local one "
                f"needs a constant shape"
            )
        self.dynamic_shared = buf.name
        u32 = self.m.int(32, False)
        length = self.m.new_id()
        nbytes = self.m.constant(u32, _dt.nbytes(buf.dtype))
        self.m.add("globals", Op.SpecConstantOp, u32, length, Op.UDiv, self.state.dynamic_shared_bytes(), nbytes)
        return self.m.array_of_length(elem, length)

    # ------------------------------------------------------------------ the kernel
    def emit_kernel(self, func: PrimFunc) -> None:
        """Add ``func`` to the module as entry point ``func.global_symbol``."""
        name = func.global_symbol
        m = self.m
        self.state.declare_workgroup_size()
        fn = m.new_id()
        m.name(fn, name)
        void = m.void()
        entry = m.new_id()
        self.start_block(entry)
        self._bind_parameters(func)
        self.stmt(func.body)
        self.raw(Op.Return)
        head = instruction(Op.Function, (void, fn, 0, m.function_type(void)))
        label = instruction(Op.Label, (entry,))
        m.functions.extend(
            head + label + self.local_vars + self.prologue + self.code[len(label) :] + instruction(Op.FunctionEnd, ())
        )
        m.entry_point(fn, name, sorted(self.interface))
        bound = loop_bound(func)
        if bound != "0":  # for drivers that end long-running invocations (see LOOP_BOUND_MARK)
            m.string(f"{LOOP_BOUND_MARK}{name}:{bound}")
        if self.dynamic_shared is not None:
            m.string(f"{STATIC_SHARED_MARK}{name}:{static_shared_bytes(func)}")

    def _bind_parameters(self, func: PrimFunc) -> None:
        """Storage buffers for buffer parameters, one block for the scalars (push constants, or a
        uniform buffer at the binding after the storage buffers; see :func:`scalar_block`)."""
        buffers, params = binding_interface(func, "Vulkan")
        for binding, buf in enumerate(buffers):
            self._bind_storage_buffer(buf, binding, func.global_symbol)
        if params:
            scalars = [(p, scalar_arg_type(p.dtype)) for p in params]
            self._bind_scalars(scalars, len(buffers), func.global_symbol)

    def _bind_storage_buffer(self, buf: E.Buffer, binding: int, kernel: str) -> None:
        m = self.m
        dtype = _dt.element_of(buf.dtype)
        self.declare_storage_caps(dtype)
        elem = self.ty(dtype)
        block = m.block_struct([m.runtime_array(elem, _dt.bits(dtype) // 8)], [0])
        var = m.variable(m.pointer(Storage.StorageBuffer, block), Storage.StorageBuffer)
        m.decorate(var, Deco.DescriptorSet, 0)
        m.decorate(var, Deco.Binding, binding)
        m.name(var, buf.name)
        self.buffers[buf.data] = _Binding(var, Storage.StorageBuffer, dtype, elem, True)

    def _bind_scalars(self, scalars: list[tuple[E.Var, str]], nbuf: int, kernel: str) -> None:
        """The scalars' ``Block``: push constants, or (past :data:`PUSH_CONSTANT_LIMIT` bytes) a
        uniform buffer at set 0, binding ``nbuf`` (the same offsets are valid std140)."""
        m = self.m
        offsets, _, uniform = scalar_block([arg_type for _, arg_type in scalars])
        members = [self.ty(arg_type) for _, arg_type in scalars]
        storage = Storage.Uniform if uniform else Storage.PushConstant
        block = m.block_struct(members, offsets, tag=kernel)
        var = m.variable(m.pointer(storage, block), storage)
        m.name(var, f"{kernel}_args")
        if uniform:
            m.decorate(var, Deco.DescriptorSet, 0)
            m.decorate(var, Deco.Binding, nbuf)
        for i, (param, arg_type) in enumerate(scalars):
            ptr = self.ins(Op.AccessChain, m.pointer(storage, members[i]), var, self.const("int32", i))
            value = self.ins(Op.Load, members[i], ptr)
            self.values[param] = self.cast(value, arg_type, param.dtype)


def _flat_index(buf: E.Buffer, idx: list[E.PrimExpr]) -> E.PrimExpr:
    """The element offset of ``idx`` in ``buf``: the core's :func:`flat_index` (row-major or
    strided, operands promoted to one type), or a single index already flattened."""
    if len(idx) == len(buf.shape):
        return flat_index(buf, tuple(idx))
    if len(idx) != 1 or buf.strides:
        raise CodegenError(f"buffer {buf.name} has {len(buf.shape)} dims, accessed with {len(idx)} indices")
    off = buf.elem_offset
    return idx[0] if isinstance(off, E.IntImm) and off.value == 0 else binary("add", idx[0], off)


__all__ = ["KernelEmitter", "ModuleState", "PUSH_CONSTANT_LIMIT", "scalar_arg_type", "scalar_block"]
