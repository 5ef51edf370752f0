"""Damaged caches and odd paths give a rebuild or a clear error, never a crash or a hang.

* The compiler-version memo under ``$TVM_CACHE_DIR/compile/compilers/`` that cannot be read or
  parsed (garbage bytes, empty, several lines, a directory or FIFO in its place) is treated as
  absent: ``cc --version`` runs again and the memo is rewritten where it can be (before, garbage
  made every later ``tvm.compile`` fail with UnicodeDecodeError, a directory with IsADirectoryError).
* ``tvm.runtime.load_module`` refuses a path that is not a regular file at once with ValueError
  (before, a FIFO blocked forever and ``/dev/zero`` was read until the process ran out of memory).
"""

from __future__ import annotations

import os
import re
import socket
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

import tvm
from tvm.contrib import cc
from tvm.script import tir as T
from tvm.runtime import library
from tvm.testing import run_python

KERNEL = """
import numpy as np, tvm
from tvm.script import tir as T

@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = A[i] + T.float32({add})

mod = tvm.compile(f, target="c")
a = np.arange(4, dtype="float32")
mod["f"](a)
assert (a == np.arange(4, dtype="float32") + {add}).all(), a
print("ok")
"""


def compile_in_new_process(cache: Path, add: int) -> None:
    """Compile and run a kernel adding ``add`` in a fresh interpreter using cache ``cache``."""
    script = cache.parent / f"kernel_{add}.py"  # TVMScript reads the kernel's source from a file
    script.write_text(KERNEL.format(add=add))
    proc = run_python(f"import runpy; runpy.run_path({str(script)!r})", env={"TVM_CACHE_DIR": str(cache)})
    assert proc.returncode == 0 and proc.stdout.split()[-1:] == ["ok"], proc.stdout + proc.stderr


def memo_files(cache: Path) -> list[Path]:
    """The compiler-version memos of compile cache ``cache``."""
    return sorted((cache / "compile" / "compilers").iterdir())


def damage(memo: Path, how: str) -> None:
    """Replace the memo ``memo`` by something that is no memo."""
    if how in ("dir", "fifo"):
        memo.unlink()
        if how == "dir":
            memo.mkdir()
        else:
            os.mkfifo(memo)
        return
    memo.write_bytes(
        {"garbage": b"\xff\xfe garbage", "empty": b"", "lines": b"gcc 1\ngcc 2\n", "long": b"x" * 100_000}[how]
    )


@pytest.mark.parametrize("how", ["garbage", "dir"])
def test_damaged_version_memo_does_not_break_later_compiles(tmp_path, how):
    cache = tmp_path / "cache"
    compile_in_new_process(cache, 1)
    memos = memo_files(cache)
    assert memos, "compiling must leave a compiler-version memo"
    good = {m: m.read_text() for m in memos}
    for m in memos:
        damage(m, how)
    compile_in_new_process(cache, 2)  # a different kernel: its cache key needs the compiler's version
    for m in memos:
        if how == "dir":
            assert m.is_dir()  # cannot be rewritten over a directory; the compile worked all the same
        else:
            assert m.read_text() == good[m], "a garbage memo must be rewritten"


@pytest.mark.parametrize("how", ["garbage", "empty", "lines", "long", "dir", "fifo"])
def test_unreadable_version_memo_is_recomputed(tmp_path, monkeypatch, how):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cc, "_VERSIONS", {})
    version = cc.compiler_version()
    assert version and "\n" not in version
    (memo,) = memo_files(tmp_path / "cache")
    assert memo.read_text() == version
    damage(memo, how)
    monkeypatch.setattr(cc, "_VERSIONS", {})  # as in a new process: only the memo on disk is left
    assert within_deadline(cc.compiler_version) == (version, None)  # a FIFO in its place must not block
    if how == "dir":
        assert memo.is_dir()
    else:
        assert memo.is_file() and memo.read_text() == version, "the damaged memo must be replaced"


def test_read_version_memo_rejects_what_compiler_version_never_writes(tmp_path):
    memo = tmp_path / "memo"
    assert cc._read_version_memo(memo) is None  # absent
    memo.write_bytes(b"gcc (GCC) 12.2.0")
    assert cc._read_version_memo(memo) == "gcc (GCC) 12.2.0"
    for bad in (b"\xff\xfe garbage", b"", b"a\nb", b"a\n", b"a\0b", b"x" * (cc._MEMO_MAX + 1)):
        memo.write_bytes(bad)
        assert cc._read_version_memo(memo) is None, bad


def within_deadline(fn, *args, seconds: float = 30) -> tuple[object, BaseException | None]:
    """``(fn(*args), None)``, or ``(None, the exception it raised)``; fails the test when it has not
    finished after ``seconds`` (it runs in a daemon thread, so a hang cannot stop the test run)."""
    got: list[tuple[object, BaseException | None]] = []

    def target() -> None:
        try:
            got.append((fn(*args), None))
        except BaseException as err:  # noqa: BLE001 - handed to the test
            got.append((None, err))

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"{fn.__name__}{args!r} still running after {seconds} s"
    return got[0]


def load_with_deadline(path: str, load=None) -> BaseException | None:
    """The exception ``load(path)`` (default ``tvm.runtime.load_module``) raises, None if it returns."""
    return within_deadline(load or tvm.runtime.load_module, path)[1]


def assert_not_regular(err: BaseException | None, path: str, what: str) -> None:
    assert isinstance(err, ValueError), repr(err)
    assert path in str(err) and "not a regular file" in str(err) and what in str(err), str(err)


def test_load_module_refuses_fifo(tmp_path):
    fifo = tmp_path / "lib.so"
    os.mkfifo(fifo)
    assert_not_regular(load_with_deadline(str(fifo)), str(fifo), "FIFO")


def test_load_module_refuses_directory(tmp_path):
    d = tmp_path / "lib.so"
    d.mkdir()
    assert_not_regular(load_with_deadline(str(d)), str(d), "directory")


def test_load_module_refuses_socket():
    with tempfile.TemporaryDirectory(dir="/tmp") as d:  # a short path: AF_UNIX names are short
        path = os.path.join(d, "s.so")
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(path)
            assert_not_regular(load_with_deadline(path), path, "socket")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_load_module_refuses_dev_zero():
    with pytest.raises(ValueError, match="/dev/zero: it is a character device, not a regular file"):
        tvm.runtime.load_module("/dev/zero")


def test_load_module_follows_symlink_to_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "lib.so"
    link.symlink_to(fifo)
    assert_not_regular(load_with_deadline(str(link)), str(link), "FIFO")


def test_read_embedded_kinds_refuses_fifo_without_dlopen(tmp_path, monkeypatch):
    fifo = tmp_path / "lib.so"
    os.mkfifo(fifo)

    def no_dlopen(*args):
        raise AssertionError("a path that is not a regular file must not be dlopen'ed")

    monkeypatch.setattr(library, "_read_symbol_dlopen", no_dlopen)
    assert_not_regular(load_with_deadline(str(fifo), library.read_embedded_kinds), str(fifo), "FIFO")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libraries are ELF64 files on Linux only")
@pytest.mark.parametrize("content", [b"", b"not a library", b"\x7fELF\x01\x01"], ids=["empty", "text", "elf32"])
def test_a_file_that_is_no_library_is_named_without_loading_it(tmp_path, monkeypatch, content):
    """A file that is no ELF64 library was dlopen'ed by its path to look for device modules: an
    empty one raised OSError ('file too short'), and one being rewritten meanwhile (a copy in
    progress) killed the process with SIGBUS."""
    path = tmp_path / "lib.so"
    path.write_bytes(content)

    def no_dlopen(*args):
        raise AssertionError("a file that is no library here must not be dlopen'ed")

    monkeypatch.setattr(library.ctypes, "CDLL", no_dlopen)
    with pytest.raises(
        library.ModuleLoadError, match=rf"lib.so is not a shared library \({len(content)} bytes, no ELF64"
    ):
        tvm.runtime.load_module(str(path))


def test_load_module_missing_path_is_still_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such library"):
        tvm.runtime.load_module(str(tmp_path / "absent.so"))


@pytest.mark.parametrize("entry", [".so", ".so.crc"])
def test_a_fifo_in_the_compile_cache_means_a_rebuild(tmp_path, entry):
    """A FIFO where a cached library or its checksum should be made ``tvm.compile`` wait forever
    (the entry was read with a plain open); it is a damaged entry now: compiled again."""
    cache = tmp_path / "cache"
    compile_in_new_process(cache, 1)
    (found,) = [p for p in (cache / "compile").glob(f"*/*{entry}") if p.name.endswith(entry)]
    found.unlink()
    os.mkfifo(found)
    compile_in_new_process(cache, 1)  # run_python's timeout would fail it on a hang


def test_cache_readers_refuse_special_files(tmp_path):
    """Every cache reader opens without blocking and refuses what is not a regular file."""
    from tvm import _cache
    from tvm.backend import _discovery

    fifo = tmp_path / "entry"
    os.mkfifo(fifo)
    with pytest.raises(_cache.NotARegularFile, match="is a FIFO, not a regular file"):
        _cache.read_regular_file(fifo)
    assert _cache.read_entry(fifo) is None and not fifo.exists()  # removed: the next store replaces it
    os.mkfifo(fifo)
    assert not cc._intact(fifo)
    assert _discovery._read_cache(str(fifo)) == {}
    assert _cache.read_regular_file(__file__) == Path(__file__).read_bytes()


def test_a_cache_entry_with_the_longest_legal_name_is_written(tmp_path):
    """The temporary file of an atomic write was the entry's name plus a suffix, past the
    system's limit of 255 bytes for a name of 230 or more."""
    from tvm import _cache

    path = tmp_path / ("x" * 250 + ".so")
    _cache.atomic_write(path, b"bytes")
    assert path.read_bytes() == b"bytes" and [p.name for p in tmp_path.iterdir()] == [path.name]


@pytest.mark.skipif(not os.path.exists("/bin/ls"), reason="needs an executable at /bin/ls")
def test_an_executable_is_named_as_no_library(tmp_path):
    """A position-independent executable raised tvm-ffi's 'Check failed' naming a private copy."""
    exe = tmp_path / "tool.so"
    exe.write_bytes(Path("/bin/ls").read_bytes())
    with pytest.raises(library.ModuleLoadError, match=rf"^{re.escape(str(exe))} cannot be loaded as a library: "):
        tvm.runtime.load_module(str(exe))


@T.prim_func
def _ADD(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "add_one"})
    for i in range(4):
        B[i] = A[i] + T.float32(1)


@pytest.mark.parametrize("name", ["../lib", "/tmp/elsewhere/lib", "a/b", "", "..", "lib\0x"])
def test_a_library_name_with_a_folder_part_is_refused_before_anything_is_written(tmp_path, monkeypatch, name):
    """The name of a compiled library names a file in a private folder: '../lib' once made the
    removal of that folder remove its parent (the temporary directory)."""
    monkeypatch.setenv("TVM_CACHE_DIR", "off")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    (tmp_path / "precious.txt").write_text("kept")
    with pytest.raises(ValueError, match="the name of a compiled library is a file name without a folder"):
        tvm.compile(_ADD, "c", name=name)
    with pytest.raises(TypeError, match="the name of a compiled library is a string"):
        tvm.compile(_ADD, "c", name=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.txt"]


def test_an_uncached_compile_removes_only_its_own_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TVM_CACHE_DIR", "off")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    (tmp_path / "precious.txt").write_text("kept")
    mod = tvm.compile(_ADD, "c", name="my_kernels-v2")
    a = np.arange(4, dtype="float32")
    b = np.zeros(4, "float32")
    mod["add_one"](a, b)
    np.testing.assert_array_equal(b, a + 1)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("tvm-build-")] == []
    assert (tmp_path / "precious.txt").read_text() == "kept"


def test_paths_that_are_not_utf8_compile_export_and_load(tmp_path, monkeypatch):
    """A cache folder or a library whose name is not UTF-8 (Latin-1 'café'): tvm-ffi takes UTF-8
    paths, and every compile there failed with a bare UnicodeEncodeError."""
    odd = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9")
    monkeypatch.setenv("TVM_CACHE_DIR", odd)
    mod = tvm.compile(_ADD, "c")
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    mod["add_one"](a, b)
    np.testing.assert_array_equal(b, a + 1)
    lib = os.path.join(odd, "lib\udcff.so")
    mod.export_library(lib)
    b[:] = 0
    tvm.runtime.load_module(os.fsencode(lib))["add_one"](a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_a_library_path_the_system_cannot_open_says_why(tmp_path):
    (tmp_path / "loop_a").symlink_to(tmp_path / "loop_b")
    (tmp_path / "loop_b").symlink_to(tmp_path / "loop_a")
    with pytest.raises(OSError, match="cannot open the library: Too many levels of symbolic links"):
        tvm.runtime.load_module(str(tmp_path / "loop_a"))
    with pytest.raises(OSError, match="cannot open the library: File name too long"):
        tvm.runtime.load_module(str(tmp_path / ("x" * 300)))
    with pytest.raises(FileNotFoundError, match="no such library"):
        tvm.runtime.load_module(str(tmp_path / "missing.so"))
