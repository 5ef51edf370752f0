"""Helpers for testing TVM and its backends: standard kernels (:mod:`tvm.testing.kernels`),
NumPy references, fresh interpreters (:func:`run_python`), and :data:`GPU_ON_CPU_HEADER`, the
C++ header that runs CUDA-dialect kernels on the CPU for the tests of GPU backends.

Apache TVM's test files run here as they are: :mod:`tvm.testing.env` and the helpers of
:mod:`tvm.testing.apache_api` (``assert_allclose``, ``device_enabled``, ``parameter``, ...)."""

import os as _os

from . import env, kernels
from .apache_api import (
    assert_allclose,
    device_enabled,
    enabled_targets,
    fixture,
    main,
    parameter,
    run_with_gpu_lock,
)
from .process import run_python

#: Path of ``gpu_on_cpu.h``: compile generated CUDA C (or HIP, through a backend's shim) after it
#: to run the kernels on the CPU under a mock driver (see the header's comment).
GPU_ON_CPU_HEADER = _os.path.join(_os.path.dirname(__file__), "gpu_on_cpu.h")


def on_cpu_dynamic_shared(source: str) -> str:
    """Generated CUDA or HIP ``source`` whose ``extern __shared__ ... tvm_dyn_shmem[]`` (the
    module's dynamic shared memory) names the global buffer of :data:`GPU_ON_CPU_HEADER`."""
    import re

    return re.sub(r"extern __shared__ [^;]*\btvm_dyn_shmem\[\];", "using ::tvm_dyn_shmem;", source)


__all__ = [
    "GPU_ON_CPU_HEADER",
    "assert_allclose",
    "device_enabled",
    "enabled_targets",
    "env",
    "fixture",
    "kernels",
    "main",
    "on_cpu_dynamic_shared",
    "parameter",
    "run_with_gpu_lock",
    "run_python",
]
