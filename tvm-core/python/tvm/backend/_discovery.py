"""Fast discovery of the ``tvm.backends`` entry-point group.

``importlib.metadata.entry_points()`` parses every installed distribution (tens of ms); this
scanner reads only ``*.dist-info/entry_points.txt`` files that mention the group, and caches
the scan of each ``sys.path`` directory keyed by its modification time (pip changes
those whenever it installs or removes a distribution).
"""

from __future__ import annotations

import json
import os
import sys

GROUP = "tvm.backends"


class EntryPoint:
    """One ``tvm.backends`` entry point (a plain class: dataclass creation costs import time)."""

    __slots__ = ("name", "value", "distribution", "version")

    def __init__(self, name: str, value: str, distribution: str, version: str):
        self.name, self.value, self.distribution, self.version = name, value, distribution, version

    def as_list(self) -> list[str]:
        """The fields in constructor order (for the cache file)."""
        return [self.name, self.value, self.distribution, self.version]

    @property
    def module(self) -> str:
        """The module part of ``module:attr``."""
        return self.value.partition(":")[0].strip()

    @property
    def attr(self) -> str:
        """The attribute part of ``module:attr`` (empty when the entry point names a module)."""
        return self.value.partition(":")[2].strip()

    def __repr__(self) -> str:
        return f"EntryPoint({self.name}={self.value!r} from {self.distribution} {self.version})"


def _parse_group(text: str) -> list[tuple[str, str]]:
    out, in_group = [], False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            in_group = line == f"[{GROUP}]"
            continue
        if in_group and "=" in line:
            name, _, value = line.partition("=")
            out.append((name.strip(), value.strip()))
    return out


def _dist_name_version(dirname: str, path: str) -> tuple[str, str]:
    stem = dirname[: -len(".dist-info")]
    name, _, version = stem.partition("-")
    try:
        with open(os.path.join(path, "METADATA"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("Name:"):
                    name = line[5:].strip()
                elif line.startswith("Version:"):
                    version = line[8:].strip()
                elif not line.strip():
                    break
    except OSError:
        pass
    return name, version


def _scan_dir(directory: str) -> list[EntryPoint]:
    found = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return found
    for d in entries:
        if not d.endswith(".dist-info"):
            continue
        dist_path = os.path.join(directory, d)
        try:
            with open(os.path.join(dist_path, "entry_points.txt"), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            continue
        if GROUP not in text:
            continue
        name, version = _dist_name_version(d, dist_path)
        for ep_name, value in _parse_group(text):
            found.append(EntryPoint(ep_name, value, name, version))
    return found


def _cache_file(dirs: list[str]) -> str | None:
    """One cache file per ``sys.path`` (so several environments sharing a cache root do not
    overwrite each other's scan), or None when caching is disabled."""
    from tvm._cache import cache_subdir

    folder = cache_subdir("backends")
    if folder is None:
        return None
    import hashlib

    digest = hashlib.sha1("\0".join(dirs).encode()).hexdigest()[:16]
    return os.path.join(folder, f"entry-points-{digest}.json")


def discover() -> list[EntryPoint]:
    """All ``tvm.backends`` entry points on ``sys.path``; the first distribution of a name wins.

    Each directory's scan is cached with its modification time, so a change in one directory
    (often the current one, ``sys.path[0]``) rescans only that directory."""
    dirs = [p or os.getcwd() for p in sys.path]
    cache = _cache_file(dirs)
    cached: dict = {}
    if cache is not None:
        try:
            with open(cache, encoding="utf-8") as f:
                cached = json.load(f)["dirs"]
        except (OSError, ValueError, TypeError, KeyError):
            cached = {}
    scans: dict[str, list] = {}
    changed = False
    for d in dirs:
        if d in scans:
            continue
        try:
            stamp = os.stat(d).st_mtime_ns
        except OSError:
            stamp = None
        hit = cached.get(d)
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == stamp:
            scans[d] = hit
            continue
        scans[d] = [stamp, [e.as_list() for e in _scan_dir(d)] if stamp is not None else []]
        changed = True
    seen: dict[str, EntryPoint] = {}
    for d in dirs:
        for fields in scans[d][1]:
            ep = EntryPoint(*fields)
            seen.setdefault(ep.name, ep)
    entries = sorted(seen.values(), key=lambda e: e.name)
    if cache is not None and (changed or set(cached) != set(scans)):
        from tvm._cache import atomic_write

        try:
            atomic_write(cache, json.dumps({"dirs": scans}).encode())
        except OSError:
            pass
    return entries
