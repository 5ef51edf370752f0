"""Helpers shared by the ROCm backend's tests (a uniquely named module, so the test suites of all
packages can run in one pytest session): the code objects of a module, what llvm-readelf says
about them, and the mock HIP library."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
READELF_HINT = "apt-get install llvm-19 (llvm-readelf)"


def find_readelf() -> str | None:
    """llvm-readelf (Debian's llvm-19 names it llvm-readelf-19), or None."""
    for name in ("llvm-readelf-19", "llvm-readelf"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/lib/llvm-19/bin/llvm-readelf" if os.access("/usr/lib/llvm-19/bin/llvm-readelf", os.X_OK) else None


def code_objects(mod: Any) -> dict[str, bytes]:
    """Architecture -> code object of a compiled program's ``rocm`` device module."""
    from tvm_backend_rocm import clang

    data = bytes(mod.imports[0].save_to_bytes())
    return clang.unpack(data[data.index(clang.MAGIC) :])


def readelf(readelf_path: str, obj: bytes, tmp: Path, *flags: str) -> str:
    """llvm-readelf's output for code object ``obj``."""
    path = tmp / "object.hsaco"
    path.write_bytes(obj)
    return subprocess.run([readelf_path, *flags, str(path)], capture_output=True, text=True, check=True).stdout


def kernel_metadata(notes: str) -> dict[str, dict[str, Any]]:
    """The ``amdhsa.kernels`` metadata of ``llvm-readelf --notes`` output, by kernel name: scalar
    fields as ints or strings, and ``args`` as a list of dicts."""
    kernels: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    in_args = False
    for line in notes.splitlines():
        if re.match(r"^  - \.", line):  # a new kernel
            current, in_args = {"args": []}, False
        if current is None:
            continue
        m = re.match(r"^(\s*)(- )?\.(\w+):\s*(.*)$", line)
        if not m:
            continue
        indent, dash, key, value = len(m.group(1)) + (2 if m.group(2) else 0), m.group(2), m.group(3), m.group(4)
        if key == "args":
            in_args = True
            continue
        if in_args and indent >= 8:
            if dash:
                current["args"].append({})
            current["args"][-1][key] = int(value) if value.isdigit() else value
            continue
        in_args = False
        current[key] = int(value) if value.isdigit() else value
        if key == "name":
            kernels[value] = current
    return kernels


def build_mock_hip(out_dir: Path) -> Path | None:
    """Build the mock libamdhip64.so (tests/mock_hip) into ``out_dir``; None without a C compiler."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    lib = out_dir / "libamdhip64.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(HERE / "mock_hip" / "mock_libamdhip64.c")], check=True
    )
    return lib
