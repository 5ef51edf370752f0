"""Tensor-core fragments (Apache TVM's ``wmma.*`` buffers) as PTX ``wmma`` instructions.

The lowering keeps a kernel's fragments for this printer when they are float16 tiles with float32
or float16 accumulators (``warp_fragments`` of the cuda target kind; see
:mod:`tvm.tir.transform.fragments_native`): each fragment buffer is an array of tiles, and each
tile gets the registers PTX gives it per thread (A and B: 8 x f16x2; C/D: 8 x f32 or 4 x f16x2).
Fill, load, store and multiply-accumulate are small ``__forceinline__`` helpers around inline
PTX (``wmma.load.a.sync.aligned.row.m16n16k16.f16`` ...), named after what they do so the tests'
CPU build can put its models of the instructions in their place. The instructions need sm_70,
32-byte aligned addresses and strides that are multiples of 16 bytes.
"""

from __future__ import annotations

from typing import Any

from tvm.codegen.c_family import CodegenError
from tvm.tir import expr as E

from .mma import constraints, operand_list

#: (role, dtype) -> (C type of a register, registers each tile's place in the array holds)
REGISTERS = {
    ("matrix_a", "float16"): ("uint32_t", 8),
    ("matrix_b", "float16"): ("uint32_t", 8),
    ("accumulator", "float32"): ("float", 8),
    ("accumulator", "float16"): ("uint32_t", 4),
    ("matrix_a", "int8"): ("uint32_t", 4),
    ("matrix_b", "int8"): ("uint32_t", 4),
    ("matrix_a", "uint8"): ("uint32_t", 4),
    ("matrix_b", "uint8"): ("uint32_t", 4),
    ("accumulator", "int32"): ("int32_t", 8),
}
#: Registers an 8-bit A or B tile takes per shape (fewer than its place holds for some shapes).
INT8_REGISTERS = {
    "m16n16k16": {"matrix_a": 2, "matrix_b": 2},
    "m8n32k16": {"matrix_a": 1, "matrix_b": 4},
    "m32n8k16": {"matrix_a": 4, "matrix_b": 1},
}
MIN_SM = 70
MIN_SM_INT8 = 72  # integer wmma
#: (input dtype, accumulator dtype) of the fragments PTX wmma offers, from sm_70 and sm_72 on.
FLOAT16_PAIRS = (("float16", "float32"), ("float16", "float16"))
INT8_PAIRS = (("int8", "int32"), ("uint8", "int32"))


def native_pairs(target: Any) -> tuple[tuple[str, str], ...]:
    """The fragment dtype pairs ``target``'s arch (its ``arch`` attribute, else the device's, else
    sm_80) runs as PTX wmma; the others are computed per thread in local memory. An unparsable
    arch is left to the code generator, which names it."""
    from . import nvrtc
    from .codegen import arch_number

    try:
        sm = arch_number(nvrtc.resolve_arch((getattr(target, "attrs", None) or {}).get("arch")))
    except ValueError:
        return FLOAT16_PAIRS + INT8_PAIRS
    if sm is None or sm >= MIN_SM_INT8:
        return FLOAT16_PAIRS + INT8_PAIRS
    return FLOAT16_PAIRS if sm >= MIN_SM else ()


def _regs(buf: E.Buffer) -> tuple[str, int]:
    return REGISTERS[(E.FRAGMENT_SCOPES[buf.scope], buf.dtype)]


def _count(buf: E.Buffer, shape: str) -> int:
    """Registers of one tile of ``buf`` in an instruction of ``shape``."""
    role = E.FRAGMENT_SCOPES[buf.scope]
    if buf.dtype in ("int8", "uint8"):
        return INT8_REGISTERS[shape][role]
    return _regs(buf)[1]


def _suffix(dtype: str) -> str:
    return {"float16": "f16", "float32": "f32", "int8": "s8", "uint8": "u8", "int32": "s32"}[dtype]


def _shape(call: E.Call) -> str:
    m, n, k = (int(x.value) for x in call.args[-3:])
    return f"m{m}n{n}k{k}"


def _constraints(kind: str, name: str, count: int, ctype: str) -> list[str]:
    return constraints(kind, name, count, "f" if ctype == "float" else "r")


class WmmaPrinter:
    """Mixin of :class:`tvm_backend_cuda.codegen.CUDAPrinter`: fragment arrays and operations."""

    def declare_fragment(self: Any, buf: E.Buffer) -> None:
        """``uint32_t A_frag[tiles * 8];`` for a fragment buffer of ``tiles`` tiles (each tile the
        registers :data:`REGISTERS` gives its role and dtype)."""
        self.check_wmma_arch(buf)
        ctype, count = _regs(buf)
        self.emit(f"{ctype} {self.name_of(buf.data, buf.name)}[{self.alloc_size(buf)} * {count}];")

    def check_wmma_arch(self: Any, buf: E.Buffer) -> None:
        """Fragments need tensor cores (sm_70+; 8-bit integer ones sm_72+); an older arch is a
        compile-time error."""
        need = MIN_SM_INT8 if buf.dtype in ("int8", "uint8", "int32") else MIN_SM
        if self.arch_sm is not None and self.arch_sm < need:
            raise CodegenError(
                f"{buf.dtype} tensor-core fragments (T.tvm_mma_sync ...) need sm_{need} or newer; "
                f"target arch is {self.arch}"
            )

    def _tile(self: Any, load: E.BufferLoad) -> str:
        count = _regs(load.buffer)[1]
        return f"(&{self.name_of(load.buffer.data, load.buffer.name)}[({self.expr(load.indices[0])}) * {count}])"

    def _helper(self: Any, name: str, params: str, body: str) -> str:
        self.helpers.setdefault(name, f"{self.HELPER_QUALIFIER} void {name}({params}) {{\n{body}\n}}")
        return name

    def call_fragment_fill(self: Any, call: E.Call) -> str:
        frag, value = call.args[0], call.args[1]
        ctype, count = _regs(frag.buffer)
        if ctype == "float":
            name = self._helper("tvm_wmma_fill_f32", "float* r, float v", "  for (int i = 0; i < 8; ++i) r[i] = v;")
        elif ctype == "int32_t":
            body = "  for (int i = 0; i < 8; ++i) r[i] = v;"
            name = self._helper("tvm_wmma_fill_s32", "int32_t* r, int32_t v", body)
            return f"{name}({self._tile(frag)}, (int32_t)({self.expr(value)}))"
        else:
            _, to_half = self.half_converters("float16")
            body = f"  uint32_t h = {to_half}(v);\n  for (int i = 0; i < {count}; ++i) r[i] = h | (h << 16);"
            name = self._helper("tvm_wmma_fill_f16", "uint32_t* r, float v", body)
        return f"{name}({self._tile(frag)}, (float)({self.expr(value)}))"

    def _move(self: Any, call: E.Call, store: bool) -> str:
        frag, mem, stride, layout = call.args[:4]
        role = E.FRAGMENT_SCOPES[frag.buffer.scope]
        shape, row = _shape(call), "row" if layout.value == "row_major" else "col"
        ctype, count = _regs(frag.buffer)[0], _count(frag.buffer, _shape(call))
        mem_type = _suffix(mem.buffer.dtype)
        if mem.buffer.dtype != frag.buffer.dtype:
            raise CodegenError(
                f"T.tvm_{'store' if store else 'load'}_matrix_sync: memory {mem.buffer.name} is {mem.buffer.dtype}, "
                f"fragment {frag.buffer.name} is {frag.buffer.dtype}; PTX wmma moves tiles of the fragment's dtype"
            )
        regs = operand_list(0 if not store else 1, count)
        if store:
            name = f"tvm_wmma_store_{row}_{shape}_{mem_type}"
            ins = ['"l"(p)', *_constraints("", "r", count, ctype), '"r"(stride)']
            asm = f'"wmma.store.d.sync.aligned.{row}.{shape}.{mem_type} [%0], {regs}, %{count + 1};"'
            body = f'  asm volatile({asm}\n               :: {", ".join(ins)} : "memory");'
            params = f"void* p, const {ctype}* r, int32_t stride"
        else:
            which = {"matrix_a": "a", "matrix_b": "b", "accumulator": "c"}[role]
            name = f"tvm_wmma_load_{which}_{row}_{shape}_{mem_type}"
            outs = _constraints("=", "r", count, ctype)
            asm = f'"wmma.load.{which}.sync.aligned.{row}.{shape}.{mem_type} {regs}, [%{count}], %{count + 1};"'
            body = f'  asm volatile({asm}\n               : {", ".join(outs)} : "l"(p), "r"(stride) : "memory");'
            params = f"{ctype}* r, const void* p, int32_t stride"
        self._helper(name, params, body)
        pointer = self.address_of(mem)
        if store:
            return f"{name}({pointer}, {self._tile(frag)}, {self.expr(stride)})"
        return f"{name}({self._tile(frag)}, {pointer}, {self.expr(stride)})"

    def call_fragment_load(self: Any, call: E.Call) -> str:
        return self._move(call, store=False)

    def call_fragment_store(self: Any, call: E.Call) -> str:
        return self._move(call, store=True)

    def call_fragment_mma(self: Any, call: E.Call) -> str:
        d, a, b, c = call.args[:4]
        rows = tuple("row" if x.value == "row_major" else "col" for x in call.args[4:6])
        shape = _shape(call)
        (d_type, d_count), (c_type, c_count) = _regs(d.buffer), _regs(c.buffer)
        a_count, b_count = _count(a.buffer, shape), _count(b.buffer, shape)
        dt, at, bt, ct = (_suffix(x.buffer.dtype) for x in (d, a, b, c))
        name = f"tvm_wmma_mma_{rows[0]}_{rows[1]}_{shape}_{dt}_{at}_{bt}_{ct}"
        firsts = (0, d_count, d_count + a_count, d_count + a_count + b_count)
        counts = (d_count, a_count, b_count, c_count)
        operands = ", ".join(operand_list(first, count) for first, count in zip(firsts, counts))
        outs = _constraints("=", "d", d_count, d_type)
        ins = _constraints("", "a", a_count, "uint32_t") + _constraints("", "b", b_count, "uint32_t")
        ins += _constraints("", "c", c_count, c_type)
        # PTX names the float instruction by its D and C types, the integer one by all four
        types = f"{dt}.{at}.{bt}.{ct}" if at in ("s8", "u8") else f"{dt}.{ct}"
        asm = f'"wmma.mma.sync.aligned.{rows[0]}.{rows[1]}.{shape}.{types} {operands};"'
        body = f"  asm volatile({asm}\n               : {', '.join(outs)}\n               : {', '.join(ins)});"
        params = f"{d_type}* d, const uint32_t* a, const uint32_t* b, const {c_type}* c"
        self._helper(name, params, body)
        return f"{name}({', '.join(self._tile(x) for x in (d, a, b, c))})"
