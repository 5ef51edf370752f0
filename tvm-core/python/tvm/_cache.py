"""Where TVM caches things: one rule for every cache (compiled kernels, the entry-point scan,
NVRTC images, OpenCL program binaries).

``$TVM_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/tvm``, else ``~/.cache/tvm``; each cache is a
sub-directory. ``TVM_CACHE_DIR=0`` (or ``off``, ``none``, ``false``) disables caching.
Kept free of imports so ``import tvm`` can use it.
"""

from __future__ import annotations

import os

_OFF = ("0", "off", "none", "false", "no")


def cache_root() -> str | None:
    """The cache root directory, or None when caching is disabled."""
    env = os.environ.get("TVM_CACHE_DIR", "").strip()
    if env.lower() in _OFF:
        return None
    if env:
        return env
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "tvm")


def cache_subdir(name: str) -> str | None:
    """``<cache root>/<name>``, or None when caching is disabled."""
    root = cache_root()
    return None if root is None else os.path.join(root, name)
