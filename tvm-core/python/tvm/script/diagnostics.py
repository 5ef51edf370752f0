"""Source locations, the TVMScript error type and its warning type."""

from __future__ import annotations

from dataclasses import dataclass

from tvm.error import DiagnosticError


@dataclass(frozen=True)
class Span:
    """A location in TVMScript source: file, 1-based line, 0-based column, the line's text, and
    for a line inside a macro the calls it was expanded at (``called_at``: notes such as
    ``(in T.macro 'f', called at file:line)``, innermost first)."""

    file: str
    line: int
    col: int = 0
    text: str = ""
    called_at: tuple = ()

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"

    def render(self) -> str:
        """``file:line:col`` followed by the source line and a caret under the column."""
        out = f'File "{self.file}", line {self.line}, column {self.col + 1}'
        if self.text:
            stripped = self.text.lstrip()
            col = max(self.col - (len(self.text) - len(stripped)), 0)
            out += f"\n    {stripped.rstrip()}\n    {' ' * col}^"
        return out

    def render_with_calls(self) -> str:
        """:meth:`render`, then the macro calls the line was expanded at (of a deep expansion the
        four innermost, "(...)" and the outermost)."""
        notes = list(self.called_at)
        if len(notes) > 5:
            notes = notes[:4] + ["(...)", notes[-1]]
        return "\n".join([self.render(), *notes])


class TVMScriptError(DiagnosticError):
    """A TVMScript parse or type error. The message names the file and line and shows the offending
    source line with a caret; ``span`` holds the location, ``reason`` the bare message, and
    ``filename`` / ``lineno`` / ``offset`` / ``text`` mirror :class:`SyntaxError`'s fields."""

    def __init__(self, reason: str, span: Span | None = None):
        self.reason = reason
        self.span = span
        self.filename = span.file if span else None
        self.lineno = span.line if span else None
        self.offset = span.col + 1 if span else None  # 1-based column, as in SyntaxError
        self.text = span.text if span else None
        msg = f"{reason}\n{span.render()}" if span else reason
        super().__init__(msg)


class TVMScriptWarning(UserWarning):
    """Something TVMScript accepts, as Apache TVM does, that may not be what was meant (a float
    value stored into an integer buffer loses its fraction); the message shows the source line."""
