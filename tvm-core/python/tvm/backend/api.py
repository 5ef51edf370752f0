"""The backend API: what a backend's activation hook may call.

A backend wheel declares, in ``pyproject.toml``::

    [project.entry-points."tvm.backends"]
    mybackend = "tvm_backend_mybackend:activate"

and implements ``activate(ctx: BackendContext) -> None``. First-party and third-party backends
use exactly this API; the core has no built-in list of backends.
"""

from __future__ import annotations

import ctypes
import os
import unicodedata
from pathlib import Path
from typing import Any, Callable

import tvm_ffi

from . import _ownership
from ._registry import RUNTIME_UNAVAILABLE, BackendError, BackendRecord, RuntimeUnavailable, lazy_callable

__all__ = [
    "BackendContext",
    "BackendABIError",
    "RuntimeUnavailable",
    "device_unavailable_reason",
    "runtime_library_path",
    "runtime_unavailable_reason",
]


def runtime_library_path(package_file: str | os.PathLike[str], stem: str) -> Path:
    """Where a backend wheel keeps its runtime DSO: ``<package>/lib/lib<stem>.so`` (``.dylib`` on
    macOS), for the package whose ``__file__`` is ``package_file``; pass it to
    :meth:`BackendContext.load_runtime`."""
    from tvm._lib import shared_library_path

    return shared_library_path(Path(package_file).resolve().parent / "lib", stem)


def runtime_unavailable_reason(kind: str) -> str:
    """Why the runtime of backend ``kind`` is not loaded ("" when it is; loads the backend when
    autoload is off)."""
    import tvm.backend

    try:
        record = tvm.backend.load(kind)
    except Exception as err:  # noqa: BLE001 - any failure is the reason
        return f"the {kind} backend does not load: {err}"
    if record.status != tvm.backend.ACTIVE:
        return f"the {kind} runtime is not loaded: {record.reason} (see `python -m tvm.backend`)"
    return ""


def device_unavailable_reason(kind: str) -> str:
    """Why no ``kind`` device can be used here ("" when one can): why the backend's runtime is not
    loaded, else its DeviceAPI's ``unavailable_reason`` (the first query discovers the devices).
    A backend's own ``unavailable_reason()`` is this with its name."""
    from tvm.runtime.device import device

    return runtime_unavailable_reason(kind) or str(device(kind, 0).attr("unavailable_reason") or "")


class BackendABIError(BackendError):
    """The backend's runtime DSO was built against another ABI of the core."""


_ERR_LEN = 4096


class BackendContext:
    """Handed to a backend's activation hook; every registration goes through it."""

    def __init__(self, record: BackendRecord):
        self._record = record
        self._undo: list[Callable[[], None]] = []
        #: the releases of claims a loaded runtime DSO keeps using (see _rollback)
        self._runtime_claims: set[Callable[[], None]] = set()
        self._keep_alive: Any = None
        self.runtime_available: bool = False
        #: Why the runtime is unavailable ("" while available); repeated in fallback errors.
        self.unavailable_reason: str = ""

    @property
    def name(self) -> str:
        """The backend's name (its entry-point name)."""
        return self._record.name

    @property
    def core_abi_version(self) -> int:
        """The ABI version of the loaded libtvm_runtime."""
        from tvm._lib import ABI_VERSION

        return ABI_VERSION

    def load_runtime(self, path: str | os.PathLike[str], *, hint: str = "") -> bool:
        """Load the backend's runtime DSO by absolute path and initialise it.

        Checks ``TVMBackendABIVersion()`` against the core before calling ``TVMBackendInit``.
        Returns False (and records "runtime unavailable" with the reason) when a library the DSO
        links cannot be loaded or its init reports that the device runtime is missing; ``hint``
        says what to install. Raises :class:`BackendABIError` for an ABI mismatch and
        :class:`BackendError` when the DSO itself is missing or damaged (the fix is reinstalling
        the wheel, not the driver).
        """
        p = Path(path)
        if not p.is_absolute():
            raise ValueError(f"load_runtime needs an absolute path inside the backend package, got {p}")
        self._record.dso_path = str(p)
        if hint:
            self._record.hint = hint
        if not p.is_file():
            self._record.hint = ""  # the fix is reinstalling the wheel, not the driver hint
            raise BackendError(
                f"the runtime library {p} is missing from the installed package (a damaged installation)"
            )
        try:
            lib = ctypes.CDLL(str(p), mode=ctypes.RTLD_LOCAL | os.RTLD_NOW)
        except OSError as err:
            foreign = _foreign_library(p)  # the loader says "No such file or directory" of one
            if foreign is not None:
                self._record.hint = ""
                raise BackendError(
                    f"the runtime library {p} is {foreign}: install the wheel built for this machine"
                ) from None
            if str(err).startswith(f"{p}:"):  # the library itself (not a driver it links) is damaged
                self._record.hint = ""
                raise BackendError(f"the runtime library {p} cannot be loaded: {err}") from None
            return self._unavailable(f"cannot load {p.name}: {err}")
        try:
            abi = lib.TVMBackendABIVersion
            init = lib.TVMBackendInit
        except AttributeError as err:
            self._record.hint = ""  # the fix is a matching build, not the driver hint
            raise BackendABIError(f"{p.name} is not a TVM backend runtime (missing {err})") from None
        abi.restype = ctypes.c_int
        got = abi()
        if got != self.core_abi_version:
            from tvm import __version__

            self._record.hint = ""
            raise BackendABIError(
                f"{p.name} was built for TVM core ABI {got}, but the installed core (tvm {__version__}) "
                f"has ABI {self.core_abi_version}; install the backend version that matches the core"
            )
        buf = ctypes.create_string_buffer(_ERR_LEN)
        init.argtypes = [ctypes.c_char_p, ctypes.c_int]
        init.restype = ctypes.c_int
        if init(buf, _ERR_LEN) != 0:
            return self._unavailable(buf.value.decode("utf-8", "replace") or f"{p.name} init failed")
        self._keep_alive = lib
        self.runtime_available = True
        return True

    def _unavailable(self, reason: str) -> bool:
        self.runtime_available = False
        self.unavailable_reason = reason
        return False

    def set_hint(self, hint: str) -> None:
        """What a user should do when this backend cannot run kernels (shown in errors)."""
        self._record.hint = hint

    def _claim(self, what: str, key: object) -> None:
        """Own ``what`` ``key`` for this backend (refused with both owners named when taken)."""
        release = _ownership.claim(what, key, self.name, self._record.distribution)
        if what in _HELD_BY_A_LOADED_RUNTIME:
            self._runtime_claims.add(release)
        self._undo.append(release)

    def register_device(self, name: str, device_type: int | None = None, aliases: tuple[str, ...] = ()) -> int:
        """Claim device ``name`` and its DLPack ``device_type`` for this backend, so that
        ``tvm.device(name)`` (and ``tvm.device(alias)`` for each of ``aliases``) means it and
        devices print as ``name(0)``; returns the type.

        A first-party backend passes its standard type. A vendor's backend leaves it out and gets
        a free type of its own (from ``tvm.backend.VENDOR_DEVICE_TYPES``), which its runtime DSO
        reads with ``tvm::runtime::DeviceTypeOf(name)``: register the device before
        :meth:`load_runtime`. A type or name another backend owns is refused."""
        from tvm.runtime.device import DEVICE_NAMES, DEVICE_TYPES

        for claimed in (name, *aliases):
            self._check_device_name(claimed)
        if device_type is not None and (
            isinstance(device_type, bool) or not isinstance(device_type, int) or not 0 < device_type < 64
        ):
            raise ValueError(
                f"register_device('{name}'): device type {device_type!r} is not a DLPack device type "
                "(an int from 1 to 63); leave it out to get a free vendor type"
            )
        with _ownership.lock():
            if device_type is None:
                device_type = _ownership.free_vendor_device_type()
            self._claim("device type", device_type)
            for claimed in (name, *aliases):
                self._claim("device name", claimed)
        previous_types = {n: DEVICE_TYPES.get(n) for n in (name, *aliases)}
        previous_name = DEVICE_NAMES.get(device_type)
        set_name = tvm_ffi.get_global_func("runtime.SetDeviceName")

        def undo() -> None:
            for n, previous_type in previous_types.items():
                _restore(DEVICE_TYPES, n, previous_type)
            _restore(DEVICE_NAMES, device_type, previous_name)
            set_name(device_type, "")

        self._undo.append(undo)  # before the tables change: a failure half-way is undone too
        DEVICE_TYPES.update(dict.fromkeys((name, *aliases), device_type))
        DEVICE_NAMES[device_type] = name
        set_name(device_type, name)
        if device_type not in self._record.device_types:
            self._record.device_types.append(device_type)
        return device_type

    def _check_device_name(self, name: object) -> None:
        """Refuse a device name that generated code cannot hold: every host library names the
        registered devices in C string literals, so a quote, a backslash, a control character
        or a lone surrogate there would break every later compile in the process."""
        who = f"{self._record.distribution} (backend '{self.name}')"
        if not isinstance(name, str):
            raise TypeError(f"{who}: register_device takes device names as str, got {name!r}")
        if not name:
            raise ValueError(f"{who}: register_device was given an empty device name; give the device a name")
        bad = next((c for c in name if c in '"\\' or unicodedata.category(c) in _UNPRINTABLE), None)
        if bad is not None:
            raise ValueError(
                f"{who}: register_device({name!r}): a device name cannot hold {bad!r} (quotes, backslashes, "
                "control characters and lone surrogates cannot appear in the C string literals that name devices in "
                "generated code); expected letters, digits and punctuation such as '_', '-' or '.'. "
                "Fix: give the device a name without it (ask the backend's vendor for a release that does)"
            )

    def register_target_kind(
        self,
        name: str,
        device_type: int,
        *,
        codegen: "str | Callable[..., Any] | None" = None,
        keys: tuple[str, ...] = (),
        default_attrs: dict[str, Any] | None = None,
        aliases: tuple[str, ...] = (),
        capabilities: dict[str, Any] | None = None,
        passes: tuple["str | Callable[..., Any]", ...] = (),
    ) -> None:
        """Add target kind ``name``. ``codegen`` (``"module:function"`` or a callable, imported on
        first use) turns the device functions of a compiled program into a device module.
        ``capabilities`` declares what the devices can do (``tvm.target.target.CAPABILITIES``:
        int64/float64/float16/bfloat16 support, threads and shared memory per block, opaque buffer
        handles, kernel arguments; a value may be a function of the target), checked when kernels
        are lowered; ``passes`` (``"module:function"``
        or callables ``pass(kernel, target) -> kernel``) run on every kernel after the split."""
        from tvm.target.target import TargetKind, register_target_kind, unregister_target_kind

        for claimed in (name, *aliases):
            self._claim("target kind", claimed)
        kind = TargetKind(
            name,
            device_type,
            self.name,
            tuple(keys),
            dict(default_attrs or {}),
            lazy_callable(codegen, self._record, "code generator") if codegen is not None else None,
            capabilities,
            tuple(lazy_callable(p, self._record, "pass") for p in passes),
        )
        register_target_kind(kind, tuple(aliases))
        self._record.target_kinds.append(name)
        self._undo.append(lambda: unregister_target_kind(name))

    def register_device_target_detector(self, device_type: int, fn: "str | Callable[..., Any]") -> None:
        """Detector ``fn(device) -> Target`` for ``tvm.target.detect_target_from_device``."""
        from tvm.target.detect_target import register_device_target_detector, unregister_device_target_detector

        self._claim("device type", device_type)
        register_device_target_detector(device_type, lazy_callable(fn, self._record, "target detector"))
        self._undo.append(lambda: unregister_device_target_detector(device_type))

    def register_script_namespace(self, name: str, module: str) -> None:
        """Expose ``module`` (imported on first use) as ``T.<name>`` in TVMScript."""
        from tvm.script import namespaces

        self._claim("TVMScript namespace", name)
        namespaces.register(name, module)
        self._undo.append(lambda: namespaces.unregister(name))

    def declare_module_kind(self, kind: str) -> None:
        """This backend produces device modules of ``kind``. When the backend's runtime did not
        register ``ffi.Module.load_from_bytes.<kind>``, the core registers the generic fallback
        loader so that libraries containing such modules still load (and explain)."""
        self._claim("module kind", kind)
        if kind not in self._record.module_kinds:
            self._record.module_kinds.append(kind)

    def _finish(self) -> None:
        """Called after the hook: install fallback loaders for kinds without a real runtime."""
        if self.unavailable_reason:
            self._record.status = RUNTIME_UNAVAILABLE
            self._record.reason = self.unavailable_reason
        for kind in self._record.module_kinds:
            key = f"ffi.Module.load_from_bytes.{kind}"
            if tvm_ffi.get_global_func(key, allow_missing=True) is None:
                reason = self._fallback_reason()
                load = tvm_ffi.get_global_func("runtime.FallbackModuleLoadFromBytes")
                tvm_ffi.register_global_func(key, lambda b, _k=kind, _r=reason: load(_k, _r, b), override=True)

    def _fallback_reason(self) -> str:
        why = self.unavailable_reason or "the runtime of this backend is not loaded"
        fix = self._record.hint or f"install a machine with the {self.name} runtime"
        return f"Reason: {why}. Fix: {fix}."

    def _rollback(self) -> None:
        """Undo what the hook registered before it failed. Globals registered by the runtime DSO
        itself stay (a DSO cannot be unloaded safely), so once it was initialised its device
        types and module kinds stay claimed by this backend: another backend given them would
        silently use this one's DeviceAPI and loaders."""
        for undo in reversed(self._undo):
            if self._keep_alive is not None and undo in self._runtime_claims:
                continue
            try:
                undo()
            except Exception:  # noqa: BLE001 - best effort cleanup of a failed backend
                pass
        self._undo.clear()
        self._record.target_kinds.clear()
        self._record.module_kinds.clear()
        self._record.device_types.clear()


#: Unicode categories of characters a device name cannot hold: control characters (newline,
#: tab, NUL, DEL, ...) and lone surrogates (a name of bytes that are not UTF-8)
_UNPRINTABLE = frozenset(("Cc", "Cs"))
#: Claims whose registrations a runtime DSO makes itself (a DeviceAPI, a module loader)
_HELD_BY_A_LOADED_RUNTIME = ("device type", "module kind")


def _foreign_library(path: Path) -> str | None:
    """What library ``path`` is when it was built for another machine (from its ELF header; the
    dynamic loader says "No such file or directory" of one), else None."""
    from tvm.runtime._elf import foreign_machine

    try:
        with open(path, "rb") as f:
            return foreign_machine(f.read(64))
    except OSError:
        return None


def _restore(table: dict, key: object, previous: object) -> None:
    """Put ``table[key]`` back to ``previous`` (None: remove it)."""
    if previous is None:
        table.pop(key, None)
    else:
        table[key] = previous
