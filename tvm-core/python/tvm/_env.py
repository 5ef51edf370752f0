"""Boolean environment switches, read one way everywhere (import-free: ``import tvm`` uses it)."""

from __future__ import annotations

import os

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def env_flag(name: str, default: bool = False) -> bool:
    """``$name`` as a switch. Unset or empty gives ``default``; a switch that defaults off is on
    only for 1/true/yes/on, one that defaults on is off only for 0/false/no/off."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    return value not in FALSE if default else value in TRUE
