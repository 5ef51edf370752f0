"""Small helpers that scripts written for Apache TVM import from ``tvm.support``:
:mod:`tvm.support.utils` (``tempdir``)."""

from . import utils

__all__ = ["utils"]
