"""PTX ``mma.sync`` of any shape and type this backend knows, on per-thread fragment arrays.

``Call("void", "cuda.mma", (d, a, b, c, shape, a_type, b_type, c_type, d_type, saturate))``:
``d``, ``a``, ``b``, ``c`` are buffer elements standing for the address of a lane's fragment (its
elements in their own dtype, ``local`` memory), the rest constants. Apache TVM's
``T.ptx_legacy.mma`` becomes this call (:mod:`.ptx_legacy`), and ``T.cuda.mma_m16n8k16_*`` prints
through the same helper. The printer emits one
``__forceinline__`` helper per instruction, named after it (``tvm_mma_m16n8k16_f32_f16_f16_f32``)
so the tests' CPU build can put the emulator's model in its place.

Fragments (PTX ISA, "Matrix Fragments for mma.m16n8kK" and "mma.m8n8kK"): a lane holds
``m*k/32`` elements of A, ``k*n/32`` of B and ``m*n/32`` of C and D, packed into 32-bit registers
(64-bit for float64) lowest element in the lowest bits, in the element order PTX gives; the
row.col layouts are the only ones (m8n8k4 with float16, Volta's quad-pair layout, is not
supported).
"""

from __future__ import annotations

from typing import Any

from tvm.tir import dtype as _dt
from tvm.tir.expr import BufferLoad, Call, IntImm, StringImm

#: dtype -> PTX type of an mma operand
PTX_TYPES = {
    "float16": "f16",
    "bfloat16": "bf16",
    "tf32": "tf32",
    "float32": "f32",
    "float64": "f64",
    "int8": "s8",
    "uint8": "u8",
    "int32": "s32",
}
#: Apache TVM's spellings of the operand types, besides the dtype names themselves
ALIASES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "s8": "int8", "u8": "uint8"}
ALIASES.update({"." + ptx: dtype for dtype, ptx in PTX_TYPES.items()})  # ".f16", ".s8" ...

#: (shape, input type) -> (accumulator types, minimum SM)
SHAPES = {
    ("m16n8k8", "float16"): (("float16", "float32"), 75),
    ("m16n8k16", "float16"): (("float16", "float32"), 80),
    ("m16n8k8", "bfloat16"): (("float32",), 80),
    ("m16n8k16", "bfloat16"): (("float32",), 80),
    ("m16n8k4", "tf32"): (("float32",), 80),
    ("m16n8k8", "tf32"): (("float32",), 80),
    ("m8n8k4", "float64"): (("float64",), 80),
    ("m8n8k16", "int8"): (("int32",), 75),
    ("m16n8k16", "int8"): (("int32",), 80),
    ("m16n8k32", "int8"): (("int32",), 80),
}


class MmaError(ValueError):
    """A ``T.ptx_legacy.mma`` this backend cannot emit, or one whose operands do not fit."""


def operand_type(what: str, value: Any) -> str:
    """The dtype an mma operand type names (``"float16"``, ``"fp16"``, ``"int8"`` ...)."""
    name = str(getattr(value, "value", value))
    name = ALIASES.get(name, name)
    if name not in PTX_TYPES:
        raise MmaError(f"T.ptx_legacy.mma: {what} type '{name}' is not one of {', '.join(PTX_TYPES)}")
    return name


def _input_family(dtype: str) -> str:
    return "int8" if dtype in ("int8", "uint8") else dtype


def dims(shape: str) -> tuple[int, int, int]:
    """``"m16n8k16"`` -> (16, 8, 16)."""
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


def validate(shape: str, a: str, b: str, c: str, d: str, saturate: bool = False) -> int:
    """The minimum SM of ``mma.sync.aligned.<shape>.row.col.<d>.<a>.<b>.<c>``; :class:`MmaError`
    naming what is wrong when PTX has no such instruction or this backend does not emit it."""
    family = _input_family(a)
    if family != _input_family(b) or (family != "int8" and a != b):
        raise MmaError(f"T.ptx_legacy.mma: A is {a} and B is {b}; PTX multiplies operands of one type")
    known = SHAPES.get((shape, family))
    if known is None:
        shapes = sorted({s for s, t in SHAPES if t == family})
        extra = " (m8n8k4 with float16 uses Volta's quad-pair layout, not supported)" if shape == "m8n8k4" else ""
        raise MmaError(f"T.ptx_legacy.mma: no {shape} mma of {a} here{extra}; shapes of {a}: {', '.join(shapes)}")
    accumulators, sm = known
    if saturate and family != "int8":
        raise MmaError(f"T.ptx_legacy.mma: saturation (.satfinite) applies to integer mma only, not {a}")
    for role, t in (("C", c), ("D", d)):
        if t not in accumulators:
            raise MmaError(f"T.ptx_legacy.mma {shape} of {a}: {role} must be {' or '.join(accumulators)}, got {t}")
    return sm


def elements(shape: str, role: str) -> int:
    """Elements of the ``role`` ("a", "b", "c" or "d") fragment one lane holds."""
    m, n, k = dims(shape)
    return {"a": m * k, "b": k * n}.get(role, m * n) // 32


def registers(shape: str, role: str, dtype: str) -> tuple[str, str, int]:
    """(C type, inline-asm constraint letter, count) of the registers of a lane's fragment."""
    count = elements(shape, role)
    if dtype == "float64":
        return "double", "d", count
    if dtype in ("float32", "int32"):
        return ("float", "f", count) if dtype == "float32" else ("int32_t", "r", count)
    if dtype == "tf32":
        return "uint32_t", "r", count
    return "uint32_t", "r", count * _dt.bits(dtype) // 32


def call_parts(call: Call) -> tuple[tuple, str, tuple[str, str, str, str], bool]:
    """(operands d, a, b, c; shape; dtypes a, b, c, d; saturate) of a ``cuda.mma`` call."""
    d, a, b, c, shape, ta, tb, tc, td, sat = call.args
    types = tuple(str(t.value) for t in (ta, tb, tc, td))
    return (d, a, b, c), str(shape.value), types, bool(sat.value)  # type: ignore[return-value]


def make_call(d: Any, a: Any, b: Any, c: Any, shape: str, types: tuple, saturate: bool) -> Call:
    """The ``cuda.mma`` call of these operands (see the module docstring)."""
    consts = (StringImm(shape), *(StringImm(t) for t in types), IntImm("int32", int(saturate)))
    return Call("void", "cuda.mma", (d, a, b, c, *consts))


def check(call: Call, arch_sm: int | None, operand: Any) -> None:
    """Validate a ``cuda.mma`` call: the instruction exists, the target's SM has it, and each
    operand (checked with ``operand(role, load, dtypes, count)``) holds its fragment."""
    (d, a, b, c), shape, (ta, tb, tc, td), saturate = call_parts(call)
    sm = validate(shape, ta, tb, tc, td, saturate)
    if arch_sm is not None and arch_sm < sm:
        raise MmaError(f"T.ptx_legacy.mma {shape} of {ta} needs sm_{sm} or newer; the target is sm_{arch_sm}")
    for role, load, t in (("d", d, td), ("a", a, ta), ("b", b, tb), ("c", c, tc)):
        stored = "float32" if t == "tf32" else t
        if not isinstance(load, BufferLoad):
            raise MmaError(f"T.ptx_legacy.mma: operand {role} must be a fragment in local memory")
        operand(role, load, (stored,), elements(shape, role))
        check_register_aligned(f"T.ptx_legacy.mma: operand {role}", load)


def check_register_aligned(what: str, load: BufferLoad) -> None:
    """A fragment of 8- or 16-bit elements is read as 32-bit registers: its first element must
    start one (checked when its position is a constant)."""
    per_register = 32 // _dt.bits(load.buffer.dtype) if _dt.bits(load.buffer.dtype) < 32 else 1
    indices = [getattr(i, "value", None) for i in load.indices]
    if per_register == 1 or None in indices or load.buffer.strides:
        return
    flat = 0
    for index, extent in zip(indices, load.buffer.shape):
        flat = flat * int(getattr(extent, "value", 1)) + index
    if flat % per_register:
        raise MmaError(
            f"{what}: '{load.buffer.name}' element {flat} does not start a 32-bit register "
            f"({per_register} {load.buffer.dtype} per register): use an offset that is a multiple of {per_register}"
        )


def operand_list(first: int, count: int) -> str:
    """``{%first, ..., %(first + count - 1)}``: one vector operand of inline PTX."""
    return "{" + ", ".join(f"%{first + i}" for i in range(count)) + "}"


def constraints(prefix: str, name: str, count: int, letter: str) -> list[str]:
    """``"<prefix><letter>"(name[i])`` for each of ``count`` registers (prefix ``"="`` for outputs)."""
    return [f'"{prefix}{letter}"({name}[{i}])' for i in range(count)]


def helper_name(shape: str, types: tuple, saturate: bool) -> str:
    """``tvm_mma_<shape>_<d>_<a>_<b>_<c>[_satfinite]`` (PTX type names)."""
    ta, tb, tc, td = types
    name = f"tvm_mma_{shape}_{PTX_TYPES[td]}_{PTX_TYPES[ta]}_{PTX_TYPES[tb]}_{PTX_TYPES[tc]}"
    return name + ("_satfinite" if saturate else "")


def helper(qualifier: str, shape: str, types: tuple, saturate: bool) -> str:
    """The helper wrapping the inline PTX of one mma instruction."""
    ta, tb, tc, td = types
    regs = {role: registers(shape, role, t) for role, t in (("d", td), ("a", ta), ("b", tb), ("c", tc))}
    groups, outs, ins, first = [], [], [], 0
    for role in "dabc":
        ctype, letter, count = regs[role]
        groups.append(operand_list(first, count))
        if role == "d":
            outs += constraints("=", role, count, letter)
        else:
            ins += constraints("", role, count, letter)
        first += count
    sat = ".satfinite" if saturate else ""
    ptx = f"mma.sync.aligned.{shape}.row.col{sat}.{PTX_TYPES[td]}.{PTX_TYPES[ta]}.{PTX_TYPES[tb]}.{PTX_TYPES[tc]}"
    params = ", ".join(f"{'' if r == 'd' else 'const '}{regs[r][0]}* {r}" for r in "dabc")
    return (
        f"{qualifier} void {helper_name(shape, types, saturate)}({params}) {{\n"
        f'  asm("{ptx} {", ".join(groups)};"\n'
        f"               : {', '.join(outs)}\n"
        f"               : {', '.join(ins)});\n}}"
    )
