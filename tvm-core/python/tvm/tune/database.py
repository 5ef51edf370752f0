"""The tuning database: one JSON file of records, written atomically, readable by people."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from tvm._fork_safe import renewed_in_child

_FORMAT = 1


class ForeignFile(ValueError):
    """The database's path holds a file tvm.tune did not write."""


def _written_by_tvm(raw: bytes) -> bool:
    """Whether ``raw`` looks like a file this module wrote (its "format" and "records" near the
    start), damaged or not."""
    head = raw[:4096]
    return head.lstrip().startswith(b"{") and b'"format"' in head and b'"records"' in head


class Database:
    """Records ``{"config", "ms", "measured_at", ...}`` keyed by kernel, target and device
    fingerprint. The file is read when first needed and again whenever another process has
    rewritten it; a store rewrites it whole (atomic replace) under a lock file, from the records
    on disk at that moment plus the new one, so concurrent processes never see half a file and
    never drop each other's records. A damaged file is set aside (renamed ``.corrupt``) and
    treated as empty, with a warning."""

    def __init__(self, path: str | os.PathLike[str] | None):
        self.path = None if path is None else Path(path)
        if self.path is not None and self.path.exists() and not self.path.is_file():
            import warnings

            warnings.warn(
                f"tuning database {self.path} is not a regular file; tuning records are kept in memory "
                f"only (point TVM_TUNING_DATABASE at a file, e.g. {self.path / 'tuning.json'})",
                RuntimeWarning,
                stacklevel=3,
            )
            self.path = None
        self._records: dict[str, dict] | None = None
        self._stamp: tuple | None = None  # the file's identity when it was read
        self._lock = threading.Lock()
        renewed_in_child(self, "_lock")

    def _file(self) -> Path:
        """The database's file: its path, resolved when it is a symbolic link (the file the link
        names is locked, written and set aside; the link stays)."""
        return Path(os.path.realpath(self.path))

    @staticmethod
    def key(kernel: str, target: Any, fingerprint: str) -> str:
        """The record key: kernel, target (its canonical string) and device fingerprint."""
        return f"{kernel} | {target} | {fingerprint}"

    def _file_stamp(self) -> tuple | None:
        if self.path is None:
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _load(self, locked: bool = False) -> dict[str, dict]:
        """The records, read again when the file changed (``locked``: the caller holds the lock
        file, as a store does)."""
        if self.path is None:
            if self._records is None:
                self._records = {}
            return self._records
        stamp = self._file_stamp()
        if self._records is not None and stamp == self._stamp:
            return self._records
        try:
            records = self._parse()
        except ForeignFile as err:
            records, stamp = self._set_aside(err), None
        except (OSError, ValueError, RecursionError) as err:  # RecursionError: JSON nested past Python's limit
            from tvm._cache import exclusive_lock

            with contextlib.nullcontext() if locked else exclusive_lock(f"{self._file()}.lock"):
                records, stamp = self._reread_damaged(stamp, err)
        self._records, self._stamp = records, stamp
        return records

    def _parse(self) -> dict[str, dict]:
        """The records in the file (none when it does not exist); ValueError when it is damaged."""
        from tvm._cache import ENTRY_LIMIT, read_regular_file

        if not self.path.exists():
            return {}
        raw = read_regular_file(self.path, limit=ENTRY_LIMIT)
        if not raw.strip(b" \t\r\n\x00"):
            return {}  # an empty file (made for it, or zeros a crash left): the first store writes it
        if not _written_by_tvm(raw):  # another program's file: never moved nor overwritten
            raise ForeignFile(f"{self.path} is no tuning database (tvm.tune did not write it)")
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("format") != _FORMAT or not isinstance(data.get("records"), dict):
            raise ValueError(f"not a tuning database of format {_FORMAT}")
        return {k: v for k, v in data["records"].items() if isinstance(v, dict) and "config" in v}

    def _reread_damaged(self, stamp: tuple | None, err: Exception) -> tuple[dict[str, dict], tuple | None]:
        """Under the lock: the damaged file read with ``stamp`` is set aside, unless another
        process has replaced it meanwhile (then the new one is read; set aside if damaged too)."""
        now = self._file_stamp()
        if now != stamp:
            try:
                return self._parse(), now
            except (OSError, ValueError, RecursionError) as again:
                err = again
        return self._set_aside(err), self._file_stamp()

    def _set_aside(self, err: Exception) -> dict[str, dict]:
        """Rename the damaged file ``.corrupt`` (the caller holds the lock) and warn; no records.
        A file tvm.tune never wrote (a path set to the wrong file) is left as it is, and the
        records stay in memory."""
        import warnings

        if isinstance(err, ForeignFile):
            warnings.warn(
                f"tuning database: {err}; it is left as it is and tuning records are kept in memory only "
                f"(set TVM_TUNING_DATABASE, or database=, to a file of its own)",
                RuntimeWarning,
                stacklevel=5,
            )
            self.path = None
            return {}

        damaged = self._file()
        aside = damaged.with_suffix(damaged.suffix + ".corrupt")
        try:
            if not damaged.is_file():  # only a damaged file is moved, never a directory or device
                raise OSError(0, "not a regular file")
            os.replace(damaged, aside)
            where = f"set aside as {aside}"
        except OSError as move:
            where = f"left where it is ({move.strerror or move})"
        warnings.warn(
            f"tuning database {self.path} is unreadable ({err}); {where}, starting empty",
            RuntimeWarning,
            stacklevel=5,
        )
        return {}

    def lookup(self, kernel: str, target: Any, fingerprint: str) -> dict | None:
        """The record of ``kernel`` on this target and device, or None."""
        with self._lock:
            return self._load().get(self.key(kernel, target, fingerprint))

    def store(self, kernel: str, target: Any, fingerprint: str, record: dict) -> None:
        """Add or replace a record and write the file (when the database has one)."""
        entry = {**record, "measured_at": time.strftime("%Y-%m-%d %H:%M:%S")}
        json.dumps(entry)  # what JSON cannot hold is refused before any record changes
        with self._lock:
            if self.path is not None:
                self._load()  # a path at another program's file turns to memory here, before any lock file
            if self.path is None:
                self._load()[self.key(kernel, target, fingerprint)] = entry
                return
            from tvm._cache import atomic_write, exclusive_lock

            with exclusive_lock(f"{self._file()}.lock"):
                records = self._load(locked=True)  # what is on disk now, other processes' records included
                records[self.key(kernel, target, fingerprint)] = entry
                text = json.dumps({"format": _FORMAT, "records": records}, indent=2, sort_keys=True)
                atomic_write(self._file(), (text + "\n").encode())
                self._stamp = self._file_stamp()

    def records(self) -> dict[str, dict]:
        """Every record, by key."""
        with self._lock:
            return dict(self._load())


_DEFAULT: dict[str, Database] = {}


def default_database() -> Database:
    """``$TVM_TUNING_DATABASE``, else ``tuning.json`` under TVM's cache directory (in memory only
    when caching is off)."""
    from tvm._cache import cache_root

    env = os.environ.get("TVM_TUNING_DATABASE")
    root = cache_root()
    path = env or (None if root is None else os.path.join(root, "tuning.json"))
    key = path or ""
    if key not in _DEFAULT:
        _DEFAULT[key] = Database(path)
    return _DEFAULT[key]
