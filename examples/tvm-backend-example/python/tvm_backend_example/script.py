"""``T.example``: backend intrinsics visible in TVMScript once this backend is active."""

from __future__ import annotations


def thread_count():
    """Number of threads in the current block (an example backend intrinsic)."""
    from tvm.tir import Call

    return Call("int32", "example.thread_count", ())
