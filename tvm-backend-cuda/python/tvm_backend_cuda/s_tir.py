"""``T.s_tir``: the one intrinsic of Apache TVM's schedule-TIR namespace that kernels call, as this
backend implements it:

* ``cp_async_raw(dtype, shared.data, shared_offset, global.data, global_offset, nbytes)``, and
  ``cp_async_raw.legacy(shared.data, shared_offset, global.data, global_offset, nbytes,
  dtype=...)`` (the older argument order): an asynchronous copy of ``nbytes`` (4, 8 or 16) from
  global to shared memory, offsets counted in elements, which is :func:`.ptx_legacy.cp_async`
  (completed by ``T.ptx.cp.async_.commit_group()`` and ``wait_group(n)``).
"""

from __future__ import annotations

from typing import Any

from tvm.tir.expr import Call

from .ptx_legacy import cp_async as _cp_async

__all__ = ["cp_async_raw"]


def cp_async_raw(dtype: str, dst: Any, dst_offset: Any, src: Any, src_offset: Any, nbytes: Any) -> Call:
    """``T.s_tir.cp_async_raw(dtype, dst.data, dst_offset, src.data, src_offset, nbytes)``."""
    return _cp_async(dtype, dst, dst_offset, src, src_offset, nbytes)


def _legacy(dst: Any, dst_offset: Any, src: Any, src_offset: Any, nbytes: Any, dtype: str = "void") -> Call:
    """``T.s_tir.cp_async_raw.legacy(dst.data, dst_offset, src.data, src_offset, nbytes, dtype=...)``."""
    return _cp_async(dst, dst_offset, src, src_offset, nbytes)


cp_async_raw.legacy = _legacy  # type: ignore[attr-defined]
