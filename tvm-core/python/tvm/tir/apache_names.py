"""Names that scripts written for Apache TVM use on ``tvm.tir``: ``build`` a function,
``decl_buffer``, the conjunction and disjunction of conditions ``all`` / ``any``, C's division
``div`` and the index arithmetic ``indexdiv`` / ``indexmod``."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .expr import Buffer, PrimExpr, Var, const
from .op import binary, floordiv, floormod, logical_and, logical_or


def build(func_or_mod: Any, target: Any = None, pipeline: Any = None) -> Any:
    """:func:`tvm.compile` of ``func_or_mod`` for ``target`` (this compiler has one pipeline:
    ``pipeline`` may only be None or ``"default"``)."""
    if pipeline not in (None, "default"):
        raise ValueError(
            f"tvm.tir.build: pipeline {pipeline!r} is not available; this compiler has one pipeline "
            f"(leave pipeline out)"
        )
    from ..driver import compile as compile_

    return compile_(func_or_mod, target)


def decl_buffer(
    shape: Sequence[Any],
    dtype: str = "float32",
    name: str = "buffer",
    data: Optional[Var] = None,
    strides: Optional[Sequence[Any]] = None,
    elem_offset: Optional[Any] = None,
    scope: str = "",
    data_alignment: int = -1,
    offset_factor: int = 0,
) -> Buffer:
    """A :class:`Buffer` of ``shape`` and ``dtype`` (a new handle Var when ``data`` is None;
    ``scope`` "" is global memory)."""
    dims = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
    offset = (
        const(0) if elem_offset is None else (elem_offset if isinstance(elem_offset, PrimExpr) else const(elem_offset))
    )
    return Buffer(
        name,
        dims,
        dtype,
        data=data,
        strides=tuple(s if isinstance(s, PrimExpr) else const(s) for s in (strides or ())),
        elem_offset=offset,
        scope=scope or "global",
        align=data_alignment if data_alignment > 0 else 64,
    )


def _joined(name: str, combine: Any, conditions: tuple) -> PrimExpr:
    if not conditions:
        raise ValueError(f"tvm.tir.{name} needs at least one condition")
    out = conditions[0]
    for c in conditions[1:]:
        out = combine(out, c)
    return out if isinstance(out, PrimExpr) else const(bool(out))


def all(*conditions: Any) -> PrimExpr:  # noqa: A001
    """The conjunction of ``conditions`` (boolean expressions), as one expression."""
    return _joined("all", logical_and, conditions)


def any(*conditions: Any) -> PrimExpr:  # noqa: A001
    """The disjunction of ``conditions`` (boolean expressions), as one expression."""
    return _joined("any", logical_or, conditions)


def div(a: Any, b: Any) -> PrimExpr:
    """``a / b`` as C computes it: integer operands divide rounding towards zero, floats divide
    exactly (a ``Div`` node)."""
    return binary("div", a, b)


def indexdiv(a: Any, b: Any) -> PrimExpr:
    """Division of indices (non-negative in use): :func:`~tvm.tir.floordiv`."""
    return floordiv(a, b)


def indexmod(a: Any, b: Any) -> PrimExpr:
    """Remainder of indices (non-negative in use): :func:`~tvm.tir.floormod`."""
    return floormod(a, b)


__all__ = ["all", "any", "build", "decl_buffer", "div", "indexdiv", "indexmod"]
