"""Apache TVM's ``tvm.ir`` names for what this project keeps in :mod:`tvm.tir`: the module of
functions (``IRModule``), structural comparison, the type objects of its newer API
(``PrimType``, ``PointerType``; ``expr.ty``) and operators by name (``Op.get``), so scripts
written for Apache TVM import them from either place."""

from ..tir.analysis import assert_structural_equal, structural_equal
from ..tir.function import IRModule
from . import module, type
from .op import Op
from .type import BufferType, PointerType, PrimType, Type, is_prim_expr

__all__ = [
    "BufferType",
    "IRModule",
    "Op",
    "PointerType",
    "PrimType",
    "Type",
    "assert_structural_equal",
    "is_prim_expr",
    "module",
    "structural_equal",
    "type",
]
