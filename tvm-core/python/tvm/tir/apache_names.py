"""Names that scripts written for Apache TVM use on ``tvm.tir``: ``build`` a function,
``decl_buffer``, the conjunction and disjunction of conditions ``all`` / ``any``, C's division
``div`` and the index arithmetic ``indexdiv`` / ``indexmod`` / ``ceildiv``, and the expression
builders TVMScript spells ``T.likely``, ``T.call_extern`` ... (the same functions)."""

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


def _script_builder(name: str) -> Any:
    """``T.<name>`` of TVMScript, which builds the same expression outside a script."""

    def build_expr(*args: Any, **kwargs: Any) -> Any:
        from tvm.script import tir as T  # the script layer sits above this package

        return getattr(T, name)(*args, **kwargs)

    build_expr.__name__ = build_expr.__qualname__ = name
    build_expr.__doc__ = f"``T.{name}(...)`` of TVMScript, as a function of ``tvm.tir``."
    return build_expr


ceildiv = _script_builder("ceildiv")
likely = _script_builder("likely")
call_extern = _script_builder("call_extern")
call_pure_extern = _script_builder("call_pure_extern")
call_packed = _script_builder("call_packed")
address_of = _script_builder("address_of")

__all__ = [
    "address_of",
    "all",
    "any",
    "build",
    "call_extern",
    "call_packed",
    "call_pure_extern",
    "ceildiv",
    "decl_buffer",
    "div",
    "indexdiv",
    "indexmod",
    "likely",
]
