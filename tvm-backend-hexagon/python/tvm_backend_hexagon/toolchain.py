"""Compiling generated C into a static Hexagon executable.

The compiler is the clang that the pip package ``ziglang`` ships (a dependency of this wheel):
unlike Debian's clang, which has the Hexagon target but no Hexagon C library, it brings musl and
compiler-rt for ``hexagon-linux-musl`` (integer and float division, ``libm``), builds them on
first use into its own cache (``ZIG_GLOBAL_CACHE_DIR``, default ``~/.cache/zig``; about a minute,
once per machine) and links a static executable that qemu-hexagon runs.

Every module's executable is the kernels linked with the kernel server (``server.c``). Results
are cached under ``hexagon/`` in TVM's cache directory, keyed by the source, the flags and the
zig version.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from tvm.contrib.cc import CompileError

#: The pip requirement of the compiler (the same pin as the wheel's dependency).
ZIG_REQUIREMENT = "ziglang==0.17.1"
#: The CPU the kernels are built for: v66 (qemu-hexagon runs it), optionally with 128-byte HVX.
DEFAULT_MCPU = "hexagonv66"
SERVER_SOURCE = Path(__file__).with_name("server.c")


def zig_command() -> list[str]:
    """The C compiler command (``python -m ziglang cc``); CompileError naming the package when
    ziglang is not installed."""
    if importlib.util.find_spec("ziglang") is None:
        raise CompileError(
            f"compiling for hexagon needs the clang of the pip package ziglang: pip install '{ZIG_REQUIREMENT}'"
        )
    return [sys.executable, "-m", "ziglang", "cc"]


@lru_cache(maxsize=None)
def zig_version() -> str:
    """The installed ziglang's version (part of every cache key)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ziglang")
    except PackageNotFoundError:
        return "unknown"


#: The Hexagon CPUs with HVX that qemu-hexagon models (it cannot start v68 and later).
SIMULATED_MCPUS = ("hexagonv60", "hexagonv62", "hexagonv65", "hexagonv66", "hexagonv67")


def compile_flags(mcpu: str = DEFAULT_MCPU, hvx: int = 128) -> list[str]:
    """clang flags for a static executable; ``hvx`` is the HVX vector length in bytes (128) or 0
    for scalar code. The HVX features are always named, so that one build of the C library
    serves both; what changes is whether the vectorizer may use HVX."""
    if hvx not in (0, 128):
        raise ValueError(f"hexagon target: hvx={hvx!r} is not supported (128 for HVX, 0 for scalar code)")
    if mcpu not in SIMULATED_MCPUS:
        raise ValueError(
            f"hexagon target: mcpu={mcpu!r} is not a Hexagon CPU the simulator runs; use one of "
            f"{', '.join(SIMULATED_MCPUS)} (qemu-hexagon has no model of later ones)"
        )
    version = mcpu.removeprefix("hexagon")
    return [
        "-target",
        "hexagon-linux-musl",
        f"-mcpu={mcpu}+hvx{version}+hvx_length128b",
        "-O3",
        "-ffp-contract=off",  # a * b + c rounded twice, as NumPy and every other backend compute it
        "-fno-strict-aliasing",  # a buffer viewed in another dtype (data=) reads what was written
        "-static",
        "-g0",
        "-s",  # stripped: smaller, and the same bytes whichever folder it was built in
        "-std=gnu11",
        "-fno-math-errno",
        "-mllvm",
        f"-hexagon-autohvx={'true' if hvx else 'false'}",
        # HVX code for a loop left early (the `for` of a search that ends in `break`) computes
        # only the first lane of each vector right under qemu-hexagon 7.2: such loops stay scalar.
        *(("-mllvm", "-enable-early-exit-vectorization=false") if hvx else ("-fno-vectorize", "-fno-slp-vectorize")),
        # clang's HVX fixed-point idiom (`(x * y) >> k` as a widening multiply-high) is exact only
        # when the product does not wrap: TIR's products wrap to their dtype, as NumPy's do.
        *(("-mllvm", "-hvc-vi=false") if hvx else ()),
        # Widening a loop to the full vector for bandwidth ignores a loop-carried dependence
        # shorter than the vector (`C[i + 4] = C[i] + C[i + 4]` vectorized 32 wide): no wider
        # than the dependence allows.
        *(("-mllvm", "-vectorizer-maximize-bandwidth=false") if hvx else ()),
        # One instruction per packet: under qemu-hexagon 7.2, a load in a `:mem_noshuf` packet
        # that clang 22 forms with a store to the same address (a private array written at a
        # computed index, then read) read the value before the store. The kernels only ever run
        # under the simulator, which executes a packet's instructions one by one anyway.
        "-mllvm",
        "-disable-packetizer",
    ]


@lru_cache(maxsize=None)
def _server_source() -> str:
    return SERVER_SOURCE.read_text()


def build_executable(source: str, flags: list[str]) -> bytes:
    """The static executable of the kernels in ``source`` linked with the kernel server (cached).
    CompileError shows the compiler's log."""
    from tvm._cache import cached_entry

    key = hashlib.sha256("\0".join([source, _server_source(), *flags, zig_version()]).encode()).hexdigest()
    return cached_entry("hexagon", key, ".elf", lambda: _compile(source, flags))


def _compile(source: str, flags: list[str]) -> bytes:
    cmd = zig_command()
    marker = _announce_first_build(flags)
    with tempfile.TemporaryDirectory(prefix="tvm-hexagon-") as tmp:
        kernels = os.path.join(tmp, "kernels.c")
        out = os.path.join(tmp, "kernels.elf")
        Path(kernels).write_text(source)
        full = [*cmd, *flags, kernels, str(SERVER_SOURCE), "-o", out, "-lm"]
        proc = subprocess.run(full, capture_output=True, text=True)
        if proc.returncode != 0:
            log = (proc.stdout + proc.stderr).replace(tmp + os.sep, "")
            raise CompileError(
                f"compiling for hexagon failed ({' '.join(full[:4])} exited with {proc.returncode}):\n{log}"
            )
        if marker is not None:
            try:
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.touch()
            except OSError:
                pass
        return Path(out).read_bytes()


def _announce_first_build(flags: list[str]) -> Path | None:
    """Say, when no compile for this CPU has succeeded here yet, that zig may first build its
    Hexagon C library (about a minute); returns the marker to create after success."""
    from tvm._cache import cache_subdir

    d = cache_subdir("hexagon")
    cpu = [f for f in flags if f.startswith("-mcpu=")]  # zig builds its C library per CPU
    tag = hashlib.sha256("\0".join([*cpu, zig_version()]).encode()).hexdigest()[:16]
    marker = None if d is None else Path(d) / f"toolchain-ready-{tag}"
    if marker is not None and not marker.exists():
        print(
            "tvm-backend-hexagon: the first compile builds zig's Hexagon C library (about a minute, once per machine)",
            file=sys.stderr,
        )
    return marker
