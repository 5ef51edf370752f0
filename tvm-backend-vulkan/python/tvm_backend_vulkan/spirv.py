"""A small SPIR-V module builder: ids, types, constants, decorations, entry points and functions,
written out as the binary words Vulkan drivers take.

Instructions are kept per section, in the order the SPIR-V specification requires (capabilities,
extensions, imports, memory model, entry points, execution modes, names, decorations, types with
constants and global variables, functions). Types and constants are made once and shared.
"""

from __future__ import annotations

import struct
from typing import Sequence

MAGIC = 0x07230203
#: SPIR-V 1.3, the version of Vulkan 1.1.
VERSION = 0x00010300


class Op:
    """Opcodes used by the emitter (SPIR-V specification, section 3.52)."""

    String = 7
    Name = 5
    MemberName = 6
    Extension = 10
    ExtInstImport = 11
    ExtInst = 12
    MemoryModel = 14
    EntryPoint = 15
    ExecutionMode = 16
    Capability = 17
    TypeVoid = 19
    TypeBool = 20
    TypeInt = 21
    TypeFloat = 22
    TypeVector = 23
    TypeArray = 28
    TypeRuntimeArray = 29
    TypeStruct = 30
    TypePointer = 32
    TypeFunction = 33
    ConstantTrue = 41
    ConstantFalse = 42
    Constant = 43
    SpecConstant = 50
    SpecConstantComposite = 51
    SpecConstantOp = 52
    Function = 54
    FunctionEnd = 56
    Variable = 59
    Load = 61
    Store = 62
    AccessChain = 65
    Decorate = 71
    MemberDecorate = 72
    CompositeExtract = 81
    ConvertFToU = 109
    ConvertFToS = 110
    ConvertSToF = 111
    ConvertUToF = 112
    UConvert = 113
    SConvert = 114
    FConvert = 115
    Bitcast = 124
    SNegate = 126
    FNegate = 127
    IAdd = 128
    FAdd = 129
    ISub = 130
    FSub = 131
    IMul = 132
    FMul = 133
    UDiv = 134
    SDiv = 135
    FDiv = 136
    UMod = 137
    SRem = 138
    FRem = 140
    IsNan = 156
    IsInf = 157
    LogicalEqual = 164
    LogicalNotEqual = 165
    LogicalOr = 166
    LogicalAnd = 167
    LogicalNot = 168
    Select = 169
    IEqual = 170
    INotEqual = 171
    UGreaterThan = 172
    SGreaterThan = 173
    UGreaterThanEqual = 174
    SGreaterThanEqual = 175
    ULessThan = 176
    SLessThan = 177
    ULessThanEqual = 178
    SLessThanEqual = 179
    FOrdEqual = 180
    FUnordNotEqual = 183
    FOrdLessThan = 184
    FOrdGreaterThan = 186
    FOrdLessThanEqual = 188
    FOrdGreaterThanEqual = 190
    ShiftRightLogical = 194
    ShiftRightArithmetic = 195
    ShiftLeftLogical = 196
    BitwiseOr = 197
    BitwiseXor = 198
    BitwiseAnd = 199
    Not = 200
    ControlBarrier = 224
    Phi = 245
    LoopMerge = 246
    SelectionMerge = 247
    Label = 248
    Branch = 249
    BranchConditional = 250
    Return = 253
    Unreachable = 255
    GroupNonUniformShuffle = 345
    GroupNonUniformShuffleXor = 346
    GroupNonUniformIAdd = 349
    GroupNonUniformFAdd = 350
    GroupNonUniformSMax = 356
    GroupNonUniformUMax = 357
    GroupNonUniformFMax = 358


class Cap:
    """Capabilities (section 3.31)."""

    Shader = 1
    Float16 = 9
    Float64 = 10
    Int64 = 11
    Int16 = 22
    Int8 = 39
    GroupNonUniform = 61
    GroupNonUniformArithmetic = 63
    GroupNonUniformShuffle = 65
    StorageBuffer16BitAccess = 4433
    StorageBuffer8BitAccess = 4448
    SignedZeroInfNanPreserve = 4466


class Storage:
    """Storage classes (section 3.7)."""

    Input = 1
    Uniform = 2
    Workgroup = 4
    Function = 7
    PushConstant = 9
    StorageBuffer = 12


class Deco:
    """Decorations (section 3.20)."""

    SpecId = 1
    Block = 2
    ArrayStride = 6
    BuiltIn = 11
    Binding = 33
    DescriptorSet = 34
    Offset = 35


class BuiltIn:
    """Built-in variables (section 3.21)."""

    WorkgroupSize = 25
    WorkgroupId = 26
    LocalInvocationId = 27
    SubgroupSize = 36
    SubgroupLocalInvocationId = 41


#: Scope (section 3.27) and memory semantics (3.25) of a workgroup barrier.
SCOPE_DEVICE, SCOPE_WORKGROUP, SCOPE_SUBGROUP = 1, 2, 3
SEMANTICS_WORKGROUP_BARRIER = 0x8 | 0x100  # AcquireRelease | WorkgroupMemory
SEMANTICS_GLOBAL_BARRIER = 0x8 | 0x40 | 0x100  # ... | UniformMemory (storage buffers)
#: Execution model GLCompute, addressing Logical, memory model GLSL450.
EXEC_GLCOMPUTE, ADDRESSING_LOGICAL, MEMORY_GLSL450 = 5, 0, 1
#: Execution mode SignedZeroInfNanPreserve (section 3.6; SPV_KHR_float_controls).
EXEC_MODE_SIGNED_ZERO_INF_NAN_PRESERVE = 4461
#: Group operation Reduce (section 3.28).
GROUP_REDUCE = 0


def encode_string(text: str) -> list[int]:
    """A literal string: UTF-8, NUL-terminated, padded to whole little-endian words."""
    raw = text.encode("utf-8") + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def instruction(opcode: int, operands: Sequence[int]) -> list[int]:
    """One instruction's words: (word count << 16 | opcode), then the operands."""
    return [((len(operands) + 1) << 16) | opcode, *operands]


class Module:
    """A SPIR-V module under construction; :meth:`words` / :meth:`to_bytes` give the binary."""

    SECTIONS = (
        "capabilities",
        "extensions",
        "imports",
        "memory_model",
        "entry_points",
        "execution_modes",
        "strings",
        "names",
        "decorations",
        "globals",
    )

    def __init__(self) -> None:
        self.bound = 1
        self.sections: dict[str, list[int]] = {s: [] for s in self.SECTIONS}
        self.functions: list[int] = []
        self._capabilities: set[int] = set()
        self._extensions: set[str] = set()
        self._entry_functions: list[int] = []
        self._float_controls_done = False
        self._types: dict[tuple, int] = {}
        self._constants: dict[tuple, int] = {}
        self.glsl = self.new_id()
        self.add("imports", Op.ExtInstImport, self.glsl, *encode_string("GLSL.std.450"))
        self.add("memory_model", Op.MemoryModel, ADDRESSING_LOGICAL, MEMORY_GLSL450)
        self.capability(Cap.Shader)

    # ------------------------------------------------------------------ basics
    def new_id(self) -> int:
        """A fresh result id."""
        self.bound += 1
        return self.bound - 1

    def add(self, section: str, opcode: int, *operands: int) -> None:
        """Append an instruction to ``section``."""
        self.sections[section].extend(instruction(opcode, operands))

    def capability(self, cap: int, extension: str | None = None) -> None:
        """Declare capability ``cap`` (once), and the extension that provides it, if any."""
        if cap not in self._capabilities:
            self._capabilities.add(cap)
            self.add("capabilities", Op.Capability, cap)
        if extension and extension not in self._extensions:
            self._extensions.add(extension)
            self.add("extensions", Op.Extension, *encode_string(extension))

    def name(self, target: int, text: str) -> None:
        """Debug name of an id (shown by the disassembler)."""
        self.add("names", Op.Name, target, *encode_string(text))

    def string(self, text: str) -> int:
        """An ``OpString`` (debug information drivers ignore); returns its id."""
        sid = self.new_id()
        self.add("strings", Op.String, sid, *encode_string(text))
        return sid

    def decorate(self, target: int, decoration: int, *literals: int) -> None:
        """Decorate an id."""
        self.add("decorations", Op.Decorate, target, decoration, *literals)

    def member_decorate(self, struct_type: int, member: int, decoration: int, *literals: int) -> None:
        """Decorate member ``member`` of a struct type."""
        self.add("decorations", Op.MemberDecorate, struct_type, member, decoration, *literals)

    # ------------------------------------------------------------------ types
    def _type(self, key: tuple, opcode: int, *operands: int) -> int:
        found = self._types.get(key)
        if found is None:
            found = self._types[key] = self.new_id()
            self.add("globals", opcode, found, *operands)
        return found

    def void(self) -> int:
        """OpTypeVoid."""
        return self._type(("void",), Op.TypeVoid)

    def bool(self) -> int:
        """OpTypeBool."""
        return self._type(("bool",), Op.TypeBool)

    def int(self, bits: int, signed: bool) -> int:
        """An integer type; 8/16/64-bit ones declare their capability."""
        cap = {8: Cap.Int8, 16: Cap.Int16, 64: Cap.Int64}.get(bits)
        if cap is not None:
            self.capability(cap)
        return self._type(("int", bits, signed), Op.TypeInt, bits, int(signed))

    def float(self, bits: int) -> int:
        """A float type; 16/64-bit ones declare their capability."""
        cap = {16: Cap.Float16, 64: Cap.Float64}.get(bits)
        if cap is not None:
            self.capability(cap)
        return self._type(("float", bits), Op.TypeFloat, bits)

    def vector(self, elem: int, n: int) -> int:
        """OpTypeVector."""
        return self._type(("vec", elem, n), Op.TypeVector, elem, n)

    def array(self, elem: int, length: int, stride: int | None = None) -> int:
        """A fixed-size array (with an ArrayStride when it lives in an explicitly laid out block)."""
        n = self.constant(self.int(32, False), length)
        key = ("array", elem, length, stride)
        if key not in self._types:
            self._type(key, Op.TypeArray, elem, n)
            if stride is not None:
                self.decorate(self._types[key], Deco.ArrayStride, stride)
        return self._types[key]

    def array_of_length(self, elem: int, length_id: int) -> int:
        """An array whose length is the (specialization) constant ``length_id``."""
        return self._type(("array_of", elem, length_id), Op.TypeArray, elem, length_id)

    def runtime_array(self, elem: int, stride: int) -> int:
        """An unsized array of ``stride``-byte elements (a storage buffer's contents)."""
        key = ("rtarray", elem, stride)
        if key not in self._types:
            self._type(key, Op.TypeRuntimeArray, elem)
            self.decorate(self._types[key], Deco.ArrayStride, stride)
        return self._types[key]

    def block_struct(self, members: Sequence[int], offsets: Sequence[int], tag: str = "") -> int:
        """A struct decorated Block with members at ``offsets`` (storage buffers, push constants);
        ``tag`` keeps blocks of different kernels apart when their layouts are the same."""
        key = ("block", tuple(members), tuple(offsets), tag)
        if key not in self._types:
            sid = self._type(key, Op.TypeStruct, *members)
            self.decorate(sid, Deco.Block)
            for i, off in enumerate(offsets):
                self.member_decorate(sid, i, Deco.Offset, off)
        return self._types[key]

    def pointer(self, storage: int, pointee: int) -> int:
        """OpTypePointer."""
        return self._type(("ptr", storage, pointee), Op.TypePointer, storage, pointee)

    def function_type(self, ret: int, *params: int) -> int:
        """OpTypeFunction."""
        return self._type(("fn", ret, params), Op.TypeFunction, ret, *params)

    # ------------------------------------------------------------------ constants
    def constant(self, type_id: int, value: int | float, kind: str = "int", bits: int = 32) -> int:
        """A scalar constant of ``type_id``: ``kind`` "int" (two's complement) or "float"."""
        words = tuple(_literal_words(value, kind, bits))
        key = (type_id, kind, bits, words)  # by bits: -0.0 and 0.0 are two constants, each NaN one
        found = self._constants.get(key)
        if found is not None:
            return found
        found = self._constants[key] = self.new_id()
        self.add("globals", Op.Constant, type_id, found, *words)
        return found

    def bool_constant(self, value: bool) -> int:
        """OpConstantTrue / OpConstantFalse."""
        key = ("bool", bool(value))
        if key not in self._constants:
            cid = self._constants[key] = self.new_id()
            self.add("globals", Op.ConstantTrue if value else Op.ConstantFalse, self.bool(), cid)
        return self._constants[key]

    def variable(self, ptr_type: int, storage: int) -> int:
        """A module-scope OpVariable."""
        vid = self.new_id()
        self.add("globals", Op.Variable, ptr_type, vid, storage)
        return vid

    # ------------------------------------------------------------------ output
    def entry_point(self, fn: int, name: str, interface: Sequence[int]) -> None:
        """Make function ``fn`` a compute entry point named ``name``."""
        self.add("entry_points", Op.EntryPoint, EXEC_GLCOMPUTE, fn, *encode_string(name), *interface)
        self._entry_functions.append(fn)

    def _float_controls(self) -> None:
        """Every entry point keeps IEEE infinities, NaNs and signed zeros in each float width the
        module uses (``SignedZeroInfNanPreserve``): without it a driver may assume there are none
        and fold ``x * 0.0`` to 0 or ``x / 0.0`` to anything."""
        widths = sorted(key[1] for key in self._types if key[0] == "float")
        if not widths or not self._entry_functions:
            return
        self.capability(Cap.SignedZeroInfNanPreserve, "SPV_KHR_float_controls")
        for fn in self._entry_functions:
            for bits in widths:
                self.add("execution_modes", Op.ExecutionMode, fn, EXEC_MODE_SIGNED_ZERO_INF_NAN_PRESERVE, bits)

    def words(self) -> list[int]:
        """The whole module as 32-bit words."""
        if not self._float_controls_done:
            self._float_controls_done = True
            self._float_controls()
        out = [MAGIC, VERSION, 0, self.bound, 0]
        for s in self.SECTIONS:
            out.extend(self.sections[s])
        out.extend(self.functions)
        return out

    def to_bytes(self) -> bytes:
        """The module's binary (little-endian words)."""
        w = self.words()
        return struct.pack(f"<{len(w)}I", *w)


def _literal_words(value: int | float, kind: str, bits: int) -> list[int]:
    """The literal words of a constant: one for up to 32 bits, two (low first) for 64."""
    if kind == "float":
        fmt = {16: "<e", 32: "<f", 64: "<d"}[bits]
        raw = struct.pack(fmt, value)
        raw += b"\0" * (-len(raw) % 4)
        return list(struct.unpack(f"<{len(raw) // 4}I", raw))
    v = int(value) & ((1 << bits) - 1)
    if bits < 32 and v >> (bits - 1) and kind == "sint":
        v |= (0xFFFFFFFF << bits) & 0xFFFFFFFF  # narrow signed literals are sign-extended
    if bits == 64:
        return [v & 0xFFFFFFFF, v >> 32]
    return [v]


__all__ = ["Module", "Op", "Cap", "Storage", "Deco", "BuiltIn", "encode_string", "instruction"]
