"""``T.call_llvm_intrin`` / ``T.call_llvm_pure_intrin`` of LLVM intrinsics that are portable
operations: each becomes the operation itself, so every target (none of which is LLVM here)
computes it. An intrinsic is named as LLVM names it, with or without its type suffix
(``"llvm.sqrt"``, ``"llvm.ctpop.v8i8"``); the others (target-specific ones such as
``llvm.x86.*``, ids instead of names) are refused by name."""

from __future__ import annotations

import re
from typing import Any, Callable

from tvm.tir import dtype as _dt
from tvm.tir import op as _op
from tvm.tir.expr import IntImm, PrimExpr

_UNARY = ("sqrt", "exp", "exp2", "log", "log2", "log10", "sin", "cos", "fabs", "floor", "ceil", "trunc")

#: LLVM's name (without type suffix) -> (number of arguments, builder of the operation).
_PORTABLE: dict[str, tuple[int, Callable[..., PrimExpr]]] = {
    **{f"llvm.{name}": (1, getattr(_op, name)) for name in _UNARY},
    "llvm.nearbyint": (1, _op.nearbyint),  # round to nearest even, as T.round
    "llvm.rint": (1, _op.nearbyint),
    "llvm.roundeven": (1, _op.nearbyint),
    "llvm.pow": (2, _op.pow),
    "llvm.fma": (3, _op.fma),
    "llvm.fmuladd": (3, _op.fma),
    "llvm.ctpop": (1, _op.popcount),
    "llvm.ctlz": (2, lambda x, _zero_is_poison: _op.clz(x)),  # T.clz defines clz(0) as the width
    "llvm.assume": (1, lambda _condition: IntImm("int32", 0)),  # a fact no pass here uses
}

_TYPE_SUFFIX = re.compile(r"\.(v\d+)?[if]\d+$")


def _base_name(name: str) -> str:
    while _TYPE_SUFFIX.search(name):
        name = _TYPE_SUFFIX.sub("", name)
    return name


def call_llvm_intrin(dtype: str, name: Any, *args: Any) -> PrimExpr:
    """The operation LLVM intrinsic ``name`` stands for, applied to ``args``, as ``dtype``."""
    if not isinstance(name, str):
        raise ValueError(
            f'T.call_llvm_intrin with the intrinsic id {name!r}: name the intrinsic ("llvm.sqrt"); '
            f"there is no LLVM here to look ids up"
        )
    entry = _PORTABLE.get(_base_name(name))
    if entry is None:
        known = ", ".join(sorted(_PORTABLE))
        raise ValueError(
            f"LLVM intrinsic {name!r} is not a portable operation here (there is no LLVM code generator); "
            f"supported: {known}; use a T.<math> intrinsic or T.call_extern with a C function"
        )
    count, build = entry
    if len(args) != count:
        raise TypeError(f"{name} takes {count} argument(s), got {len(args)}")
    value = build(*args)
    if value.dtype == "void" or dtype in ("", "void") or value.dtype == dtype:
        return value
    if _dt.lanes(value.dtype) != _dt.lanes(dtype):
        raise TypeError(f"{name} of {value.dtype} cannot give {dtype}")
    return value.astype(dtype)


call_llvm_pure_intrin = call_llvm_intrin

__all__ = ["call_llvm_intrin", "call_llvm_pure_intrin"]
