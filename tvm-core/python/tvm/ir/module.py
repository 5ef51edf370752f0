"""``from tvm.ir.module import IRModule``: :class:`tvm.tir.IRModule`."""

from ..tir.function import IRModule

__all__ = ["IRModule"]
