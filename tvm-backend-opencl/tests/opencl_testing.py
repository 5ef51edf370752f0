"""Helpers shared by the OpenCL test suites (a uniquely named module, so that it cannot clash
with other packages' test helpers when every suite runs in one pytest session)."""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm_ffi
from tvm.testing import run_python  # noqa: F401  (tests import it from here)
from tvm.testing.backend import unavailable_reason


def opencl_unavailable_reason() -> str:
    """ "" when kernels can run on opencl(0), else why not (backend state and reason)."""
    return unavailable_reason("opencl", fix="apt-get install pocl-opencl-icd ocl-icd-libopencl1")


def make_module(source: str, functions: list, fmt: str = "cl", payload: Any = None) -> Any:
    """An opencl module through the runtime's factory ``ffi.Module.create.opencl``."""
    create = tvm_ffi.get_global_func("ffi.Module.create.opencl")
    data = source.encode() if payload is None else payload
    return create(fmt, functions, data, [["opencl", source]])


def rand(shape: Any, dtype: str, seed: int = 0) -> np.ndarray:
    """Random test data of ``dtype`` (small integers for integer dtypes)."""
    rng = np.random.default_rng(seed)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 50, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype == "bfloat16":
        return rng.standard_normal(shape).astype("float32")
    return rng.standard_normal(shape).astype(dtype)
