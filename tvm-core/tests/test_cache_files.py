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


def test_a_write_that_fails_names_the_file_asked_for(tmp_path):
    """Files are written under a private name and renamed: a failure names the file the caller
    asked for, not the private name."""
    import pytest

    import tvm
    from tvm.script import tir as T
    from tvm.tune import Database

    @T.prim_func
    def one(A: T.Buffer((1,), "float32")):
        A[0] = T.float32(1)

    if not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux's /proc (a folder where no file can be created, even by root)")
    for name, write in (
        ("lib.so", lambda p: tvm.compile(one, "c").export_library(p)),
        ("db.json", lambda p: Database(p).store("k", tvm.target.Target("c"), "fp", {"config": {}, "ms": 1.0})),
    ):
        with pytest.raises(OSError) as info:
            write(f"/proc/{name}")
        assert info.value.filename == f"/proc/{name}", info.value
