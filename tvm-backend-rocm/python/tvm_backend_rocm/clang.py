"""Compiling HIP C++ into AMDGPU code objects with clang, without a ROCm installation.

clang's HIP device-only mode (``-nogpuinc -nogpulib --offload-device-only
--no-gpu-bundle-output``) turns the generated, self-contained source into one ELF code object per
``gfx`` architecture, linked by lld. The compiler is ``$TVM_ROCM_CLANG``, else ROCm's own clang
(``/opt/rocm/llvm/bin/clang``) when ROCm is installed, else ``clang-19`` or ``clang`` on PATH
(Debian: ``apt-get install clang-19 lld-19``). Objects are cached under ``rocm/`` in TVM's cache
directory, keyed by the source, the architecture, the flags and the compiler's version.

The payload of a ``rocm`` module (format ``hsaco``) holds every object: ``TVMHSACO``, a u64
count, then per object its architecture and its bytes (each a u64 length and the data; all
integers little-endian). The runtime loads the one the device accepts.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from tvm.contrib.cc import CompileError

#: What to install when no suitable clang is found.
INSTALL_HINT = (
    "apt-get install clang-19 lld-19 (or install ROCm, or set TVM_ROCM_CLANG to a clang with the AMDGPU target)"
)
#: The architectures a module is built for when the target names none.
DEFAULT_ARCHS = ("gfx90a", "gfx942", "gfx1100")
MAGIC = b"TVMHSACO"
FLAGS = (
    "-x",
    "hip",
    "-std=c++17",
    "-nogpuinc",
    "-nogpulib",
    "--offload-device-only",
    "--no-gpu-bundle-output",
    "-O3",
    "-cuid=0",  # the same bytes from the same source (the default id is random)
)


def find_clang() -> str | None:
    """The clang that compiles HIP for AMDGPU here, or None."""
    env = os.environ.get("TVM_ROCM_CLANG")
    if env:
        return env
    if os.access("/opt/rocm/llvm/bin/clang", os.X_OK):
        return "/opt/rocm/llvm/bin/clang"
    return shutil.which("clang-19") or shutil.which("clang")


@lru_cache(maxsize=None)
def clang_version(clang: str) -> str:
    """The first line of ``clang --version`` (part of every cache key)."""
    try:
        out = subprocess.run([clang, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise CompileError(f"cannot run the ROCm compiler {clang!r}: {err}. {INSTALL_HINT}") from err
    return (out.stdout.splitlines() or ["unknown"])[0]


def _explain_failure(clang: str, arch: str, log: str) -> str:
    if 'Executable "lld" doesn' in log or "ld.lld" in log and "not found" in log:
        return f"{clang} cannot link AMDGPU code objects: lld is missing ({INSTALL_HINT})"
    return f"compiling HIP for {arch} failed ({clang} exited with an error):\n{log}"


def compile_object(source: str, arch: str, clang: str) -> bytes:
    """The code object of ``source`` for ``arch`` (cached); CompileError with clang's log."""
    key = hashlib.sha256("\0".join([source, arch, *FLAGS, clang_version(clang)]).encode()).hexdigest()
    from tvm._cache import cached_entry

    return cached_entry("rocm", key, ".hsaco", lambda: _compile(source, arch, clang))


def _compile(source: str, arch: str, clang: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="tvm-rocm-") as tmp:
        src, out = Path(tmp) / "kernels.hip", Path(tmp) / f"kernels-{arch}.hsaco"
        src.write_text(source)
        cmd = [clang, *FLAGS, f"--offload-arch={arch}", "-o", str(out), str(src)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise CompileError(f"cannot run the ROCm compiler {clang!r}: {err}. {INSTALL_HINT}") from err
        if proc.returncode != 0:
            raise CompileError(_explain_failure(clang, arch, (proc.stdout + proc.stderr).replace(tmp + os.sep, "")))
        return out.read_bytes()


def compile_objects(source: str, archs: list[str], clang: str) -> dict[str, bytes]:
    """One code object per architecture, compiled in parallel."""
    with ThreadPoolExecutor(max_workers=min(4, len(archs)) or 1) as pool:
        objects = list(pool.map(lambda a: compile_object(source, a, clang), archs))
    return dict(zip(archs, objects))


def pack(objects: dict[str, bytes]) -> bytes:
    """The ``hsaco`` payload holding ``objects`` (architecture -> code object)."""
    out = [MAGIC, len(objects).to_bytes(8, "little")]
    for arch, data in objects.items():
        name = arch.encode()
        out += [len(name).to_bytes(8, "little"), name, len(data).to_bytes(8, "little"), data]
    return b"".join(out)


def unpack(payload: bytes) -> dict[str, bytes]:
    """The objects of an ``hsaco`` payload; ValueError naming the problem when it is malformed."""
    if payload[:8] != MAGIC or len(payload) < 16:
        raise ValueError("not a rocm code-object payload (no TVMHSACO header)")
    count, pos, out = int.from_bytes(payload[8:16], "little"), 16, {}

    def take() -> bytes:
        nonlocal pos
        if pos + 8 > len(payload):
            raise ValueError("truncated rocm code-object payload")
        n = int.from_bytes(payload[pos : pos + 8], "little")
        if n > len(payload) - pos - 8:
            raise ValueError("truncated rocm code-object payload")
        pos += 8 + n
        return payload[pos - n : pos]

    for _ in range(count):
        arch = take().decode()
        out[arch] = take()
    return out
