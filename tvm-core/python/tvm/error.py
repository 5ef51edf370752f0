"""Apache TVM's error classes, for code that catches them: ``except tvm.error.InternalError``
catches this compiler's refusals of a program (``TIRVerifyError``, ``CodegenError``),
``tvm.error.DiagnosticError`` the parser's (``TVMScriptError``), and ``tvm.error.TVMError`` those
and every ``RuntimeError``. The classes are abstract bases: the errors keep their own classes and
bases (``ValueError`` for a refused program)."""

from __future__ import annotations

import abc


class TVMError(RuntimeError, metaclass=abc.ABCMeta):
    """Any error of tvm: a ``RuntimeError``, or a refusal registered under :class:`InternalError`."""

    @classmethod
    def __subclasshook__(cls, subclass: type) -> bool:
        if cls is TVMError and issubclass(subclass, RuntimeError):
            return True
        return NotImplemented


class InternalError(TVMError):
    """The compiler refused a program (what Apache TVM raises from its checks)."""


class DiagnosticError(TVMError):
    """The TVMScript parser refused a program."""


def _register_refusals() -> None:
    from .codegen.c_family import CodegenError
    from .script.diagnostics import TVMScriptError
    from .tir.transform.verify import TIRVerifyError

    InternalError.register(TIRVerifyError)
    InternalError.register(CodegenError)
    DiagnosticError.register(TVMScriptError)


_register_refusals()

__all__ = ["DiagnosticError", "InternalError", "TVMError"]
