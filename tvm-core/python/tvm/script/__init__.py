"""TVMScript: ``from tvm.script import tir as T``.

``tvm.script.parse(text)`` parses printed TVMScript back into a PrimFunc; errors raise
:class:`TVMScriptError` with the file, line and a caret under the offending source.
"""

from .diagnostics import Span, TVMScriptError


def parse(source: str, extra_vars=None, filename: str = "<tvmscript>", check_well_formed: bool = True):
    """Parse TVMScript source text (one ``@T.prim_func``) into a :class:`tvm.tir.PrimFunc`."""
    from .parser import parse as _parse

    return _parse(source, extra_vars, filename, check_well_formed=check_well_formed)


from_source = parse

__all__ = ["Span", "TVMScriptError", "from_source", "parse"]
