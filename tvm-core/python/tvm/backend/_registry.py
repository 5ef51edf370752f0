"""Backend records and activation: the machinery behind ``tvm.backend``.

Every discovered backend gets a :class:`BackendRecord`. Activation imports the entry point and
calls its hook with a :class:`~tvm.backend.api.BackendContext`. Any exception (``SystemExit``
included; only ``KeyboardInterrupt`` propagates) is recorded, reported once as a warning, and
raised as an actionable error when the backend's device or target is used.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import sys
import threading
from typing import Any, Callable, Sequence

import tvm_ffi

from tvm._fork_safe import renewed_in_child
from tvm._env import FALSE, TRUE, env_flag, warn_safely

from ._discovery import EntryPoint, discover
from ._ownership import PUBLISHED_BACKENDS, is_first_party

ACTIVE = "active"
RUNTIME_UNAVAILABLE = "runtime unavailable"
FAILED = "failed"
DISABLED = "disabled by env"
DISCOVERED = "not loaded"


class BackendError(RuntimeError):
    """A backend could not be activated, or a failed backend's device or target was used."""


class BackendLoadWarning(UserWarning):
    """Issued once per backend whose activation failed or whose runtime is unavailable."""


class RuntimeUnavailable(Exception):
    """Raised inside activation when the backend's runtime DSO cannot be used on this machine."""


class BackendRecord:
    """What is known about one discovered backend; shown by ``python -m tvm.backend``.

    Fields: name, entry_point, distribution, version, status, reason, exc_type, traceback,
    dso_path, hint, device_types, target_kinds, module_kinds, activation_ms.
    """

    def __init__(self, name: str, entry_point: str, distribution: str, version: str):
        self.name = name
        self.entry_point = entry_point
        self.distribution = distribution
        self.version = version
        self.status = DISCOVERED
        self.reason = ""
        self.exc_type = ""
        self.traceback = ""
        self.dso_path = ""
        self.hint = ""
        self.device_types: list[int] = []
        self.target_kinds: list[str] = []
        self.module_kinds: list[str] = []
        self.activation_ms = 0.0

    def __repr__(self) -> str:
        return f"BackendRecord({self.name!r}, {self.distribution} {self.version}, {self.describe()!r})"

    @property
    def usable_for_codegen(self) -> bool:
        """True when code generation works (active, or only the runtime is missing)."""
        return self.status in (ACTIVE, RUNTIME_UNAVAILABLE)

    def describe(self) -> str:
        """One line: status and reason."""
        return self.status + (f": {self.reason}" if self.reason else "")

    def fix(self) -> str:
        """What the user should do about this record's state."""
        setting = _BAD_SETTING.search(self.reason)
        if setting:  # the runtime refused an environment variable's value: installing won't help
            return f"give {setting.group(1)} a value as the reason says, or unset it"
        library = _BAD_LIBRARY.search(self.reason)
        if library:  # the driver library the user named: installing the usual one won't help
            return f"point {library.group(1)} at the driver library, or unset it to use the installed one"
        if self.hint:
            return self.hint
        if self.exc_type == "OwnershipError":
            return self._ownership_fix()
        if self.exc_type == "EntryPointError":
            return f"uninstall {self.distribution} (pip uninstall '{self.distribution}') or ask its vendor to fix it"
        if self.status == DISABLED:
            return self._disabled_fix()
        return self.reinstall_fix()

    def _disabled_fix(self) -> str:
        """What turns this backend on: each setting that keeps it off, or an explicit load."""
        settings = []
        if self.reason.startswith("not in TVM_BACKENDS"):
            settings.append(f"add '{self.name}' to TVM_BACKENDS (or unset it)")
        if _AUTOLOAD_OFF in self.reason:
            settings.append("unset TVM_DEVICE_BACKEND_AUTOLOAD")
        return f"{' and '.join(settings)}, or call tvm.backend.load('{self.name}')"

    def _ownership_fix(self) -> str:
        """What to do when this backend claimed something another one owns: when it is reserved
        for one of the project's backends, that backend's wheel is what the user wants."""
        reserved = _RESERVED_FOR.search(self.reason)
        uninstall = f"pip uninstall '{self.distribution}'"
        if reserved is None:
            return (
                "two installed distributions claim the same name or device type (the reason names "
                f"both): uninstall the one you do not want ({uninstall} if it is this one), or ask its "
                "vendor for a release with names of its own"
            )
        first_party = f"tvm-backend-{reserved.group(1)}"
        what = f"the backend name '{self.name}'" if self.name == reserved.group(1) else "what it registers"
        owner = entry_point(reserved.group(1))
        if owner is not None and is_first_party(reserved.group(1), owner.distribution):
            return (
                f"{what} is reserved for the project's {first_party}, which is installed: uninstall "
                f"{self.distribution} ({uninstall}), or ask its vendor for a release with names of its own"
            )
        return (
            f"{what} is reserved for the project's {first_party}: pip install {first_party} and uninstall "
            f"{self.distribution} ({uninstall}), or ask its vendor for a release with names of its own"
        )

    def reinstall_fix(self) -> str:
        """The fix for a damaged installation of this backend: reinstalling its wheel."""
        if is_first_party(self.name, self.distribution):
            return (
                f"reinstall a matching version: pip install --force-reinstall '{self.distribution}=="
                f"{_core_version()}' (run `python -m tvm.backend` for details)"
            )
        return (  # a vendor's wheel has its own versions: the core's cannot be named for it
            f"reinstall it (pip install --force-reinstall '{self.distribution}') or install its release "
            f"for tvm {_core_version()}; if it still fails, give its vendor the traceback that "
            "`python -m tvm.backend` prints"
        )


def _core_version() -> str:
    from tvm import __version__

    return __version__


#: A reason naming an environment variable whose value a runtime refused ("TVM_X='v': expected ...").
_BAD_SETTING = re.compile(r"\b(TVM_[A-Z0-9_]+)='[^']*': expected")
#: The driver library a variable names could not be used (tvm/runtime/driver_loader.h's reasons).
_BAD_LIBRARY = re.compile(r"\b(TVM_[A-Z0-9_]+_LIBRARY)=.* (cannot be loaded|lacks) ")
#: The one of the project's backends a refused claim is reserved for (_ownership.claim's reason)
_RESERVED_FOR = re.compile(r"reserved for the first-party backend '([\w.-]+)'")
#: The reason of a backend left off because autoload is off
_AUTOLOAD_OFF = "TVM_DEVICE_BACKEND_AUTOLOAD=0"
#: What an entry point's name may be (the entry-point specification's names).
_NAME = re.compile(r"[\w.-]+")


def _new_lock() -> threading.Condition:
    """The registry's lock: held while records change, never while a backend's own code runs
    (a thread that backend's activate() waits for may ask the registry anything); waited on
    for an activation running in another thread."""
    return threading.Condition(threading.RLock())


_lock = _new_lock()
renewed_in_child(sys.modules[__name__], "_lock", _new_lock)
_records: dict[str, BackendRecord] = {}
#: backends whose activate() is running, each with the thread running it (that thread asking for
#: it again is refused; another thread waits until it is done)
_activating: dict[str, int] = {}
_entry_points: dict[str, EntryPoint] = {}
_discovered = False


def _forget_other_threads_activations() -> None:
    """In a forked child: only the thread that forked is left, so an activation another thread
    was running never ends there (asking for that backend would wait for it forever)."""
    me = threading.get_ident()
    for name in [n for n, thread in _activating.items() if thread != me]:
        del _activating[name]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_other_threads_activations)


def autoload_enabled() -> bool:
    """False when ``TVM_DEVICE_BACKEND_AUTOLOAD=0``."""
    return env_flag("TVM_DEVICE_BACKEND_AUTOLOAD", default=True)


def strict_mode() -> bool:
    """True when ``TVM_BACKEND_STRICT`` is set (``1`` or ``all``): failed backends raise at import."""
    return strict_runtime() or env_flag("TVM_BACKEND_STRICT")  # "all" first: it is no plain switch


def strict_runtime() -> bool:
    """True when ``TVM_BACKEND_STRICT=all``: a backend whose runtime is unavailable raises too
    (for CI on machines that must have the device)."""
    return os.environ.get("TVM_BACKEND_STRICT", "").strip().lower() == "all"


def allowlist() -> set[str] | None:
    """The names in ``TVM_BACKENDS`` (comma separated), or None when unset."""
    names = {n.strip() for n in os.environ.get("TVM_BACKENDS", "").split(",") if n.strip()}
    return names or None  # "" or ",,": no names, as if unset


def ensure_discovered() -> None:
    """Read the entry points once per process. Once they are read, the set of records never
    changes, so a query answers without the lock."""
    global _discovered
    if _discovered:
        return
    with _lock:
        if _discovered:
            return
        found = []
        for ep in discover():
            if _NAME.fullmatch(ep.name):
                found.append(ep)
                continue
            rec = _records[f"{ep.name!r} ({ep.distribution})"] = BackendRecord(
                ep.name, ep.value, ep.distribution, ep.version
            )
            rec.status, rec.exc_type = FAILED, "EntryPointError"
            rec.reason = (
                f"refused: {ep.distribution} {ep.version} declares a tvm.backends entry point named {ep.name!r}, "
                "which is no backend name (letters, digits, '_', '-' and '.')"
            )
        for ep in _owners_of_names(found):
            _entry_points[ep.name] = ep
            _records[ep.name] = BackendRecord(ep.name, ep.value, ep.distribution, ep.version)
        _discovered = True


def _owners_of_names(found: list[EntryPoint]) -> list[EntryPoint]:
    """One entry point per backend name: the first-party distribution's where there is one, else
    the first on ``sys.path``. Every other claimant gets a failed record naming both (it is never
    imported): a vendor's wheel cannot replace or shadow another backend by reusing its name."""
    chosen: dict[str, EntryPoint] = {}
    for ep in found:
        current = chosen.get(ep.name)
        if current is None or (
            is_first_party(ep.name, ep.distribution) and not is_first_party(ep.name, current.distribution)
        ):
            chosen[ep.name] = ep
    for ep in found:
        winner = chosen[ep.name]
        if ep is winner or (ep.distribution, ep.value) == (winner.distribution, winner.value):
            continue
        key = f"{ep.name} ({ep.distribution})"
        rec = _records[key] = BackendRecord(ep.name, ep.value, ep.distribution, ep.version)
        rec.status = FAILED
        rec.exc_type = "OwnershipError"
        rec.reason = (
            f"refused: the backend name '{ep.name}' belongs to {winner.distribution} {winner.version}; "
            f"{ep.distribution} {ep.version} declares an entry point of the same name"
        )
    return list(chosen.values())


def entry_point(name: str) -> EntryPoint | None:
    """The entry point that owns backend name ``name``, if one is installed."""
    ensure_discovered()
    return _entry_points.get(name)


def records() -> list[BackendRecord]:
    """All records, sorted by name (their current state: one being activated shows as not
    loaded yet)."""
    ensure_discovered()
    return [rec for _, rec in sorted(_records.items())]


def get_record(name: str) -> BackendRecord | None:
    """The record of backend ``name``, if discovered."""
    ensure_discovered()
    return _records.get(name)


def autoload() -> None:
    """Activate every discovered backend the environment allows (called by ``import tvm``): the
    project's own first, so that what they register (device aliases included) is theirs before
    any third-party backend could claim it.

    Under ``python -m tvm.backend`` nothing raises and nothing warns, whatever
    ``TVM_BACKEND_STRICT`` says: the command reports every backend's state itself."""
    ensure_discovered()
    allowed, enabled = allowlist(), autoload_enabled()
    if enabled and allowed is not None:
        _warn_unknown_allowed(allowed)
    _warn_unknown_strict()
    reporting = running_report_command()
    first_party = {n for n, rec in _records.items() if is_first_party(n, rec.distribution)}
    for name in sorted(_entry_points, key=lambda n: (n not in first_party, n)):
        rec = _records[name]
        off = _why_off(name, allowed, enabled)
        if off:
            rec.status, rec.reason = DISABLED, off
            continue
        tvm_module = sys.modules.get("tvm")
        _activate(name, explicit=False, announce=not reporting)
        if tvm_module is not None and sys.modules.get("tvm") is not tvm_module:
            sys.modules["tvm"] = tvm_module  # a plugin removed or replaced the package being imported
            _warn(f"tvm backend '{name}' removed or replaced sys.modules['tvm']; it was put back", RuntimeWarning)


def _why_off(name: str, allowed: set[str] | None, enabled: bool) -> str:
    """Why the environment leaves backend ``name`` off ("" when autoload activates it). The
    allowlist comes first: it holds for libraries too, while autoload off only defers."""
    if allowed is not None and name not in allowed:
        off = f"not in TVM_BACKENDS={os.environ.get('TVM_BACKENDS')}"
        return off if enabled else f"{off} ({_AUTOLOAD_OFF} too)"
    return "" if enabled else _AUTOLOAD_OFF


def running_report_command() -> bool:
    """Whether this interpreter was started as ``python -m tvm.backend`` (``import tvm`` runs
    before the command's own code, so the command is known only from the command line)."""
    return _module_run_by(_interpreter_argv()) in ("tvm.backend", "tvm.backend.__main__")


def _interpreter_argv() -> list[str]:
    """The interpreter's own command line (``sys.orig_argv``; on Python 3.9, /proc's)."""
    argv = getattr(sys, "orig_argv", None)
    if argv is not None:
        return list(argv)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return [os.fsdecode(a) for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def _module_run_by(argv: list[str]) -> str | None:
    """The module ``-m`` names in an interpreter's command line ``argv`` (None when it runs a
    script, ``-c`` code or nothing), reading its options as Python does: ``-W`` and ``-X``
    take a value, and short options may be run together (``-Im tvm.backend``)."""
    args = iter(argv[1:])
    for arg in args:
        if arg == "--" or not arg.startswith("-") or arg == "-":
            return None
        if arg.startswith("--"):
            if arg == "--check-hash-based-pycs":  # the one long option with a value of its own
                next(args, "")
            continue
        for i, flag in enumerate(arg[1:], start=2):
            if flag in "cmWX":
                value = arg[i:] or next(args, "")
                if flag == "m":
                    return value
                if flag == "c":
                    return None
                break
    return None


def _warn_unknown_allowed(allowed: set[str]) -> None:
    """A warning for each name in ``TVM_BACKENDS`` that no installed backend has (a typo, or the
    wrong case, would otherwise turn every backend off without a word)."""
    for name in sorted(allowed - set(_entry_points)):
        _warn(
            f"TVM_BACKENDS names '{name}', which is no installed backend (installed: "
            f"{', '.join(sorted(_entry_points)) or 'none'}).{closest_names(name, sorted(_entry_points))}",
            RuntimeWarning,
        )


def _warn_unknown_strict() -> None:
    """A warning when ``TVM_BACKEND_STRICT`` is none of the values it knows (a typo would
    otherwise leave failures quiet without a word)."""
    value = os.environ.get("TVM_BACKEND_STRICT", "").strip()
    if value and value.lower() not in (*TRUE, *FALSE, "all"):
        _warn(
            f"TVM_BACKEND_STRICT={value!r} is not one of 1, true, yes, on (a backend that fails to "
            "activate raises), all (one whose runtime is unavailable raises too) or 0, false, no, off: "
            "it counts as 0",
            RuntimeWarning,
        )


def _warn(message: str, category: type[Warning], depth: int = 0) -> None:
    """Issue a warning about the backends, never raise it: with warnings turned into errors
    (``python -W error``, a test runner's filter, or a plugin's ``simplefilter``) a broken plugin
    must still not break ``import tvm`` or stop the backends after it. The record keeps it.
    ``depth``: the calls between the caller and the registry's entry point (the warning names
    whoever called that)."""
    warn_safely(message, category, stacklevel=4 + depth, logger="tvm.backend")


def activate(name: str, explicit: bool = False) -> BackendRecord:
    """Activate backend ``name`` once; returns its record (raises only in strict/explicit mode).

    The backend's own code runs without the registry's lock, so a thread its activate() waits
    for can still ask the registry anything; another thread asking for the same backend waits
    until its activation is done."""
    return _activate(name, explicit, announce=True)


def _activate(name: str, explicit: bool, announce: bool) -> BackendRecord:
    """:func:`activate`; without ``announce`` a failure neither warns nor raises (strict mode
    included): the caller reports it."""
    ensure_discovered()
    rec, settled = _begin_activation(name, explicit)
    if settled:
        return rec
    try:
        _run_hook(rec, _entry_points[name])
    finally:
        with _lock:
            _activating.pop(name, None)
            _lock.notify_all()
    if announce:
        _announce(rec, explicit)
    return rec


def _begin_activation(name: str, explicit: bool) -> tuple[BackendRecord, bool]:
    """The record of backend ``name`` and whether its activation is settled (it ran before; a
    failure raises when ``explicit``); else it is marked as being activated by this thread.
    Waits while another thread activates it."""
    with _lock:
        rec = _records.get(name)
        if rec is None:
            raise BackendError(
                f"no backend named '{name}' is installed (discovered: {sorted(_records) or 'none'})."
                f"{closest_names(name, sorted(_records))} "
                f"Fix: {install_hint(name)}"
            )
        while name in _activating:
            if _activating[name] == threading.get_ident():  # its activate() asked for it again
                raise BackendError(
                    f"backend '{name}' is still activating: its activate() asked to load it again (through "
                    f"tvm.backend.load, or a load_module or device of its own kind); it is ready when activate "
                    "returns"
                )
            _lock.wait()
        if rec.status in (ACTIVE, RUNTIME_UNAVAILABLE, FAILED):
            if explicit and rec.status == FAILED:
                raise BackendError(f"backend '{name}' failed to load: {rec.reason}")
            return rec, True
        _activating[name] = threading.get_ident()
        return rec, False


def _announce(rec: BackendRecord, explicit: bool) -> None:
    """Tell the user about a failed activation or an unavailable runtime: raise in strict mode
    (or for an explicit load), else warn once (log, for a missing runtime)."""
    name = rec.name
    if rec.status == FAILED:
        if strict_mode() or explicit:
            raise BackendError(
                f"backend '{name}' ({rec.distribution} {rec.version}) failed to load: {rec.reason}\n{rec.traceback}"
            )
        _warn(
            f"tvm backend '{name}' ({rec.distribution} {rec.version}) failed to load and is "
            f"disabled: {rec.reason}. Run `python -m tvm.backend` for details.",
            BackendLoadWarning,
            depth=2,
        )
    elif rec.status == RUNTIME_UNAVAILABLE:
        if strict_runtime():
            raise BackendError(f"backend '{name}': runtime unavailable: {rec.reason}")
        # Expected wherever a wheel compiles for a device this machine lacks (cuda on a laptop,
        # metal on Linux): no warning, the reason is raised when the device is used.
        logging.getLogger("tvm.backend").info(
            "tvm backend '%s': runtime unavailable (%s); code generation works, kernels cannot run on this machine.",
            name,
            rec.reason,
        )


def strict_failures() -> list[BackendRecord]:
    """The backends that ``TVM_BACKEND_STRICT`` makes an error: the failed ones (and with
    ``all`` those whose runtime is unavailable); none when it is unset."""
    raising = {FAILED, RUNTIME_UNAVAILABLE} if strict_runtime() else {FAILED} if strict_mode() else set()
    return [rec for rec in records() if rec.status in raising]


def _run_hook(rec: BackendRecord, ep: EntryPoint) -> None:
    from .api import BackendContext

    import time

    ctx = BackendContext(rec)
    start = time.perf_counter()
    try:
        module = importlib.import_module(ep.module)
        hook: Any = module
        for part in filter(None, ep.attr.split(".")):
            hook = getattr(hook, part)
        if not callable(hook):
            raise TypeError(f"entry point '{ep.value}' is not callable")
        hook(ctx)
        ctx._finish()
        if rec.status == DISCOVERED:
            rec.status = ACTIVE
    except KeyboardInterrupt:
        raise
    except RuntimeUnavailable as err:
        rec.status, rec.reason = RUNTIME_UNAVAILABLE, _message_of(err)
        ctx._finish()
    except BaseException as err:  # noqa: BLE001 - isolation is the point: SystemExit included
        ctx._rollback()
        rec.status = FAILED
        rec.exc_type = type(err).__name__
        rec.reason = f"{type(err).__name__}: {_message_of(err)}"
        rec.traceback = _traceback_of(err)
    finally:
        rec.activation_ms = (time.perf_counter() - start) * 1e3


def _message_of(err: BaseException) -> str:
    """``str(err)``, or a stand-in when a plugin's exception cannot be shown as text (its
    ``__str__`` raises or returns no string): the record must be written whatever it raised."""
    try:
        text = str(err)
    except BaseException:  # noqa: BLE001 - any failure of a plugin's __str__
        return f"(a {type(err).__name__} whose message cannot be shown)"
    return text if isinstance(text, str) else f"(a {type(err).__name__} whose message is not text)"


def _traceback_of(err: BaseException) -> str:
    """The formatted traceback of ``err`` (its frames without the message when even formatting
    it fails)."""
    import traceback

    try:
        return "".join(traceback.format_exception(type(err), err, err.__traceback__))
    except BaseException:  # noqa: BLE001
        frames = "".join(traceback.format_tb(err.__traceback__))
        return f"Traceback (most recent call last):\n{frames}{type(err).__name__}: {_message_of(err)}\n"


# ---------------------------------------------------------------------------------------------
# Lookups used by devices and targets to turn "not registered" into an actionable error


def _record_for_device(device_type: int) -> BackendRecord | None:
    from tvm.runtime.device import DEVICE_NAMES, DEVICE_TYPES

    ensure_discovered()
    for rec in _records.values():
        if device_type in rec.device_types:
            return rec
    name = DEVICE_NAMES.get(device_type)
    for rec in _records.values():
        if rec.name == name or DEVICE_TYPES.get(rec.name) == device_type:
            return rec
    return None


def record_for_kind(kind: str) -> BackendRecord | None:
    """The backend that declared device-module ``kind`` (else the one named like it)."""
    ensure_discovered()
    for rec in _records.values():
        if kind in rec.module_kinds:
            return rec
    return _records.get(kind)


def install_hint(name: str) -> str:
    """What to install for backend, device, target or module kind ``name``. Names the project's
    distribution (``pip install tvm-backend-opencl``; PyPI's ``tvm`` is another project) only
    for a backend the project publishes."""
    from tvm.runtime.device import DEVICE_NAMES, DEVICE_TYPES

    canonical = DEVICE_NAMES.get(DEVICE_TYPES.get(name, -1), name)
    if canonical in PUBLISHED_BACKENDS:
        return f"pip install tvm-backend-{canonical}"
    return (
        f"install the vendor's backend wheel that provides '{name}' "
        "(`python -m tvm.backend` lists the installed backends)"
    )


def closest_names(name: str, known: list[str]) -> str:
    """`` Did you mean 'x'?`` for the closest of ``known`` (empty when none is close)."""
    import difflib

    same_letters = [k for k in known if k.lower() == name.lower() and k != name]
    close = same_letters or difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def explain_missing(what: str, name: str, record: BackendRecord | None, known: Sequence[str] = ()) -> BackendError:
    """An error saying why ``what`` (a device or target) is not usable and what to do; ``known``
    are the names that do exist here (the closest is suggested, all are listed)."""
    if record is None:
        ensure_discovered()
        available = f" Available here: {', '.join(sorted(known))}." if known else ""
        suggestion = closest_names(name, sorted({*known, *_records, *PUBLISHED_BACKENDS}))
        if suggestion and name not in PUBLISHED_BACKENDS:
            return BackendError(f"{what}: no backend provides '{name}'.{suggestion}{available}")
        return BackendError(
            f"{what} needs the '{name}' backend, which is not installed. Fix: {install_hint(name)}.{available}"
        )
    if record.status == FAILED:
        return BackendError(
            f"{what} needs backend '{record.name}' ({record.distribution} "
            f"{record.version}), which failed to load: {record.reason}. "
            f"Fix: {record.fix()}"
        )
    if record.status == DISABLED:
        return BackendError(f"{what} needs backend '{record.name}', which is {record.describe()}. Fix: {record.fix()}")
    if record.status == RUNTIME_UNAVAILABLE:
        return BackendError(
            f"{what}: backend '{record.name}' generates code but its runtime is "
            f"unavailable on this machine: {record.reason}. Fix: {record.fix()}"
        )
    if record.status == ACTIVE:
        return BackendError(
            f"{what}: backend '{record.name}' is active but loaded no runtime for this device (it only "
            f"generates code), so nothing can run on it in this process"
        )
    return BackendError(f"{what}: backend '{record.name}' is {record.describe()}")


def explain_device_error(dev: Any, err: Exception) -> Exception:
    """Turn a 'no runtime registered' error for ``dev`` into one naming the backend's state."""
    if "no runtime is registered" not in str(err):
        return err
    from tvm.runtime.device import DEVICE_NAMES

    dt = dev.dlpack_device_type()
    if dt not in DEVICE_NAMES and _record_for_device(dt) is None:
        known = ", ".join(f"{name} ({code})" for code, name in sorted(DEVICE_NAMES.items()))
        return BackendError(
            f"device {dev!r}: no installed backend provides device type {dt}. Device types here: {known}"
        )
    return explain_missing(f"device {dev!r}", DEVICE_NAMES.get(dt, str(dt)), _record_for_device(dt))


_device_attr = tvm_ffi.get_global_func("runtime.DeviceGetAttr")


def device_attr(device_type: int, device_id: int, key: str) -> Any:
    """Attribute ``key`` of a device; ``exist`` is False (never an error) when no runtime is loaded."""
    try:
        return _device_attr(device_type, device_id, key)
    except ValueError as err:  # a code outside the runtime's table of device types
        if key == "exist":
            return False
        raise ValueError(f"device type {device_type} is no device type this runtime can hold ({err})") from None
    except RuntimeError as err:
        from tvm.runtime.device import Device

        raise explain_device_error(Device(device_type, device_id), err) from err


def lazy_callable(
    spec: str | Callable[..., Any], record: BackendRecord | None = None, role: str = "function"
) -> Callable[..., Any]:
    """Resolve ``"module:attr"`` on first call, so registering costs no import.

    When that import fails (a damaged installation, a misspelled name), the call raises a
    :class:`BackendError` naming ``record``'s backend and distribution, what ``spec`` is to it
    (``role``: its code generator, a pass) and the fix, rather than the bare import error."""
    if callable(spec):
        return spec
    cache: list[Callable[..., Any]] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        if not cache:
            cache.append(_resolve(spec, record, role))
        return cache[0](*args, **kwargs)

    call.__qualname__ = call.__name__ = spec
    return call


def _resolve(spec: str, record: BackendRecord | None, role: str) -> Callable[..., Any]:
    """The callable ``"module:attr"`` names, or a :class:`BackendError` saying why it cannot be had."""
    module_name, _, attr = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name.strip())
        for part in attr.strip().split("."):
            obj = getattr(obj, part)
        if not callable(obj):
            raise TypeError(f"{spec} is a {type(obj).__name__}, not a function")
    except Exception as err:  # noqa: BLE001 - whatever the import raised, the backend is named
        owner = f"backend '{record.name}' ({record.distribution} {record.version})" if record else "a backend"
        fix = record.reinstall_fix() if record else "reinstall the backend that names it"
        raise BackendError(
            f"{owner} names '{spec}' as its {role}, which cannot be loaded ({type(err).__name__}: "
            f"{_message_of(err)}): its installation is damaged, or it names something it does not have. "
            f"Fix: {fix}"
        ) from err
    return obj
