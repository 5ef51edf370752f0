"""``with obj:`` blocks that make an object the current one of its class in this thread (a
``Target``, a ``PassContext``)."""

from __future__ import annotations

import threading
from typing import Any, Optional


class ThreadScoped:
    """A base: ``with obj:`` makes ``obj`` the innermost of its class in this thread, which
    :meth:`innermost` gives (None outside every block); blocks nest."""

    _scopes: threading.local

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if ThreadScoped in cls.__bases__:  # a subclass of Target shares Target's blocks
            cls._scopes = threading.local()

    @classmethod
    def innermost(cls) -> Optional[Any]:
        """The object of the innermost ``with`` block of this class in this thread, or None."""
        stack = getattr(cls._scopes, "stack", None)
        return stack[-1] if stack else None

    def __enter__(self) -> Any:
        if not hasattr(self._scopes, "stack"):
            self._scopes.stack = []
        self._scopes.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._scopes.stack.pop()
