"""The WebGPU backend passes the conformance suite (on wgpu-native over lavapipe here)."""

import pytest
from tvm.testing.backend import BackendConformance


class TestWebGPUConformance(BackendConformance):
    backend = "webgpu"
    buffers_are_handles = True
    # WGSL has no 64-bit types (see test_webgpu_codegen.py); 8/16-bit integers and bfloat16 are
    # computed in 32 bits, their buffers packed four (two) elements to a u32 word; float16 needs
    # the adapter's shader-f16, so its check is the one below
    dtypes = ("float32", "int32", "uint32", "int8", "uint8", "int16", "uint16", "bfloat16")
    dynamic_shared_memory = True
    typed_views = False
    float_to_int_keeps_low_bits = False  # SPIR-V's and WGSL's conversions saturate
    no_driver_env = {"TVM_WEBGPU_LIBRARY": "/nonexistent/libwgpu_native.so"}

    def test_elementwise_in_float16(self):
        """float16 runs where the adapter offers shader-f16 (lavapipe does)."""
        dev = self.dev()
        if not dev.attr("supports_float16"):
            pytest.skip(f"adapter '{dev.name}' lacks the WebGPU feature shader-f16")
        from tvm.testing import kernels
        from tvm.testing.backend import random_array

        a, b = random_array((1000,), "float16", 1), random_array((1000,), "float16", 2)
        self.run_checked(kernels.vector_add("float16"), "vector_add", [a, b], [((1000,), "float16")], a + b, "float16")
