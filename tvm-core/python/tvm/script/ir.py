"""``from tvm.script import ir as I``: modules of several functions.

.. code-block:: python

    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((8,), "float32")): ...

        @T.prim_func(private=True)
        def helper(A: T.Buffer((8,), "float32")): ...

    lib = tvm.compile(Module, target="c")   # one library with main and helper

The class becomes a :class:`tvm.tir.IRModule` of its ``@T.prim_func`` methods, each under its
method name (a private function gets that name as its symbol). A function may call another as
``Module.f(args)``: as a statement (``Module.fill(A.data)``), or as a value when ``f`` only
returns one (``-> T.float32`` and ``return a + b``); each call is replaced by ``f``'s body
(:func:`tvm.tir.transform.inline_calls`), on the host and in kernels alike.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from tvm.tir.function import IRModule, PrimFunc


def ir_module(cls: Optional[type] = None, *, check_well_formed: bool = True, s_tir: bool = False) -> Any:
    """Decorator: the class's ``@T.prim_func`` methods as an :class:`IRModule` by name, calls
    between them inlined (``s_tir`` is accepted for Apache TVM's spelling and changes nothing).
    With ``check_well_formed=False`` its functions are not checked either; a class without
    functions is an empty module."""
    from tvm.tir.transform.inline import inline_calls

    def wrap(c: type) -> IRModule:
        funcs = {name: value for name, value in vars(c).items() if isinstance(value, PrimFunc)}
        return IRModule(inline_calls(funcs) if funcs else {}, dict(vars(c).get(_ATTRS, {})))

    return wrap(cls) if cls is not None else wrap


def _not_supported(name: str) -> Callable[..., Any]:
    def f(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"I.{name} is not supported: only modules of T.prim_func functions are")

    f.__name__ = name
    return f


_ATTRS = "__tvm_module_attrs__"


def module_attrs(attrs: dict) -> None:
    """``I.module_attrs({...})`` in an ``@I.ir_module`` class body: the module's attributes
    (``IRModule.attrs``). They are kept, not interpreted: ``system_lib_prefix`` and the like
    change nothing in how the module compiles."""
    if not isinstance(attrs, dict) or not all(isinstance(k, str) for k in attrs):
        raise TypeError(f"I.module_attrs takes a dict with string keys, got {type(attrs).__name__}")
    namespace = sys._getframe(1).f_locals  # the class body being executed
    if "__qualname__" not in namespace:
        raise TypeError("I.module_attrs belongs in the body of an @I.ir_module class")
    namespace.setdefault(_ATTRS, {}).update(attrs)


GlobalVar = _not_supported("GlobalVar")
module_global_infos = _not_supported("module_global_infos")

__all__ = ["GlobalVar", "IRModule", "ir_module", "module_attrs", "module_global_infos"]
