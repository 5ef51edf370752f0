"""Room for the compiler's recursive passes over deeply nested expressions.

The visitors of the parser, the passes, the printers and the code generators recurse into an
expression's operands, several Python frames per level: an unrolled expression of a few hundred
chained operations passes Python's default limit of 1,000 frames. While a compile, a parse or a
print runs, the limit is raised (Python 3.11 and newer keep Python-to-Python calls off the C
stack), and what still overflows says what happened instead of a bare RecursionError.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from typing import Any, Callable, Iterator, TypeVar

from tvm._fork_safe import renewed_in_child

#: Python frames the compiler may use (about four per level of an expression)
FRAMES = 20_000

_lock = threading.Lock()
renewed_in_child(sys.modules[__name__], "_lock")
_active = 0  # calls inside room() now, all threads together
_saved: int | None = None  # the limit before the first of them raised it

F = TypeVar("F", bound=Callable[..., Any])


@contextlib.contextmanager
def room(what: str) -> Iterator[None]:
    """Raise the recursion limit to :data:`FRAMES` while the block runs (restored after the last
    such block ends); a RecursionError inside says that ``what`` met too deep an expression."""
    global _active, _saved
    with _lock:
        if _active == 0 and sys.getrecursionlimit() < FRAMES:
            _saved = sys.getrecursionlimit()
            sys.setrecursionlimit(FRAMES)
        _active += 1
    try:
        yield
    except RecursionError as err:
        raise RecursionError(
            f"{what}: an expression or statement is nested too deeply for the compiler's recursive passes "
            f"(about {FRAMES // 4} levels at most); split it into statements with intermediate variables"
        ) from err
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                if sys.getrecursionlimit() == FRAMES:  # unless someone set another meanwhile
                    sys.setrecursionlimit(_saved)
                _saved = None


_inside = threading.local()  # whether this thread runs inside a room() now


def with_room(what: str) -> Callable[[F], F]:
    """Decorator: the function runs inside :func:`room` (``what`` names it in the error). Each
    thread enters it once: one whose limit another thread raised still counts itself in, or
    that thread's end would lower the limit under it."""

    def wrap(func: F) -> F:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            if getattr(_inside, "yes", False):  # inside another such call (which reports overflows)
                return func(*args, **kwargs)
            _inside.yes = True
            try:
                with room(what):
                    return func(*args, **kwargs)
            finally:
                _inside.yes = False

        return call  # type: ignore[return-value]

    return wrap
