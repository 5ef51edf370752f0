"""The ROCm backend passes the conformance suite: all of it on an AMD GPU; without one, the
hardware-free part (code generation, fallback, export, bad input, no driver)."""

from tvm.testing.backend import BackendConformance


class TestROCmConformance(BackendConformance):
    backend = "rocm"
    dtypes = ("float32", "float16", "bfloat16", "int32", "int8", "uint8", "int64", "float64")
    warp_shuffles = True
    no_driver_env = {"TVM_ROCM_LIBRARY": "/nonexistent/libamdhip64.so"}
    # the math the backend lowers inline (the rest needs ROCm's device library, ocml)
    math_functions = ("exp", "exp2", "exp10", "log", "log2", "log10", "sqrt", "rsqrt", "sigmoid")
