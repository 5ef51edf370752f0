"""Device modules from code generators: the real runtime module when its backend can run it,
the generic fallback module otherwise (same kind, same bytes, functions that explain)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence

import tvm_ffi

from tvm._env import env_flag

FunctionSpec = Sequence[Any]  # [name, [arg dtypes], [launch tags]]


# Precedence of what an expression's text is made of: the runtime reads operators of one
# precedence left to right, so a right operand of the same precedence is parenthesized.
_SUM, _PRODUCT, _ATOM = 1, 2, 3
_OPERATORS = {
    "Add": ("+", _SUM),
    "Sub": ("-", _SUM),
    "Mul": ("*", _PRODUCT),
    "FloorDiv": ("/", _PRODUCT),
    "FloorMod": ("%", _PRODUCT),
}


def arg_expression(expr: Any, params: dict) -> Optional[str]:
    """``expr`` as the runtime's ``ArgExpression`` text (``device_module.h``: integers, ``$k`` for
    integer scalar parameter k, ``+ - * / %`` with ``/`` and ``%`` TIR's floordiv and floormod,
    ``min(a,b)``, ``max(a,b)``), e.g. ``"($2+255)/256"``; ``params`` maps each scalar parameter
    Var to its argument index. None when ``expr`` uses anything else (another variable, a
    narrowing cast, a memory read): the runtime then checks nothing with it."""
    found = _arg_expression(expr, params)
    return None if found is None else found[0]


def _arg_expression(expr: Any, params: dict) -> Optional[tuple[str, int]]:
    """``expr``'s text and the precedence of its outermost operator, or None."""
    from tvm.tir import dtype as _dt
    from tvm.tir import expr as E

    if isinstance(expr, E.IntImm):
        value = int(expr.value)
        return (str(value), _ATOM) if value >= 0 else (f"(0-{-value})", _ATOM)
    if isinstance(expr, E.Var):
        return (f"${params[expr]}", _ATOM) if _dt.is_integer(str(expr.dtype)) and expr in params else None
    if isinstance(expr, E.Cast):
        return _arg_expression(expr.value, params) if _keeps_value(str(expr.value.dtype), str(expr.dtype)) else None
    if isinstance(expr, (E.Min, E.Max)):
        a, b = _arg_expression(expr.a, params), _arg_expression(expr.b, params)
        name = "min" if isinstance(expr, E.Min) else "max"
        return None if a is None or b is None else (f"{name}({a[0]},{b[0]})", _ATOM)
    operator = _OPERATORS.get(type(expr).__name__)
    if operator is None:
        return None
    a, b = _arg_expression(expr.a, params), _arg_expression(expr.b, params)
    if a is None or b is None:
        return None
    op, precedence = operator
    return f"{_operand(a, precedence)}{op}{_operand(b, precedence + 1)}", precedence


def _operand(found: tuple[str, int], least: int) -> str:
    """An operand's text, parenthesized when its operator binds less than ``least``."""
    return found[0] if found[1] >= least else f"({found[0]})"


def _keeps_value(src: str, dst: str) -> bool:
    """Whether a cast from integer dtype ``src`` to ``dst`` keeps every value (a widening)."""
    from tvm.tir import dtype as _dt

    (sf, sb, sl), (df, db, dl) = _dt.parse(src), _dt.parse(dst)
    if sl != 1 or dl != 1 or sf not in ("int", "uint") or df not in ("int", "uint"):
        return False
    return db >= sb if sf == df else (sf == "uint" and df == "int" and db > sb)


def _product(factors: list) -> str:
    """The text of the product of ``factors`` (texts with their precedences), read left to right."""
    if len(factors) == 1:
        return factors[0][0]
    return "*".join(_operand(f, _PRODUCT if i == 0 else _ATOM) for i, f in enumerate(factors))


def _scalar_params(func: Any) -> dict:
    """Each scalar parameter of kernel ``func`` -> its argument index."""
    return {p: i for i, p in enumerate(func.params) if p not in func.buffer_map and p.dtype != "handle"}


def kernel_arg_types(func: Any, scalar_type: Callable[[str], str] = lambda dtype: dtype) -> list[str]:
    """The ``arg_types`` of kernel ``func``'s function-map entry (see ``device_module.h``).

    A buffer parameter becomes ``handle:<dtype>:<minimum elements>`` (the product of its shape
    as an :func:`arg_expression`), or ``handle:<dtype>`` when its size is no such expression;
    runtimes check tensors passed to the raw kernel against it. A bare pointer parameter is
    ``handle``; a scalar is its dtype mapped by ``scalar_type`` (e.g. float16 passed as float32).
    """
    scalars = _scalar_params(func)
    out = []
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None:
            out.append("handle" if p.dtype == "handle" else scalar_type(p.dtype))
            continue
        offset = buf.elem_offset
        dims = None
        if not buf.strides and (offset is None or getattr(offset, "value", None) == 0):
            dims = [_arg_expression(dim, scalars) for dim in buf.shape]
        if dims is None or None in dims:
            out.append(f"handle:{buf.dtype}")
            continue
        size = _product(dims) if dims else "1"
        out.append(f"handle:{buf.dtype}:{size}")
    return out


def loop_bound(kernel: Any) -> str:
    """An upper bound on the loop iterations one thread of ``kernel`` runs, for runtimes whose
    driver ends long-running shaders: a sum ("+") of products ("*") of integers and ``$k`` (the
    value of scalar argument k of the launch), e.g. ``"4*$2+260"``, divided (rounding up) by the
    common denominator where extents are divided by constants (``"($1+7)/4"``); ``"?"`` when the
    loops' extents cannot be bounded by the scalar arguments (see
    :func:`tvm.tir.analysis.serial_iteration_bound`)."""
    from tvm.tir.analysis import serial_iteration_bound

    bound = serial_iteration_bound(kernel)
    if bound is None:
        return "?"
    denominator = math.lcm(1, *(Fraction(c).denominator for c in bound.values()))
    scaled = {mono: int(Fraction(c) * denominator) for mono, c in bound.items()}
    if denominator > 1:
        scaled[()] = scaled.get((), 0) + denominator - 1  # floor((x + d - 1) / d) = ceil(x / d)
    terms = ["*".join([str(c)] * (c != 1 or not mono) + [f"${k}" for k in mono]) for mono, c in sorted(scaled.items())]
    total = "+".join(terms) or "0"
    return f"({total})/{denominator}" if denominator > 1 else total


def binding_interface(kernel: Any, api: str) -> tuple[list[Any], list[Any]]:
    """A kernel's parameters as an API whose buffers are bindings sees them (SPIR-V, WGSL): its
    buffers in parameter order (binding k is the k-th) and its scalar parameters in order. A
    handle parameter without a buffer has no binding: ValueError naming it (``api`` names the
    backend in the message)."""
    from tvm.codegen.c_family import CodegenError

    buffers, scalars = [], []
    for p in kernel.params:
        buf = kernel.buffer_map.get(p)
        if buf is not None:
            buffers.append(buf)
        elif p.dtype == "handle":
            raise CodegenError(
                f"kernel {kernel.global_symbol}: parameter '{p.name}' is a handle without a buffer; "
                f"{api} buffers must be declared with T.match_buffer"
            )
        else:
            scalars.append(p)
    return buffers, scalars


def force_fallback() -> bool:
    """True when ``TVM_COMPILE_FORCE_FALLBACK=1`` asks for fallback modules."""
    return env_flag("TVM_COMPILE_FORCE_FALLBACK")


def fallback_reason(kind: str) -> str:
    """Why a ``kind`` module is a fallback: the env override or the backend's state, plus a fix."""
    if force_fallback():
        return (
            f"TVM_COMPILE_FORCE_FALLBACK=1 is set, so the {kind} module was built without its "
            f"runtime. Fix: unset TVM_COMPILE_FORCE_FALLBACK and compile again on a machine with "
            f"the {kind} runtime."
        )
    from tvm.backend import _registry

    rec = _registry.record_for_kind(kind)
    if rec is None:
        return f"Reason: no installed backend provides module kind '{kind}'. Fix: {_registry.install_hint(kind)}."
    why = rec.reason or f"backend '{rec.name}' is {rec.status}"
    return f"Reason: backend '{rec.name}' ({rec.distribution} {rec.version}) is {rec.status}: {why}. Fix: {rec.fix()}."


def function_table(kernels: Sequence[Any], scalar_type: Callable[[str], str] = lambda dtype: dtype) -> list[list[Any]]:
    """The function map of a device module holding ``kernels``: ``[name, arg types, launch
    tags]`` per kernel, arg types from :func:`kernel_arg_types` (``scalar_type`` as there), tags
    from :func:`launch_tags`."""
    return [[k.global_symbol, kernel_arg_types(k, scalar_type), launch_tags(k)] for k in kernels]


def launch_tags(kernel: Any) -> list[str]:
    """``kernel``'s launch tags, each with ``:<bound>`` (an :func:`arg_expression`) where the
    lowering knows it: the most a grid or block extent may be, the fewest bytes of dynamic shared
    memory (``"threadIdx.x:256"``, ``"blockIdx.x:($2+255)/256"``, ``"dyn_shmem:$2*4"``)."""
    tags = [str(t) for t in kernel.attrs.get("launch_params", ())]
    bounds = list(kernel.attrs.get("launch_bounds", ())) or [-1] * len(tags)
    scalars = _scalar_params(kernel)
    out = []
    for tag, bound in zip(tags, bounds):
        if isinstance(bound, int):
            text = str(bound) if bound >= 0 else None
        else:
            text = arg_expression(bound, scalars)
        out.append(tag if text is None else f"{tag}:{text}")
    return out


def _normalize_functions(functions: Sequence[FunctionSpec]) -> list[list[Any]]:
    out = []
    for f in functions:
        if len(f) != 3:
            raise ValueError(f"function entry must be [name, [arg dtypes], [launch tags]], got {f!r}")
        name, args, tags = f
        out.append([str(name), [str(a) for a in args], [str(t) for t in tags]])
    return out


def create_device_module(
    kind: str, fmt: str, functions: Sequence[FunctionSpec], payload: bytes | str, sources: Sequence[Sequence[str]]
) -> tvm_ffi.Module:
    """A device module of ``kind`` (``"cuda"``, ``"opencl"`` ...).

    ``fmt`` is the payload format (``"ptx"``, ``"cl"``, ``"spirv"`` ...), ``functions`` lists
    ``[name, [arg dtypes], [launch tags]]`` per kernel, ``payload`` is what the runtime loads and
    ``sources`` are ``[fmt, text]`` pairs for ``inspect_source``. Uses the backend's factory
    ``ffi.Module.create.<kind>`` when registered (and ``TVM_COMPILE_FORCE_FALLBACK`` is unset),
    else ``runtime.FallbackModuleCreate`` whose functions raise an error naming the reason.
    """
    funcs = _normalize_functions(functions)
    srcs = [[str(a), str(b)] for a, b in sources]
    data = payload.encode() if isinstance(payload, str) else bytes(payload)
    if not force_fallback():
        factory = tvm_ffi.get_global_func(f"ffi.Module.create.{kind}", allow_missing=True)
        if factory is not None:
            return factory(fmt, funcs, data, srcs)
    create = tvm_ffi.get_global_func("runtime.FallbackModuleCreate")
    return create(kind, fallback_reason(kind), fmt, funcs, data, srcs)
