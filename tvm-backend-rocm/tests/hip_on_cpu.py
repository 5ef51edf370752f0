"""Builds the HIP our code generator produced into a CPU library the mock HIP library runs.

The source is compiled unchanged after ``mock_hip/hip_on_cpu.h`` (the kit's CUDA-dialect emulator,
``tvm/testing/gpu_on_cpu.h``, plus the AMDGPU builtins), except for the three attribute macros of
its prelude, which the emulator defines its own way (``__shared__`` as function statics).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from tvm.testing import GPU_ON_CPU_HEADER, on_cpu_dynamic_shared

HERE = Path(__file__).resolve().parent
SHIM = HERE / "mock_hip" / "hip_on_cpu.h"
_KERNEL = re.compile(
    r'extern "C" __global__ void (?:__attribute__\(\(amdgpu_flat_work_group_size\(1, \d+\)\)\) )?(\w+)\('
)
_PRELUDE_ATTRIBUTES = re.compile(r"^#define __(global|device|shared)__ .*$", re.M)


def kernel_names(hip_source: str) -> list[str]:
    """The ``extern "C" __global__`` kernels defined in ``hip_source``."""
    return _KERNEL.findall(hip_source)


def build(hip_source: str, out_dir: Path) -> Path:
    """Compile ``hip_source`` into ``out_dir/libhip_on_cpu_<hash>.so`` (reused when it exists)."""
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx is None:
        raise RuntimeError("no C++ compiler to build the CPU emulation of the kernels")
    hip_source = on_cpu_dynamic_shared(hip_source)
    text = (
        '#include "hip_on_cpu.h"\nnamespace tvm_emu_kernels {\n'
        + _PRELUDE_ATTRIBUTES.sub("", hip_source)
        + "\n}  // namespace tvm_emu_kernels\n"
        + "".join(f"TVM_EMU_HIP_KERNEL({n})\n" for n in kernel_names(hip_source))
    )
    digest = hashlib.sha256(text.encode() + SHIM.read_bytes() + Path(GPU_ON_CPU_HEADER).read_bytes()).hexdigest()[:16]
    lib = Path(out_dir) / f"libhip_on_cpu_{digest}.so"
    if not lib.exists():
        src = lib.with_suffix(".cc")
        src.write_text(text)
        include = [f"-I{SHIM.parent}", f"-I{Path(GPU_ON_CPU_HEADER).parent}"]
        proc = subprocess.run(
            [cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-w", *include, "-o", str(lib), str(src)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"the CPU emulation of the kernels did not compile:\n{proc.stderr}")
    return lib
