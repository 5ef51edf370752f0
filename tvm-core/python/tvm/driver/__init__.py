"""``tvm.compile``: TIR -> host C (+ device modules) -> a loaded :class:`tvm.runtime.Module`.

Steps: lower every PrimFunc for the target (``tvm.tir.transform.lower``), generate device code for
the kernels with ``target.kind.codegen`` (when the target has a device), print the host functions
as C (:mod:`tvm.codegen.c_host`), compile them with the system compiler through the compile cache
(:mod:`tvm.contrib.cc`), load the shared library with ``tvm_ffi.load_module`` and import the device
module into it, so host functions find their kernels.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import tvm_ffi

from tvm._recursion import room
from tvm._user_warning import warn_at_caller
from tvm.runtime.library import BuildInfo, ModuleLoadError, UnresolvedSymbolError, load_library, reuse
from tvm.runtime.module import Module
from tvm.target import Target
from tvm.tir.function import IRModule, PrimFunc
from tvm.tir.transform import lower
from tvm.tir.transform.single_thread import binds_threads

__all__ = ["BuildInfo", "compile", "build", "normalize_target"]


def normalize_target(target: Any) -> Target:
    """A :class:`Target` from a string, dict or Target."""
    return target if isinstance(target, Target) else Target(target)


def _functions(obj: Any) -> list[PrimFunc]:
    if isinstance(obj, PrimFunc):
        return [obj]
    if isinstance(obj, IRModule):
        items = [(f"'{name}'", name, f) for name, f in obj.items()]
    elif isinstance(obj, Mapping):
        items = [(f"'{name}'", name, f) for name, f in obj.items()]
    elif isinstance(obj, (list, tuple)):
        items = [(f"item {i}", None, f) for i, f in enumerate(obj)]
    else:
        raise TypeError(f"tvm.compile expects a PrimFunc or an IRModule, got {type(obj).__name__}")
    out = []
    for label, name, f in items:
        if not isinstance(f, PrimFunc):
            raise TypeError(f"tvm.compile: {label} is a {type(f).__name__}, not a PrimFunc")
        if name is not None and "global_symbol" not in f.attrs:
            f = PrimFunc(f.params, f.body, dict(f.buffer_map), {**f.attrs, "global_symbol": name}, name, f.span)
        out.append((label, f))
    exported: dict[str, str] = {}
    for label, f in out:
        other = exported.setdefault(f.global_symbol, label)
        if other != label:
            raise ValueError(
                f"tvm.compile: functions {other} and {label} are both exported as '{f.global_symbol}'; "
                f"give one another global_symbol (T.func_attr)"
            )
    return [f for _, f in out]


#: ``T.call_extern`` names the C headers of generated host code do not declare (seen so far).
_UNDECLARED_EXTERNS: set[str] = set()


def _functions_target(funcs: list[PrimFunc]) -> Any:
    """The target the functions name (``T.func_attr({"target": ...})``), else the target of an
    enclosing ``with Target(...):``, else the CPU. A module
    whose host functions (a CPU target) call kernel functions of one device target compiles for
    that device: the calls are inlined, so the callers launch its kernels from their host code."""
    given = [f.attrs["target"] for f in funcs if f.attrs.get("target") is not None]
    if not given:
        current = Target.current()
        return "c" if current is None else current
    devices = {}
    for t in given:
        tgt = normalize_target(t)
        if tgt.kind.codegen is not None:
            devices.setdefault(tgt.kind.name, tgt)
    if len(devices) > 1:
        raise ValueError(
            f"tvm.compile: the functions target several devices ({', '.join(sorted(devices))}); "
            f"compile the functions of each device separately"
        )
    return next(iter(devices.values())) if devices else given[0]


def _own_cpu_target(func: PrimFunc, target: Target) -> Optional[Target]:
    """The CPU target ``func`` names for itself in a module compiled for the device ``target``
    when it launches no kernel (it runs on the host, its arguments in host memory), else None (a
    CPU function that launches kernels is the host code of the device's module)."""
    own = func.attrs.get("target")
    if own is None or target.kind.codegen is None or binds_threads(func.body):
        return None
    own = normalize_target(own)
    return own if own.kind.codegen is None else None


def compile(func_or_mod: Any, target: Any = None, *, name: str = "lib") -> Module:  # noqa: A001
    """Compile a PrimFunc or IRModule for ``target`` (``"c"``/``"llvm"``, a device target such as
    ``"cuda"``, a :class:`Target` or a dict; ``None``, the default, takes the functions' ``target``
    attribute, else the target of an enclosing ``with Target(...):``, else ``"c"``) into a runtime
    module. A :class:`tvm.tune.Tunable` compiles its configuration tuned for this target and
    device (:func:`tvm.tune.tune`), or its default for the target. A module of one function is
    also callable as that function (``mod(a, b, c)``).

    Functions are called as ``mod["name"](a, b, c)`` or ``mod.name(a, b, c)`` with
    ``tvm.runtime.Tensor``, ``tvm_ffi.Tensor`` or any DLPack tensor (NumPy arrays included).
    """
    with room("tvm.compile"):  # deep expressions: see tvm._recursion (inline: warnings keep their frames)
        from tvm.contrib import cc

        cc.check_output_name(name)
        if hasattr(func_or_mod, "select"):  # a tvm.tune.Tunable: its tuned configuration, else its default
            func_or_mod = func_or_mod.select(
                normalize_target(target if target is not None else (Target.current() or "c"))
            )
        funcs = _functions(func_or_mod)
        tgt = normalize_target(_functions_target(funcs) if target is None else target)
        if not funcs:
            raise ValueError("tvm.compile: nothing to compile (no PrimFunc given)")
        hosts, kernels, on_cpu = [], [], set()
        for f in funcs:
            own = _own_cpu_target(f, tgt)
            low = lower(f, own or tgt)
            hosts.append(low.host)
            kernels.extend(low.kernels)
            if own is not None:
                on_cpu.add(f.global_symbol)
        device_modules = []
        if kernels:
            if tgt.kind.codegen is None:
                raise RuntimeError(
                    f"target '{tgt.kind.name}' has no device code generator, but lowering "
                    f"produced {len(kernels)} device kernel(s)"
                )
            device_modules.append(tgt.kind.codegen(kernels, tgt))
        host_target = tgt.host if (tgt.kind.codegen is not None and tgt.host is not None) else tgt
        _check_host_architecture(host_target)
        mcpu = host_target.attrs.get("mcpu")
        mcpu = None if mcpu in (None, True, "") else str(mcpu)
        host = _HostCode(hosts, tgt.device_type, on_cpu, mcpu, name)
        path, hit = host.compile(use_cache=True)
        try:
            return host.loaded(path, hit, tgt, device_modules)
        except (FileNotFoundError, ModuleLoadError):
            if os.path.exists(path):
                raise
        path, hit = host.compile(use_cache=False)  # the cache entry was removed before it loaded
        return host.loaded(path, hit, tgt, device_modules)


@dataclass
class _HostCode:
    """The host C of a compile, compiled (and generated again when the C compiler names functions
    that no header declares)."""

    hosts: list
    device_type: int
    on_cpu: set
    mcpu: Optional[str]
    name: str
    src: Any = None

    def compile(self, use_cache: bool) -> tuple[str, bool]:
        """The shared library's path and whether it came from the cache."""
        from tvm.contrib import cc

        # T.call_extern functions no header declares (the user's own) are declared from their calls;
        # each is learned once per process from the compiler's error, not by failing every compile
        if self.src is None:
            self.src = self._generate()
        try:
            return self._compile(use_cache)
        except cc.CompileError as err:
            if not err.undeclared:
                raise
            _UNDECLARED_EXTERNS.update(err.undeclared)
            self.src = self._generate()
            return self._compile(use_cache)

    def loaded(self, path: str, hit: bool, tgt: Target, device_modules: list) -> Module:
        """The compiled library at ``path`` loaded with ``device_modules`` (a private output is
        removed once loaded or when loading fails, and kept for a library that loads later)."""
        from tvm.contrib import cc

        src = self.src
        info = BuildInfo(
            src.code, path, tgt, src.has_parallel, self.mcpu, device_modules, src.function_names, hit,
            src.extern_functions,
        )  # fmt: skip
        try:
            lib = _load_host(path, src.has_launch, device_modules)
        except UnresolvedSymbolError as err:
            return _loaded_when_defined(info, src.has_launch, err)
        except BaseException:
            cc.discard_scratch(path)
            raise
        cc.discard_scratch(path)
        info.device_modules = list(lib.imports)
        return Module(lib, info)

    def _generate(self) -> Any:
        from tvm.codegen.c_host import generate_host
        from tvm.codegen.register_tiles import vector_bytes_of

        return generate_host(
            self.hosts, self.device_type, declare=_UNDECLARED_EXTERNS, on_cpu=self.on_cpu,
            vector_bytes=vector_bytes_of(self.mcpu),
        )  # fmt: skip

    def _compile(self, use_cache: bool) -> tuple[str, bool]:
        from tvm.contrib import cc

        return cc.compile_shared(
            self.src.code, openmp=self.src.has_parallel, mcpu=self.mcpu, name=self.name,
            late_bound=self.src.extern_functions, use_cache=use_cache,
        )  # fmt: skip


build = compile


def _loaded_when_defined(info: BuildInfo, has_launch: bool, err: UnresolvedSymbolError) -> Module:
    """The module of a library that calls a function no loaded library defines yet (a
    ``T.call_extern`` of the caller's own library): it can be exported now, and loads at its first
    use once a library defining the function is loaded; until then a use says what is missing."""
    from tvm.contrib import cc

    warn_at_caller(
        f"tvm.compile: the compiled functions call '{err.symbol}', which no library loaded in this process "
        f"defines; the module loads when a library defining it is (ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)), "
        f"and export_library works now",
        UserWarning,
    )

    def load() -> tvm_ffi.Module:
        try:
            lib = _load_host(info.lib_path, has_launch, info.device_modules)
        except UnresolvedSymbolError as again:
            raise UnresolvedSymbolError(
                f"this module (tvm.compile) calls the function '{again.symbol}', which no library loaded in this "
                f"process defines: load the library that defines it with ctypes.CDLL(path, "
                f"mode=ctypes.RTLD_GLOBAL) and use the module again, or export it with export_library and "
                f"load it where that library is loaded",
                again.symbol,
            ) from None
        cc.discard_scratch(info.lib_path)
        info.device_modules = list(lib.imports)
        return lib

    module = Module(None, info, load=load)
    weakref.finalize(module, cc.discard_scratch, info.lib_path)
    return module


def _reuse_key(path: str, device_modules: list) -> tuple | None:
    """What makes two compiles load the same module tree: the host library (its cache entry, or
    its bytes), the device code and whether the real device modules could be made, else why not
    (a fallback saves the same bytes and its functions give that reason); None when a device
    module cannot be serialized (it is then never shared)."""
    from tvm.codegen.device_module import fallback_reason, force_fallback
    from tvm.contrib import cc

    save = tvm_ffi.get_global_func("runtime.ModuleSaveToBytes")
    key: list = ["compile", path]
    if cc.is_scratch(path):  # an uncached compile's output has a new path each time: known by its bytes
        with open(path, "rb") as f:
            key[1] = hashlib.sha256(f.read()).hexdigest()
    for dm in device_modules:
        try:
            digest = hashlib.sha256(bytes(save(dm))).hexdigest()
        except Exception:  # noqa: BLE001 - a module kind without SaveToBytes
            return None
        factory = tvm_ffi.get_global_func(f"ffi.Module.create.{dm.kind}", allow_missing=True)
        key += [digest, "real" if factory is not None and not force_fallback() else fallback_reason(dm.kind)]
    return tuple(key)


def _architecture(name: str) -> str | None:
    """The family of an architecture as a target triple or ``platform.machine()`` spells it
    (``amd64`` and ``x86_64`` are one; a name not known here is its own family), or None for
    no name."""
    name = name.lower()
    families = (
        (("x86_64", "x86_64h", "amd64", "x64"), "x86_64"),
        (("i386", "i486", "i586", "i686", "x86"), "x86"),
        (("aarch64", "arm64"), "aarch64"),
        (("ppc64le", "powerpc64le"), "ppc64le"),
        (("ppc64", "powerpc64"), "ppc64"),
        (("riscv64",), "riscv64"),
        (("s390x", "systemz"), "s390x"),
    )
    for spellings, family in families:
        if name in spellings:
            return family
    if name.startswith("arm64"):  # arm64e
        return "aarch64"
    return "arm" if name.startswith(("arm", "thumb")) else name or None


def _check_host_architecture(target: Any) -> None:
    """A ValueError when ``target`` asks for CPU code of another architecture (``-mtriple``): the
    host code is compiled by this machine's C compiler and loaded into this process, so another
    architecture's library would silently be this machine's."""
    import platform

    triple = target.attrs.get("mtriple")
    if not isinstance(triple, str) or not triple:
        return
    wanted, here = _architecture(triple.split("-")[0]), _architecture(platform.machine())
    if wanted is not None and here is not None and wanted != here:
        raise ValueError(
            f"target '{target}' asks for {triple.split('-')[0]} code (-mtriple={triple}), but CPU code is "
            f"compiled for this {platform.machine()} machine and loaded here: cross-compiling the CPU "
            "target is not supported; compile on a machine of that architecture (or leave -mtriple out)"
        )


def _load_host(path: str, has_launch: bool, device_modules: list) -> tvm_ffi.Module:
    """The host library at ``path`` with ``device_modules`` imported. With launches it is loaded
    from a private copy, or is the tree a compile of the same code loaded before (see reuse)."""

    def load() -> tvm_ffi.Module:
        lib = load_library(path, private=has_launch)
        for dm in device_modules:
            lib.import_module(dm)
        return lib

    key = _reuse_key(path, device_modules) if has_launch else None
    return reuse(key, load) if key is not None else load()
