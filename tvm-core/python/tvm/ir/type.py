"""Apache TVM's type objects, as its newer API hands them out (``expr.ty``, ``buffer.ty``) and takes
them wherever a dtype goes (``tvm.tir.Var("x", PrimType("int32"))``).

This project's IR keeps dtype strings; :class:`PrimType` and :class:`PointerType` are strings
too (``"float32"``, ``"handle"``) that carry what Apache TVM's types carry, so either spelling
works everywhere and nothing downstream needs to know which one it got.
"""

from __future__ import annotations

from typing import Any

from tvm.tir import dtype as _dt


class Type:
    """Base of the type objects (``tvm.ir.Type``)."""


class PrimType(str, Type):
    """The type of a scalar or vector value: equal to its dtype string (``PrimType("float32") ==
    "float32"``); ``dtype`` gives it as a ``tvm_ffi.dtype`` (``.bits``, ``.lanes``)."""

    def __new__(cls, dtype: Any) -> "PrimType":
        text = str(dtype)
        if text != "void":
            _dt.parse(text)  # ValueError naming an unknown dtype
        return super().__new__(cls, text)

    @classmethod
    def of(cls, dtype: str) -> "PrimType":
        """The type of an expression of ``dtype`` (``expr.ty``), whatever the IR holds there."""
        return super().__new__(cls, str(dtype))

    @property
    def dtype(self) -> Any:
        """The dtype (a ``str`` with ``bits``, ``lanes`` and ``type_code``)."""
        import tvm_ffi

        return tvm_ffi.dtype(str(self))

    def is_scalar(self) -> bool:
        """Whether it has exactly one lane."""
        return _dt.lanes(str(self)) == 1

    def __repr__(self) -> str:
        return f"PrimType({str(self)!r})"

    __hash__ = str.__hash__


class PointerType(str, Type):
    """The type of a pointer (a ``handle``) to ``element_type`` values in ``storage_scope``
    memory; equal to ``"handle"``, the dtype this IR gives pointers."""

    element_type: Any
    storage_scope: str

    def __new__(cls, element_type: Any, storage_scope: str = "") -> "PointerType":
        self = super().__new__(cls, "handle")
        self.element_type = element_type if isinstance(element_type, Type) else PrimType(element_type)
        self.storage_scope = storage_scope
        return self

    def __repr__(self) -> str:
        scope = f", {self.storage_scope!r}" if self.storage_scope else ""
        return f"PointerType({self.element_type!r}{scope})"

    __hash__ = str.__hash__


class BufferType(Type):
    """The type of a buffer (``buffer.ty``): its ``dtype`` (a :class:`PrimType`), ``shape``,
    ``strides``, ``elem_offset`` and ``scope``, read from the buffer."""

    def __init__(self, buffer: Any):
        self._buffer = buffer

    @property
    def dtype(self) -> PrimType:
        """The element type."""
        return PrimType.of(self._buffer.dtype)

    @property
    def shape(self) -> tuple:
        """The extents, one per dimension."""
        return self._buffer.shape

    @property
    def strides(self) -> tuple:
        """The strides in elements (empty for a compact row-major buffer)."""
        return self._buffer.strides

    @property
    def elem_offset(self) -> Any:
        """The offset of the first element, in elements."""
        return self._buffer.elem_offset

    @property
    def scope(self) -> str:
        """The storage scope ("global", "shared", "local", ...)."""
        return self._buffer.scope

    def __repr__(self) -> str:
        return f"BufferType({self._buffer.dtype}, shape={self._buffer.shape})"


def is_prim_expr(value: Any) -> bool:
    """Whether ``value`` is an expression with a scalar or vector value (``tvm.ir.is_prim_expr``)."""
    from tvm.tir.expr import PrimExpr

    return isinstance(value, PrimExpr)


__all__ = ["BufferType", "PointerType", "PrimType", "Type", "is_prim_expr"]
