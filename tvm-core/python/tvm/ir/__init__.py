"""Apache TVM's ``tvm.ir`` names for what this project keeps in :mod:`tvm.tir`: the module of
functions (``IRModule``) and structural comparison, so scripts written for Apache TVM import
them from either place."""

from ..tir.analysis import assert_structural_equal, structural_equal
from ..tir.function import IRModule
from . import module

__all__ = ["IRModule", "assert_structural_equal", "module", "structural_equal"]
