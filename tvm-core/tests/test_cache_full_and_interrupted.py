"""A compile cache that cannot take a library (a full disk, its folder removed by someone
clearing the cache) costs the cache, not the compile; a Ctrl-C leaves nothing behind, and
reaches the caller as KeyboardInterrupt even from a Python callback the kernel calls; a full or
noexec temporary folder is named as the cause."""

from __future__ import annotations

import errno
import os
import uuid

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm.contrib import cc
from tvm.runtime import library
from tvm.script import tir as T


def fresh_kernel():
    """A kernel no earlier test compiled (its constant is new), so the cache is not hit."""
    c = float(uuid.uuid4().int % 100000)

    @T.prim_func
    def add_c(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + T.float32(c)

    return add_c, c


def run(mod, c):
    a = tvm.runtime.tensor(np.zeros(4, "float32"))
    mod(a)
    np.testing.assert_array_equal(a.numpy(), np.full(4, c, "float32"))


def test_a_full_cache_disk_costs_the_cache_not_the_compile(monkeypatch, tmp_path):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    real = cc._move_into_place

    def full(built, output):
        if str(output).startswith(str(tmp_path / "cache")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), output)
        real(built, output)

    monkeypatch.setattr(cc, "_move_into_place", full)
    func, c = fresh_kernel()
    with pytest.warns(
        RuntimeWarning, match=r"compile cache: cannot store .*No space left on device.*without the cache"
    ):
        mod = tvm.compile(func, "c")
    run(mod, c)
    assert not mod._build_info.cache_hit
    assert not list((tmp_path / "cache" / "compile").glob("*/*.so"))


def test_a_cache_entry_removed_before_it_loads_is_compiled_again(monkeypatch, tmp_path):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    real = cc.compile_shared
    removed = []

    def then_cleared(code, **kwargs):
        path, hit = real(code, **kwargs)
        if kwargs.get("use_cache", True):
            os.remove(path)  # someone clears the cache between the compile and the load
            removed.append(path)
        return path, hit

    monkeypatch.setattr(cc, "compile_shared", then_cleared)
    func, c = fresh_kernel()
    run(tvm.compile(func, "c"), c)
    assert removed


def test_ctrl_c_during_an_uncached_compile_leaves_no_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("TVM_CACHE_DIR", "0")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))

    def interrupted(sources, output, flags, objects=(), link=True):
        with open(output, "wb") as f:  # part of the output is written when Ctrl-C comes
            f.write(b"\x7fELF")
        raise KeyboardInterrupt

    monkeypatch.setattr(cc, "run_compiler", interrupted)
    func, _ = fresh_kernel()
    with pytest.raises(KeyboardInterrupt):
        tvm.compile(func, "c")
    assert not list(tmp_path.glob("tvm-build-*"))


def test_ctrl_c_while_storing_into_the_cache_leaves_no_temporary(monkeypatch, tmp_path):
    cache = tmp_path / "cache"
    built = tmp_path / "built.so"
    built.write_bytes(b"library")

    def interrupted_move(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr("shutil.move", interrupted_move)
    with pytest.raises(KeyboardInterrupt):
        cc._move_into_place(str(built), str(cache / "ab" / "key.so"))
    assert not list(cache.rglob("*"))[1:], list(cache.rglob("*"))  # only the entry's folder


@T.prim_func
def calls_back(A: T.Buffer((4,), "float32")):
    T.call_packed("tests.cache.interrupted_callback", A)


@pytest.mark.parametrize("exit_exception", [KeyboardInterrupt, SystemExit])
def test_ctrl_c_or_exit_in_a_python_callback_stays_itself(exit_exception):
    def callback(a):
        raise exit_exception

    tvm_ffi.register_global_func("tests.cache.interrupted_callback", callback, override=True)
    mod = tvm.compile(calls_back, "c")
    with pytest.raises(exit_exception):
        mod(tvm.runtime.tensor(np.zeros(4, "float32")))


def test_a_full_temporary_folder_is_not_taken_for_a_full_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    runs = []

    def full_scratch(sources, output, flags, objects=(), link=True):
        runs.append(output)
        raise cc.in_scratch(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), "/tmp-like/lib.c")

    monkeypatch.setattr(cc, "run_compiler", full_scratch)
    func, _ = fresh_kernel()
    with pytest.raises(OSError, match="in the temporary folder"):
        tvm.compile(func, "c")
    assert len(runs) == 1  # no second, private build that would meet the same full folder


def test_a_full_temporary_folder_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    real_open = open

    def full(path, mode="r", *args, **kwargs):
        if "w" in mode and str(path).startswith(str(tmp_path)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", full)
    with pytest.raises(OSError, match=rf"No space left on device \(in the temporary folder {tmp_path}: set TMPDIR"):
        cc.run_compiler({"lib.c": "int f(void) { return 1; }"}, str(tmp_path / "out.so"), ["-shared"])
    with pytest.raises(OSError, match=rf"in the temporary folder {tmp_path}: set TMPDIR"):
        library._load_private_copy(b"\x7fELF", "/somewhere/lib.so")


def test_a_temporary_folder_that_cannot_map_code_is_named(monkeypatch, tmp_path):
    def noexec(path, shown=""):
        raise library.ModuleLoadError(
            f"{shown} cannot be loaded as a library: failed to map segment from shared object"
        )

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(library, "_dlopen", noexec)
    with pytest.raises(library.ModuleLoadError, match=r"out of memory mappings \(vm.max_map_count\) or address"):
        library._load_private_copy(b"\x7fELF", "/somewhere/lib.so")  # the folder maps code: the process is full

    class NoExec:
        f_flag = os.ST_NOEXEC

    monkeypatch.setattr(os, "statvfs", lambda folder: NoExec())
    with pytest.raises(library.ModuleLoadError, match=rf"private copy in the temporary folder {tmp_path} cannot be"):
        library._load_private_copy(b"\x7fELF", "/somewhere/lib.so")


def test_scratch_folders_of_processes_gone_are_removed(monkeypatch, tmp_path):
    """A compile stopped by SIGTERM (how services are stopped) left its scratch folder, with the
    kernel's source, for good; the next process of the user removes those of processes gone."""
    import subprocess
    import sys
    import time

    from tvm import _cache

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    old = time.time() - 2 * _cache._STALE_AFTER_S
    folders = {
        "stale": tmp_path / f"tvm-cc-{dead}-abc",
        "recent": tmp_path / f"tvm-build-{dead}-def",  # may be a live process of another pid namespace
        "alive": tmp_path / f"tvm-cc-{os.getppid()}-ghi",
        "other": tmp_path / f"tvm-data-{dead}-jkl",
        "no pid": tmp_path / "tvm-cc-99999999999999999999-x",  # anyone can make one in a shared /tmp
    }
    for name, folder in folders.items():
        folder.mkdir()
        (folder / "lib.c").write_text("int f(void) { return 0; }")
        if name != "recent":
            os.utime(folder, (old, old))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(_cache, "_swept", False)
    assert _cache.scratch_prefix("cc") == f"tvm-cc-{os.getpid()}-"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f.name for n, f in folders.items() if n != "stale")
