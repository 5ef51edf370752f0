"""``from tvm.script import tirx as T``: Apache TVM's newer name for the TIR namespace.

The same module as :mod:`tvm.script.tir` (this module replaces itself with it on import), so
kernels written with either spelling parse alike."""

import sys

from . import tir

sys.modules[__name__] = tir
