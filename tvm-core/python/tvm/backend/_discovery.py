"""Fast discovery of the ``tvm.backends`` entry-point group.

``importlib.metadata.entry_points()`` parses every installed distribution (tens of ms); this
scanner reads only the ``entry_points.txt`` files that mention the group, in the metadata
folders ``importlib.metadata`` reads: ``*.dist-info`` (wheels) and ``*.egg-info`` (``setup.py
install`` and ``develop``, older editable installs, Debian's ``python3-*`` packages). It caches
the scan of each ``sys.path`` directory keyed by its modification time (pip changes
those whenever it installs or removes a distribution).

The cache only says where to look. Every entry point taken from it is checked against the
``entry_points.txt`` it names (inside a metadata folder of the directory it was scanned
from) before it is used; a cache file of another shape, or one naming an entry point that no
installed distribution declares, is ignored and rewritten from a fresh scan. So whoever can write
the cache folder cannot make ``import tvm`` run code that no installed distribution declares.
"""

from __future__ import annotations

import json
import os
import sys

GROUP = "tvm.backends"
#: The metadata folders of installed distributions, and the file in each that names and versions it
_METADATA_FILES = {".dist-info": "METADATA", ".egg-info": "PKG-INFO"}
#: The shape of the scan cache (a cache written by an earlier shape is ignored and rewritten)
_CACHE_FORMAT = 2


class EntryPoint:
    """One ``tvm.backends`` entry point (a plain class: dataclass creation costs import time)."""

    __slots__ = ("name", "value", "distribution", "version", "dist_info")

    def __init__(self, name: str, value: str, distribution: str, version: str, dist_info: str):
        self.name, self.value, self.distribution, self.version = name, value, distribution, version
        #: the metadata folder (``*.dist-info`` or ``*.egg-info``: its name, inside the scanned
        #: directory) that declares it
        self.dist_info = dist_info

    def as_list(self) -> list[str]:
        """The fields in constructor order (for the cache file)."""
        return [self.name, self.value, self.distribution, self.version, self.dist_info]

    @property
    def module(self) -> str:
        """The module part of ``module:attr``."""
        return self._reference().partition(":")[0].strip()

    @property
    def attr(self) -> str:
        """The attribute part of ``module:attr`` (empty when the entry point names a module)."""
        return self._reference().partition(":")[2].strip()

    def _reference(self) -> str:
        """``module:attr`` without the ``[extras]`` the entry-point syntax allows after it."""
        return self.value.partition("[")[0]

    def __repr__(self) -> str:
        return f"EntryPoint({self.name}={self.value!r} from {self.distribution} {self.version})"


def _read_text(path: str) -> str:
    """The UTF-8 text of the regular file ``path`` (a FIFO or device there raises OSError, so a
    hostile installation cannot make ``import tvm`` wait forever)."""
    from tvm._cache import read_regular_file

    return read_regular_file(path, limit=_TEXT_LIMIT).decode("utf-8")


#: The most bytes an entry_points.txt, a METADATA or the scan cache is read up to (a few KB
#: each, even for thousands of entry points)
_TEXT_LIMIT = 64 << 20


def _declares_exactly(directory: str, entries: list[EntryPoint]) -> bool:
    """Whether ``directory`` declares exactly ``entries`` (a cached scan) in the dist-info
    folders they name: each folder's ``entry_points.txt`` names these entry points of the group
    and no other (one added in place leaves the directory's time unchanged), for the
    distribution and version recorded."""
    by_folder: dict[str, list[EntryPoint]] = {}
    for e in entries:
        by_folder.setdefault(e.dist_info, []).append(e)
    for folder, declared in by_folder.items():
        if os.sep in folder or _metadata_file(folder) is None or folder.startswith("."):
            return False
        path = os.path.join(directory, folder)
        try:
            group = _parse_group(_read_text(os.path.join(path, "entry_points.txt")))
        except (OSError, UnicodeDecodeError):
            return False
        if sorted(group) != sorted((e.name, e.value) for e in declared):
            return False
        recorded = _dist_name_version(folder, path)  # one METADATA read per folder, not per entry
        if any((e.distribution, e.version) != recorded for e in declared):
            return False
    return True


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


def _metadata_file(folder: str) -> str | None:
    """The name of the file holding the name and version in metadata folder ``folder``
    (``METADATA`` in a ``*.dist-info``, ``PKG-INFO`` in an ``*.egg-info``), or None when
    ``folder`` is no metadata folder."""
    return next((file for suffix, file in _METADATA_FILES.items() if folder.endswith(suffix)), None)


def _dist_name_version(dirname: str, path: str) -> tuple[str, str]:
    """The distribution's name and version: from its metadata file, else from the folder's
    name (``name-version.dist-info``; an egg-info's may lack the version)."""
    stem = os.path.splitext(dirname)[0]
    name, _, version = stem.partition("-")
    version = version.partition("-")[0]  # an egg-info's name may end in -py3.11
    try:
        lines = _read_text(os.path.join(path, _metadata_file(dirname))).splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    for line in lines:
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
        elif not line.strip():
            break
    return name, version


def _scan_dir(directory: str) -> list[EntryPoint]:
    found = []
    try:
        entries = sorted(os.listdir(directory))  # the same winner of a name clash everywhere
    except OSError:
        return found
    for d in entries:
        if _metadata_file(d) is None:
            continue
        dist_path = os.path.join(directory, d)
        try:
            text = _read_text(os.path.join(dist_path, "entry_points.txt"))
        except (OSError, UnicodeDecodeError):
            continue
        if GROUP not in text:
            continue
        name, version = _dist_name_version(d, dist_path)
        for ep_name, value in _parse_group(text):
            found.append(EntryPoint(ep_name, value, name, version, d))
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


def _read_cache(path: str | None) -> dict[str, list]:
    """The cached scans, ``{directory: [mtime, [entry fields, ...]]}``; a file whose checksum
    does not match is ignored, and anything of another shape is dropped (a directory whose entry
    is malformed is rescanned)."""
    if path is None:
        return {}
    try:
        doc = json.loads(_read_text(path))
        dirs = doc.get("dirs")
        if doc.get("format") != _CACHE_FORMAT or doc.get("crc") != _checksum(dirs):
            return {}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}
    if not isinstance(dirs, dict):
        return {}
    return {d: scan for d, scan in dirs.items() if _well_formed(scan)}


def _checksum(dirs: object) -> int:
    """CRC-32 of the scans as the cache file stores them (catches damage to the file)."""
    import zlib

    return zlib.crc32(json.dumps(dirs, sort_keys=True).encode())


def _well_formed(scan: object) -> bool:
    if not (isinstance(scan, list) and len(scan) == 2 and isinstance(scan[1], list)):
        return False
    if scan[0] is not None and type(scan[0]) is not int:
        return False
    return all(isinstance(e, list) and len(e) == 5 and all(isinstance(f, str) for f in e) for e in scan[1])


def _scan_with_cache(dirs: list[str], cached: dict[str, list]) -> tuple[dict[str, list], bool]:
    """Each directory's scan: the cached one while its mtime matches and every entry it names is
    declared there, else a fresh scan; and whether anything was rescanned."""
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
        if hit is not None and hit[0] == stamp and _declares_exactly(d, [EntryPoint(*f) for f in hit[1]]):
            scans[d] = hit
            continue
        scans[d] = [stamp, [e.as_list() for e in _scan_dir(d)] if stamp is not None else []]
        changed = True
    return scans, changed


def _path_dirs() -> list[str]:
    """The folders of ``sys.path``, ``''`` as the current directory; without one (it was
    removed), ``''`` is left out, as Python's own import system does."""
    try:
        here = os.getcwd()
    except OSError:
        here = None
    return [p or here for p in sys.path if isinstance(p, str) and (p or here)]


def discover() -> list[EntryPoint]:
    """All ``tvm.backends`` entry points on ``sys.path``, in path order (a name may come from
    several distributions: :mod:`tvm.backend._registry` decides which one owns it).

    Each directory's scan is cached with its modification time, so a change in one directory
    (often the current one, ``sys.path[0]``) rescans only that directory."""
    dirs = _path_dirs()
    cache = _cache_file(dirs)
    cached = _read_cache(cache)
    scans, changed = _scan_with_cache(dirs, cached)
    entries = [EntryPoint(*fields) for d in dict.fromkeys(dirs) for fields in scans[d][1]]
    if cache is not None and (changed or set(cached) != set(scans)):
        from tvm._cache import atomic_write

        try:
            doc = {"format": _CACHE_FORMAT, "dirs": scans, "crc": _checksum(scans)}
            atomic_write(cache, json.dumps(doc).encode())
        except OSError:
            pass
    return entries
