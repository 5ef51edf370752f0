"""``tvm.contrib.utils``: the older place of :mod:`tvm.support.utils` (``tempdir``)."""

from ..support.utils import TempDirectory, tempdir

__all__ = ["TempDirectory", "tempdir"]
