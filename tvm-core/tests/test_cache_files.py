"""Cache files are written atomically and are never writable by group or others."""

from __future__ import annotations

import os
import stat

from tvm._cache import atomic_write


def test_cache_files_are_not_shared_writable_even_with_a_permissive_umask(tmp_path):
    old = os.umask(0)
    try:
        path = tmp_path / "sub" / "entry.bin"
        atomic_write(path, b"payload")
    finally:
        os.umask(old)
    assert path.read_bytes() == b"payload"
    for p in (path, path.parent):
        mode = stat.S_IMODE(p.stat().st_mode)
        assert not mode & (stat.S_IWGRP | stat.S_IWOTH), oct(mode)
    assert [p.name for p in path.parent.iterdir()] == ["entry.bin"]  # no temporary left behind


def test_entries_with_integrity_check(tmp_path):
    from tvm._cache import read_entry, write_entry

    path = tmp_path / "e.bin"
    write_entry(path, b"payload" * 100)
    good = path.read_bytes()
    assert read_entry(path) == b"payload" * 100
    flipped = bytearray(good)
    flipped[-3] ^= 0x10
    for bad in (good[:40], bytes(flipped), b"not an entry", good[:24]):
        path.write_bytes(bad)
        assert read_entry(path) is None
        assert not path.exists()  # removed: the next store replaces it
    assert read_entry(tmp_path / "missing") is None
