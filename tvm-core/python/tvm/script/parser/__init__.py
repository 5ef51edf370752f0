"""TVMScript parser: Python AST of a ``@T.prim_func`` -> :class:`tvm.tir.PrimFunc`."""

from .core import Parser, parse, parse_function

__all__ = ["Parser", "parse", "parse_function"]
