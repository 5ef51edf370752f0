"""Apache TVM's error classes, for code that catches them: ``except tvm.error.InternalError``
catches this compiler's refusals of a program (``TIRVerifyError``, ``CodegenError``),
``except tvm.error.DiagnosticError`` the parser's (``TVMScriptError``), and
``except tvm.error.TVMError`` both. They are bases of those errors, which stay ``ValueError``s."""

from __future__ import annotations


class TVMError(Exception):
    """A program this compiler refuses (the parser's or the compiler's error)."""


class InternalError(TVMError, ValueError):
    """The compiler refused a program (what Apache TVM raises from its checks)."""


class DiagnosticError(TVMError, ValueError):
    """The TVMScript parser refused a program."""


__all__ = ["DiagnosticError", "InternalError", "TVMError"]
