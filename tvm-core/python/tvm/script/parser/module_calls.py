"""``Module.f(...)`` inside a function of an ``@I.ir_module class Module``: a call of another
function of the same module.

The class does not exist yet while its methods are parsed, so a method's parser binds the class
name to :class:`ModuleFunctions`, whose attributes build placeholder calls
(``Call(<f's return dtype>, "call_function", (StringImm("f"), *args))``); ``@I.ir_module`` then
replaces each placeholder by the callee's body (:func:`tvm.tir.transform.inline_calls`). The return
dtype comes from the callee's return annotation in the class's source (``-> T.float32``; none:
a statement, ``void``).
"""

from __future__ import annotations

import ast
import functools
from typing import Any, Callable, Optional

from tvm.tir import op as _op
from tvm.tir.expr import Buffer, Call, PrimExpr, StringImm
from tvm.tir.transform.inline import CALL_FUNCTION


@functools.lru_cache(maxsize=32)
def _file_classes(source: str) -> dict[str, list[ast.ClassDef]]:
    """Every class of a source file by name (one parse and walk per file, whatever the number of
    its methods)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[str, list[ast.ClassDef]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out.setdefault(node.name, []).append(node)
    return out


def enclosing_class(lines: list[str], def_line: int, class_name: str) -> Optional[ast.ClassDef]:
    """The class ``class_name`` of the file ``lines`` whose body holds the function defined at line
    ``def_line`` (1-based, decorators included), or None."""
    for node in _file_classes("".join(lines)).get(class_name, ()):
        for item in node.body:
            first = min([item.lineno, *(d.lineno for d in getattr(item, "decorator_list", ()))])
            if isinstance(item, ast.FunctionDef) and first <= def_line <= item.lineno:
                return node
    return None


def _names_macro(decorator: ast.expr) -> bool:
    """Whether a decorator reads as ``@T.macro`` / ``@T.inline`` (with or without options)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("macro", "inline")


class ModuleFunctions:
    """What ``Module`` means while one of its methods is parsed: ``Module.f(*args)`` is a
    placeholder call of the module's function ``f``; ``Module.m(...)`` of a ``@T.macro`` / ``@T.inline``
    defined in the class body before the method expands that macro."""

    def __init__(self, class_def: ast.ClassDef, evaluate: Callable[[ast.expr], Any], namespace: Optional[dict] = None):
        self._name = class_def.name
        self._defs = {f.name: f for f in class_def.body if isinstance(f, ast.FunctionDef)}
        self._evaluate = evaluate
        self._namespace = namespace or {}  # the class body's names so far

    def __getattr__(self, name: str) -> Callable[..., PrimExpr]:
        if name.startswith("__"):
            raise AttributeError(name)
        from .macros import Macro

        if isinstance(self._namespace.get(name), Macro):
            return self._namespace[name]
        fdef = self._defs.get(name)
        if fdef is None:
            known = ", ".join(sorted(self._defs)) or "none"
            raise AttributeError(f"module {self._name} has no function '{name}' (it has: {known})")
        if any(_names_macro(d) for d in fdef.decorator_list):
            raise AttributeError(
                f"{self._name}.{name} is a macro defined below this function: define it above the "
                "functions that call it"
            )
        dtype = self._return_dtype(fdef)

        def call(*args: Any, **kwargs: Any) -> PrimExpr:
            if kwargs:
                raise TypeError(
                    f"{self._name}.{name} takes its arguments by position, got keyword(s) {', '.join(kwargs)}"
                )
            for k, a in enumerate(args):
                if isinstance(a, Buffer):
                    raise TypeError(
                        f"argument {k} of {self._name}.{name} is the buffer {a.name}: pass its memory, "
                        f"{a.name}.data (the callee's buffer parameter views it)"
                    )
            return Call(dtype, CALL_FUNCTION, (StringImm(name), *(_op.convert(a) for a in args)))

        return call

    def _return_dtype(self, fdef: ast.FunctionDef) -> str:
        from .. import tir as T

        if fdef.returns is None or (isinstance(fdef.returns, ast.Constant) and fdef.returns.value is None):
            return "void"
        dtype = T.dtype_of_annotation(self._evaluate(fdef.returns))
        if dtype is None:
            raise TypeError(f"{self._name}.{fdef.name}: its return annotation is not a dtype (e.g. -> T.float32)")
        return dtype


__all__ = ["ModuleFunctions", "enclosing_class"]
