"""Helpers for testing TVM and its backends: standard kernels (:mod:`tvm.testing.kernels`),
NumPy references, fresh interpreters (:func:`run_python`), and :data:`GPU_ON_CPU_HEADER`, the
C++ header that runs CUDA-dialect kernels on the CPU for the tests of GPU backends."""

import os as _os

from . import kernels
from .process import run_python

#: Path of ``gpu_on_cpu.h``: compile generated CUDA C (or HIP, through a backend's shim) after it
#: to run the kernels on the CPU under a mock driver (see the header's comment).
GPU_ON_CPU_HEADER = _os.path.join(_os.path.dirname(__file__), "gpu_on_cpu.h")

__all__ = ["GPU_ON_CPU_HEADER", "kernels", "run_python"]
