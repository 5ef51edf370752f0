"""The backend plugin system.

``import tvm`` discovers the ``tvm.backends`` entry points and activates each backend unless
``TVM_DEVICE_BACKEND_AUTOLOAD=0``; ``TVM_BACKENDS=a,b`` limits which ones load (checked before
anything is imported); ``TVM_BACKEND_STRICT=1`` turns activation failures into errors.
"""

from __future__ import annotations

from . import _registry
from ._ownership import VENDOR_DEVICE_TYPES, OwnershipError
from ._registry import (
    ACTIVE,
    DISABLED,
    FAILED,
    RUNTIME_UNAVAILABLE,
    BackendError,
    BackendLoadWarning,
    BackendRecord,
    RuntimeUnavailable,
)

__all__ = [
    "ACTIVE",
    "DISABLED",
    "FAILED",
    "RUNTIME_UNAVAILABLE",
    "BackendError",
    "BackendLoadWarning",
    "BackendRecord",
    "OwnershipError",
    "RuntimeUnavailable",
    "VENDOR_DEVICE_TYPES",
    "is_loaded",
    "list_backends",
    "load",
    "report",
]


def load(name: str) -> BackendRecord:
    """Activate backend ``name`` completely (runtime DSO, codegen, detectors), as autoload would.

    Raises :class:`BackendError` when it is not installed or fails to load. A backend whose
    runtime is unavailable (no driver) still loads: it generates code and uses its fallback.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"tvm.backend.load takes a backend's name (such as 'opencl'), got {name!r}")
    rec = _registry.get_record(name)
    if rec is not None and rec.status == DISABLED:
        rec.status, rec.reason = _registry.DISCOVERED, ""
    return _registry.activate(name, explicit=True)


def is_loaded(name: str) -> bool:
    """True when backend ``name`` was activated (its runtime may still be unavailable)."""
    rec = _registry.get_record(name)
    return rec is not None and rec.usable_for_codegen


def list_backends() -> list[BackendRecord]:
    """Every discovered backend with distribution, version, status, reason and DSO path."""
    return _registry.records()


def report() -> str:
    """The text ``python -m tvm.backend`` prints: paste it into a bug report. Text that is no
    Unicode (a file name of bytes that are not UTF-8, held as lone surrogates) is escaped
    (``\\udcff``), so the report can be written to any UTF-8 stream."""
    import platform

    from tvm import __version__
    from tvm._lib import ABI_VERSION, LIB_PATH

    lines = [
        f"tvm {__version__} (runtime ABI {ABI_VERSION}) at {LIB_PATH}",
        f"python {platform.python_version()} on {platform.platform()}",
        f"TVM_DEVICE_BACKEND_AUTOLOAD={'1' if _registry.autoload_enabled() else '0'}"
        f"  TVM_BACKENDS={','.join(sorted(_registry.allowlist() or [])) or '(all)'}"
        f"  TVM_BACKEND_STRICT={'1' if _registry.strict_mode() else '0'}",
        "",
    ]
    recs = list_backends()
    if not recs:
        lines.append("no backends installed (pip install tvm-backend-cuda, tvm-backend-opencl, ...)")
    for rec in recs:
        lines.append(f"{rec.name}: {rec.status}")
        lines.append(f"    distribution: {rec.distribution} {rec.version}  entry point: {rec.entry_point}")
        if rec.activation_ms:
            lines.append(f"    activation: {rec.activation_ms:.1f} ms")
        if rec.reason:
            lines.append(f"    reason: {rec.reason}")
        if rec.status not in (ACTIVE,):
            lines.append(f"    fix: {rec.fix()}")
        if rec.dso_path:
            lines.append(f"    runtime DSO: {rec.dso_path}")
        if rec.target_kinds:
            lines.append(f"    targets: {', '.join(rec.target_kinds)}")
        if rec.device_types:
            lines.append(f"    devices: {_devices(rec)}")
        if rec.traceback:
            lines.append("    traceback:")
            lines.extend("      " + t for t in rec.traceback.rstrip().splitlines())
    return "\n".join(lines).encode("utf-8", "backslashreplace").decode("utf-8")


def _devices(rec: BackendRecord) -> str:
    from tvm.runtime.device import DEVICE_NAMES, Device

    out = []
    for dt in rec.device_types:
        found = []
        for i in range(16):
            try:
                if not Device(dt, i).exist:
                    break
            except Exception:  # noqa: BLE001 - a report must never fail
                break
            found.append(f"{DEVICE_NAMES.get(dt, dt)}({i}) {Device(dt, i).name or ''}".strip())
        if not found:
            why = _safe_attr(Device(dt, 0), "unavailable_reason")
            found.append(f"{DEVICE_NAMES.get(dt, dt)}: none found" + (f" ({why})" if why else ""))
        out.append("; ".join(found))
    return " | ".join(out)


def _safe_attr(dev, key: str):
    try:
        return dev.attr(key)
    except Exception:  # noqa: BLE001 - a report must never fail
        return None
