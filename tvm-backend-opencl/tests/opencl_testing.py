"""Helpers shared by the OpenCL test suites (a uniquely named module, so that it cannot clash
with other packages' test helpers when every suite runs in one pytest session)."""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm.testing import run_python  # noqa: F401  (tests import it from here)


def opencl_unavailable_reason() -> str:
    """ "" when kernels can run on opencl(0), else why not (backend state and reason)."""
    try:
        rec = tvm.backend.load("opencl")
    except Exception as err:  # noqa: BLE001 - any failure is a reason to skip
        return f"the opencl backend does not load: {err}"
    if rec.status != tvm.backend.ACTIVE:
        return f"OpenCL runtime unavailable: {rec.reason} (apt-get install pocl-opencl-icd ocl-icd-libopencl1)"
    if not tvm.opencl(0).exist:
        import tvm_backend_opencl

        why = tvm_backend_opencl.unavailable_reason() or "opencl(0) does not exist"
        return f"no OpenCL device: {why} (apt-get install pocl-opencl-icd ocl-icd-libopencl1)"
    return ""


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
