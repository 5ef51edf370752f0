"""The ROCm backend passes the conformance suite: all of it on an AMD GPU; without one, the
hardware-free part (code generation, fallback, export, bad input, no driver)."""

from tvm.testing.backend import BackendConformance


class TestROCmConformance(BackendConformance):
    backend = "rocm"
    dtypes = ("float32", "float16", "bfloat16", "int32", "int8", "uint8", "int64", "float64")
    no_driver_env = {"TVM_ROCM_LIBRARY": "/nonexistent/libamdhip64.so"}
