"""The Metal backend passes the conformance suite: all of it on a Mac; elsewhere the
hardware-free part (code generation, fallback, export, bad input, no runtime)."""

from tvm.testing.backend import BackendConformance


class TestMetalConformance(BackendConformance):
    backend = "metal"
    dtypes = ("float32", "float16", "bfloat16", "int32", "int8", "uint8", "int64")
    dynamic_shared_memory = False
    warp_shuffles = True
