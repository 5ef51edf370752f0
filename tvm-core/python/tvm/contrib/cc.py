"""Compile generated C with the system compiler, with an on-disk compile cache.

* compiler: ``$CC``; else ``cc``, ``gcc`` or ``clang`` on PATH; else the clang that the pip package
  ``ziglang`` ships (``pip install ziglang``, the core's ``cc`` extra; it has no OpenMP runtime, so
  parallel loops run on one thread with it). Flags ``-O3 -std=gnu11 -fPIC -shared``, ``-fopenmp`` when the
  code has parallel loops (``-fopenmp-simd`` otherwise), ``-march=<cpu>`` from the target's
  ``-mcpu``; tvm-ffi's include directory; links libtvm_ffi with an rpath to it.
* cache: ``compile/`` under ``$TVM_CACHE_DIR`` (default ``~/.cache/tvm``; see :mod:`tvm._cache`),
  keyed by sha256 of the code, the flags and the compiler's version; entries are written
  atomically (temporary file + rename), so concurrent processes can share a cache directory, and
  each records its CRC-32 next to it: a truncated or altered library is compiled again.
* errors: :class:`CompileError` shows the compiler's log followed by the generated source lines it
  complains about.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

from tvm._cache import ENTRY_LIMIT, ScratchError, atomic_write, in_scratch, naming, read_regular_file, scratch_prefix
from tvm._user_warning import warn_at_caller


class CompileError(RuntimeError):
    """The C compiler rejected generated code (message: log + offending source lines);
    ``undefined`` names the symbols the linker could not find, ``undeclared`` the functions the
    code calls that no header declares."""

    def __init__(self, message: str, undefined: Sequence[str] = (), undeclared: Sequence[str] = ()):
        super().__init__(message)
        self.undefined = list(undefined)
        self.undeclared = list(undeclared)


#: What to do when no C compiler is found (the CPU target compiles generated C).
NO_COMPILER = (
    "no C compiler found: the CPU target compiles the generated C with one (looked for $CC, then cc, gcc "
    "and clang on PATH, then the pip package ziglang). Install one: Debian/Ubuntu `apt-get install gcc`, "
    "Fedora `dnf install gcc`, macOS `xcode-select --install`; or `pip install ziglang` (the core's `cc` "
    "extra) for a clang that pip installs; or set CC to a compiler's command"
)


def _zig_available() -> bool:
    try:
        return importlib.util.find_spec("ziglang") is not None
    except (ImportError, ValueError):  # a module set to None in sys.modules
        return False


def compiler() -> list[str]:
    """The C compiler command: ``$CC`` (split like a shell would), else the first of ``cc``,
    ``gcc``, ``clang`` on PATH, else ziglang's clang; :class:`CompileError` naming what to install
    when there is none."""
    from_env = shlex.split(os.environ.get("CC", ""))
    if from_env:
        return from_env
    path = os.environ.get("PATH", "")
    found = _FOUND_COMPILERS.get(path) or _find_compiler(path)
    if found is None:
        raise CompileError(NO_COMPILER)
    _FOUND_COMPILERS[path] = found
    return list(found)


#: The compiler found per PATH value (a miss is not remembered: installing one then works).
_FOUND_COMPILERS: dict[str, tuple[str, ...]] = {}


def _find_compiler(path: str) -> tuple[str, ...] | None:
    """The first of cc, gcc, clang on ``path``, else ziglang's clang."""
    for name in ("cc", "gcc", "clang"):
        if shutil.which(name, path=path):
            return (name,)
    if _zig_available():
        return (sys.executable, "-m", "ziglang", "cc")
    return None


def has_openmp(cmd: Sequence[str]) -> bool:
    """Whether the compiler links OpenMP: ziglang's clang ships no OpenMP runtime, and a clang
    without libomp installed cannot link ``-fopenmp`` (asked once per compiler and process)."""
    if "ziglang" in cmd or os.path.basename(cmd[0]) == "zig":
        return False
    return _links_openmp(tuple(cmd))


@lru_cache(maxsize=None)
def _links_openmp(cmd: tuple[str, ...]) -> bool:
    probe = "int tvm_probe(void) {\n  int n = 0;\n#pragma omp parallel\n  n = 1;\n  return n;\n}\n"
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("omp")) as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write(probe)
        try:
            defs = ["-Wl,-z,defs"] if sys.platform.startswith("linux") else []  # as the real build links
            done = subprocess.run(
                [*cmd, "-fopenmp", "-shared", "-fPIC", *defs, "-o", os.path.join(tmp, "probe.so"), src],
                capture_output=True,
                timeout=120,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == 0


@lru_cache(maxsize=None)
def _ffi_paths() -> tuple[str, str]:
    import tvm_ffi.libinfo as li

    inc = li.find_include_path()
    lib = li.find_libtvm_ffi()
    return inc, os.path.dirname(lib)


def ffi_include_dirs() -> list[str]:
    """Include directories of tvm-ffi (``tvm/ffi/c_api.h``, ``dlpack/dlpack.h``)."""
    import tvm_ffi.libinfo as li

    dirs = [_ffi_paths()[0]]
    try:
        dl = li.find_dlpack_include_path()
    except Exception:  # noqa: BLE001 - older tvm-ffi: dlpack ships inside the include dir
        dl = None
    if dl and dl not in dirs:
        dirs.append(dl)
    return dirs


def ffi_link_flags() -> list[str]:
    """Linker flags for libtvm_ffi (with an rpath to its directory)."""
    libdir = _ffi_paths()[1]
    return [f"-L{libdir}", "-ltvm_ffi", f"-Wl,-rpath,{libdir}"]


_VERSIONS: dict[tuple[str, ...], str] = {}

#: Longest compiler-version memo that is trusted (a first line of ``cc --version`` is far shorter).
_MEMO_MAX = 4096


def _read_version_memo(memo: Path) -> str | None:
    """The compiler version remembered in ``memo``; None when it is absent or cannot be read or
    parsed (not a regular file, not UTF-8, empty, several lines, too long), so that the caller runs
    ``cc --version`` again and rewrites it: damage in a cache means a rebuild, never a crash."""
    try:
        if not memo.is_file():  # a directory, FIFO or device at that path is no memo (and must not block)
            return None
        with open(memo, "rb") as f:
            data = f.read(_MEMO_MAX + 1)
        got = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if len(data) > _MEMO_MAX or got.splitlines() != [got] or "\0" in got:
        return None  # what compiler_version writes is one non-empty line
    return got


def compiler_version(cmd: Sequence[str] | None = None) -> str:
    """``<cc> --version`` (first line), remembered per process and per compiler binary on disk."""
    cmd = tuple(cmd or compiler())
    got = _VERSIONS.get(cmd)
    if got is not None:
        return got
    exe = shutil.which(cmd[0]) or cmd[0]
    try:
        st = os.stat(os.path.realpath(exe))
        stamp = f"{os.path.realpath(exe)}:{st.st_mtime_ns}:{st.st_size}:{' '.join(cmd)}"
    except OSError:
        stamp = ""
    memo = None
    cdir = cache_dir()
    if stamp and cdir is not None:
        memo = cdir / "compilers" / hashlib.sha256(stamp.encode()).hexdigest()[:24]
    got = _read_version_memo(memo) if memo is not None else None
    if got is None:
        try:
            out = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise CompileError(
                f"C compiler {' '.join(cmd)!r} cannot run: {err}. Set CC to a working C compiler (gcc or clang)."
            ) from err
        got = (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "unknown"
        if memo is not None:
            try:
                atomic_write(memo, got.encode())
            except OSError:
                pass  # an unwritable cache only costs a `cc --version` per process
    _VERSIONS[cmd] = got
    return got


def cache_dir() -> Path | None:
    """The compile cache directory (``compile/`` under :func:`tvm._cache.cache_root`), or None
    when ``TVM_CACHE_DIR`` disables caching."""
    from tvm._cache import cache_subdir

    d = cache_subdir("compile")
    return None if d is None else Path(d)


def build_flags(*, openmp: bool = False, mcpu: str | None = None, extra: Sequence[str] = ()) -> list[str]:
    """Compiler flags for a shared library of generated host code."""
    # a call of an undeclared function would be compiled as returning int (a wrong value)
    flags = [
        "-O3",
        "-std=gnu11",
        "-fPIC",
        "-shared",
        "-fno-math-errno",
        "-fno-strict-aliasing",  # a buffer viewed in another dtype (data=) reads what was written
        "-fvisibility=hidden",
        "-Werror=implicit-function-declaration",
    ]
    binding_at_load = _BIND_AT_LOAD in extra
    if openmp and not has_openmp(compiler()):
        warnings.warn(
            f"{' '.join(compiler())} has no OpenMP runtime: parallel loops run on one thread "
            "(for multi-threaded CPU kernels install gcc, or this compiler's OpenMP runtime such as libomp-dev "
            "for clang, or set CC)",
            RuntimeWarning,
            stacklevel=3,
        )
        openmp = False
    flags.append("-fopenmp" if openmp else "-fopenmp-simd")
    if mcpu:
        flags.append(f"-march={mcpu}")
    if sys.platform.startswith("linux") and not binding_at_load:
        flags.append("-Wl,-z,defs")  # an undefined symbol is a link error, not a crash at call time
    flags += [f"-I{d}" for d in ffi_include_dirs()]
    flags += list(extra)
    return flags


def _undefined_names(log: str) -> list[str]:
    """The symbols a linker log says are undefined."""
    return sorted(set(re.findall(r"undefined (?:reference to|symbol:?) [`'\"]?([A-Za-z_$][\w$.]*)", log)))


def _undefined_symbols(log: str) -> str:
    """``": undefined symbol(s) ..."`` naming what the linker could not find (a function named by
    ``T.call_extern`` that no linked library defines), or ""."""
    names = _undefined_names(log)
    if not names:
        return ""
    listed = ", ".join(f"'{n}'" for n in names[:5])
    return (
        f": undefined symbol {listed}: a function the kernel calls (T.call_extern) is defined by no library "
        f"it links with (libc, libm, tvm-ffi) nor this process (load the library that defines it with "
        f"ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL) first)"
    )


def _explain(log: str, sources: dict[str, str]) -> str:
    """The compiler log plus, for each ``file:line:`` it mentions, the surrounding source lines."""
    out = [log.rstrip()]
    shown: set[tuple[str, int]] = set()
    for m in re.finditer(r"^(\S+?):(\d+):(?:\d+:)? (?:fatal )?error", log, re.M):
        fname, line = m.group(1), int(m.group(2))
        text = sources.get(os.path.basename(fname))
        if text is None or (fname, line) in shown or len(shown) >= 5:
            continue
        shown.add((fname, line))
        lines = text.splitlines()
        lo, hi = max(1, line - 3), min(len(lines), line + 3)
        out.append(f"\n--- generated source {os.path.basename(fname)}, lines {lo}-{hi} ---")
        for k in range(lo, hi + 1):
            out.append(f"{'>>' if k == line else '  '} {k:5d} | {lines[k - 1]}")
    return "\n".join(out)


def run_compiler(
    sources: dict[str, str], output: str, flags: Sequence[str], objects: Sequence[str] = (), link: bool = True
) -> None:
    """Compile ``sources`` (file name -> C text) and ``objects`` into ``output`` (atomic): a
    shared library, or with ``link=False`` one object file from one source."""
    cmd = compiler()
    with tempfile.TemporaryDirectory(prefix=scratch_prefix("cc")) as tmp:
        paths = []
        for name, text in sources.items():
            p = os.path.join(tmp, name)
            try:
                with open(p, "w") as f:
                    f.write(text)
            except OSError as err:
                raise in_scratch(err, p) from None
            paths.append(p)
        out_tmp = os.path.join(tmp, "out.so")
        if link:
            full = [*cmd, *flags, *paths, *objects, "-o", out_tmp, *ffi_link_flags(), "-lm"]
        else:
            full = [
                *cmd,
                *(f for f in flags if f != "-shared" and not f.startswith("-Wl,")),
                "-c",
                *paths,
                "-o",
                out_tmp,
            ]
        try:
            proc = subprocess.run(full, capture_output=True, text=True)
        except OSError as err:
            raise CompileError(f"cannot run the C compiler {cmd[0]!r}: {err}. Set CC to gcc or clang.") from err
        if proc.returncode != 0:
            log = (proc.stdout + proc.stderr).replace(tmp + os.sep, "")
            raise CompileError(
                f"C compilation failed ({' '.join(cmd)} exited with {proc.returncode}){_undefined_symbols(log)}:\n"
                + _explain(log, sources),
                _undefined_names(log),
                sorted(set(re.findall(r"implicit declaration of function [`'\"\u2018]?([A-Za-z_]\w*)", log))),
            )
        _move_into_place(out_tmp, output)


def _move_into_place(built: str, output: str) -> None:
    """``built`` moved to ``output`` through a private name beside it (threads compiling the same
    key must not share one); an OSError names ``output``, not the private name."""
    final_tmp = None
    try:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        fd, final_tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(output)), prefix=".tmp-")
        os.close(fd)
        shutil.move(built, final_tmp)
        os.replace(final_tmp, output)
    except BaseException as err:  # KeyboardInterrupt too: nothing half-moved stays in the cache
        if final_tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(final_tmp)
        if isinstance(err, OSError):
            raise naming(err, output) from None
        raise


def cache_key(code: str, flags: Sequence[str]) -> str:
    """sha256 of the code, the flags, the compiler's identity/version and tvm-ffi's version (and
    this machine's CPU where a flag says ``native``)."""
    h = hashlib.sha256()
    h.update(code.encode())
    h.update(b"\0" + "\0".join(flags).encode())
    h.update(b"\0" + " ".join(compiler()).encode() + b"\0" + compiler_version().encode())
    h.update(b"\0tvm-ffi " + _ffi_version().encode())  # the headers/ABI the code is built against
    if any("=native" in f for f in flags):  # the CPU it means (a shared cache serves other machines)
        from tvm.tune.fingerprint import cpu_identity

        h.update(b"\0cpu " + cpu_identity().encode())
    return h.hexdigest()


@lru_cache(maxsize=None)
def _ffi_version() -> str:
    import tvm_ffi

    return str(getattr(tvm_ffi, "__version__", "unknown"))


def _checksum_file(path: Path) -> Path:
    return path.with_name(path.name + ".crc")


def _intact(path: Path) -> bool:
    """Whether the cached file at ``path`` is the one that was stored: its CRC-32 matches the one
    recorded next to it. A truncated or altered library is compiled again instead of being
    loaded (a truncated one faulted with SIGBUS)."""
    try:
        data = read_regular_file(path, limit=ENTRY_LIMIT)
        recorded = read_regular_file(_checksum_file(path), limit=64).strip()
    except OSError:
        return False
    return recorded == f"{zlib.crc32(data):08x}".encode()


def _seal(path: Path) -> None:
    """Record the CRC-32 of the freshly written cache file ``path`` (best effort)."""
    try:
        atomic_write(_checksum_file(path), f"{zlib.crc32(path.read_bytes()):08x}".encode())
    except OSError:
        pass  # without the record the next lookup recompiles: a cost, never a wrong library


def _cache_slot(code: str, flags: Sequence[str], suffix: str) -> tuple[Path | None, bool]:
    """Where compiling ``code`` with ``flags`` is cached and whether an intact output is already
    there; ``(None, False)`` when caching is off or the cache cannot be written (warned once)."""
    cdir = cache_dir()
    if cdir is None:
        return None, False
    key = cache_key(code, flags)
    path = cdir / key[:2] / f"{key}{suffix}"
    if _intact(path):
        return path, True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # a folder removed meanwhile (the cache cleared) is no refusal: storing finds out (_built)
        writable = os.access(path.parent, os.W_OK) or not path.parent.exists()
    except OSError:
        writable = False
    if not writable:
        warn_at_caller(
            f"compile cache {cdir} is not writable; compiling without it (set TVM_CACHE_DIR to a writable directory)",
            RuntimeWarning,
        )
        return None, False
    if _occupied(path) or _occupied(path.with_suffix(".c")):
        warn_at_caller(
            f"compile cache entry {path} (or its .c) is a folder or another non-file; compiling without the "
            f"cache (remove it to cache this kernel again)",
            RuntimeWarning,
        )
        return None, False
    return path, False


def _occupied(path: Path) -> bool:
    """Whether something other than a regular file (or a link to one) sits at ``path``: a cache
    entry written there would fail to replace it."""
    return os.path.lexists(path) and not path.is_file()


#: Outputs of uncached compiles, each alone in the private folder (its value) that
#: :func:`discard_scratch` removes.
_SCRATCH: dict[str, str] = {}


def check_output_name(name: Any) -> str:
    """``name`` when it can name a compiled file (``lib``, ``my_kernels-v2``): a non-empty file
    name without a folder part, else a ``ValueError`` saying what to pass."""
    if not isinstance(name, str):
        raise TypeError(f"the name of a compiled library is a string such as 'lib', got {type(name).__name__}")
    if name in ("", ".", "..") or any(c in name for c in ("\0", "/", os.sep, os.altsep or "/")):
        raise ValueError(
            f"the name of a compiled library is a file name without a folder (such as 'lib'), got {name!r}; "
            "choose where the library goes with export_library(path)"
        )
    return name


def _scratch_path(filename: str) -> Path:
    folder = tempfile.mkdtemp(prefix=scratch_prefix("build"))
    path = Path(folder) / filename
    _SCRATCH[str(path)] = folder
    return path


def is_scratch(path: str) -> bool:
    """Whether ``path`` is the output of an uncached compile (see :func:`discard_scratch`); a
    cache entry's path names its content."""
    return path in _SCRATCH


def discard_scratch(path: str) -> None:
    """Remove ``path`` and its private folder when it is the output of an uncached compile (the
    caller has loaded or linked it: a loaded library stays mapped); cached outputs are kept."""
    folder = _SCRATCH.pop(path, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def compile_shared(
    code: str,
    *,
    openmp: bool = False,
    mcpu: str | None = None,
    extra_flags: Sequence[str] = (),
    name: str = "lib",
    late_bound: Collection[str] = (),
    use_cache: bool = True,
) -> tuple[str, bool]:
    """Compile C ``code`` into a shared library; returns ``(path, cache_hit)``.

    With the cache on (default) the library lives in the cache directory under its key and a
    second compile of the same code and flags does not run the compiler. Without it the library
    is written to a private folder, which the caller removes with :func:`discard_scratch`.
    Functions of ``late_bound`` (those the code calls with ``T.call_extern``) that no library
    defines are left to the loader (Linux; see :func:`_binding_at_load`). ``use_cache=False``
    compiles privately whatever the cache holds.
    """
    check_output_name(name)
    flags = build_flags(openmp=openmp, mcpu=mcpu, extra=extra_flags)
    path, hit = _cache_slot(code, flags, ".so") if use_cache else (None, False)
    if hit:
        return str(path), True
    try:
        built = _built(path, f"{name}.so", lambda out: run_compiler({f"{name}.c": code}, out, flags))
    except CompileError as err:
        relaxed = _binding_at_load(err, flags, extra_flags, late_bound)
        return compile_shared(
            code, openmp=openmp, mcpu=mcpu, extra_flags=relaxed, name=name, late_bound=late_bound, use_cache=use_cache
        )
    if built == path:
        with contextlib.suppress(OSError):  # a copy for people to read; nothing loads it
            atomic_write(path.with_suffix(".c"), code.encode())
    return str(built), False


def _built(slot: Path | None, filename: str, build: Callable[[str], None]) -> Path:
    """``build(output)`` into the cache ``slot``, sealed there, or into a private folder: where the
    slot cannot take the output (a full disk, its folder removed meanwhile) the cache is skipped
    with a warning and the output built again privately. A private output is removed on any
    exception (Ctrl-C too)."""
    if slot is not None:
        try:
            build(str(slot))
        except ScratchError:
            raise  # the temporary folder's fault: a private build would meet it again
        except OSError as err:
            warn_at_caller(
                f"compile cache: cannot store {slot} ({err.strerror}); compiling without the cache", RuntimeWarning
            )
        else:
            _seal(slot)
            return slot
    path = _scratch_path(filename)
    try:
        build(str(path))
    except BaseException:
        discard_scratch(str(path))
        raise
    return path


def compile_object(
    code: str, *, openmp: bool = False, mcpu: str | None = None, extra_flags: Sequence[str] = (), name: str = "host"
) -> str:
    """Compile C ``code`` to an object file (cached like :func:`compile_shared`); returns its path."""
    check_output_name(name)
    flags = [*build_flags(openmp=openmp, mcpu=mcpu, extra=extra_flags), "-c"]
    path, hit = _cache_slot(code, flags, ".o")
    if hit:
        return str(path)
    return str(_built(path, f"{name}.o", lambda out: run_compiler({f"{name}.c": code}, out, flags[:-1], link=False)))


#: Replaces "-Wl,-z,defs" when extern functions are left to the loader: bound at load, eagerly.
_BIND_AT_LOAD = "-Wl,-z,now"


def _binding_at_load(
    err: CompileError, flags: Sequence[str], extra: Sequence[str], late_bound: Collection[str]
) -> list[str]:
    """When every symbol the link missed is a function of ``late_bound`` (what the code calls with
    ``T.call_extern``: a library the caller provides) or is defined in this process (a library
    loaded with ``ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)``), ``extra`` plus the flag that
    leaves them to the loader: bound eagerly when the library is loaded, so a process without them
    gets a load error naming them, never a crash at the call. Re-raises ``err`` otherwise (another
    missing symbol is a defect of the code, reported at compile), when already relaxed, or where
    the linker has no such flag (Linux only)."""
    if not err.undefined or _BIND_AT_LOAD in flags or not sys.platform.startswith("linux"):
        raise err
    process = ctypes.CDLL(None)
    if not all(n in late_bound or hasattr(process, n) for n in err.undefined):
        raise err
    return [*extra, _BIND_AT_LOAD]


def create_shared(
    output: str,
    sources: dict[str, str],
    *,
    objects: Sequence[str] = (),
    openmp: bool = False,
    mcpu: str | None = None,
    extra_flags: Sequence[str] = (),
    late_bound: Collection[str] = (),
) -> None:
    """Link a shared library at ``output`` from C sources and object files (no cache; export);
    ``late_bound`` as in :func:`compile_shared`."""
    flags = build_flags(openmp=openmp, mcpu=mcpu, extra=extra_flags)
    try:
        run_compiler(sources, output, flags, objects)
    except CompileError as err:
        relaxed = _binding_at_load(err, flags, extra_flags, late_bound)
        run_compiler(sources, output, build_flags(openmp=openmp, mcpu=mcpu, extra=relaxed), objects)
