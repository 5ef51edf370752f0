"""The Vulkan backend passes the conformance suite (on lavapipe where it is installed)."""

from tvm.testing.backend import ALL_DTYPES, BackendConformance


class TestVulkanConformance(BackendConformance):
    backend = "vulkan"
    buffers_are_handles = True
    dtypes = ALL_DTYPES
    dynamic_shared_memory = True
    typed_views = False
    float_to_int_keeps_low_bits = False  # SPIR-V's and WGSL's conversions saturate
    no_driver_env = {"TVM_VULKAN_LIBRARY": "/nonexistent/libvulkan.so.1"}
