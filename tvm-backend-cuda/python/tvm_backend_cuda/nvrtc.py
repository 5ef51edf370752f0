"""NVRTC through ctypes: CUDA C -> cubin / PTX, without a CUDA toolkit.

``libnvrtc.so.*`` is found inside NVIDIA's pip package (``nvidia-cuda-nvrtc``: ``nvidia/cu13/lib``
for the CUDA 13 line, ``nvidia/cuda_nvrtc/lib`` for CUDA 12), or at ``$TVM_CUDA_NVRTC`` (a path; ``none`` disables
NVRTC, as on a machine without it), or last through the system loader. Compiled images are cached on disk under
``$TVM_CACHE_DIR/cuda-nvrtc`` (default ``~/.cache/tvm/cuda-nvrtc``), keyed by the NVRTC version,
the options and the source, one integrity-checked entry each (``tvm._cache.write_entry``: a
corrupted entry is compiled again, never loaded).

Architecture choice (:func:`resolve_arch`): the target's ``arch`` attribute, else the detected
arch of ``cuda(0)`` when a driver is loaded, else ``sm_80`` (Ampere: the oldest data-centre GPU
the project supports; its cubins do not run on other major architectures, so cross-compiling
users should pass ``-arch``). A known ``sm_XY`` gives a cubin (plus its PTX for
inspection); an arch newer than this NVRTC knows gives PTX for the newest virtual
architecture it supports, which the driver JIT-compiles.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import hashlib
import importlib.util
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import Optional, Sequence

from tvm._cache import read_entry, write_entry
from tvm._fork_safe import renewed_in_child

__all__ = [
    "CompileResult",
    "NVRTCError",
    "NVRTCUnavailable",
    "available",
    "compile_cuda",
    "compile_for_loader",
    "default_arch",
    "resolve_arch",
    "supported_archs",
    "version",
]

DEFAULT_ARCH = "sm_80"


class NVRTCUnavailable(RuntimeError):
    """libnvrtc could not be found or loaded."""


class NVRTCError(RuntimeError):
    """NVRTC rejected the source: the message holds NVRTC's log and the numbered source."""

    def __init__(self, message: str, log: str = "", source: str = ""):
        super().__init__(message)
        self.log = log
        self.source = source


@dataclass
class CompileResult:
    """What :func:`compile_cuda` produced."""

    #: "cubin" or "ptx": the format of :attr:`image`.
    fmt: str
    #: The loadable image (cubin ELF bytes, or NUL-free PTX text encoded as bytes).
    image: bytes
    #: PTX text (for ``inspect_source``).
    ptx: str
    #: The architecture compiled for (``sm_90`` or ``compute_90``).
    arch: str
    #: NVRTC's log (warnings).
    log: str = ""


_lock = threading.Lock()
renewed_in_child(sys.modules[__name__], "_lock")  # a forked child never waits for it
_lib: Optional[ctypes.CDLL] = None
_load_error: Optional[str] = None


@functools.lru_cache(maxsize=None)
def _nvidia_roots() -> tuple[str, ...]:
    """The folders of the ``nvidia`` namespace package that NVIDIA's pip wheels install into."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return ()
    return tuple(spec.submodule_search_locations or []) if spec is not None else ()


def _candidates() -> list[str]:
    out: list[str] = []
    env = os.environ.get("TVM_CUDA_NVRTC")
    if env:
        out.append(env)
    for root in _nvidia_roots():
        for sub in ("cu13", "cuda_nvrtc", "cu12"):
            libs = sorted(glob.glob(os.path.join(root, sub, "lib", "libnvrtc.so*")), reverse=True)
            out.extend(p for p in libs if "builtins" not in os.path.basename(p))
    out.extend(["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"])
    return out


def _load() -> ctypes.CDLL:
    global _lib, _load_error
    with _lock:
        if _lib is not None:
            return _lib
        if _load_error is not None:
            raise NVRTCUnavailable(_load_error)
        if os.environ.get("TVM_CUDA_NVRTC", "").lower() == "none":
            _load_error = "NVRTC disabled by TVM_CUDA_NVRTC=none"
            raise NVRTCUnavailable(_load_error)
        tried = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
            except OSError as err:
                tried.append(f"{path}: {err}")
                continue
            _declare(lib)
            _lib = lib
            return lib
        _load_error = (
            "NVRTC (libnvrtc.so) not found: pip install 'nvidia-cuda-nvrtc>=13,<14' (tried: " + "; ".join(tried) + ")"
        )
        raise NVRTCUnavailable(_load_error)


def _declare(lib: ctypes.CDLL) -> None:
    p, c, i, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t
    sig = {
        "nvrtcVersion": [ctypes.POINTER(i), ctypes.POINTER(i)],
        "nvrtcGetNumSupportedArchs": [ctypes.POINTER(i)],
        "nvrtcGetSupportedArchs": [ctypes.POINTER(i)],
        "nvrtcCreateProgram": [ctypes.POINTER(p), c, c, i, ctypes.POINTER(c), ctypes.POINTER(c)],
        "nvrtcCompileProgram": [p, i, ctypes.POINTER(c)],
        "nvrtcGetProgramLogSize": [p, ctypes.POINTER(sz)],
        "nvrtcGetProgramLog": [p, ctypes.c_char_p],
        "nvrtcGetPTXSize": [p, ctypes.POINTER(sz)],
        "nvrtcGetPTX": [p, ctypes.c_char_p],
        "nvrtcGetCUBINSize": [p, ctypes.POINTER(sz)],
        "nvrtcGetCUBIN": [p, ctypes.c_char_p],
        "nvrtcDestroyProgram": [ctypes.POINTER(p)],
    }
    for name, args in sig.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = ctypes.c_int
    lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p


def available() -> bool:
    """True when libnvrtc can be loaded."""
    try:
        _load()
        return True
    except NVRTCUnavailable:
        return False


def _check(lib: ctypes.CDLL, result: int, what: str) -> None:
    if result != 0:
        msg = lib.nvrtcGetErrorString(result)
        raise NVRTCError(f"NVRTC {what} failed: {msg.decode() if msg else result}")


@functools.lru_cache(maxsize=None)
def version() -> tuple[int, int]:
    """NVRTC's (major, minor)."""
    lib = _load()
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(lib, lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return major.value, minor.value


def supported_archs() -> list[int]:
    """SM versions this NVRTC can emit cubins for, e.g. ``[75, 80, ..., 120]``."""
    return list(_supported_archs())


@functools.lru_cache(maxsize=None)
def _supported_archs() -> tuple[int, ...]:
    lib = _load()
    n = ctypes.c_int()
    _check(lib, lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)), "nvrtcGetNumSupportedArchs")
    arr = (ctypes.c_int * n.value)()
    _check(lib, lib.nvrtcGetSupportedArchs(arr), "nvrtcGetSupportedArchs")
    return tuple(arr)


_ARCH_RE = re.compile(r"^(sm|compute)_(\d+)([af]?)$")


def default_arch() -> str:
    """Arch of ``cuda(0)`` when a driver is loaded, else :data:`DEFAULT_ARCH`."""
    try:
        import tvm

        dev = tvm.cuda(0)
        if dev.exist:
            from .detect import arch_from_compute_version

            return arch_from_compute_version(dev.compute_version)
    except Exception:  # noqa: BLE001 - no runtime: fall back to the documented default
        pass
    return DEFAULT_ARCH


def resolve_arch(target_arch: Optional[str] = None) -> str:
    """The arch to compile for: ``target_arch``, else the device's, else ``sm_80``."""
    arch = target_arch or default_arch()
    if not _ARCH_RE.match(str(arch)):
        raise ValueError(f"invalid CUDA arch {arch!r}: expected sm_XY (e.g. sm_90) or compute_XY")
    return str(arch)


def include_dirs() -> list[str]:
    """Header folders of NVIDIA's pip packages that hold ``cuda_fp16.h`` (e.g. from
    ``nvidia-cuda-runtime``), passed to NVRTC as ``-I``; empty when none is installed. The code
    generator does not rely on them: its output defines the half types it uses itself. Looked up
    once per process (every compile, cache hits included, asks)."""
    return list(_include_dirs())


@functools.lru_cache(maxsize=None)
def _include_dirs() -> tuple[str, ...]:
    return tuple(
        os.path.join(root, sub, "include")
        for root in _nvidia_roots()
        for sub in ("cu13", "cuda_runtime", "cu12")
        if os.path.exists(os.path.join(root, sub, "include", "cuda_fp16.h"))
    )


def _numbered(source: str) -> str:
    return "\n".join(f"{n:5d} | {line}" for n, line in enumerate(source.splitlines(), 1))


def _cache_dir() -> Optional[str]:
    from tvm._cache import cache_subdir

    return cache_subdir("cuda-nvrtc")


def _cache_get(key: str) -> Optional[CompileResult]:
    d = _cache_dir()
    if d is None:
        return None
    entry = read_entry(os.path.join(d, key + ".nvrtc"))  # None when absent or corrupted
    if entry is None:
        return None
    try:
        meta, _, rest = entry.partition(b"\n")
        fmt, arch, image_size = meta.decode().split()
        image, ptx = rest[: int(image_size)], rest[int(image_size) :].decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return CompileResult(fmt, image, ptx, arch)


def _cache_put(key: str, res: CompileResult) -> None:
    d = _cache_dir()
    if d is None:
        return
    meta = f"{res.fmt} {res.arch} {len(res.image)}\n".encode()
    try:
        write_entry(os.path.join(d, key + ".nvrtc"), meta + res.image + res.ptx.encode())
    except OSError:
        pass  # a read-only home only costs recompilation


def _run(source: str, options: Sequence[str], name: str, want_cubin: bool) -> tuple[Optional[bytes], str, str]:
    lib = _load()
    prog = ctypes.c_void_p()
    _check(
        lib,
        lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None),
        "nvrtcCreateProgram",
    )
    try:
        opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
        res = lib.nvrtcCompileProgram(prog, len(options), opts)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(max(size.value, 1))
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode("utf-8", "replace").strip()
        if res != 0:
            why = lib.nvrtcGetErrorString(res)
            raise NVRTCError(
                f"NVRTC could not compile the generated CUDA C ({why.decode() if why else res}; "
                f"options: {' '.join(options)}):\n{log}\n--- generated source ---\n{_numbered(source)}",
                log=log,
                source=source,
            )
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
        ptx = buf.value.decode("utf-8", "replace")
        cubin = None
        if want_cubin:
            _check(lib, lib.nvrtcGetCUBINSize(prog, ctypes.byref(size)), "nvrtcGetCUBINSize")
            buf = ctypes.create_string_buffer(size.value)
            _check(lib, lib.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN")
            cubin = buf.raw[: size.value]
        return cubin, ptx, log
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def compile_cuda(
    source: str,
    arch: Optional[str] = None,
    options: Sequence[str] = (),
    name: str = "tvm_kernels.cu",
    use_cache: bool = True,
) -> CompileResult:
    """Compile CUDA C ``source`` for ``arch`` (see :func:`resolve_arch`).

    Returns a cubin for an ``sm_XY`` this NVRTC supports, else PTX for the newest virtual
    architecture not newer than ``arch`` (``compute_90a`` stays ``compute_90a``). Raises
    :class:`NVRTCError` with NVRTC's log and the numbered source when compilation fails,
    :class:`NVRTCUnavailable` without libnvrtc.
    """
    arch = resolve_arch(arch)
    m = _ARCH_RE.match(arch)
    assert m is not None
    kind, num, suffix = m.group(1), int(m.group(2)), m.group(3)
    supported = supported_archs()
    if kind == "sm" and num in supported:
        target, want_cubin = f"sm_{num}{suffix}", True
    else:
        usable = max([a for a in supported if a <= num] or [min(supported)])
        # the architecture-specific features ("a") only where the arch itself is the one compiled for
        target, want_cubin = f"compute_{usable}{suffix if usable == num else ''}", False
    opts = [f"--gpu-architecture={target}", "--std=c++17", *[f"-I{d}" for d in include_dirs()], *options]
    key = hashlib.sha256("\0".join([repr(version()), *opts, source]).encode()).hexdigest()[:40]
    if use_cache:
        hit = _cache_get(key)
        if hit is not None:
            return hit
    cubin, ptx, log = _run(source, opts, name, want_cubin)
    res = CompileResult(
        "cubin" if want_cubin else "ptx", cubin if cubin is not None else ptx.encode(), ptx, target, log
    )
    if use_cache:
        _cache_put(key, res)
    return res


def compile_for_loader(source: str, arch: str) -> bytes:
    """Used by the runtime for source-only ("cu") modules: the image to load on ``arch``."""
    res = compile_cuda(source, arch)
    return res.image if res.fmt == "cubin" else res.image + b"\0"
