"""Backend namespaces in TVMScript (``T.cuda.shfl_down`` ...), contributed by backend wheels."""

from __future__ import annotations

import importlib
from types import ModuleType

_NAMESPACES: dict[str, str] = {}
_LOADED: dict[str, ModuleType] = {}


def register(name: str, module: str) -> None:
    """Make ``module`` (imported on first use) available as ``T.<name>``."""
    _NAMESPACES[name] = module
    _LOADED.pop(name, None)


def unregister(name: str) -> None:
    """Remove namespace ``name``."""
    _NAMESPACES.pop(name, None)
    _LOADED.pop(name, None)


def get(name: str) -> ModuleType | None:
    """The module behind ``T.<name>``, or None."""
    if name in _LOADED:
        return _LOADED[name]
    spec = _NAMESPACES.get(name)
    if spec is None:
        return None
    mod = importlib.import_module(spec)
    _LOADED[name] = mod
    return mod


def names() -> list[str]:
    """Registered namespace names."""
    return sorted(_NAMESPACES)
