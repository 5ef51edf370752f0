"""Builds the CUDA C our code generator produced into a CPU library the mock libcuda.so.1 runs.

See the kit's ``tvm/testing/gpu_on_cpu.h`` for the execution model. The generated source is compiled
unchanged except for its inline PTX: the helpers that wrap it (float16 conversions, the lane id,
ldmatrix, mma, cp.async) are swapped for calls into the emulator's models, the cp.async group
statements likewise (wmma fragments included), ``#if __CUDA_ARCH__`` branches take their portable ``#else``, and
``extern __shared__`` (dynamic shared memory) names the emulator's buffer. Inline PTX without a
model is refused with a reason.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

from cuda_helpers import find_cxx
from tvm.testing import GPU_ON_CPU_HEADER, on_cpu_dynamic_shared

HERE = Path(__file__).resolve().parent
HEADER = Path(GPU_ON_CPU_HEADER)
HEADER_DIR = HEADER.parent

_HOST_HELPERS = {
    "tvm_h2f": "static inline float tvm_h2f(uint16_t h) { return ::tvm_emu::half_to_float(h); }",
    "tvm_f2h": "static inline uint16_t tvm_f2h(float f) { return ::tvm_emu::float_to_half(f); }",
    "tvm_lane_id": "static inline int32_t tvm_lane_id() { return (int32_t)::tvm_emu::lane_id(); }",
    "tvm_smem_addr": "",  # only the PTX helpers below used it
    # without a programmatic dependent launch (the emulator has none) both return at once
    "tvm_griddepcontrol_wait": "static inline void tvm_griddepcontrol_wait() {}",
    "tvm_griddepcontrol_launch_dependents": "static inline void tvm_griddepcontrol_launch_dependents() {}",
}
_HOST_HELPER_PATTERNS = [
    (
        re.compile(r"tvm_ldmatrix_x(\d)(_trans)?$"),
        lambda m: (
            f"static inline void {m.group(0)}(uint32_t* d, const void* smem) "
            f"{{ ::tvm_emu::ldmatrix(d, smem, {m.group(1)}, {'true' if m.group(2) else 'false'}); }}"
        ),
    ),
    (
        re.compile(r"tvm_mma_m(\d+)n(\d+)k(\d+)_(\w+?)_(\w+?)_(\w+?)_([a-z0-9]+?)(_satfinite)?$"),
        lambda m: _mma_sync(m),
    ),
    (
        re.compile(r"tvm_wmma_load_([abc])_(row|col)_m(\d+)n(\d+)k(\d+)_(f16|f32|s8|u8|s32)$"),
        lambda m: _wmma_load(m),
    ),
    (
        re.compile(r"tvm_wmma_store_(row|col)_m(\d+)n(\d+)k(\d+)_(f16|f32|s32)$"),
        lambda m: (
            f"static inline void {m.group(0)}(void* p, const void* r, int32_t stride) "
            f"{{ ::tvm_emu::wmma_store(p, r, stride, {str(m.group(1) == 'col').lower()}, {m.group(2)}, "
            f"{m.group(3)}, {_emu_type(m.group(5))}, 8); }}"
        ),
    ),
    (
        re.compile(r"tvm_wmma_mma_(?:row|col)_(?:row|col)_m(\d+)n(\d+)k(\d+)_(\w+?)_(\w+?)_(\w+?)_([a-z0-9]+)$"),
        lambda m: _wmma_mma(m),
    ),
    (
        re.compile(r"tvm_cp_async_(\d+)$"),
        lambda m: (
            f"static inline void {m.group(0)}(void* smem, const void* gmem) "
            f"{{ ::tvm_emu::cp_async(smem, gmem, {m.group(1)}); }}"
        ),
    ),
]


_MMA_TYPES = {"f16": "kF16", "bf16": "kBF16", "tf32": "kTF32", "f32": "kF32", "f64": "kF64", "s8": "kS8"}
_MMA_TYPES.update({"u8": "kU8", "s32": "kS32"})


def _mma_sync(m: re.Match) -> str:
    """The model of ``tvm_mma_m<M>n<N>k<K>_<d>_<a>_<b>_<c>[_satfinite]`` (PTX type names)."""
    td, ta, tb, tc = (f"::tvm_emu::MmaType::{_MMA_TYPES[t]}" for t in m.group(4, 5, 6, 7))
    return (
        f"static inline void {m.group(0)}(void* d, const void* a, const void* b, const void* c) "
        f"{{ ::tvm_emu::mma_sync(d, a, b, c, {m.group(1)}, {m.group(2)}, {m.group(3)}, {ta}, {tb}, {tc}, {td}, "
        f"{'true' if m.group(8) else 'false'}); }}"
    )


def _emu_type(ptx: str) -> str:
    return f"::tvm_emu::MmaType::{_MMA_TYPES[ptx]}"


def _wmma_slots(ptx: str, rows: int, cols: int) -> int:
    """Slots of an A or B tile per lane: 16 halves (8 f16x2 registers, each element twice) for
    f16, one byte per element for 8-bit integers."""
    return 16 if ptx == "f16" else rows * cols // 32


def _wmma_load(m: re.Match) -> str:
    """The model of ``tvm_wmma_load_<a|b|c>_<layout>_m<M>n<N>k<K>_<type>``: a tile of A (M x K),
    B (K x N) or C (M x N)."""
    which, layout, mm, nn, kk, kind = m.groups()
    rows, cols = {"a": (mm, kk), "b": (kk, nn), "c": (mm, nn)}[which]
    slots = 8 if which == "c" else _wmma_slots(kind, int(rows), int(cols))
    return (
        f"static inline void {m.group(0)}(void* r, const void* p, int32_t stride) "
        f"{{ ::tvm_emu::wmma_load(r, p, stride, {str(layout == 'col').lower()}, {rows}, {cols}, "
        f"{_emu_type(kind)}, {slots}); }}"
    )


def _wmma_mma(m: re.Match) -> str:
    """The model of ``tvm_wmma_mma_<a layout>_<b layout>_m<M>n<N>k<K>_<d>_<a>_<b>_<c>``."""
    mm, nn, kk = (int(x) for x in m.group(1, 2, 3))
    td, ta, tb, tc = m.group(4, 5, 6, 7)
    return (
        f"static inline void {m.group(0)}(void* d, const void* a, const void* b, const void* c) "
        f"{{ ::tvm_emu::wmma_mma(d, a, b, c, {mm}, {nn}, {kk}, {_emu_type(td)}, {_emu_type(ta)}, "
        f"{_emu_type(tb)}, {_emu_type(tc)}, {_wmma_slots(ta, mm, kk)}, {_wmma_slots(tb, kk, nn)}); }}"
    )


_INLINE_PTX = [
    (re.compile(r'asm volatile\("cp\.async\.commit_group;" ::: "memory"\)'), "::tvm_emu::cp_async_commit()"),
    (re.compile(r'asm volatile\("cp\.async\.wait_group (\d+);" ::: "memory"\)'), r"::tvm_emu::cp_async_wait(\1)"),
]
_HELPER_START = "static __device__ __forceinline__ "
_HELPER_NAME = re.compile(r"^static __device__ __forceinline__ [\w ]+?\b(\w+)\(")
_ARCH_BRANCH = re.compile(r"^#if __CUDA_ARCH__[^\n]*\n.*?^#else\n(.*?)^#endif\n", re.M | re.S)
_KERNEL = re.compile(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(')


class NotEmulable(Exception):
    """The kernel uses something the CPU emulator cannot run."""


def _host_helper(name: str) -> str:
    if name in _HOST_HELPERS:
        return _HOST_HELPERS[name]
    for pattern, make in _HOST_HELPER_PATTERNS:
        m = pattern.match(name)
        if m:
            return make(m)
    raise NotEmulable(f"helper {name} is inline PTX the CPU emulator has no model of")


def _replace_ptx_helpers(src: str) -> str:
    """Swap each helper whose body is inline PTX (one line or a brace-balanced block) for its
    host version."""
    out, lines, i = [], src.split("\n"), 0
    while i < len(lines):
        if not lines[i].startswith(_HELPER_START):
            out.append(lines[i])
            i += 1
            continue
        j, depth = i, 0
        while True:
            depth += lines[j].count("{") - lines[j].count("}")
            if depth <= 0 and "{" in "".join(lines[i : j + 1]):
                break
            j += 1
        block = "\n".join(lines[i : j + 1])
        out.append(_host_helper(_HELPER_NAME.match(block).group(1)) if re.search(r"\basm\b", block) else block)
        i = j + 1
    return "\n".join(out)


def host_source(cuda_source: str) -> str:
    """The generated CUDA C made compilable after gpu_on_cpu.h (see the module docstring)."""
    # `#if __CUDA_ARCH__ >= N` PTX paths: the host build takes their portable `#else` branch
    src = _ARCH_BRANCH.sub(lambda m: m.group(1), cuda_source)
    src = _replace_ptx_helpers(src)
    for pattern, repl in _INLINE_PTX:
        src = pattern.sub(repl, src)
    # the module's dynamic shared memory array is the header's global one
    src = on_cpu_dynamic_shared(src)
    src = src.replace("extern __shared__", "extern")
    leftover = re.search(r"\basm\b.*", src)
    if leftover:
        raise NotEmulable(f"inline PTX the CPU emulator cannot run: {leftover.group(0)[:80]}")
    return src


def kernel_names(cuda_source: str) -> list[str]:
    """The ``extern "C" __global__`` kernels defined in ``cuda_source``."""
    return _KERNEL.findall(cuda_source)


def build(cuda_source: str, out_dir: Path) -> Path:
    """Compile ``cuda_source`` into ``out_dir/libcuda_on_cpu_<hash>.so`` (reused when it exists)."""
    cxx = find_cxx()
    if cxx is None:
        raise NotEmulable("no C++ compiler to build the CPU emulation of the kernels")
    names = kernel_names(cuda_source)
    text = (
        '#include "gpu_on_cpu.h"\nnamespace tvm_emu_kernels {\n'
        + host_source(cuda_source)
        + "\n}  // namespace tvm_emu_kernels\n"
        + "".join(f"TVM_EMU_KERNEL({n})\n" for n in names)
    )
    digest = hashlib.sha256(text.encode() + HEADER.read_bytes()).hexdigest()[:16]
    lib = Path(out_dir) / f"libcuda_on_cpu_{digest}.so"
    if not lib.exists():
        src = lib.with_suffix(".cc")
        src.write_text(text)
        proc = subprocess.run(
            [cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-w", f"-I{HEADER_DIR}", "-o", str(lib), str(src)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"the CPU emulation of the kernels did not compile:\n{proc.stderr}")
    return lib
