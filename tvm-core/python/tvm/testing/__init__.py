"""Helpers for testing TVM and its backends: standard kernels (:mod:`tvm.testing.kernels`),
NumPy references and fresh interpreters (:func:`run_python`)."""

from . import kernels
from .process import run_python

__all__ = ["kernels", "run_python"]
