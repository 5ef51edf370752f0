"""The source of a Python function the parser reads (a ``@T.prim_func``, a ``@T.macro``): its
definition's syntax tree and where its lines sit in the file, for error carets."""

from __future__ import annotations

import ast
import collections
import dataclasses
import inspect
import linecache
import textwrap
from typing import Any, Callable, Mapping

from ..diagnostics import Span, TVMScriptError


@dataclasses.dataclass(frozen=True)
class FunctionSource:
    """A function definition and its place: ``lines`` are the file's lines, ``line_offset`` /
    ``col_offset`` map the tree's positions (parsed from the dedented function) back to them."""

    tree: ast.FunctionDef
    filename: str
    lines: list[str]
    line_offset: int
    col_offset: int
    start: int  # the first line of the definition in the file (its decorators)


def closure_values(func: Callable) -> dict[str, Any]:
    """The current values of the variables ``func`` closes over (one not yet assigned is left out)."""
    values = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:
            pass
    return values


def function_names(func: Callable) -> dict[str, Any]:
    """The names ``func`` sees besides its own, as a new dict: its module's globals and, over
    them, :func:`closure_values`."""
    return {**func.__globals__, **closure_values(func)}


def live_names(func: Callable) -> Mapping[str, Any]:
    """:func:`function_names` as they are now, without copying the module's globals."""
    return collections.ChainMap(closure_values(func), func.__globals__)


def find_def(tree: ast.AST, what: str = "a prim_func") -> ast.FunctionDef:
    """The first function definition in ``tree`` (an ``async def`` is refused)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            return node
        if isinstance(node, ast.AsyncFunctionDef):
            raise TVMScriptError(f"'async def {node.name}' cannot be {what}: write 'def {node.name}'")
    raise TVMScriptError("no function definition found in TVMScript source")


def read_function_source(func: Callable, what: str = "a prim_func") -> FunctionSource:
    """The definition of ``func`` as its file holds it; TVMScriptError when Python cannot show the
    source (a function made by ``exec``) or it does not parse on its own."""
    try:
        lines, start = inspect.getsourcelines(func)
        filename = inspect.getsourcefile(func) or "<unknown>"
    except (OSError, TypeError) as e:
        raise TVMScriptError(f"cannot read the source of {getattr(func, '__name__', func)!r}: {e}") from None
    indent = len(lines[0]) - len(lines[0].lstrip())
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError as e:
        raise TVMScriptError(
            f"syntax error: {e.msg}",
            Span(
                filename,
                start + (e.lineno or 1) - 1,
                (e.offset or 1) - 1 + indent,
                lines[(e.lineno or 1) - 1].rstrip("\n"),
            ),
        ) from None
    file_lines = linecache.getlines(filename)
    if file_lines:
        return FunctionSource(find_def(tree, what), filename, file_lines, start - 1, indent, start)
    return FunctionSource(find_def(tree, what), filename, lines, 0, indent, start)
