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


def test_cache_files_past_their_size_are_damage_not_read_whole(tmp_path, monkeypatch):
    """A 3 GiB file (sparse here) where a checksum sidecar or a cache entry belongs is refused
    by its size before it is read: reading it whole cost seconds and gigabytes on every use."""
    import errno

    import numpy as np
    import pytest

    import tvm
    from tvm._cache import read_regular_file
    from tvm.script import tir as T

    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(3 << 30)
    with pytest.raises(OSError) as info:
        read_regular_file(big, limit=64)
    assert info.value.errno == errno.EFBIG and "larger than the 64 bytes" in str(info.value)

    @T.prim_func
    def inc(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(1)

    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    tvm.compile(inc, "c")
    (sidecar,) = (tmp_path / "cache").rglob("*.so.crc")
    with open(sidecar, "wb") as f:
        f.truncate(3 << 30)
    a = np.zeros(4, "float32")
    tvm.compile(inc, "c")["inc"](a)  # the entry counts as damaged: compiled again
    np.testing.assert_array_equal(a, np.ones(4, "float32"))
    assert sidecar.stat().st_size < 64


def test_a_folder_where_a_compile_cache_entry_belongs_means_compiling_without_the_cache(tmp_path, monkeypatch):
    import numpy as np
    import pytest

    import tvm
    from tvm.script import tir as T

    @T.prim_func
    def dec(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] - T.float32(1)

    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    tvm.compile(dec, "c")
    for suffix in (".so", ".c"):
        (entry,) = (tmp_path / "cache").rglob(f"*{suffix}")
        for p in entry.parent.glob(entry.name.partition(".")[0] + "*"):
            p.unlink()
        entry.mkdir()
        a = np.zeros(4, "float32")
        with pytest.warns(RuntimeWarning, match="is a folder or another non-file; compiling without the cache"):
            mod = tvm.compile(dec, "c")
        mod["dec"](a)
        np.testing.assert_array_equal(a, -np.ones(4, "float32"))
        assert not list(entry.parent.glob(".tmp-*")) and not list(entry.parent.glob(".tvm-*"))
        entry.rmdir()
        tvm.compile(dec, "c")


def test_compiling_the_same_code_without_the_cache_reuses_its_module(monkeypatch):
    """Without the compile cache each compile's library is a new scratch file, and the module
    tree was remembered by that path: every compile of unchanged code kept another copy (about
    1 MiB per OpenCL compile) for the life of the process."""
    import numpy as np
    import tvm
    from tvm.runtime import library
    from tvm.script import tir as T

    @T.prim_func
    def add_seven(A: T.Buffer((4,), "float32")):
        for i in T.thread_binding(4, thread="threadIdx.x"):
            A[i] = A[i] + T.float32(7)

    monkeypatch.setenv("TVM_CACHE_DIR", "off")
    a = tvm.runtime.tensor(np.zeros(4, "float32"), tvm.device("example"))
    tvm.compile(add_seven, target="example")(a)
    before = len(library._reused)
    for _ in range(3):
        tvm.compile(add_seven, target="example")(a)
    assert len(library._reused) == before
    np.testing.assert_array_equal(a.numpy(), [28, 28, 28, 28])
