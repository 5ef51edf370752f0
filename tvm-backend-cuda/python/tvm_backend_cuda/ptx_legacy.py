"""``T.ptx_legacy``: Apache TVM's warp-level PTX intrinsics, as TVMScript written for it spells them.

Pointer operands are a buffer's ``.data`` with an element offset (``A_local.data, 0``) or an
address (``T.tvm_access_ptr(...)``, ``A.access_ptr("r")``) with one; each becomes the element it
points at, so the calls are the same ``T.cuda`` intrinsics (:mod:`.script`) with the same checks:

.. code-block:: python

    T.ptx_legacy.ldmatrix(False, 4, ".b16", A_local.data, 0, A_shared.data, 16 * (tx % 16) + 8 * (tx // 16))
    T.ptx_legacy.mma("m16n8k16", "row", "col", "float16", "float16", "float32",
                     A_local.data, 0, B_local.data, 0, C_local.data, 0, False)

``mma`` computes ``C += A @ B`` in place on the lane's fragments (layouts in :mod:`.mma`);
``cp_async`` / ``commit_group`` / ``wait_group`` are the asynchronous copies of ``T.cuda``.
"""

from __future__ import annotations

import re
from typing import Any

from tvm.script.fragments import pointer_element
from tvm.tir.expr import Call, IntImm

from . import mma as _mma
from . import script as _script

__all__ = ["cp_async", "commit_group", "ldmatrix", "mma", "wait_group"]

_SHAPE = re.compile(r"m\d+n\d+k\d+")


def _constant(intrin: str, what: str, value: Any) -> int:
    """``value`` as a Python int; the instruction's text depends on it, so it must be a constant."""
    if isinstance(value, IntImm):
        return int(value.value)
    if isinstance(value, (bool, int)):
        return int(value)
    raise _script.IntrinsicError(
        f"{intrin}: {what} must be a constant (it selects the instruction), got {value!r:.60}; "
        "specialize the function for a value (func.specialize) or branch on it"
    )


def ldmatrix(*args: Any, dtype: str = "float16") -> Call:
    """``T.ptx_legacy.ldmatrix([dtype,] trans, num, ".b16", local_ptr, local_offset, smem_ptr,
    smem_offset)``: :func:`tvm_backend_cuda.script.ldmatrix` of ``num`` 8x8 matrices (lanes give
    the row addresses) into this lane's fragment at ``local_ptr + local_offset``."""
    if args and isinstance(args[0], str) and not args[0].startswith("."):
        args = args[1:]  # the leading element dtype of the newer spelling
    if len(args) != 7:
        raise _script.IntrinsicError(
            "T.ptx_legacy.ldmatrix: expected (trans, num, '.b16', local_ptr, local_offset, smem_ptr, "
            f"smem_offset), got {len(args)} arguments"
        )
    trans, num, kind, local_ptr, local_offset, smem_ptr, smem_offset = args
    if str(getattr(kind, "value", kind)) != ".b16":
        raise _script.IntrinsicError(f"T.ptx_legacy.ldmatrix: only '.b16' matrices exist, got {kind!r}")
    dst = pointer_element(local_ptr, local_offset)
    src = pointer_element(smem_ptr, smem_offset)
    intrin = "T.ptx_legacy.ldmatrix"
    return _script.ldmatrix(dst, src, _constant(intrin, "num", num), bool(_constant(intrin, "trans", trans)))


def mma(*args: Any, **kwargs: Any) -> Call:
    """``T.ptx_legacy.mma([dtype,] shape, "row", "col", A type, B type, C type, a_ptr, a_offset,
    b_ptr, b_offset, c_ptr, c_offset, saturate)``: the warp's ``C += A @ B`` (``mma.sync.aligned``)
    on each lane's fragments of A, B and C (C is also D)."""
    if args and isinstance(args[0], str) and not _SHAPE.fullmatch(args[0]) and len(args) >= 13:
        args = args[1:]  # the leading result dtype of the newer spelling
    return _warp_mma(*args, **kwargs)


def _warp_mma(
    shape: Any,
    a_layout: Any,
    b_layout: Any,
    a_type: Any,
    b_type: Any,
    c_type: Any,
    a_ptr: Any,
    a_offset: Any,
    b_ptr: Any,
    b_offset: Any,
    c_ptr: Any,
    c_offset: Any,
    saturate: Any = False,
    operator: Any = None,
    dtype: str = "void",
) -> Call:
    """The mma of :func:`mma`'s arguments without the leading dtype."""
    shape = str(getattr(shape, "value", shape))
    layouts = tuple(str(getattr(x, "value", x)) for x in (a_layout, b_layout))
    if layouts != ("row", "col"):
        raise _script.IntrinsicError(
            f"T.ptx_legacy.mma: A {layouts[0]}, B {layouts[1]}: only row-major A and column-major B "
            '("row", "col") are supported; transpose the operand as you load it'
        )
    if operator is not None:
        raise _script.IntrinsicError("T.ptx_legacy.mma: 1-bit mma (an operator such as 'xor') is not supported")
    types = tuple(_mma.operand_type(role, t) for role, t in (("A", a_type), ("B", b_type), ("C", c_type)))
    a, b, c = (pointer_element(p, o) for p, o in ((a_ptr, a_offset), (b_ptr, b_offset), (c_ptr, c_offset)))
    call = _mma.make_call(
        c, a, b, c, shape, (*types, types[2]), bool(_constant("T.ptx_legacy.mma", "saturate", saturate))
    )
    _script.check_intrinsic(call)
    return call


def cp_async(*args: Any, dtype: str = "void") -> Call:
    """``T.ptx_legacy.cp_async([dtype,] shared_ptr, shared_offset, global_ptr, global_offset,
    bytes)``: :func:`tvm_backend_cuda.script.cp_async` of ``bytes`` (4, 8 or 16) from global to
    shared memory, completed by :func:`commit_group` and :func:`wait_group`."""
    if args and isinstance(args[0], str):
        args = args[1:]
    if len(args) != 5:
        raise _script.IntrinsicError(
            f"T.ptx_legacy.cp_async: expected (shared_ptr, shared_offset, global_ptr, global_offset, bytes), "
            f"got {len(args)} arguments"
        )
    shared_ptr, shared_offset, global_ptr, global_offset, nbytes = args
    dst, src = pointer_element(shared_ptr, shared_offset), pointer_element(global_ptr, global_offset)
    return _script.cp_async(dst, src, _constant("T.ptx_legacy.cp_async", "bytes", nbytes))


def commit_group() -> Call:
    """``T.ptx_legacy.commit_group()``: :func:`tvm_backend_cuda.script.cp_async_commit`."""
    return _script.cp_async_commit()


def wait_group(n: Any) -> Call:
    """``T.ptx_legacy.wait_group(n)``: :func:`tvm_backend_cuda.script.cp_async_wait` (``n`` a constant)."""
    return _script.cp_async_wait(_constant("T.ptx_legacy.wait_group", "n", n))
