"""``T.macro`` and ``T.inline``: functions whose statements are placed, as TVMScript, where a
prim_func calls them (Apache TVM's macros).

Python never runs a macro's body: each call inside a ``@T.prim_func`` parses the body at the
call, its parameters bound to the call's arguments (buffers, expressions, Python values). The
other names the body uses resolve

- for ``@T.macro`` (hygienic, the default) to the names of the macro's definition, as they were
  when it was defined (a name defined after it, such as the macro itself, as it is at the
  call): a variable of the calling kernel never leaks in;
- for ``@T.macro(hygienic=False)`` to the caller's names at the call, then the definition's;
- for ``@T.inline`` to the names of the definition as they are at the call (Python's late
  binding); defined inside a prim_func, a macro sees the kernel's names around its definition.

What the body binds stays inside it (an assignment there shadows a name of the caller; ``+=``
updates a mutable scalar the body sees). A macro may call macros, itself too (the recursion ends
by a condition known while parsing). A call gives statements, not a value: it stands on its own
line, or runs in a Python helper the kernel calls, and its statements come before the statement
being parsed. Where they would then run at the wrong time, the call is refused: in a while loop's
condition (tested at each iteration, not once before the loop), in an arm of ``x if c else y`` or
of ``T.if_then_else`` and in an operand of ``and`` / ``or`` after the first (evaluated only on a
condition).
"""

from __future__ import annotations

import ast
import collections
import contextvars
import inspect
import types
from typing import Any, Callable, Mapping, Optional

from .source import FunctionSource, function_names, live_names, read_function_source

#: How deep macros may expand inside one another (a recursion without an end stops here)
MAX_DEPTH = 64

#: The parser now parsing a prim_func (a macro call is expanded by it)
active_parser: contextvars.ContextVar[Any] = contextvars.ContextVar("tvmscript_active_parser", default=None)


class Macro:
    """A ``@T.macro`` / ``@T.inline`` function. Called while a prim_func is parsed, it gives the
    statements of its body for the call's arguments; called anywhere else, TypeError."""

    def __init__(
        self,
        kind: str,
        source: FunctionSource,
        signature: inspect.Signature,
        definition_names: Callable[[], Mapping[str, Any]],
        hygienic: bool = True,
        enclosing: Optional[list[dict]] = None,
    ):
        self.kind = kind
        self.name = source.tree.name
        self.source = source
        self.signature = signature
        self.hygienic = hygienic
        self._definition_names = definition_names
        self._enclosing = enclosing or []  # the kernel's scopes around a definition inside it

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)  # a macro as a method

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        """Places the body's statements for these arguments before the statement being parsed
        (written in the kernel, or run by a Python helper it calls)."""
        parser = active_parser.get()
        if parser is None:
            raise TypeError(
                f"{self.kind} '{self.name}' places its statements where a prim_func calls it: "
                "call it inside a @T.prim_func, not from Python"
            )
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.kind} '{self.name}': {e}") from None
        bound.apply_defaults()
        parser.emit(parser.expand_macro(self, dict(bound.arguments)), self)

    def scopes_at_call(self, caller_scopes: list[dict], arguments: dict) -> list[dict]:
        """The parser scopes the body is parsed in: the arguments over the enclosing scopes of
        its definition (over the caller's, when not hygienic)."""
        outer = caller_scopes if not self.hygienic else self._enclosing
        return [*outer, arguments]

    def names_at_call(self, caller_names: Mapping[str, Any]) -> Mapping[str, Any]:
        """The names the body sees beyond the scopes (the caller's first, when not hygienic)."""
        names = self._definition_names()
        return names if self.hygienic else collections.ChainMap(caller_names, names)


class MacroDecorator:
    """``T.macro(hygienic=False)``, ``T.inline()``: the decorator with its options."""

    def __init__(self, kind: str, hygienic: bool, late_binding: bool):
        self.kind, self.hygienic, self.late_binding = kind, hygienic, late_binding

    def __call__(self, func: Callable) -> Macro:
        if not inspect.isfunction(func) or func.__name__ == "<lambda>":
            raise TypeError(f"@{self.kind} decorates a function written with def, got {func!r}")
        source = read_function_source(func, f"a {self.kind}")
        owner = class_body(func)  # (name, namespace) of the class being defined around it
        in_class = {owner[0]: ClassMacros(*owner)} if owner else {}
        if self.late_binding:
            names: Callable[[], Mapping[str, Any]] = lambda: collections.ChainMap(live_names(func), in_class)  # noqa: E731
        else:  # the values at definition; a name defined later (itself, a macro below) as it is now
            snapshot = function_names(func)
            names = lambda: collections.ChainMap(snapshot, live_names(func), in_class)  # noqa: E731
        return Macro(self.kind, source, inspect.signature(func), names, self.hygienic)


def class_body(func: Callable) -> Optional[tuple[str, dict]]:
    """The name and live namespace of the class whose body is running and defines ``func`` (an
    ``@I.ir_module`` class being defined), or None for a function outside a class."""
    parts = func.__qualname__.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return None
    qualname = func.__qualname__.rsplit(".", 1)[0]
    frame = inspect.currentframe()
    try:
        while frame is not None:
            if frame.f_code.co_name == parts[-2] and frame.f_locals.get("__qualname__") == qualname:
                return parts[-2], frame.f_locals  # a class body's locals are its namespace itself
            frame = frame.f_back
        return None
    finally:
        del frame


class ClassMacros:
    """``Module.m(...)`` in a macro defined in the body of class ``Module`` while the class does
    not exist yet: the class's macro ``m`` (its other names are not macros' to use)."""

    def __init__(self, owner: str, namespace: Mapping[str, Any]):
        self._owner, self._namespace = owner, namespace

    def __getattr__(self, name: str) -> "Macro":
        value = self._namespace.get(name) if not name.startswith("__") else None
        if isinstance(value, Macro):
            return value
        macros = ", ".join(sorted(k for k, v in self._namespace.items() if isinstance(v, Macro))) or "none"
        raise AttributeError(
            f"{self._owner}.{name}: a macro of class {self._owner} may call the class's macros defined "
            f"so far ({macros}), not its functions"
        )


def decorator(kind: str, args: tuple, hygienic: bool = True, late_binding: bool = False) -> Any:
    """``@kind`` (``args`` holds the function) or ``@kind(...)`` (``args`` empty)."""
    make = MacroDecorator(kind, hygienic, late_binding)
    if not args:
        return make
    if len(args) == 1 and inspect.isfunction(args[0]):
        return make(args[0])
    options = "hygienic=..." if kind == "T.macro" else ""
    raise ValueError(f"@{kind} takes no positional arguments: write @{kind} or @{kind}({options})")


def signature_of(arguments: ast.arguments, evaluate: Callable[[ast.expr], Any]) -> inspect.Signature:
    """The signature a ``def``'s parameters declare, defaults evaluated with ``evaluate``."""
    P = inspect.Parameter
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    params = []
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        kind = P.POSITIONAL_ONLY if i < len(arguments.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        params.append(P(arg.arg, kind, default=P.empty if default is None else evaluate(default)))
    if arguments.vararg is not None:
        params.append(P(arguments.vararg.arg, P.VAR_POSITIONAL))
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        params.append(P(arg.arg, P.KEYWORD_ONLY, default=P.empty if default is None else evaluate(default)))
    if arguments.kwarg is not None:
        params.append(P(arguments.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


def macro_of(fn: Any) -> Optional[Macro]:
    """The macro ``fn`` calls (itself, or the macro of a bound method), else None."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    return fn if isinstance(fn, Macro) else None


def options_of(decorator_value: Any, macro_decorators: tuple) -> Optional[MacroDecorator]:
    """The options a nested ``def``'s decorator gives (``T.macro``, ``T.inline`` or either called
    with options), or None when it is no macro decorator."""
    if isinstance(decorator_value, MacroDecorator):
        return decorator_value
    for fn in macro_decorators:
        if decorator_value is fn:
            return fn()
    return None
