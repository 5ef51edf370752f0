"""``T.ptx``: the PTX instructions of Apache TVM's newer namespace that this backend implements.

The name after ``T.ptx`` is the instruction's, dot by dot (a trailing ``_`` is dropped, as in
``T.ptx.cp.async_.commit_group()``). Implemented:

* ``cp.async.commit_group()``, ``cp.async.wait_group(n)``: :func:`.script.cp_async_commit` and
  :func:`.script.cp_async_wait` (copies marked ``T.attr(..., "async_scope", 1)`` are plain
  copies here, so the groups hold only the ``T.cuda.cp_async`` copies);
* ``griddepcontrol.wait()``, ``griddepcontrol.launch_dependents()`` (sm_90+; without a
  programmatic dependent launch they return at once);
* ``add.rn.f32(d, a, b)``, ``mul.rn.f32(d, a, b)``, ``max.f32(d, a, b)``: ``d = a + b``,
  ``a * b`` (each rounded once, to nearest even) and ``fmaxf(a, b)`` (a NaN operand gives the other),
  stored to the buffer element ``d`` (CUDA's ``__fadd_rn`` / ``__fmul_rn``: never fused with a
  neighbouring operation into an FMA, as add.rn / mul.rn are not).

Any other name is an error that lists these.
"""

from __future__ import annotations

from typing import Any, Callable

from tvm.tir import op as _op
from tvm.tir.expr import BufferLoad, Call, PrimExpr, StringImm
from tvm.tir.stmt import BufferStore

from . import script as _script


def _stored(name: str, combine: Callable[[PrimExpr, PrimExpr], PrimExpr]) -> Callable[..., BufferStore]:
    def store(d: Any, a: Any, b: Any) -> BufferStore:
        if not isinstance(d, BufferLoad) or d.buffer.dtype != "float32":
            raise _script.IntrinsicError(
                f"T.ptx.{name}: the destination must be a float32 buffer element, got {d!r:.60}"
            )
        a, b = (_op.convert(x) for x in (a, b))
        if a.dtype != "float32" or b.dtype != "float32":
            raise _script.IntrinsicError(f"T.ptx.{name}: operands must be float32, got {a.dtype} and {b.dtype}")
        return BufferStore(d.buffer, combine(a, b), d.indices)

    return store


def _extern(name: str, a: PrimExpr, b: PrimExpr) -> Call:
    return Call("float32", "call_extern", (StringImm(name), a, b))


INSTRUCTIONS: dict[str, Callable[..., Any]] = {
    "cp.async.commit_group": _script.cp_async_commit,
    "cp.async.wait_group": _script.cp_async_wait,
    "griddepcontrol.wait": lambda: Call("void", "cuda.griddepcontrol_wait", ()),
    "griddepcontrol.launch_dependents": lambda: Call("void", "cuda.griddepcontrol_launch_dependents", ()),
    # CUDA's __fadd_rn / __fmul_rn: rounded once and, like add.rn / mul.rn, never fused into an FMA
    "add.rn.f32": _stored("add.rn.f32", lambda a, b: _extern("__fadd_rn", a, b)),
    "mul.rn.f32": _stored("mul.rn.f32", lambda a, b: _extern("__fmul_rn", a, b)),
    "max.f32": _stored("max.f32", lambda a, b: _extern("fmaxf", a, b)),
}


class Instruction:
    """``T.ptx.<part>.<part>...``: calling it builds the instruction the dotted name gives."""

    def __init__(self, parts: tuple[str, ...]) -> None:
        self._parts = parts

    def __getattr__(self, part: str) -> "Instruction":
        if part.startswith("__"):
            raise AttributeError(part)
        return Instruction((*self._parts, part.rstrip("_")))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = ".".join(self._parts)
        make = INSTRUCTIONS.get(name)
        if make is None:
            raise _script.IntrinsicError(
                f"T.ptx.{name} is not implemented by the cuda backend; implemented: "
                f"{', '.join(sorted(INSTRUCTIONS))} (and T.ptx_legacy.mma/ldmatrix, T.cuda.*)"
            )
        kwargs.pop("dtype", None)
        return make(*args, **kwargs)


def __getattr__(part: str) -> Instruction:
    if part.startswith("__"):
        raise AttributeError(part)
    return Instruction((part.rstrip("_"),))
