"""Who owns what between plugins.

Every device type, device name, target kind (and alias), device-module kind and TVMScript
namespace belongs to exactly one backend, or to the core. A backend claims each through its
:class:`~tvm.backend.api.BackendContext`; a claim on something another backend (or the core)
owns is refused with an :class:`OwnershipError` naming both distributions, so the second
claimant's activation fails and rolls back only what it registered itself.

The names and device types of the backends this project publishes are reserved for them: a
vendor's wheel can never replace or shadow ``tvm-backend-opencl`` by registering ``opencl``,
whatever the activation order. A vendor gets a device type of its own from
``ctx.register_device(name)`` without a type: the core hands out a free one from
:data:`VENDOR_DEVICE_TYPES`, so two vendor wheels installed side by side never collide.
"""

from __future__ import annotations

import re
import sys
import threading

from tvm._fork_safe import renewed_in_child
from typing import Callable

from tvm.runtime.device import DEVICE_TYPES

#: The backends this project publishes, each as the distribution ``tvm-backend-<name>``.
PUBLISHED_BACKENDS = ("cuda", "opencl", "vulkan", "metal", "rocm", "webgpu", "hexagon")
#: Their DLPack device types: the runtime's standard device names.
PUBLISHED_DEVICE_TYPES: dict[str, int] = {name: DEVICE_TYPES[name] for name in PUBLISHED_BACKENDS}
#: Device types handed out to vendors' backends (below the runtime's limit of 64).
VENDOR_DEVICE_TYPES = range(32, 64)
#: The owner name of what the core registers (the CPU device and its targets).
CORE = "core"


class OwnershipError(RuntimeError):
    """A backend claimed something that belongs to another backend, the core, or a first-party backend."""


_lock = threading.RLock()
renewed_in_child(sys.modules[__name__], "_lock", threading.RLock)
_owners: dict[tuple[str, object], tuple[str, str]] = {}


def normalized_distribution(name: str) -> str:
    """``name`` as PEP 503 normalizes a distribution's name: lower case, each run of ``-``, ``_``
    and ``.`` one ``-`` (``TVM_Backend.OpenCL`` and ``tvm-backend-opencl`` are one distribution)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def is_first_party(backend: str, distribution: str) -> bool:
    """Whether ``backend`` comes from the project's own distribution for it (its name compared
    as PEP 503 normalizes it: metadata may spell it ``tvm_backend_opencl``)."""
    return backend in PUBLISHED_DEVICE_TYPES and normalized_distribution(distribution) == f"tvm-backend-{backend}"


def _reserved_for(what: str, key: object, aliases: bool = True) -> str | None:
    """The first-party backend ``key`` is reserved for, if any: its device type, its name, and
    (with ``aliases``) the other names (``ALIASES``) of the installed first-party backends."""
    if what == "device type":
        return next((name for name, code in PUBLISHED_DEVICE_TYPES.items() if code == key), None)
    if key in PUBLISHED_DEVICE_TYPES:
        return str(key)
    if aliases and what in ("device name", "target kind"):
        return _installed_first_party_aliases().get(key)
    return None


def _installed_first_party_aliases() -> dict[object, str]:
    """``{alias: backend}`` over the first-party backends installed here, activated or not: each
    package declares its other device and target-kind names as ``ALIASES`` (cuda's ``gpu``),
    so that a vendor's backend activated before it cannot take them."""
    import importlib

    from tvm.backend import _registry

    out: dict[object, str] = {}
    for name in PUBLISHED_BACKENDS:
        ep = _registry.entry_point(name)
        if ep is None or not is_first_party(name, ep.distribution):
            continue
        try:
            aliases = getattr(importlib.import_module(ep.module), "ALIASES", ())
        except Exception:  # noqa: BLE001 - a broken installation reserves nothing more
            continue
        out.update(dict.fromkeys(aliases, name))
    return out


def _who(owner: tuple[str, str]) -> str:
    backend, distribution = owner
    return "the core (tvm)" if backend == CORE else f"backend '{backend}' ({distribution})"


def claim(what: str, key: object, backend: str, distribution: str) -> Callable[[], None]:
    """Make ``backend`` (from ``distribution``) the owner of ``what`` ``key``; returns the undo.

    Raises :class:`OwnershipError` when another backend or the core owns it, or when it is
    reserved for a first-party backend that ``backend`` is not."""
    with _lock:
        owner = _owners.get((what, key))
        if owner is not None:
            if owner[0] == backend:
                return lambda: None
            raise OwnershipError(
                f"{distribution} (backend '{backend}') cannot register {what} {key!r}: it belongs to {_who(owner)}"
            )
        first_party = is_first_party(backend, distribution)
        reserved = _reserved_for(what, key, aliases=not (first_party or backend == CORE))  # ours agree
        if reserved is not None and not (backend == reserved and first_party):
            raise OwnershipError(
                f"{distribution} (backend '{backend}') cannot register {what} {key!r}: it is reserved for the "
                f"first-party backend '{reserved}' (tvm-backend-{reserved})"
            )
        _owners[(what, key)] = (backend, distribution)

    def undo() -> None:
        with _lock:
            if _owners.get((what, key)) == (backend, distribution):
                del _owners[(what, key)]

    return undo


def lock() -> threading.RLock:
    """Held across looking up a free vendor device type and claiming it."""
    return _lock


def owner_of(what: str, key: object) -> str | None:
    """The backend (or :data:`CORE`) that owns ``what`` ``key``, if any."""
    with _lock:
        owner = _owners.get((what, key))
    return owner[0] if owner else None


def free_vendor_device_type() -> int:
    """The lowest device type of :data:`VENDOR_DEVICE_TYPES` that nobody owns."""
    with _lock:
        for code in VENDOR_DEVICE_TYPES:
            if ("device type", code) not in _owners:
                return code
        holders = sorted({_who(_owners[("device type", code)]) for code in VENDOR_DEVICE_TYPES})
    raise OwnershipError(
        f"every vendor device type ({VENDOR_DEVICE_TYPES.start}-{VENDOR_DEVICE_TYPES.stop - 1}) is taken, by "
        f"{', '.join(holders)}; uninstall a vendor backend you do not use"
    )
