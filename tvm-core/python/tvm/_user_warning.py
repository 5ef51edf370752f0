"""Warnings attributed to the user's line: the first caller outside the ``tvm`` package (a pass
deep in ``tvm.compile`` warns about the kernel, at the line that compiles it)."""

from __future__ import annotations

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """``warnings.warn(message, category)`` shown at the first frame outside this package."""
    frame = sys._getframe(1)
    level = 2  # warnings.warn's count: 2 is the frame that called this function
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
