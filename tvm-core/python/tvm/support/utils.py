"""``utils.tempdir()``: a temporary folder for exported libraries, removed when dropped."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Optional


class TempDirectory:
    """A temporary folder: ``relpath(name)`` is a path inside it; it is removed with its files
    when the object is dropped or its ``with`` block ends (kept when ``keep`` is true)."""

    def __init__(self, custom_path: Optional[str] = None, keep: bool = False):
        if custom_path is not None:
            os.makedirs(custom_path, exist_ok=True)
            self.path = os.path.realpath(custom_path)
        else:
            self.path = tempfile.mkdtemp(prefix="tvm-")
        self._keep = keep or custom_path is not None

    def relpath(self, name: str) -> str:
        """The path of ``name`` inside the folder."""
        return os.path.join(self.path, name)

    def listdir(self) -> list[str]:
        """The names of the files in the folder."""
        return os.listdir(self.path)

    def remove(self) -> None:
        """Removes the folder and its files now (unless it is kept)."""
        if not self._keep and self.path and os.path.isdir(self.path):
            shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> "TempDirectory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()

    def __del__(self) -> None:
        try:
            self.remove()
        except Exception:  # noqa: BLE001  (at interpreter exit the modules may be gone)
            pass

    def __repr__(self) -> str:
        return f"TempDirectory({self.path!r})"


def tempdir(custom_path: Optional[str] = None, keep_for_debug: bool = False) -> TempDirectory:
    """A new :class:`TempDirectory` (at ``custom_path`` when given, which is then kept)."""
    return TempDirectory(custom_path, keep_for_debug)


__all__ = ["TempDirectory", "tempdir"]
