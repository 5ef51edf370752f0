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
    if (name, value) not in _WARNED_SWITCHES:  # once per process, however many places read it
        _WARNED_SWITCHES.add((name, value))
        message = (
            f"{name}={os.environ[name]!r} is not a switch: use 1, true, yes or on, or 0, false, no or off; "
            f"it counts as unset ({'on' if default else 'off'})"
        )
        warn_safely(message, RuntimeWarning, stacklevel=3)
    return default


_WARNED_SWITCHES: set = set()


def warn_safely(message: str, category: type[Warning], stacklevel: int = 2, logger: str = "tvm") -> None:
    """Issue a warning, never raise it: with warnings made errors (``python -W error``, a test
    runner's filter, a plugin's ``simplefilter``) or a stderr that cannot be written, it goes to
    the log instead (``import tvm`` must still work)."""
    try:
        warnings.warn(message, category, stacklevel=stacklevel + 1)
    except Exception:  # noqa: BLE001 - a warning made an error, or a stderr closed
        try:
            logging.getLogger(logger).warning("%s", message)
        except Exception:  # noqa: BLE001 - nowhere to write: the caller keeps the message
            pass
