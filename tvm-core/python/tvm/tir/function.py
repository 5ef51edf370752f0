"""PrimFunc: a function over typed buffers and scalars."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Tuple

from .expr import Buffer, Var, value_text
from .stmt import Stmt, stmt_field


@dataclass(eq=False)
class PrimFunc:
    """A TIR function.

    ``params`` are Vars: ``dtype == "handle"`` for buffer parameters (then ``buffer_map[param]``
    is the Buffer, whose shape may contain symbolic Vars bound from the argument at call time),
    otherwise a scalar parameter. ``attrs`` holds ``T.func_attr`` values, e.g. ``"global_symbol"``
    (the exported name) and ``"target"``.
    """

    params: List[Var]
    body: Stmt
    buffer_map: Dict[Var, Buffer] = field(default_factory=dict)
    attrs: Dict[str, Any] = field(default_factory=dict)
    name: str = "main"
    span: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.params, (list, tuple)) or not all(isinstance(p, Var) for p in self.params):
            raise TypeError(
                f"tir.PrimFunc: params must be a list of tir.Vars (handles for buffers, scalars of their "
                f"dtype), got {value_text(self.params)}"
            )
        self.params = list(self.params)
        self.body = stmt_field("PrimFunc", "body", self.body)

    @property
    def global_symbol(self) -> str:
        """The name the function is exported under."""
        return self.attrs.get("global_symbol", self.name)

    def with_body(self, body: Stmt) -> "PrimFunc":
        """A copy with another body."""
        return PrimFunc(self.params, body, dict(self.buffer_map), dict(self.attrs), self.name, self.span)

    def with_attr(self, key: "str | Dict[str, Any]", value: Any = None) -> "PrimFunc":
        """A copy with attribute ``key`` set to ``value`` (or with every pair of a dict set)."""
        attrs = dict(self.attrs)
        attrs.update(key if isinstance(key, dict) else {key: value})
        return PrimFunc(self.params, self.body, dict(self.buffer_map), attrs, self.name, self.span)

    def script(self) -> str:
        """The function printed as TVMScript."""
        from .printer import script

        return script(self)

    def show(self) -> None:
        """Print :meth:`script`."""
        print(self.script())

    def __repr__(self) -> str:
        return f"PrimFunc({self.global_symbol})"


@dataclass(eq=False)
class IRModule:
    """A set of PrimFuncs by name (``tvm.IRModule``-like)."""

    functions: Dict[str, PrimFunc] = field(default_factory=dict)
    #: Module attributes (``I.module_attrs``), kept for the user; compilation reads none of them.
    attrs: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.functions, dict) or not all(
            isinstance(k, str) and isinstance(f, PrimFunc) for k, f in self.functions.items()
        ):
            raise TypeError(f"IRModule takes a dict of name -> PrimFunc, got {self.functions!r:.200}")

    @classmethod
    def from_expr(cls, func: PrimFunc) -> "IRModule":
        """A module of one function, under its exported name."""
        if not isinstance(func, PrimFunc):
            raise TypeError(f"IRModule.from_expr takes a PrimFunc, got {type(func).__name__}")
        return cls({func.global_symbol: func})

    def __getitem__(self, name: str) -> PrimFunc:
        """The function named ``name`` (a ``KeyError`` naming the functions there are)."""
        try:
            return self.functions[name]
        except (KeyError, TypeError):
            there = ", ".join(repr(k) for k in self.functions) or "none"
            raise KeyError(f"IRModule has no function {name!r} (its functions: {there})") from None

    def __setitem__(self, name: str, func: PrimFunc) -> None:
        """Add or replace the function ``name``."""
        if not isinstance(name, str) or not isinstance(func, PrimFunc):
            raise TypeError(
                f"IRModule maps names (str) to PrimFuncs, got {type(name).__name__} -> {type(func).__name__}"
            )
        self.functions[name] = func

    def __iter__(self) -> Iterator[str]:
        """The names of the functions, as a dict's keys."""
        return iter(self.functions)

    def __contains__(self, name: object) -> bool:
        return name in self.functions

    def __len__(self) -> int:
        return len(self.functions)

    def show(self) -> None:
        """Print :meth:`script`."""
        print(self.script())

    def script(self) -> str:
        """The module printed as TVMScript: an ``@I.ir_module`` class holding its attributes
        (``I.module_attrs``, when they are plain Python values) and its functions, which
        ``tvm.script.parse`` reads back."""
        from .printer import module_script

        return module_script(self)

    def items(self) -> List[Tuple[str, PrimFunc]]:
        """(name, function) pairs."""
        return list(self.functions.items())
