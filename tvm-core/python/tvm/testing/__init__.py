"""Helpers for testing TVM and its backends: standard kernels (:mod:`tvm.testing.kernels`) and
NumPy references."""

from . import kernels

__all__ = ["kernels"]
