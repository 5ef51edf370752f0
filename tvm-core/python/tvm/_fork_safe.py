"""Locks a forked child never inherits held.

``fork()`` copies a process with only the thread that called it: a lock another thread held at
that moment stays held in the child, by a thread the child does not have, and the child's first
use of it waits forever (``multiprocessing``'s default start method on Linux forks). Each lock
registered here is replaced by a new one in the child. What the lock guarded may be half
updated there (a backend being activated): the child then fails or repeats the work, but never
waits for it.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any, Callable

#: owner (a module or an instance, held weakly) -> {attribute: factory of its lock}
_locks: "weakref.WeakKeyDictionary[Any, dict[str, Callable[[], Any]]]" = weakref.WeakKeyDictionary()
_registering = threading.Lock()


def _renew_all() -> None:
    global _registering
    _registering = threading.Lock()
    for owner, attrs in list(_locks.items()):
        for attr, factory in attrs.items():
            setattr(owner, attr, factory())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_renew_all)


def renewed_in_child(owner: Any, attr: str, factory: Callable[[], Any] = threading.Lock) -> Any:
    """``owner.attr``, a lock made by ``factory``, registered to be a new ``factory()`` in a
    forked child (``owner`` may be a module or an instance, held weakly: one registration per
    owner, whatever number of them live); returns the lock."""
    with _registering:
        _locks.setdefault(owner, {})[attr] = factory
    return getattr(owner, attr)


__all__ = ["renewed_in_child"]
