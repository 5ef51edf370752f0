"""TVMScript: ``from tvm.script import tir as T``.

``tvm.script.parse(text)`` parses printed TVMScript back into a PrimFunc; errors raise
:class:`TVMScriptError` with the file, line and a caret under the offending source.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    # Imported lazily: backends register T.<namespace> at `import tvm`, which must stay cheap.
    if name in ("Span", "TVMScriptError", "TVMScriptWarning"):
        from . import diagnostics

        return getattr(diagnostics, name)
    if name == "ir_module":  # @tvm.script.ir_module, Apache TVM's older spelling of @I.ir_module
        from .ir import ir_module

        return ir_module
    raise AttributeError(f"module 'tvm.script' has no attribute '{name}'")


def parse(source: str, extra_vars=None, filename: str = "<tvmscript>", check_well_formed: bool = True):
    """Parse TVMScript source text: one ``@T.prim_func`` into a :class:`tvm.tir.PrimFunc`, an
    ``@I.ir_module`` class into a :class:`tvm.tir.IRModule` (all of its functions)."""
    from .parser import parse as _parse

    return _parse(source, extra_vars, filename, check_well_formed=check_well_formed)


from_source = parse

__all__ = ["Span", "TVMScriptError", "TVMScriptWarning", "from_source", "ir_module", "parse"]
