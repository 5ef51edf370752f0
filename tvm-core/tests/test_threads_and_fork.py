"""Threads and fork():

* a child forked while another thread held one of the core's locks (a backend being activated,
  a tuning record being stored, a library or a module being loaded, a compile raising the
  recursion limit)
  inherited it held by a thread it does not have, and waited for it forever;
* a thread parsing a deep kernel while another thread's compile ended lost the raised recursion
  limit (it had not counted itself in): a bare RecursionError.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

import tvm
from tvm import _recursion
from tvm.script import tir as T


@T.prim_func
def _scale(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = A[i] * T.float32(2)


def _child_finishes(work, timeout: float = 30.0) -> bool:
    """Whether ``work()`` in a forked child returns within ``timeout`` (the child is killed if not)."""
    pid = os.fork()
    if pid == 0:
        try:
            work()
            os._exit(0)
        except BaseException:  # noqa: BLE001 - any answer but a hang will do
            os._exit(1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return False


def _registry_lock():
    from tvm.backend import _registry

    return _registry._lock, lambda: tvm.backend.list_backends()


def _ownership_lock():
    from tvm.backend import _ownership

    return _ownership._lock, lambda: _ownership.owner_of("device", "cpu")


def _library_lock():
    from tvm.runtime import library

    return library._loaded_lock, lambda: library.reuse(("test", "fork"), lambda: None)


def _tuning_lock(tmp_path):
    from tvm.tune.database import Database

    db = Database(tmp_path / "tuning.json")
    return db._lock, lambda: db.lookup("kernel", "c", "fingerprint")


def _module_lock():
    from tvm.runtime.module import Module

    lazy = Module(None, load=lambda: tvm.compile(_scale, target="c").ffi_module)
    return lazy._load_lock, lambda: lazy.kind


def _recursion_lock():
    return _recursion._lock, lambda: _recursion.room("a parse").__enter__()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork() (POSIX)")
@pytest.mark.parametrize("which", ["registry", "ownership", "library", "tuning", "recursion", "module"])
def test_a_child_forked_while_another_thread_holds_a_lock_does_not_hang(which, tmp_path):
    lock, use = {
        "registry": _registry_lock,
        "ownership": _ownership_lock,
        "library": _library_lock,
        "tuning": lambda: _tuning_lock(tmp_path),
        "recursion": _recursion_lock,
        "module": _module_lock,
    }[which]()
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    try:
        assert _child_finishes(use), f"a child forked while the {which} lock was held waited for it forever"
    finally:
        release.set()
        holder.join()


def _descend(depth: int) -> int:
    return 0 if depth == 0 else 1 + _descend(depth - 1)


def test_a_thread_keeps_its_recursion_room_when_another_threads_compile_ends():
    inside, started, other_done = threading.Event(), threading.Event(), threading.Event()
    leave = threading.Event()

    @_recursion.with_room("a deep walk")
    def walk() -> int:
        started.set()
        other_done.wait()  # the other thread's room ended while this call runs
        return _descend(5000)

    def other_compile() -> None:
        with _recursion.room("another compile"):
            inside.set()
            leave.wait()
        other_done.set()

    results: list = []

    def walker_body() -> None:
        try:
            results.append(walk())
        except RecursionError as err:
            results.append(err)

    before = sys.getrecursionlimit()
    other = threading.Thread(target=other_compile)
    other.start()
    inside.wait()  # the limit is raised: the walk starts under it
    walker = threading.Thread(target=walker_body)
    walker.start()
    started.wait()
    leave.set()
    other.join()
    walker.join()
    assert results == [5000], results
    assert sys.getrecursionlimit() == before
