"""Device modules from code generators: the real runtime module when its backend can run it,
the generic fallback module otherwise (same kind, same bytes, functions that explain)."""

from __future__ import annotations

import os
from typing import Any, Sequence

import tvm_ffi

FunctionSpec = Sequence[Any]  # [name, [arg dtypes], [launch tags]]


def force_fallback() -> bool:
    """True when ``TVM_COMPILE_FORCE_FALLBACK=1`` asks for fallback modules."""
    return os.environ.get("TVM_COMPILE_FORCE_FALLBACK", "").strip().lower() in ("1", "true", "yes", "on")


def fallback_reason(kind: str) -> str:
    """Why a ``kind`` module is a fallback: the env override or the backend's state, plus a fix."""
    if force_fallback():
        return (f"TVM_COMPILE_FORCE_FALLBACK=1 is set, so the {kind} module was built without its "
                f"runtime. Fix: unset TVM_COMPILE_FORCE_FALLBACK and compile again on a machine with "
                f"the {kind} runtime.")
    from tvm.backend import _registry

    rec = _registry.record_for_kind(kind)
    if rec is None:
        return (f"Reason: no installed backend provides module kind '{kind}'. "
                f"Fix: pip install 'tvm[{kind}]' (or the vendor's backend wheel).")
    why = rec.reason or f"backend '{rec.name}' is {rec.status}"
    return (f"Reason: backend '{rec.name}' ({rec.distribution} {rec.version}) is {rec.status}: {why}. "
            f"Fix: {rec.fix()}.")


def _normalize_functions(functions: Sequence[FunctionSpec]) -> list[list[Any]]:
    out = []
    for f in functions:
        if len(f) != 3:
            raise ValueError(f"function entry must be [name, [arg dtypes], [launch tags]], got {f!r}")
        name, args, tags = f
        out.append([str(name), [str(a) for a in args], [str(t) for t in tags]])
    return out


def create_device_module(kind: str, fmt: str, functions: Sequence[FunctionSpec],
                         payload: bytes | str, sources: Sequence[Sequence[str]]) -> tvm_ffi.Module:
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
