"""The tuning database: one JSON file of records, written atomically, readable by people."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

_FORMAT = 1


class Database:
    """Records ``{"config", "ms", "measured_at", ...}`` keyed by kernel, target and device
    fingerprint. The file is read when first needed and rewritten whole on every store (atomic
    replace), so an application can ship it and concurrent processes never see half a file. A
    damaged file is set aside (renamed ``.corrupt``) and treated as empty, with a warning."""

    def __init__(self, path: str | os.PathLike[str] | None):
        self.path = None if path is None else Path(path)
        self._records: dict[str, dict] | None = None
        self._lock = threading.Lock()

    @staticmethod
    def key(kernel: str, target: Any, fingerprint: str) -> str:
        """The record key: kernel, target (its canonical string) and device fingerprint."""
        return f"{kernel} | {target} | {fingerprint}"

    def _load(self) -> dict[str, dict]:
        if self._records is not None:
            return self._records
        records: dict[str, dict] = {}
        if self.path is not None and self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if data.get("format") != _FORMAT or not isinstance(data.get("records"), dict):
                    raise ValueError(f"not a tuning database of format {_FORMAT}")
                records = {k: v for k, v in data["records"].items() if isinstance(v, dict) and "config" in v}
            except (OSError, ValueError) as err:
                import warnings

                aside = self.path.with_suffix(self.path.suffix + ".corrupt")
                try:
                    os.replace(self.path, aside)
                except OSError:
                    aside = self.path
                warnings.warn(
                    f"tuning database {self.path} is unreadable ({err}); set aside as {aside}, starting empty",
                    RuntimeWarning,
                    stacklevel=3,
                )
        self._records = records
        return records

    def lookup(self, kernel: str, target: Any, fingerprint: str) -> dict | None:
        """The record of ``kernel`` on this target and device, or None."""
        with self._lock:
            return self._load().get(self.key(kernel, target, fingerprint))

    def store(self, kernel: str, target: Any, fingerprint: str, record: dict) -> None:
        """Add or replace a record and write the file (when the database has one)."""
        with self._lock:
            records = self._load()
            records[self.key(kernel, target, fingerprint)] = {
                **record,
                "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
            if self.path is None:
                return
            from tvm._cache import atomic_write

            text = json.dumps({"format": _FORMAT, "records": records}, indent=2, sort_keys=True)
            atomic_write(self.path, (text + "\n").encode())

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
