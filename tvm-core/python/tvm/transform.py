"""``tvm.transform.PassContext``, as scripts written for Apache TVM use it around a build.

This compiler's pipeline has no optional passes or switches: a context is accepted, and nests,
but its ``opt_level`` changes nothing, and each ``config`` key and ``disabled_pass`` is reported
once, with a ``UserWarning``, as having no effect (the compiled code is what it would be without
the context).
"""

from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence

from ._scoped import ThreadScoped

_reported: set = set()


def _warn_unused(what: str) -> None:
    if what not in _reported:
        _reported.add(what)
        warnings.warn(
            f"PassContext {what} has no effect in this compiler; the compiled code is unchanged", stacklevel=3
        )


class PassContext(ThreadScoped):
    """Options of a build: ``with PassContext(opt_level=3, config={...}): tvm.compile(...)``."""

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Optional[Sequence[str]] = None,
        disabled_pass: Optional[Sequence[str]] = None,
        instruments: Optional[Sequence[Any]] = None,
        config: Optional[dict] = None,
        trace: Any = None,
    ):
        if not isinstance(opt_level, int) or not 0 <= opt_level <= 4:
            raise ValueError(f"PassContext: opt_level must be an integer from 0 to 4, got {opt_level!r}")
        if config is not None and not isinstance(config, dict):
            raise TypeError(f"PassContext: config must be a dict of option -> value, got {type(config).__name__}")
        for what, names in (("required_pass", required_pass), ("disabled_pass", disabled_pass)):
            if names is not None and (
                not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names)
            ):
                raise TypeError(f"PassContext: {what} must be a list of pass names, got {names!r}")
        self.opt_level = opt_level
        self.required_pass = list(required_pass or ())
        self.disabled_pass = list(disabled_pass or ())
        self.instruments = list(instruments or ())
        self.config = dict(config or {})
        for key in self.config:
            _warn_unused(f"config '{key}'")
        for name in self.disabled_pass:
            _warn_unused(f"disabled_pass '{name}'")

    @staticmethod
    def current() -> "PassContext":
        """The innermost context entered in this thread (a default one when none is)."""
        return PassContext.innermost() or PassContext()

    def __repr__(self) -> str:
        return f"PassContext(opt_level={self.opt_level}, config={self.config})"


__all__ = ["PassContext"]
