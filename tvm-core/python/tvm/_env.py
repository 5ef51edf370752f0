"""Boolean environment switches, read one way everywhere (import-free: ``import tvm`` uses it)."""

from __future__ import annotations

import logging
import os
import warnings

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def env_flag(name: str, default: bool = False) -> bool:
    """``$name`` as a switch: 1/true/yes/on or 0/false/no/off (any case, spaces around ignored);
    unset or empty gives ``default``, and so does anything else, with a warning naming the
    variable (a typo such as ``flase`` must not pass unnoticed; the C++ side refuses it)."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in TRUE or value in FALSE:
        return value in TRUE
    message = (
        f"{name}={os.environ[name]!r} is not a switch: use 1, true, yes or on, or 0, false, no or off; "
        f"it counts as unset ({'on' if default else 'off'})"
    )
    try:
        warnings.warn(message, RuntimeWarning, stacklevel=3)
    except Warning:  # warnings made errors: import tvm must still work
        logging.getLogger("tvm").warning("%s", message)
    return default
