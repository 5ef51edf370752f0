"""Loading libraries written by ``export_library``: host code plus embedded device modules.

This is the runtime side: it imports nothing of the compiler (TIR, passes, code generation),
so ``tvm.runtime.load_module`` works where only the runtime is wanted.

The device modules are embedded as tvm-ffi's ``__tvm_ffi__library_bin`` symbol::

    <nbytes: u64> <import tree: indptr vec<u64>, child indices vec<u64>>
    then per module: <kind: str> [<bytes: str> unless kind == "_lib"]

(integers little-endian, ``vec``/``str`` prefixed by a u64 length). Module 0 is ``_lib``, the host
library itself; its children are the device modules. ``tvm_ffi.load_module`` rebuilds the tree,
calling ``ffi.Module.load_from_bytes.<kind>`` for each device module, so :func:`load_module` first
reads the blob *without running the library's code* (from the ELF symbol table), activates the
backend that loads each kind, and explains what to install when none does.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import struct
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

import tvm_ffi

from tvm._cache import NotARegularFile, in_scratch, read_regular_file, scratch_prefix
from tvm._fork_safe import renewed_in_child
from tvm.runtime._elf import foreign_machine, is_elf64_le, symbols, undefined_dynamic_symbols
from tvm.runtime.module import Module

LIBRARY_BIN = "__tvm_ffi__library_bin"
#: ``export_library`` appends ``CHECKSUM_MAGIC`` + the CRC-32 (u64) of every byte before it;
#: the dynamic loader ignores bytes after the ELF image, :func:`load_module` checks them.
CHECKSUM_MAGIC = b"TVMLIBCK"


class ModuleLoadError(RuntimeError):
    """A library cannot be loaded: a module kind in it has no loader, or the file is malformed."""


class UnresolvedSymbolError(RuntimeError):
    """A library calls a function (``T.call_extern``) that no library loaded in this process
    defines; ``symbol`` names it."""

    def __init__(self, message: str, symbol: str):
        super().__init__(message)
        self.symbol = symbol


@dataclass
class BuildInfo:
    """What ``tvm.compile`` produced, kept on the module for ``inspect_source`` and export."""

    host_source: str
    lib_path: str
    target: Any
    openmp: bool = False
    mcpu: str | None = None
    device_modules: list[tvm_ffi.Module] = field(default_factory=list)
    function_names: list[str] = field(default_factory=list)
    cache_hit: bool = False
    extern_functions: list[str] = field(default_factory=list)  # T.call_extern names, bound at load
    #: A library ``load_module`` read: the bytes it loaded (what its export writes).
    lib_bytes: bytes | None = None


_loaded_lock = threading.Lock()
renewed_in_child(sys.modules[__name__], "_loaded_lock")
_loaded_private: set[str] = set()
#: module trees already loaded in this process, by what makes them the same (see :func:`reuse`)
_reused: dict[tuple, tvm_ffi.Module] = {}


def reuse(key: tuple, load: Any) -> tvm_ffi.Module:
    """The module tree loaded for ``key`` in this process, else ``load()`` remembered under it.

    A library with device modules is loaded from a private copy (see :func:`load_library`), and
    a dynamic library is never unloaded: loading the same one again and again (a reload, a
    ``tvm.compile`` cache hit) would keep a copy and its device programs each time. The same key
    gives the same tree instead, so memory grows with distinct libraries, not with loads."""
    with _loaded_lock:
        mod = _reused.get(key)
    if mod is None:
        mod = load()
        with _loaded_lock:
            mod = _reused.setdefault(key, mod)
    return mod


def _dlopen(path: str, shown: str = "") -> tvm_ffi.Module:
    """``tvm_ffi.load_module(path)``; a function the library calls that nothing loaded defines (a
    ``T.call_extern`` of the caller's own library) is an :class:`UnresolvedSymbolError` naming it
    with the fix (and the library as ``shown``, the user's path of a private copy)."""
    try:
        if _utf8(path):
            _bind_now(path)
            return tvm_ffi.load_module(path)
        with tempfile.TemporaryDirectory(prefix=scratch_prefix("lib")) as tmpdir:  # tvm-ffi takes UTF-8 paths
            link = os.path.join(tmpdir, "library.so")
            os.symlink(os.path.abspath(path), link)
            _bind_now(link)
            return tvm_ffi.load_module(link)
    except RuntimeError as err:
        # glibc: "undefined symbol: f"; musl: "Error relocating lib.so: f: symbol not found"
        missing = re.search(r"undefined symbol: ([A-Za-z_]\w*)|: ([A-Za-z_]\w*): symbol not found", str(err))
        if missing is None:  # not a library tvm-ffi loads (an executable, a foreign shared object)
            reason = str(err).strip().split(": ")[-1]  # the loader's own words, after the paths
            raise ModuleLoadError(f"{shown or path} cannot be loaded as a library: {reason}") from err
        symbol = missing.group(1) or missing.group(2)
        raise UnresolvedSymbolError(
            f"{shown or path} calls the function '{symbol}', which no library loaded in this process defines: "
            f"load the library that defines it with ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL) first",
            symbol,
        ) from None


def _bind_now(path: str) -> None:
    """Open library ``path`` with every symbol it calls bound now (RuntimeError with the loader's
    words when one is defined nowhere): a library linked for lazy binding loaded, and its first
    call of such a function ended the process ("symbol lookup error"). tvm-ffi's load of the same
    path then gets this loaded library back."""
    try:
        ctypes.CDLL(path, mode=getattr(os, "RTLD_NOW", 2) | getattr(os, "RTLD_LOCAL", 0))
    except OSError as err:
        raise RuntimeError(str(err)) from None


def load_library(path: str, private: bool) -> tvm_ffi.Module:
    """``tvm_ffi.load_module(path)``; a ``private`` library is loaded from a fresh copy when a
    library of that path is already loaded in this process (one with kernel launches keeps
    per-library state, the library context and cached kernel handles, and a library rewritten
    at its path is another library there)."""
    if not private:
        return _dlopen(path)
    with _loaded_lock:
        if path not in _loaded_private:
            _loaded_private.add(path)
            return _dlopen(path)
    return _load_private_copy(_read_file(path), path)


# ----------------------------------------------------------------------------- the blob


def _u64(v: int) -> bytes:
    return struct.pack("<Q", v)


def _str(b: bytes) -> bytes:
    return _u64(len(b)) + b


def pack_library_bin(modules: list[tuple[str, bytes]], children: list[list[int]]) -> bytes:
    """The ``__tvm_ffi__library_bin`` bytes of ``modules`` (kind, bytes) with import lists
    ``children[i]`` (module indices); module 0 must be ``("_lib", b"")``."""
    indptr = [0]
    flat: list[int] = []
    for ch in children:
        flat.extend(ch)
        indptr.append(len(flat))
    body = _u64(len(indptr)) + b"".join(_u64(x) for x in indptr)
    body += _u64(len(flat)) + b"".join(_u64(x) for x in flat)
    for kind, data in modules:
        body += _str(kind.encode())
        if kind != "_lib":
            body += _str(data)
    return _u64(len(body)) + body


def parse_library_bin(blob: bytes) -> tuple[list[str], list[list[int]]]:
    """(module kinds, import lists) of a library blob (the bytes after the leading nbytes)."""
    pos = 0

    def take(n: int) -> bytes:
        nonlocal pos
        if n > len(blob) - pos:
            raise ModuleLoadError(f"embedded module table is truncated (needs {n} bytes at offset {pos})")
        out = blob[pos : pos + n]
        pos += n
        return out

    def u64() -> int:
        return struct.unpack("<Q", take(8))[0]

    def vec() -> list[int]:
        n = u64()
        if n > (len(blob) - pos) // 8:
            raise ModuleLoadError("embedded module table is corrupted (vector longer than the data)")
        return list(struct.unpack(f"<{n}Q", take(8 * n)))

    indptr, flat = vec(), vec()
    if not indptr:
        raise ModuleLoadError("embedded module table is empty")
    kinds = []
    for _ in range(len(indptr) - 1):
        kind = take(u64()).decode("utf-8", "replace")
        kinds.append(kind)
        if kind != "_lib" and not take(u64()):
            raise ModuleLoadError(f"embedded module table is corrupted: module {len(kinds) - 1} ({kind}) has no bytes")
    if any(b < a for a, b in zip(indptr, indptr[1:])) or indptr[0] != 0 or indptr[-1] != len(flat):
        raise ModuleLoadError("embedded module table is corrupted (import lists overlap or leave the table)")
    children = [flat[indptr[i] : indptr[i + 1]] for i in range(len(indptr) - 1)]
    _check_import_tree(kinds, children)
    return kinds, children


def _check_import_tree(kinds: list[str], children: list[list[int]]) -> None:
    """Every import names an existing module and no module imports itself, directly or not."""
    if not kinds:
        raise ModuleLoadError("embedded module table holds no modules")
    if kinds[0] != "_lib" or kinds.count("_lib") != 1:
        raise ModuleLoadError(
            "embedded module table is corrupted: its first module, and only that one, must be the host "
            f"library '_lib' (export_library writes it so), got {kinds}"
        )
    for i, imports in enumerate(children):
        bad = [c for c in imports if c >= len(kinds)]
        if bad:
            raise ModuleLoadError(
                f"embedded module table is corrupted: module {i} ({kinds[i]}) imports module {bad[0]}, "
                f"but there are only {len(kinds)}"
            )
    state = [0] * len(kinds)  # 0 unseen, 1 on the current path, 2 done
    for root in range(len(kinds)):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, iter(children[root]))]
        while stack:
            node, it = stack[-1]
            child = next(it, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state[child] == 1:
                raise ModuleLoadError(
                    f"embedded module table is corrupted: module {child} ({kinds[child]}) imports itself "
                    "through its imports (a cycle)"
                )
            elif state[child] == 0:
                state[child] = 1
                stack.append((child, iter(children[child])))


# ----------------------------------------------------------------------------- load


def _read_file(path: str) -> bytes:
    """The bytes of the library file ``path``. Raises ValueError when ``path`` is not a regular file
    (a directory, FIFO, socket or device: reading one would fail, block forever or never end)."""
    try:
        return read_regular_file(path)
    except NotARegularFile as err:
        raise ValueError(
            f"cannot load {path}: it is {err.kind}, not a regular file (a library written by export_library)"
        ) from None


def _read_symbol_elf(path: str, symbol: str, data: bytes) -> bytes | None:
    """The bytes of ``symbol`` (its leading u64 size + that many bytes) read from the ELF64 file
    ``path`` holding ``data``, without loading it; None when the symbol is absent. Raises
    ValueError for non-ELF64 files and ModuleLoadError for a malformed one."""
    if not is_elf64_le(data):
        raise ValueError("not a little-endian ELF64 file")
    try:
        return _find_elf_symbol(data, symbol.encode())
    except (struct.error, IndexError) as err:
        raise ModuleLoadError(
            f"{path} is a malformed or truncated ELF file ({err}); it cannot be loaded: export it again"
        ) from err


def _find_elf_symbol(data: bytes, want: bytes) -> bytes | None:
    for name, shndx, value, sections in symbols(data):
        if name != want or shndx == 0 or shndx >= len(sections):
            continue
        stype, addr, offset = sections[shndx][:3]
        if stype == 8:  # SHT_NOBITS
            return None
        pos = offset + (value - addr)
        (nbytes,) = struct.unpack_from("<Q", data, pos)
        if pos < 0 or nbytes > len(data) - pos - 8:
            raise IndexError(f"symbol {want.decode()} claims {nbytes} bytes past the end of the file")
        return data[pos + 8 : pos + 8 + nbytes]
    return None


def _read_symbol_dlopen(path: str, symbol: str, data: bytes) -> bytes | None:
    """``symbol`` of library ``path`` (``data``, its bytes) read by loading a private copy of
    those bytes: a file rewritten meanwhile (a copy in progress) is never mapped (a read past
    its new end was a SIGBUS), and what is loaded is what was read."""
    if sys.platform.startswith("linux"):  # libraries are ELF64 there: these bytes are none
        raise ModuleLoadError(f"{path} is not a shared library ({len(data)} bytes, no ELF64 image): export it again")
    with _private_copy(data, "library.so") as copy:
        mode = getattr(os, "RTLD_LAZY", 1) | getattr(os, "RTLD_LOCAL", 0)
        try:
            lib = ctypes.CDLL(copy, mode=mode)
        except OSError as err:
            raise ModuleLoadError(f"{path} cannot be loaded as a shared library ({err}): export it again") from err
    try:
        addr = ctypes.c_void_p.in_dll(lib, symbol)
    except ValueError:
        return None
    base = ctypes.addressof(addr)
    nbytes = ctypes.c_uint64.from_address(base).value
    return ctypes.string_at(base + 8, nbytes)


def read_embedded_kinds(path: str, data: bytes | None = None) -> list[str]:
    """Kinds of the device modules embedded in library ``path`` (empty for a plain library);
    ``data``: the file's bytes when the caller has read them already."""
    if data is None:
        data = _read_file(path)  # outside the try: a path that is not a regular file is not dlopen'ed
    try:
        blob = _read_symbol_elf(path, LIBRARY_BIN, data)
    except ValueError:
        blob = _read_symbol_dlopen(path, LIBRARY_BIN, data)
    if blob is None:
        return []
    kinds, _ = parse_library_bin(blob)
    return [k for k in kinds if k != "_lib"]


def ensure_loader(kind: str) -> None:
    """Make ``ffi.Module.load_from_bytes.<kind>`` available (activating its backend), or raise
    :class:`ModuleLoadError` naming the kind and what to install."""
    key = f"ffi.Module.load_from_bytes.{kind}"
    if tvm_ffi.get_global_func(key, allow_missing=True) is not None:
        return
    from tvm import backend
    from tvm.backend import _registry

    rec = _registry.record_for_kind(kind)
    if rec is not None and rec.status == _registry.DISABLED and "TVM_BACKENDS" in rec.reason:
        # the allowlist holds for libraries as for compiling (TVM_DEVICE_BACKEND_AUTOLOAD=0 only defers)
        raise ModuleLoadError(
            f"the library contains a device module of kind '{kind}', but backend '{rec.name}' is {rec.describe()}. "
            f"Fix: {rec.fix()}"
        )
    if rec is not None and not rec.usable_for_codegen:
        try:
            backend.load(rec.name)
        except backend.BackendError as err:
            raise ModuleLoadError(
                f"the library contains a device module of kind '{kind}', but backend '{rec.name}' cannot be "
                f"loaded: {err}"
            ) from err
    if tvm_ffi.get_global_func(key, allow_missing=True) is None:
        if rec is None:
            raise ModuleLoadError(
                f"the library contains a device module of kind '{kind}', but no installed backend can load "
                f"modules of kind '{kind}'. Fix: {_registry.install_hint(kind)}"
            )
        raise ModuleLoadError(
            f"the library contains a device module of kind '{kind}', but backend '{rec.name}' "
            f"({rec.describe()}) registered no loader for it. Fix: {rec.fix()}"
        )


def append_checksum(path: str) -> None:
    """Append the checksum trailer to the library at ``path`` (see :data:`CHECKSUM_MAGIC`)."""
    import zlib

    crc = zlib.crc32(_read_file(path))
    with open(path, "ab") as f:
        f.write(CHECKSUM_MAGIC + _u64(crc))


def check_checksum(path: str, data: bytes) -> None:
    """Raise ModuleLoadError when the library at ``path``, holding ``data``, carries a checksum
    trailer that does not match its bytes (a library without one, not written by
    ``export_library``, passes)."""
    import zlib

    magic = data[-16:-8]
    if magic != CHECKSUM_MAGIC:
        # a trailer that is there but damaged, or moved by bytes cut from or added to the end
        # (whole-file checks cannot tell a plain library from one whose trailer was hit: the
        # dynamic loader aborts the process on some damaged images)
        near = sum(a == b for a, b in zip(magic, CHECKSUM_MAGIC)) >= 4
        if not near and CHECKSUM_MAGIC[:4] not in data[-40:]:
            return
    if magic != CHECKSUM_MAGIC or zlib.crc32(data[:-16]) != struct.unpack("<Q", data[-8:])[0]:
        raise ModuleLoadError(
            f"{path} was changed after export_library wrote it (its checksum does not match its "
            f"{len(data)} bytes): it may be truncated or corrupted; export it again"
        )


def _utf8(path: str) -> bool:
    """Whether ``path`` is UTF-8 text (a name of bytes that are not is held as surrogates)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def load_module(path: str | os.PathLike) -> Module:
    """Load a library written by :func:`export_library` (or any tvm-ffi library). Raises
    FileNotFoundError when ``path`` does not exist and ValueError when it is not a regular file
    (a directory, FIFO, socket or device is refused before anything is read from it)."""
    path = os.fsdecode(os.fspath(path))
    if "\0" in path:
        raise ValueError(f"a library path cannot hold a NUL character, got {path!r}")
    try:
        os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"no such library: {path}") from None
    except OSError as err:  # a symlink loop, a name too long ...: the system's reason
        raise OSError(err.errno, f"cannot open the library: {err.strerror}", path) from None
    data = _read_file(path)  # read once: the checksum and the embedded table
    check_checksum(path, data)
    foreign = foreign_machine(data)
    if foreign is not None:
        raise ModuleLoadError(f"{path} cannot be loaded here: it is {foreign}; compile and export it for this machine")
    kinds = read_embedded_kinds(path, data)
    for kind in dict.fromkeys(kinds):
        ensure_loader(kind)
    # The bytes checked are the bytes loaded (from a private copy: the dynamic loader knows a
    # library by its path and would hand back one loaded from there before, even after the file
    # was rewritten), and the same bytes give the same module tree (see reuse).
    digest = hashlib.sha256(data).hexdigest()
    mod = reuse(("load", digest), lambda: _load_new(path, data, digest))
    info = BuildInfo(host_source="", lib_path=path, target=None, lib_bytes=data)  # type: ignore[arg-type]
    return Module(mod, info)


#: tvm-ffi's functions that register global functions: a library that calls them registers its
#: functions when it is loaded, and registering a name twice ends the process.
_REGISTERS_GLOBALS = {b"TVMFFIFunctionSetGlobal", b"TVMFFIFunctionSetGlobalFromMethodInfo"}
#: realpath -> sha256 of each library that registers globals, as this process loaded it
_registering: dict[str, str] = {}


def _load_new(path: str, data: bytes, digest: str) -> tvm_ffi.Module:
    """Library ``path`` (``data``, its bytes) not loaded before in this process: from a private
    copy, or where the process has it when it registers global functions."""
    if _REGISTERS_GLOBALS & undefined_dynamic_symbols(data):
        return _load_registering(path, data, digest)
    return _load_private_copy(data, path)


def _load_registering(path: str, data: bytes, digest: str) -> tvm_ffi.Module:
    """A library that registers global functions when loaded (a tvm-ffi extension, tvm's own
    runtime), loaded where the process has it already rather than from a private copy, whose
    registrations would repeat the first one's and end the process; ModuleLoadError when the
    file at ``path`` changed since this process loaded it."""
    real = os.path.realpath(path)
    with _loaded_lock:
        before = _registering.get(real)
    if before is not None and before != digest:
        raise ModuleLoadError(
            f"{path} changed since this process loaded it, and it registers global functions when loaded: "
            f"its functions are registered already, under the same names; load the new library in a new process"
        )
    mod = _dlopen(_mapped_copy_of(data) or path, shown=path)
    with _loaded_lock:
        _registering[real] = digest
    return mod


def _mapped_copy_of(data: bytes) -> str | None:
    """A file this process has mapped (a library it loaded) whose bytes are ``data``; None when
    there is none, or no ``/proc/self/maps`` to tell."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="surrogateescape") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6}
    except OSError:
        return None
    for mapped in sorted(p for p in paths if p.startswith("/")):
        with contextlib.suppress(OSError):
            if os.path.getsize(mapped) == len(data) and read_regular_file(mapped) == data:
                return mapped
    return None


def _load_private_copy(data: bytes, path: str) -> tvm_ffi.Module:
    """``data`` (the library at ``path``) loaded from a file of its own, removed once it is mapped
    (the loaded copy stays mapped); messages name ``path``. The copy's name ends in ``.so``
    whatever ``path`` ends in: tvm-ffi picks its loader by the suffix, and a library exported as
    ``model`` or ``model.bin`` is one too."""
    name = os.path.basename(path) if _utf8(path) else "library"
    with _private_copy(data, name if name.endswith(".so") else f"{name}.so") as copy:
        try:
            return _dlopen(copy, shown=path)
        except ModuleLoadError as err:
            if "failed to map segment" not in str(err):
                raise
            raise ModuleLoadError(_why_not_mapped(path, os.path.dirname(copy))) from None


def _why_not_mapped(path: str, folder: str) -> str:
    """Why the dynamic loader could not map library ``path``'s copy in ``folder``: a folder
    mounted noexec, or a process out of memory mappings (the loader says the same for both)."""
    try:
        noexec = bool(os.statvfs(folder).f_flag & getattr(os, "ST_NOEXEC", 0))
    except OSError:
        noexec = True
    if noexec:
        return (
            f"{path} cannot be loaded: its private copy in the temporary folder {tempfile.gettempdir()} cannot "
            f"be mapped as code (the folder is mounted noexec): set TMPDIR to a folder libraries can be loaded from"
        )
    return (
        f"{path} cannot be loaded: the dynamic loader could not map it into this process, which is out of memory "
        f"mappings (vm.max_map_count) or address space; libraries stay loaded for the process's life, so a "
        f"process that compiles or loads many distinct ones reaches the limit: run that work in worker processes "
        f"that end, or raise the limit"
    )


@contextlib.contextmanager
def _private_copy(data: bytes, name: str) -> Iterator[str]:
    """The path of a file ``name`` holding ``data`` in a folder of its own, removed after the
    block (a library loaded from it stays mapped)."""
    tmpdir = tempfile.mkdtemp(prefix=scratch_prefix("lib"))
    try:
        copy = os.path.join(tmpdir, name)
        try:
            with open(copy, "wb") as f:
                f.write(data)
        except OSError as err:
            raise in_scratch(err, copy) from None
        yield copy
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
